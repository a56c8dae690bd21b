// The health manager's one long-running part: the heartbeat receiver (UDP) with the health check
// inside it, as a container service behind an internal UDP Network Load Balancer. Lambda cannot
// receive UDP, and the health check runs every few seconds, which no schedule can; several tasks may
// run (the health check takes a DynamoDB lease, so one checks at a time; any of them receives).
// The NLB's private addresses (one per subnet) are the health-manager addresses amphorae send their
// heartbeats to: set them with PUT /v2/octavia/healthmanager. See README, "Health manager on AWS".
import { FLOW_NAMES } from "../packages/controller/src/flows/index";
import { stateMachineName } from "./flows";
import { sharedEnvironment } from "./settings";
import type { Table } from "./table";

export function createHealthManager(table: Table, stateMachineArnPrefix: $util.Input<string>) {
  const region = aws.getRegionOutput().region;
  const accountId = aws.getCallerIdentityOutput().accountId;
  const port = Number(process.env.OTTAVA_HEARTBEAT_PORT || 5555);
  const vpc = new sst.aws.Vpc("Vpc");
  const cluster = new sst.aws.Cluster("Cluster", { vpc });
  // UDP targets see the amphorae's own addresses (an NLB always keeps the client address for UDP), and
  // the tasks' security group admits only the VPC's range: admit the management network's heartbeats.
  const mgmtCidr = process.env.OTTAVA_AMPHORA_MGMT_CIDR;
  if (mgmtCidr) {
    new aws.vpc.SecurityGroupIngressRule("HeartbeatIngress", {
      securityGroupId: vpc.securityGroups.apply((groups) => groups[0]!),
      cidrIpv4: mgmtCidr,
      ipProtocol: "udp",
      fromPort: port,
      toPort: port,
    });
  }
  const heartbeatKey = new sst.Secret("HeartbeatKey");

  const service = new sst.aws.Service("HealthManager", {
    cluster,
    image: { context: ".", dockerfile: "stacks/health-manager.Dockerfile" },
    cpu: "0.5 vCPU",
    memory: "1 GB",
    scaling: { min: 2, max: 4 }, // two tasks, two AZs: heartbeats keep arriving while one is replaced
    link: [table],
    environment: {
      ...sharedEnvironment(),
      OTTAVA_TABLE_NAME: table.name,
      OTTAVA_STATE_MACHINE_ARN_PREFIX: stateMachineArnPrefix,
      OTTAVA_HEARTBEAT_KEY: heartbeatKey.value,
      OTTAVA_HEARTBEAT_PORT: String(port),
      OTTAVA_BIND_HOST: "0.0.0.0",
    },
    permissions: [
      // The health check starts amphora-failover flows (under the LB's lock, as the API does).
      {
        actions: ["states:StartExecution", "states:DescribeExecution"],
        resources: [
          ...FLOW_NAMES.map((flow) => $interpolate`arn:aws:states:${region}:${accountId}:stateMachine:${stateMachineName(flow)}`),
          ...FLOW_NAMES.map((flow) => $interpolate`arn:aws:states:${region}:${accountId}:execution:${stateMachineName(flow)}:*`),
        ],
      },
    ],
    loadBalancer: {
      public: false, // internal: reached from the amphorae's management network, never from the internet
      rules: [{ listen: `${port}/udp`, forward: `${port}/udp` }], // udp: a Network Load Balancer
    },
    transform: {
      // The container reads no SSM parameter or Secrets Manager secret (no `ssm`): drop SST's statement
      // letting the execution role read any ("*"). A container secret needs its ARN granted here.
      executionRole: (args) => {
        args.inlinePolicies = [];
      },
      // A UDP target cannot be health-checked over UDP: the service answers GET /healthcheck on 8080.
      target: (args) => {
        args.healthCheck = { protocol: "HTTP", port: "8080", path: "/healthcheck", interval: 10, healthyThreshold: 2, unhealthyThreshold: 2 };
      },
    },
  });
  return { service, vpc };
}
