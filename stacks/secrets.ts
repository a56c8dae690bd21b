// Ottava's secrets on AWS. The operator sets each as an SST secret (`npx sst secret set <Name> ...
// --stage <stage>`; stacks/config.ts stops a deploy that misses one and names them all). The secret ones
// (STORED_SECRETS) go into SSM Parameter Store SecureStrings encrypted with a key of this stage's own, and
// a function gets only OTTAVA_<SETTING>_PARAMETER (the parameter's name and version) of those it needs,
// with IAM allowing it to read just those parameters and to decrypt with the key through SSM alone. The
// function reads them once per cold start (configLoader in packages/core/src/secrets.ts, with the SSM
// reader of packages/edge/src/ssm.ts); the health manager's task gets its key through its task
// definition's `secrets`. No secret value is in any function's or task's environment. The plain ones
// (PLAIN_SECRETS: the Keystone URL and names, the CA certificate) are settings.
import { PLAIN_SECRETS, STORED_SECRETS, type DeployPlan, type PlainSecret, type SecretName, type StoredSecret } from "./config";

/** What the parameters are encrypted with: `alias/<app>-<stage>-secrets`. */
const KEY_ALIAS = () => `alias/${$app.name}-${$app.stage}-secrets`;
/** Where a secret's parameter is: `/<app>/<stage>/<Name>`. */
export const parameterName = (name: StoredSecret) => `/${$app.name}/${$app.stage}/${name}`;

/** SSM parameters hold 4 KB (Standard) or 8 KB (Advanced): Intelligent-Tiering takes Advanced only for a larger value (an RSA 4096 certificate and key). */
const PARAMETER_TIER = "Intelligent-Tiering";

const components = new Map<SecretName, sst.Secret>();
/** The SST secret of that name (one component per name, however often it is asked for). */
function sstSecret(name: SecretName): sst.Secret {
  let secret = components.get(name);
  if (!secret) components.set(name, (secret = new sst.Secret(name)));
  return secret;
}

export function createSecrets(plan: DeployPlan) {
  const region = aws.getRegionOutput().region;
  const key = new aws.kms.Key("SecretsKey", {
    description: `Ottava ${$app.stage}: the SSM parameters of its secrets`,
    enableKeyRotation: true,
  });
  new aws.kms.Alias("SecretsKeyAlias", { name: KEY_ALIAS(), targetKeyId: key.keyId });

  const parameters: Partial<Record<StoredSecret, aws.ssm.Parameter>> = {};
  for (const name of plan.stored) {
    parameters[name] = new aws.ssm.Parameter(`${name}Parameter`, {
      name: parameterName(name),
      description: `Ottava ${$app.stage}: OTTAVA_${STORED_SECRETS[name]} (set with \`sst secret set ${name}\`)`,
      type: "SecureString",
      keyId: key.arn,
      tier: PARAMETER_TIER,
      value: sstSecret(name).value,
    });
  }
  const given = (names: StoredSecret[]) => names.flatMap((name) => (parameters[name] ? [[name, parameters[name]] as const] : []));

  return {
    key,
    parameters,
    /**
     * OTTAVA_<SETTING>_PARAMETER for each of `names` this deploy stores: `name:version`, so a changed
     * secret changes the function's configuration and no warm function keeps the old value.
     */
    environment(names: StoredSecret[]): Record<string, $util.Output<string>> {
      return Object.fromEntries(
        given(names).map(([name, p]) => [`OTTAVA_${STORED_SECRETS[name]}_PARAMETER`, $interpolate`${p.name}:${p.version}`]),
      );
    },
    /** Reading exactly those parameters, and decrypting them with the key only through SSM. */
    permissions(names: StoredSecret[]) {
      const arns = given(names).map(([, p]) => p.arn);
      if (arns.length === 0) return [];
      return [
        { actions: ["ssm:GetParameter"], resources: arns },
        {
          actions: ["kms:Decrypt"],
          resources: [key.arn],
          conditions: [{ test: "StringEquals", variable: "kms:ViaService", values: [$interpolate`ssm.${region}.amazonaws.com`] }],
        },
      ];
    },
    /** The plain settings OTTAVA_<SETTING> of `names` (not secret: a URL, names, a certificate). */
    plain(names: PlainSecret[]): Record<string, $util.Output<string>> {
      return Object.fromEntries(names.map((name) => [`OTTAVA_${PLAIN_SECRETS[name]}`, sstSecret(name).value]));
    },
  };
}

export type Secrets = ReturnType<typeof createSecrets>;
