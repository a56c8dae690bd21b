// The VPC, and what connects it to the amphora management network (OTTAVA_AMPHORA_MGMT_CIDR):
// - heartbeats: the VPC's security group (the health manager's tasks run in it) admits UDP on the
//   heartbeat port from the management network. The rule goes in through the VPC's security-group
//   transform: SST manages that group's rules inline, and a separate rule on it would be removed by the
//   next deploy.
// - with OTTAVA_AMPHORA_DRIVER=rest, the agent calls: the private subnets route the management network
//   through OTTAVA_AMPHORA_MGMT_GATEWAY (again through SST's transform of the inline route tables), and
//   the task functions that call agents (AGENT_TASKS) run in the private subnets with a security group of
//   their own that lets them reach the agents' port there, DynamoDB through a gateway endpoint and SSM
//   (their secrets) through an interface endpoint, and nothing else; with OTTAVA_CERT_MANAGER=secretsmanager
//   also Secrets Manager (the listeners' certificates, CERT_TASKS) through an interface endpoint of its own.
//   An interface endpoint's private DNS takes every call to its service in the VPC, so each admits the
//   whole VPC (the health manager's tasks read their key through SSM's).
import { VPC_CIDR, type DeployPlan } from "./config";

/** HTTPS, the port of AWS's APIs. */
const HTTPS = 443;

export function createNetwork(plan: DeployPlan) {
  const heartbeats = {
    protocol: "udp",
    fromPort: plan.heartbeatPort,
    toPort: plan.heartbeatPort,
    cidrBlocks: [plan.mgmtCidr],
    description: "Amphora heartbeats from the management network",
  };
  const mgmtRoute = plan.mgmtRoute;
  const vpc = new sst.aws.Vpc("Vpc", {
    transform: {
      securityGroup: (args) => {
        args.ingress = $output(args.ingress ?? []).apply((rules) => [...rules, heartbeats]);
      },
      ...(mgmtRoute
        ? {
            privateRouteTable: (args: aws.ec2.RouteTableArgs) => {
              args.routes = $output(args.routes ?? []).apply((routes) => [...routes, mgmtRoute]);
            },
          }
        : {}),
    },
  });
  return { vpc, agentCallers: plan.amphoraDriver === "rest" ? agentCallers(vpc, plan) : undefined };
}

/** Where the task functions that call amphora agents run: the private subnets, with their own security group. */
function agentCallers(vpc: sst.aws.Vpc, plan: DeployPlan) {
  const region = aws.getRegionOutput().region;
  const dynamodb = new aws.ec2.VpcEndpoint("DynamoDbEndpoint", {
    vpcId: vpc.id,
    serviceName: $interpolate`com.amazonaws.${region}.dynamodb`,
    vpcEndpointType: "Gateway",
    routeTableIds: vpc.nodes.privateRouteTables.apply((tables) => tables.map((t) => t.id)),
  });
  const callers = new aws.ec2.SecurityGroup("AgentCallers", {
    vpcId: vpc.id,
    description: "Ottava task functions that call amphora agents",
    egress: [
      {
        protocol: "tcp",
        fromPort: plan.amphoraAgentPort,
        toPort: plan.amphoraAgentPort,
        cidrBlocks: [plan.mgmtCidr],
        description: "Amphora agents on the management network",
      },
      {
        protocol: "tcp",
        fromPort: HTTPS,
        toPort: HTTPS,
        prefixListIds: [dynamodb.prefixListId],
        description: "DynamoDB, through the gateway endpoint",
      },
      {
        protocol: "tcp",
        fromPort: HTTPS,
        toPort: HTTPS,
        cidrBlocks: [VPC_CIDR],
        description: "SSM (and Secrets Manager), through the interface endpoints",
      },
    ],
  });
  // Its private DNS sends every SSM call made in the VPC to the endpoint, not only the agent callers': the
  // health manager's tasks too (Fargate fetches the heartbeat key through the task's own network
  // interface as the task starts).
  interfaceEndpoint(vpc, "Ssm", "ssm", "SSM", "the agent callers' secrets, the health manager's key");
  // The tasks that push the listeners' configuration read its certificates (stacks/certificates.ts).
  if (plan.certManager === "secretsmanager")
    interfaceEndpoint(vpc, "SecretsManager", "secretsmanager", "Secrets Manager", "the certificates the agent callers upload");
  return { securityGroups: [callers.id], privateSubnets: vpc.privateSubnets };
}

export type Network = ReturnType<typeof createNetwork>;

/**
 * An interface endpoint of an AWS service in the VPC's private subnets, with private DNS: it takes every
 * call to the service made in the VPC, so its security group admits HTTPS from the whole VPC. `name`
 * names both resources (<name>Endpoint).
 */
function interfaceEndpoint(vpc: sst.aws.Vpc, name: string, service: string, title: string, callers: string) {
  const group = new aws.ec2.SecurityGroup(`${name}Endpoint`, {
    vpcId: vpc.id,
    description: `The ${title} endpoint of the VPC (${callers})`,
    ingress: [
      {
        protocol: "tcp",
        fromPort: HTTPS,
        toPort: HTTPS,
        cidrBlocks: [VPC_CIDR],
        description: `Everything in the VPC: its private DNS sends every ${title} call here`,
      },
    ],
  });
  new aws.ec2.VpcEndpoint(`${name}Endpoint`, {
    vpcId: vpc.id,
    serviceName: $interpolate`com.amazonaws.${aws.getRegionOutput().region}.${service}`,
    vpcEndpointType: "Interface",
    subnetIds: vpc.privateSubnets,
    securityGroupIds: [group.id],
    privateDnsEnabled: true,
  });
}
