// The amphorae on EC2 (OTTAVA_COMPUTE_DRIVER=ec2, packages/aws): the instance role and profile they boot
// with, which may read each amphora's own secret and nothing else (no EC2 right: a VRRP promotion is
// reported over the heartbeats and the flow moves the VIP, docs/data-plane.md). What the task functions
// may do in EC2 and Secrets Manager is stacks/iam.ts's.
import { COMPUTE_TASKS } from "@ottava/controller/flows";

/** The instance's own ARN in the requests its role credentials sign (IAM's policy variable, written as is). */
const SOURCE_INSTANCE_ARN = "${ec2:SourceInstanceARN}";
/** The tag key of packages/aws/src/constants.ts (INSTANCE_ARN_TAG_KEY) that binds a secret to its instance. */
const INSTANCE_ARN_TAG_KEY = "ottava:instance-arn";

export function createAmphoraCompute() {
  const stage = $app.stage;
  const partition = aws.getPartitionOutput().partition;
  const region = aws.getRegionOutput().region;
  const account = aws.getCallerIdentityOutput().accountId;
  // Every amphora's secret of this stage (amphoraSecretName: ottava/<stage>/amphora/<id>; AWS adds six characters to its ARN).
  const secrets = $interpolate`arn:${partition}:secretsmanager:${region}:${account}:secret:ottava/${stage}/amphora/*`;

  // The amphorae's role: GetSecretValue of a secret whose ottava:instance-arn tag is the calling instance's ARN.
  const role = new aws.iam.Role("AmphoraRole", {
    assumeRolePolicy: JSON.stringify({
      Version: "2012-10-17",
      Statement: [{ Effect: "Allow", Principal: { Service: "ec2.amazonaws.com" }, Action: "sts:AssumeRole" }],
    }),
  });
  new aws.iam.RolePolicy("AmphoraSecretPolicy", {
    role: role.id,
    policy: $jsonStringify({
      Version: "2012-10-17",
      Statement: [
        {
          Effect: "Allow",
          Action: "secretsmanager:GetSecretValue",
          Resource: secrets,
          Condition: { StringEquals: { [`secretsmanager:ResourceTag/${INSTANCE_ARN_TAG_KEY}`]: SOURCE_INSTANCE_ARN } },
        },
      ],
    }),
  });
  const profile = new aws.iam.InstanceProfile("AmphoraInstanceProfile", { name: `${$app.name}-${stage}-amphora`, role: role.name });

  return {
    role,
    profile,
    /** Does this task's function call the compute driver? */
    computes: (task: string) => (COMPUTE_TASKS as readonly string[]).includes(task),
    /** The settings of those functions: the instance profile the driver launches amphorae with. */
    environment: { OTTAVA_AMP_INSTANCE_PROFILE: profile.name },
  };
}

export type AmphoraCompute = ReturnType<typeof createAmphoraCompute>;
