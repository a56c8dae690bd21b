// The amphorae on EC2 (OTTAVA_COMPUTE_DRIVER=ec2, packages/aws): the instance role and profile they boot
// with, which may read each amphora's own secret and nothing else, and what the task functions that call
// the compute driver may do in EC2, Secrets Manager and IAM: exactly the driver's calls, on this stage's
// things. docs/data-plane.md gives the design.
import { COMPUTE_TASKS } from "@ottava/controller/flows";

/** The instance's own ARN in the requests its role credentials sign (IAM's policy variable, written as is). */
const SOURCE_INSTANCE_ARN = "${ec2:SourceInstanceARN}";
/** The tag key of packages/aws/src/constants.ts (INSTANCE_ARN_TAG_KEY) that binds a secret to its instance. */
const INSTANCE_ARN_TAG_KEY = "ottava:instance-arn";
/** The tag key of the stage (STAGE_TAG_KEY) on what the driver makes. */
const STAGE_TAG_KEY = "ottava:stage";

export function createAmphoraCompute() {
  const stage = $app.stage;
  const partition = aws.getPartitionOutput().partition;
  const region = aws.getRegionOutput().region;
  const account = aws.getCallerIdentityOutput().accountId;
  // Every amphora's secret of this stage (amphoraSecretName: ottava/<stage>/amphora/<id>; AWS adds six characters to its ARN).
  const secrets = $interpolate`arn:${partition}:secretsmanager:${region}:${account}:secret:ottava/${stage}/amphora/*`;
  const ec2 = (resource: string) => $interpolate`arn:${partition}:ec2:${region}:${account}:${resource}`;

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

  const ofStage = (key: "aws:RequestTag" | "aws:ResourceTag") => [
    { test: "StringEquals", variable: `${key}/${STAGE_TAG_KEY}`, values: [stage] },
  ];
  /** What the task functions that call the compute driver (COMPUTE_TASKS) may do: the EC2 driver's calls. */
  const permissions = [
    // RunInstances: the instance and its volume only tagged with this stage; in any subnet, group and image of the account.
    { actions: ["ec2:RunInstances"], resources: [ec2("instance/*"), ec2("volume/*")], conditions: ofStage("aws:RequestTag") },
    {
      actions: ["ec2:RunInstances"],
      resources: [
        ec2("network-interface/*"),
        ec2("subnet/*"),
        ec2("security-group/*"),
        ec2(`placement-group/ottava-${stage}-lb-*`),
        $interpolate`arn:${partition}:ec2:${region}::image/*`,
      ],
    },
    // The tags RunInstances and CreatePlacementGroup put on what they make, and no other tagging.
    {
      actions: ["ec2:CreateTags"],
      resources: [ec2("instance/*"), ec2("volume/*"), ec2(`placement-group/ottava-${stage}-lb-*`)],
      conditions: [{ test: "StringEquals", variable: "ec2:CreateAction", values: ["RunInstances", "CreatePlacementGroup"] }],
    },
    { actions: ["ec2:TerminateInstances"], resources: [ec2("instance/*")], conditions: ofStage("aws:ResourceTag") },
    // Anti-affinity: the stage's spread placement groups (placementGroupName: ottava-<stage>-lb-<id>).
    { actions: ["ec2:CreatePlacementGroup", "ec2:DeletePlacementGroup"], resources: [ec2(`placement-group/ottava-${stage}-lb-*`)] },
    // EC2's Describe actions take no resource narrower than "*".
    { actions: ["ec2:DescribeInstances", "ec2:DescribeImages", "ec2:DescribeSubnets"], resources: ["*"] },
    // The amphorae's secrets: made (with their tags), given a retried build's value, bound, deleted.
    {
      actions: [
        "secretsmanager:CreateSecret",
        "secretsmanager:PutSecretValue",
        "secretsmanager:TagResource",
        "secretsmanager:DeleteSecret",
      ],
      resources: [secrets],
    },
    // Launching with the instance profile passes the amphora role, to EC2 only.
    {
      actions: ["iam:PassRole"],
      resources: [role.arn],
      conditions: [{ test: "StringEquals", variable: "iam:PassedToService", values: ["ec2.amazonaws.com"] }],
    },
  ];

  /**
   * What housekeeping's orphan sweep (sweepHandler, packages/aws/src/sweeper.ts) may do: list this stage's
   * instances, amphora secrets, placement groups, ENIs and load-balancer security groups (the vpc network
   * driver's), and remove them.
   */
  const sweepPermissions = [
    // Neither Describe action nor ListSecrets takes a resource narrower than "*".
    {
      actions: [
        "ec2:DescribeInstances",
        "ec2:DescribePlacementGroups",
        "ec2:DescribeNetworkInterfaces",
        "ec2:DescribeSecurityGroups",
        "secretsmanager:ListSecrets",
      ],
      resources: ["*"],
    },
    { actions: ["ec2:TerminateInstances"], resources: [ec2("instance/*")], conditions: ofStage("aws:ResourceTag") },
    // An ENI is detached from its instance first: the action names both.
    {
      actions: ["ec2:DetachNetworkInterface"],
      resources: [ec2("network-interface/*"), ec2("instance/*")],
      conditions: ofStage("aws:ResourceTag"),
    },
    { actions: ["ec2:DeleteNetworkInterface"], resources: [ec2("network-interface/*")], conditions: ofStage("aws:ResourceTag") },
    { actions: ["ec2:DeleteSecurityGroup"], resources: [ec2("security-group/*")], conditions: ofStage("aws:ResourceTag") },
    { actions: ["ec2:DeletePlacementGroup"], resources: [ec2(`placement-group/ottava-${stage}-lb-*`)] },
    { actions: ["secretsmanager:DeleteSecret"], resources: [secrets] },
  ];

  return {
    role,
    profile,
    sweepPermissions,
    /** Does this task's function call the compute driver? */
    computes: (task: string) => (COMPUTE_TASKS as readonly string[]).includes(task),
    permissions,
    /** The settings of those functions: the instance profile the driver launches amphorae with. */
    environment: { OTTAVA_AMP_INSTANCE_PROFILE: profile.name },
  };
}

export type AmphoraCompute = ReturnType<typeof createAmphoraCompute>;
