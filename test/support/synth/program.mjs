// The Pulumi program `sst deploy` would run, under Pulumi's unit-test mocks: SST's own components (from
// .sst/platform) evaluate sst.config.ts's run() as SST's CLI does, with SST's globals set, and every resource
// and provider call is recorded instead of sent to AWS. test/support/synth.ts bundles this file into
// .sst/platform as SST's CLI bundles sst.config.ts (`@pulumi/*` and the rest of SST's externals resolve to
// the platform's copies; the workspace packages are bundled from their TypeScript), runs it in a child
// process and answers SST's CLI calls (SST_SERVER) itself. No AWS account, no network.
//
// Input (environment): OTTAVA_SYNTH_OUT, the JSON file to write; OTTAVA_SYNTH_WORK, SST's work directory;
// OTTAVA_SYNTH_ROOT, the repository; OTTAVA_SYNTH_STAGE, the stage (`synth` if unset); SST_SERVER; the
// deployer's environment (OTTAVA_*). Every SST secret has a made-up value, `synth-secret:<name>`, unless
// the environment sets SST_SECRET_<name> (to "" for a secret that is not set).
// Output: { app, outputs, resources: [{ type, name, id, inputs, state }], calls: [{ token, inputs }], errors }.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as pulumi from "@pulumi/pulumi";

const REGION = "us-east-1";
const ACCOUNT = "123456789012";
const STAGE = process.env.OTTAVA_SYNTH_STAGE || "synth";
const root = process.env.OTTAVA_SYNTH_ROOT;
const work = process.env.OTTAVA_SYNTH_WORK;

const resources = [];
const calls = [];
const errors = [];
let app = {};

/** Writes what was recorded and ends the process (Pulumi's exit hook would otherwise count leaked promises). */
function finish(outputs) {
  if (finish.done) return;
  finish.done = true;
  writeFileSync(process.env.OTTAVA_SYNTH_OUT, JSON.stringify({ app: { ...app, stage: STAGE }, outputs, resources, calls, errors }));
  process.exit(0);
}
// An output that never resolves would leave the process waiting on nothing: give up, saying so.
setTimeout(() => {
  errors.push(`synth: the program did not settle within 120 s (${resources.length} resources registered)`);
  finish({});
}, 120_000);
// A failed output (an error thrown inside an apply) surfaces as an unhandled rejection: record it, and
// stop soon after (what depends on that output would wait for it forever).
process.on("unhandledRejection", (e) => {
  errors.push(String(e?.stack ?? e));
  setTimeout(() => finish({}), 2000);
});

/** Inputs with Pulumi's secret wrappers ({ <sig>: <secret sig>, value }) taken off, as AWS receives them. */
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
function unwrap(value) {
  if (Array.isArray(value)) return value.map(unwrap);
  if (value && typeof value === "object") {
    if (value["4dabf18193072939515e22adb298388d"] === SECRET_SIG) return unwrap(value.value);
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unwrap(v)]));
  }
  return value;
}

/**
 * Resource types whose name the AWS provider makes up when none is given, `<logical name>-<7 hex>`, and
 * that the stacks refer to by name: the jobs' dead-letter queue (its alarm's dimension), the flows' roles
 * (their policy attachments).
 */
const AUTONAMED = new Set(["aws:sqs/queue:Queue", "aws:iam/role:Role"]);
const autoname = (name) => `${name}-${createHash("sha256").update(name).digest("hex").slice(0, 7)}`;

/**
 * EC2's ids of the kinds a setting names (OTTAVA_AMP_BOOT_NETWORK_LIST, OTTAVA_AMP_SECGROUP_LIST), which
 * the configuration checks the form of: `<prefix>-<17 hex>`, as EC2 makes them.
 */
const EC2_ID_PREFIX = { "aws:ec2/subnet:Subnet": "subnet", "aws:ec2/securityGroup:SecurityGroup": "sg" };
const ec2Id = (type, name) =>
  EC2_ID_PREFIX[type] && `${EC2_ID_PREFIX[type]}-${createHash("sha256").update(name).digest("hex").slice(0, 17)}`;

