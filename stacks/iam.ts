// Least privilege for the AWS drivers (OTTAVA_COMPUTE_DRIVER=ec2, OTTAVA_NETWORK_DRIVER=vpc): how each EC2,
// Secrets Manager and IAM action a workload calls (./iam-calls.ts: recorded in the test-bed runs) is granted.
// Creation only with this stage's tag on the request (aws:RequestTag/ottava:stage), changes and deletion
// only of what carries it (aws:ResourceTag/ottava:stage), wherever AWS evaluates those keys for the action
// and resource; every statement without them says why. The certificate reads (./certificates.ts) and the
// SSM parameters (./secrets.ts) are granted where they are built. moto evaluates no IAM policy: only a
// real account proves the conditions (docs/deploying.md, "Least privilege").
import { IMPLIED, STAGE_TAG_KEY } from "./iam-calls";

/** The tag key of packages/aws/src/constants.ts (PROJECT_TAG_KEY) that gives a user's VPC, subnet or port to a project. */
const PROJECT_TAG_KEY = "ottava:project";

export { HEALTH_MANAGER, SWEEP, callsOf } from "./iam-calls";

interface Condition {
  test: string;
  variable: string;
  values: $util.Input<string>[];
}
export interface Permission {
  actions: string[];
  resources: $util.Input<string>[];
  conditions?: Condition[];
}

