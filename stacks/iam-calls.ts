// What each workload of Ottava calls in EC2 and Secrets Manager, by the driver that calls it (stacks/iam.ts
// grants it). WORKLOAD_CALLS is what the test-bed runs recorded (test/fixtures/aws-calls.json: every AWS
// call names its workload in its User-Agent, @ottava/edge workload.ts; @ottava/aws/testing aws-calls.ts
// says how the record is made); UNRECORDED_CALLS what the code calls on paths no recorded run takes, each
// with its path. test/infra.test.ts checks that each role is granted exactly these. No SST global here:
// the test reads these tables.
import type { DeployPlan } from "./config";

/** The tag key of the stage (packages/aws/src/constants.ts STAGE_TAG_KEY) on everything the drivers make. */
export const STAGE_TAG_KEY = "ottava:stage";

/** Which driver makes a call: the compute driver (and the orphan sweep that cleans up after it), or the vpc network driver. */
type Driver = "ec2" | "vpc";
/**
 * A workload's calls by driver; `certificates`: reads of certificate secrets, which stacks/certificates.ts
 * grants (to the API and CERT_TASKS, with their tag conditions), listed here only where unrecorded.
 */
type Calls = Partial<Record<Driver | "certificates", string[]>>;

/** The health manager's workload (packages/controller/src/health/receiver.ts HEALTH_MANAGER_WORKLOAD). */
export const HEALTH_MANAGER = "health-manager";
/** The orphan sweep's workload: its schedule's name (stacks/jobs.ts, packages/controller/src/jobs/housekeeping.ts). */
export const SWEEP = "SweepOrphans";

const TERMINATE = ["ec2:TerminateInstances", "secretsmanager:DeleteSecret"];
const UNPLUG = [
  "ec2:AssignPrivateIpAddresses",
  "ec2:DeleteNetworkInterface",
  "ec2:DescribeNetworkInterfaces",
  "ec2:DetachNetworkInterface",
];

