// The health manager's one long-running part: the heartbeat receiver (UDP) with the health check
// inside it, as a container service behind an internal UDP Network Load Balancer. Lambda cannot
// receive UDP, and the health check runs every few seconds, which no schedule can; several tasks may
// run (the health check takes a DynamoDB lease, so one checks at a time; any of them receives).
// The NLB's private addresses (one per subnet) are the health-manager addresses amphorae send their
// heartbeats to: set them with PUT /v2/octavia/healthmanager. See docs/deploying.md, "Health manager on AWS".
// The tasks run in the VPC's security group, which admits the management network's heartbeats
// (stacks/network.ts: an NLB keeps the client address for UDP, so the tasks see the amphorae's own).
import { FLOW_NAMES } from "@ottava/controller/flows";
import type { AmphoraCompute } from "./compute";
import { stateMachineName } from "./flows";
import { HEALTH_MANAGER, callsOf, permissionsFor } from "./iam";
import type { Network } from "./network";
import type { Secrets } from "./secrets";
import { LOG_RETENTION, deploy, sharedEnvironment } from "./settings";
import { tablePermissions, type Table } from "./table";

/** The port of the tasks' GET /healthcheck, which the NLB checks them on (UDP cannot be checked). */
const HEALTH_PORT = 8080;

export function createHealthManager(
  table: Table,
  stateMachineArnPrefix: $util.Input<string>,
  network: Network,
  secrets: Secrets,
  compute: AmphoraCompute,
) {
  const plan = deploy();
  const region = aws.getRegionOutput().region;
  const accountId = aws.getCallerIdentityOutput().accountId;
  const port = plan.heartbeatPort;
  const cluster = new sst.aws.Cluster("Cluster", { vpc: network.vpc });
  // The heartbeat key reaches the container through the task definition's secrets, from its SSM parameter.
  const heartbeatKey = secrets.parameters.HeartbeatKey!;

  const service = new sst.aws.Service("HealthManager", {
    cluster,
    image: { context: ".", dockerfile: "stacks/health-manager.Dockerfile" },
    cpu: "0.5 vCPU",
    memory: "1 GB",
    scaling: { min: 2, max: 4 }, // two tasks, two AZs: heartbeats keep arriving while one is replaced
    environment: {
      ...sharedEnvironment(network),
      OTTAVA_TABLE_NAME: table.name,
      OTTAVA_STATE_MACHINE_ARN_PREFIX: stateMachineArnPrefix,
      OTTAVA_HEARTBEAT_PORT: String(port),
      OTTAVA_BIND_HOST: "0.0.0.0",
      // Not a setting: the key's parameter version, so a changed key makes a new task definition (ECS
      // reads `secrets` when a task starts) and the service replaces its tasks.
      HEARTBEAT_KEY_VERSION: $interpolate`${heartbeatKey.version}`,
    },
    ssm: { OTTAVA_HEARTBEAT_KEY: heartbeatKey.arn },
    logging: { retention: LOG_RETENTION },
    permissions: [
      ...tablePermissions(table),
      // The health check starts amphora-failover flows (under the LB's lock, as the API does); the receiver,
      // amphora-vip-promote flows (an amphora's VRRP promotion report: no lock).
      {
        actions: ["states:StartExecution", "states:DescribeExecution"],
        resources: [
          ...FLOW_NAMES.map((flow) => $interpolate`arn:aws:states:${region}:${accountId}:stateMachine:${stateMachineName(flow)}`),
          ...FLOW_NAMES.map((flow) => $interpolate`arn:aws:states:${region}:${accountId}:execution:${stateMachineName(flow)}:*`),
        ],
      },
      // A zombie amphora's instance deleted (stacks/iam.ts).
      ...permissionsFor(callsOf(HEALTH_MANAGER, plan), compute.role.arn),
    ],
    loadBalancer: {
      public: false, // internal: reached from the amphorae's management network, never from the internet
      rules: [{ listen: `${port}/udp`, forward: `${port}/udp` }], // udp: a Network Load Balancer
    },
    transform: {
      // With ec2, fixed addresses (stacks/network.ts), which the stacks give the amphorae to report to.
      ...(network.heartbeatMappings
        ? {
            loadBalancer: (args: aws.lb.LoadBalancerArgs) => {
              args.subnets = undefined;
              args.subnetMappings = network.heartbeatMappings;
            },
          }
        : {}),
      // A UDP target cannot be health-checked over UDP: the service answers GET /healthcheck on 8080.
      target: (args) => {
        args.healthCheck = {
          protocol: "HTTP",
          port: String(HEALTH_PORT),
          path: "/healthcheck",
          interval: 10,
          healthyThreshold: 2,
          unhealthyThreshold: 2,
        };
      },
      // What ECS starts the task with: the key's parameter alone (SST's default reads any parameter and secret).
      executionRole: (args) => {
        args.inlinePolicies = [
          {
            name: "inline",
            policy: $jsonStringify({
              Version: "2012-10-17",
              Statement: [
                { Effect: "Allow", Action: "ssm:GetParameters", Resource: [heartbeatKey.arn] },
                {
                  Effect: "Allow",
                  Action: "kms:Decrypt",
                  Resource: [secrets.key.arn],
                  Condition: { StringEquals: { "kms:ViaService": $interpolate`ssm.${region}.amazonaws.com` } },
                },
              ],
            }),
          },
        ];
      },
    },
  });

  // The container's log group (SST names it; a stage deployed before keeps the name it had). Under
  // `sst dev` the service runs nowhere in AWS: no task definition, no log group.
  const logGroupName = $dev
    ? undefined
    : service.nodes.taskDefinition.containerDefinitions.apply(
        (defs) =>
          (JSON.parse(defs) as { logConfiguration: { options: Record<string, string> } }[])[0]!.logConfiguration.options["awslogs-group"]!,
      );
  return { service, logGroupName };
}

export type HealthManager = ReturnType<typeof createHealthManager>;