/** The ARN AWS would give a resource of this type and name (only its shape matters to the assertions). */
function arnOf(type, name, id) {
  const [, module, kind] = /^aws:([^/]+)\/([^:]+):/.exec(type) ?? [];
  switch (type) {
    case "aws:sqs/queue:Queue":
      return `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;
    case "aws:ssm/parameter:Parameter": // a name that starts with "/" keeps one
      return `arn:aws:ssm:${REGION}:${ACCOUNT}:parameter/${name.replace(/^\//, "")}`;
    case "aws:kms/key:Key":
      return `arn:aws:kms:${REGION}:${ACCOUNT}:key/${id}`;
    case "aws:lambda/function:Function":
      return `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`;
    case "aws:sfn/stateMachine:StateMachine":
      return `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${name}`;
    case "aws:iam/role:Role":
      return `arn:aws:iam::${ACCOUNT}:role/${name}`;
    case "aws:iam/policy:Policy":
      return `arn:aws:iam::${ACCOUNT}:policy/${name}`;
    case "aws:cloudwatch/logGroup:LogGroup":
      return `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${name}`;
    case "aws:dynamodb/table:Table":
      return `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}`;
    case "aws:apigatewayv2/api:Api":
      return `arn:aws:apigateway:${REGION}::/apis/${id}`;
    default:
      return module ? `arn:aws:${module}:${REGION}:${ACCOUNT}:${kind.toLowerCase()}/${name}` : undefined;
  }
}

/** The attributes AWS computes that the stacks and SST's components read back. */
function computed(type, name, id) {
  const arn = arnOf(type, name, id);
  const extra = {};
  if (type === "aws:apigatewayv2/api:Api") {
    extra.apiEndpoint = `https://${id}.execute-api.${REGION}.amazonaws.com`;
    extra.executionArn = `arn:aws:execute-api:${REGION}:${ACCOUNT}:${id}`;
  }
  if (type === "aws:lb/loadBalancer:LoadBalancer") extra.dnsName = `${name}.elb.${REGION}.amazonaws.com`;
  if (type === "aws:lambda/function:Function")
    extra.invokeArn = `arn:aws:apigateway:${REGION}:lambda:path/2015-03-31/functions/${arn}/invocations`;
  if (type === "aws:ssm/parameter:Parameter") extra.version = 1;
  if (type === "aws:kms/key:Key") extra.keyId = id;
  if (type === "aws:ec2/vpcEndpoint:VpcEndpoint") extra.prefixListId = `pl-${createHash("sha256").update(name).digest("hex").slice(0, 8)}`;
  return { ...(arn ? { arn } : {}), ...extra };
}

/** aws.iam.getPolicyDocument as the AWS provider renders it. */
function policyDocument(inputs) {
  const one = (list) => (list.length === 1 ? list[0] : list);
  return {
    Version: inputs.version ?? "2012-10-17",
    Statement: (inputs.statements ?? []).map((s) => ({
      ...(s.sid ? { Sid: s.sid } : {}),
      Effect: s.effect ?? "Allow",
      ...(s.actions ? { Action: one(s.actions) } : {}),
      ...(s.notActions ? { NotAction: one(s.notActions) } : {}),
      ...(s.resources ? { Resource: one(s.resources) } : {}),
      ...(s.notResources ? { NotResource: one(s.notResources) } : {}),
      ...(s.principals ? { Principal: Object.fromEntries(s.principals.map((p) => [p.type, one(p.identifiers)])) } : {}),
      ...(s.conditions
        ? { Condition: s.conditions.reduce((c, x) => ({ ...c, [x.test]: { ...c[x.test], [x.variable]: one(x.values) } }), {}) }
        : {}),
    })),
  };
}

await pulumi.runtime.setMocks(
  {
    newResource({ type, name, inputs: wrapped, id: importId }) {
      const inputs = unwrap(wrapped);
      const physical = inputs.name ?? (AUTONAMED.has(type) ? autoname(name) : undefined);
      const id = importId || ec2Id(type, name) || physical || `${name}-id`;
      const state = { ...inputs, ...(physical ? { name: physical } : {}), ...computed(type, physical ?? name, id) };
      resources.push({ type, name, id, inputs, state });
      return { id, state };
    },
    call({ token, inputs: wrapped }) {
      const inputs = unwrap(wrapped);
      calls.push({ token, inputs });
      switch (token) {
        case "aws:index/getRegion:getRegion":
          return {
            id: REGION,
            name: REGION,
            region: REGION,
            endpoint: `ec2.${REGION}.amazonaws.com`,
            description: "US East (N. Virginia)",
          };
        case "aws:index/getCallerIdentity:getCallerIdentity":
          return { id: ACCOUNT, accountId: ACCOUNT, arn: `arn:aws:iam::${ACCOUNT}:user/synth`, userId: "SYNTH" };
        case "aws:index/getPartition:getPartition":
          return { id: "aws", partition: "aws", dnsSuffix: "amazonaws.com", reverseDnsPrefix: "com.amazonaws" };
        case "aws:index/getAvailabilityZones:getAvailabilityZones":
          return { id: REGION, names: [`${REGION}a`, `${REGION}b`, `${REGION}c`], zoneIds: ["use1-az1", "use1-az2", "use1-az3"] };
        case "aws:ecr/getAuthorizationToken:getAuthorizationToken": // the health manager's image push (a made-up token)
          return {
            id: ACCOUNT,
            registryId: ACCOUNT,
            proxyEndpoint: `https://${ACCOUNT}.dkr.ecr.${REGION}.amazonaws.com`,
            userName: "AWS",
            password: "synth",
            authorizationToken: "synth",
            expiresAt: "2100-01-01T00:00:00Z",
          };
        case "aws:iam/getPolicyDocument:getPolicyDocument": {
          const json = JSON.stringify(policyDocument(inputs), null, 2);
          return { ...inputs, id: "policy", json, minifiedJson: JSON.stringify(JSON.parse(json)) };
        }
        default:
          // Pulumi drops the message of an error thrown here: record it.
          errors.push(`synth: no mock for the provider call ${token} (${JSON.stringify(inputs)})`);
          throw new Error(`synth: no mock for the provider call ${token}`);
      }
    },
  },
  "ottava",
  STAGE,
  false,
);
// Every SST secret (`new sst.Secret(name)`) has a made-up value, `synth-secret:<name>`, unless the
// environment sets it: the test tells where secrets went by that prefix.
process.env = new Proxy(process.env, {
  get: (env, key) =>
    typeof key === "string" && key.startsWith("SST_SECRET_") && !(key in env) ? `synth-secret:${key.slice(11)}` : env[key],
});

// SST's globals, as its CLI sets them for sst.config.ts: the shim's helpers ($interpolate, $config, ...),
// the app ($app, from the config's app()) and the CLI's view ($cli, $dev), then the components (`sst`, some
// of which read $app as they load) and the AWS provider package (`aws`).
const shim = await import("../../../.sst/platform/src/shim/run.js");
for (const [key, value] of Object.entries(shim)) globalThis[key] = value;
const { default: config } = await import("../../../sst.config.ts");
app = await config.app({ stage: STAGE });
globalThis.$app = { ...app, stage: STAGE, providers: app.providers ?? { aws: {} }, protect: app.protect ?? false };
globalThis.$dev = false;
globalThis.$cli = {
  command: "deploy",
  rpc: process.env.SST_SERVER,
  paths: { home: join(work, "home"), root, work, platform: join(root, ".sst", "platform") },
  home: app.home,
  state: { version: {} },
};
globalThis.sst = await import("../../../.sst/platform/src/components/index.ts");
globalThis.aws = await import("@pulumi/aws");

const { run } = await import("../../../.sst/platform/src/auto/run.ts");

try {
  // As Pulumi's Node.js host runs a program: under the root stack resource (SST's run() registers stack
  // transformations). An error thrown in there would only be logged to the (absent) engine: catch it here.
  const outputs = await pulumi.runtime.runInPulumiStack(async () => {
    try {
      return await run(config.run);
    } catch (e) {
      errors.push(String(e?.stack ?? e));
      return {};
    }
  });
  // Resources created inside outputs' apply() (as SST's Function creates its lambda.Function) register later.
  await pulumi.runtime.disconnect();
  finish(await new Promise((resolve) => pulumi.output(outputs).apply(resolve)));
} catch (e) {
  errors.push(String(e?.stack ?? e));
  finish({});
}