/** The recorded calls (test/fixtures/aws-calls.json), by workload and driver. */
export const WORKLOAD_CALLS: Record<string, Calls> = {
  api: {
    // The profile checks (packages/aws/src/profiles.ts): the flavor's instance type.
    ec2: ["ec2:DescribeInstanceTypes"],
    // The VIP allocation (its ENI, its group, its address) and the Neutron look-ups.
    vpc: [
      "ec2:AssignPrivateIpAddresses",
      "ec2:CreateNetworkInterface",
      "ec2:CreateSecurityGroup",
      "ec2:DescribeInstances",
      "ec2:DescribeNetworkInterfaces",
      "ec2:DescribeSecurityGroups",
      "ec2:DescribeSubnets",
      "ec2:DescribeVpcs",
    ],
  },
  computeCreate: {
    ec2: [
      "ec2:DescribeImages",
      "ec2:DescribeSubnets",
      "ec2:RunInstances",
      "secretsmanager:CreateSecret",
      "secretsmanager:PutSecretValue",
      "secretsmanager:TagResource",
    ],
  },
  computeDelete: { ec2: TERMINATE },
  // A heartbeat from an amphora Ottava already deleted (a zombie) deletes its instance (HeartbeatReceiver):
  // the bed records it when a failed-over amphora's last heartbeat arrives after its delete, as on a busy machine.
  [HEALTH_MANAGER]: { ec2: TERMINATE },
  computeWait: { ec2: ["ec2:DescribeInstances"] },
  createServerGroup: { ec2: ["ec2:CreatePlacementGroup"] },
  deleteServerGroup: { ec2: ["ec2:DeletePlacementGroup"] },
  revertServerGroup: { ec2: ["ec2:DeletePlacementGroup"] },
  removeOldAmphora: {
    ec2: TERMINATE,
    vpc: ["ec2:DeleteNetworkInterface", "ec2:DescribeNetworkInterfaces", "ec2:DetachNetworkInterface"],
  },
  resizeRemoveOldAmphorae: { ec2: TERMINATE },
  deleteAmphorae: { ec2: TERMINATE, vpc: UNPLUG },
  deallocateVip: {
    vpc: ["ec2:DeleteNetworkInterface", "ec2:DeleteSecurityGroup", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSecurityGroups"],
  },
  handleNetworkDeltas: {
    vpc: [
      "ec2:AttachNetworkInterface",
      "ec2:CreateNetworkInterface",
      "ec2:CreateSecurityGroup",
      "ec2:DeleteNetworkInterface",
      "ec2:DescribeNetworkInterfaces",
      "ec2:DescribeSecurityGroups",
      "ec2:DescribeSubnets",
      "ec2:DescribeVpcs",
      "ec2:DetachNetworkInterface",
    ],
  },
  plugVip: {
    vpc: [
      "ec2:AssignPrivateIpAddresses",
      "ec2:AttachNetworkInterface",
      "ec2:CreateNetworkInterface",
      "ec2:DescribeNetworkInterfaces",
      "ec2:DescribeSecurityGroups",
    ],
  },
  postVipPlug: { vpc: ["ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets"] },
  promoteAmphoraVip: { vpc: ["ec2:AssignPrivateIpAddresses", "ec2:DescribeNetworkInterfaces"] },
  startVrrp: { vpc: ["ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets"] },
  updateListeners: {
    vpc: [
      "ec2:AttachNetworkInterface",
      "ec2:CreateNetworkInterface",
      "ec2:DescribeNetworkInterfaces",
      "ec2:DescribeSecurityGroups",
      "ec2:DescribeSubnets",
      "ec2:DescribeVpcs",
    ],
  },
  updateVip: { vpc: ["ec2:AuthorizeSecurityGroupIngress", "ec2:DescribeSecurityGroupRules", "ec2:DescribeSecurityGroups"] },
  // The sweep runs with the compute driver only (sweepHandler), and removes the vpc driver's ENIs and groups too.
  [SWEEP]: {
    ec2: [
      "ec2:DeleteNetworkInterface",
      "ec2:DeletePlacementGroup",
      "ec2:DeleteSecurityGroup",
      "ec2:DescribeInstances",
      "ec2:DescribeNetworkInterfaces",
      "ec2:DescribePlacementGroups",
      "ec2:DescribeSecurityGroups",
      "ec2:DetachNetworkInterface",
      "ec2:TerminateInstances",
      "secretsmanager:DeleteSecret",
      "secretsmanager:ListSecrets",
    ],
  },
};

/** Calls the code makes on paths no recorded run takes: granted too, each with the path. */
export const UNRECORDED_CALLS: { workload: string; calls: Calls; why: string }[] = [
  {
    workload: "deleteAmphora",
    calls: { ec2: TERMINATE },
    why: "the amphora-delete flow (DELETE /v2/octavia/amphorae/{id}) runs on the no-op drivers only",
  },
  {
    workload: "unplugVip",
    calls: { vpc: UNPLUG },
    why: "plugVip's revert: no run fails a create after the VIP is plugged on the vpc driver",
  },
  {
    workload: "updateVipSecurityGroups",
    calls: { vpc: ["ec2:DescribeNetworkInterfaces", "ec2:DescribeSecurityGroups", "ec2:ModifyNetworkInterfaceAttribute"] },
    why: "vip_sg_ids set on a load balancer: no run sets them on the vpc driver",
  },
  {
    workload: "updateVip",
    calls: { vpc: ["ec2:RevokeSecurityGroupIngress"] },
    why: "a listener deleted or its port changed on a live load balancer: no run on the vpc driver does",
  },
  {
    workload: "restoreCrossPoolMembers",
    calls: { certificates: ["secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"] },
    why: "a cross-pool member restored (its listeners' certificates pushed again): no run on the test bed restores one",
  },
  {
    workload: "api",
    calls: { ec2: ["ec2:DescribeAvailabilityZones", "ec2:DescribeImages", "ec2:DescribeSubnets", "ec2:DescribeVpcs"] },
    why: "the profile checks of a flavor's amp_image_tag and of an availability zone profile (packages/aws/src/profiles.ts): no recorded run makes one",
  },
  {
    workload: "api",
    calls: { vpc: ["ec2:DeleteNetworkInterface", "ec2:DeleteSecurityGroup", "ec2:UnassignPrivateIpAddresses"] },
    why: "a VIP allocation that fails half-way is undone (undoAllocation); every recorded allocation succeeds",
  },
];

/** The EC2 and Secrets Manager actions `workload` calls with the plan's drivers (recorded, and on unrecorded paths). */
export function callsOf(workload: string, plan: Pick<DeployPlan, "computeDriver" | "networkDriver">): string[] {
  const used = (d: Driver) => (d === "ec2" ? plan.computeDriver === "ec2" : plan.networkDriver === "vpc");
  const sets = [WORKLOAD_CALLS[workload] ?? {}, ...UNRECORDED_CALLS.filter((u) => u.workload === workload).map((u) => u.calls)];
  return [...new Set(sets.flatMap((c) => (["ec2", "vpc"] as const).flatMap((d) => (used(d) ? (c[d] ?? []) : []))))].sort();
}

/**
 * What AWS authorizes beyond the calls: tagging on creation (TagSpecifications authorize ec2:CreateTags
 * with ec2:CreateAction, a secret's Tags secretsmanager:TagResource), and RunInstances with an instance
 * profile passes its role (iam:PassRole).
 */
export const IMPLIED: Record<string, string[]> = {
  "ec2:RunInstances": ["ec2:CreateTags", "iam:PassRole"],
  "ec2:CreatePlacementGroup": ["ec2:CreateTags"],
  "ec2:CreateNetworkInterface": ["ec2:CreateTags"],
  "ec2:CreateSecurityGroup": ["ec2:CreateTags"],
  "secretsmanager:CreateSecret": ["secretsmanager:TagResource"],
};