/** The statements that grant `calls` (and what they imply) on this stage's things; the amphora role's ARN for iam:PassRole. */
export function permissionsFor(calls: string[], amphoraRoleArn: $util.Input<string>): Permission[] {
  if (calls.length === 0) return [];
  const stage = $app.stage;
  const partition = aws.getPartitionOutput().partition;
  const region = aws.getRegionOutput().region;
  const account = aws.getCallerIdentityOutput().accountId;
  const ec2 = (resource: string) => $interpolate`arn:${partition}:ec2:${region}:${account}:${resource}`;
  // The amphorae's secrets (amphoraSecretName: ottava/<stage>/amphora/<id>; AWS adds six characters to the ARN).
  const secrets = $interpolate`arn:${partition}:secretsmanager:${region}:${account}:secret:ottava/${stage}/amphora/*`;
  // The stage's spread placement groups (placementGroupName: ottava-<stage>-lb-<id>).
  const groups = ec2(`placement-group/ottava-${stage}-lb-*`);
  const tagged = (key: "aws:RequestTag" | "aws:ResourceTag"): Condition[] => [
    { test: "StringEquals", variable: `${key}/${STAGE_TAG_KEY}`, values: [stage] },
  ];
  const made = tagged("aws:RequestTag");
  const ours = tagged("aws:ResourceTag");

  const wanted = new Set([...calls, ...calls.flatMap((a) => IMPLIED[a] ?? [])]);
  const creates = calls.filter((a) => (IMPLIED[a] ?? []).includes("ec2:CreateTags")).map((a) => a.slice(4));
  const rules: Permission[] = [
    // Describe actions and ListSecrets take no resource narrower than "*", and no tag condition.
    {
      actions: [
        "ec2:DescribeAvailabilityZones",
        "ec2:DescribeImages",
        "ec2:DescribeInstanceTypes",
        "ec2:DescribeInstances",
        "ec2:DescribeNetworkInterfaces",
        "ec2:DescribePlacementGroups",
        "ec2:DescribeSecurityGroupRules",
        "ec2:DescribeSecurityGroups",
        "ec2:DescribeSubnets",
        "ec2:DescribeVpcs",
        "secretsmanager:ListSecrets",
      ],
      resources: ["*"],
    },
    // What the creations make: only with this stage's tag on the request.
    { actions: ["ec2:RunInstances"], resources: [ec2("instance/*"), ec2("volume/*")], conditions: made },
    { actions: ["ec2:CreateNetworkInterface"], resources: [ec2("network-interface/*")], conditions: made },
    { actions: ["ec2:CreateSecurityGroup"], resources: [ec2("security-group/*")], conditions: made },
    { actions: ["ec2:CreatePlacementGroup"], resources: [groups], conditions: made },
    { actions: ["secretsmanager:CreateSecret"], resources: [secrets], conditions: made },
    // What they are made in or with carries no tag of ours: the operator's subnets, groups, VPCs and
    // images (and RunInstances' ENI, made by the launch itself, and the stage's placement group by name).
    {
      actions: ["ec2:RunInstances"],
      resources: [
        ec2("network-interface/*"),
        ec2("subnet/*"),
        ec2("security-group/*"),
        groups,
        $interpolate`arn:${partition}:ec2:${region}::image/*`,
      ],
    },
    { actions: ["ec2:CreateNetworkInterface"], resources: [ec2("subnet/*"), ec2("security-group/*")] },
    { actions: ["ec2:CreateSecurityGroup"], resources: [ec2("vpc/*")] },
    // Tagging only in the creating call, with this stage's tag.
    ...(creates.length > 0
      ? [
          {
            actions: ["ec2:CreateTags"],
            resources: [
              ...(creates.includes("RunInstances") ? [ec2("instance/*"), ec2("volume/*")] : []),
              ...(creates.includes("CreatePlacementGroup") ? [groups] : []),
              ...(creates.includes("CreateNetworkInterface") ? [ec2("network-interface/*")] : []),
              ...(creates.includes("CreateSecurityGroup") ? [ec2("security-group/*")] : []),
            ],
            conditions: [{ test: "StringEquals", variable: "ec2:CreateAction", values: creates }, ...made],
          },
        ]
      : []),
    // Changes and deletions: only of what carries this stage's tag (an attach or detach names the ENI and the instance, both ours).
    { actions: ["ec2:TerminateInstances"], resources: [ec2("instance/*")], conditions: ours },
    {
      actions: ["ec2:AttachNetworkInterface", "ec2:DetachNetworkInterface"],
      resources: [ec2("network-interface/*"), ec2("instance/*")],
      conditions: ours,
    },
    {
      actions: [
        "ec2:AssignPrivateIpAddresses",
        "ec2:UnassignPrivateIpAddresses",
        "ec2:DeleteNetworkInterface",
        "ec2:ModifyNetworkInterfaceAttribute",
      ],
      resources: [ec2("network-interface/*")],
      conditions: ours,
    },
    {
      actions: ["ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress", "ec2:DeleteSecurityGroup"],
      resources: [ec2("security-group/*")],
      conditions: ours,
    },
    // A user's own port given as vip_port_id (the VIP's holder, which the VIP moves back to) carries its
    // project's tag (ottava:project, which the driver requires of it), not the stage's. A port the driver
    // takes untagged (OTTAVA_ALLOW_INVISIBLE_RESOURCE_USAGE) or shared (ottava:shared) is refused here.
    {
      actions: ["ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"],
      resources: [ec2("network-interface/*")],
      conditions: [{ test: "Null", variable: `aws:ResourceTag/${PROJECT_TAG_KEY}`, values: ["false"] }],
    },
    // The groups a VIP port is given (vip_sg_ids) are the operator's, untagged.
    { actions: ["ec2:ModifyNetworkInterfaceAttribute"], resources: [ec2("security-group/*")] },
    { actions: ["ec2:DeletePlacementGroup"], resources: [groups], conditions: ours },
    { actions: ["secretsmanager:PutSecretValue", "secretsmanager:DeleteSecret"], resources: [secrets], conditions: ours },
    // TagResource: the Tags of CreateSecret are authorized on a secret that does not exist yet (no resource
    // tag to test), and the later binding tag (ottava:instance-arn) carries no stage tag: the stage's
    // amphora secrets by name.
    { actions: ["secretsmanager:TagResource"], resources: [secrets] },
    // Launching with the instance profile passes the amphora role, to EC2 only.
    {
      actions: ["iam:PassRole"],
      resources: [amphoraRoleArn],
      conditions: [{ test: "StringEquals", variable: "iam:PassedToService", values: ["ec2.amazonaws.com"] }],
    },
  ];
  const granted = rules.flatMap((r) => {
    const actions = r.actions.filter((a) => wanted.has(a));
    return actions.length > 0 ? [{ ...r, actions }] : [];
  });
  const covered = new Set(granted.flatMap((r) => r.actions));
  const missing = [...wanted].filter((a) => !covered.has(a));
  if (missing.length > 0) throw new Error(`stacks/iam.ts has no rule for ${missing.join(", ")}`);
  return granted;
}
