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
// - with OTTAVA_COMPUTE_DRIVER=ec2 (the amphorae in this account), no external network: the management
//   network is subnets the stacks make in the VPC, one per zone of the VPC, in AMPHORA_SUBNETS_CIDR (the
//   stacks rather than the operator's own subnets: the agent port, the heartbeat path, the endpoints and the
//   NAT route all hang on subnets and route tables the deploy controls, and nothing has to be checked that
//   only a real account could). The amphorae's security group admits the agent port from the agent callers'
//   group alone; the VPC's (the health manager's) admits their heartbeats; EC2 and Secrets Manager get
//   interface endpoints beside SSM's, which the amphorae (their secret) and the agent callers (the vpc
//   network driver's calls) reach without the internet. Only the first-boot path (no image tag: the stock
//   image installs its packages from Debian's archive) gets a NAT gateway, for those subnets alone; the
//   baked image needs none. The health manager's load balancer takes a fixed address in each private
//   subnet (`heartbeatMappings`, stacks/health.ts), so the amphorae's heartbeat path is known before
//   the deploy: the stacks give every workload OTTAVA_CONTROLLER_IP_PORT_LIST (those addresses),
//   OTTAVA_AMP_BOOT_NETWORK_LIST and OTTAVA_AMP_SECGROUP_LIST (`environment`).
import { AMPHORA_SUBNETS_CIDR, VPC_CIDR, parseIpv4Cidr, type DeployPlan } from "./config";

/** HTTPS, the port of AWS's APIs. */
const HTTPS = 443;
/** With ec2, the heartbeat load balancer's address in each private subnet: this host of the subnet's range (AWS keeps the first four). */
const HEARTBEAT_HOST = 10;

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
  const callers = plan.amphoraDriver === "rest" ? agentCallers(vpc, plan) : undefined;
  const amphorae = plan.inAccount && callers ? amphoraSubnets(vpc, plan, plan.inAccount.firstBoot, callers.group) : undefined;
  const heartbeatMappings = plan.inAccount
    ? vpc.nodes.privateSubnets.apply((subnets) =>
        subnets.map((s) => ({ subnetId: s.id, privateIpv4Address: s.cidrBlock.apply((cidr) => hostOf(cidr!, HEARTBEAT_HOST)) })),
      )
    : undefined;
  return {
    vpc,
    agentCallers: callers && { securityGroups: [callers.group.id], privateSubnets: vpc.privateSubnets },
    /** With ec2: the heartbeat load balancer's subnets and its fixed address in each (stacks/health.ts). */
    heartbeatMappings,
    /** The settings the stacks give every workload: with ec2, the management subnets, the amphorae's security group, the health managers' addresses. */
    environment: {
      ...amphorae?.environment,
      ...(heartbeatMappings
        ? {
            OTTAVA_CONTROLLER_IP_PORT_LIST: heartbeatMappings
              .apply((mappings) => $util.all(mappings.map((m) => m.privateIpv4Address)))
              .apply((addresses) => addresses.map((a) => `${a}:${plan.heartbeatPort}`).join(",")),
          }
        : {}),
    },
  };
}

/** The `n`th address of an IPv4 CIDR ("10.0.4.0/22", 10: "10.0.4.10"). */
function hostOf(cidr: string, n: number): string {
  const parsed = parseIpv4Cidr(cidr);
  if (typeof parsed === "string") throw new Error(`${cidr}: ${parsed}`);
  const ip = parsed.base + n;
  return [24, 16, 8, 0].map((s) => (ip >>> s) & 255).join(".");
}

/**
 * The amphorae's management subnets (OTTAVA_COMPUTE_DRIVER=ec2): one /20 of AMPHORA_SUBNETS_CIDR in each
 * zone of the VPC, with a route table of their own (nothing but the VPC's local route, and on the
 * first-boot path a default route through a NAT gateway), and the amphorae's security group.
 */
function amphoraSubnets(vpc: sst.aws.Vpc, plan: DeployPlan, firstBoot: boolean, callers: aws.ec2.SecurityGroup) {
  const base = Number(AMPHORA_SUBNETS_CIDR.split(".")[2]);
  // One NAT gateway, in the first zone's public subnet: the first-boot path is for trying Ottava (a zone's
  // outage stops the other zone's first boots, not its running amphorae); a NAT gateway per zone would
  // double its hourly cost.
  const nat = firstBoot
    ? new aws.ec2.NatGateway("AmphoraNat", {
        allocationId: new aws.ec2.Eip("AmphoraNatIp", { domain: "vpc" }).allocationId,
        subnetId: vpc.publicSubnets.apply((subnets) => subnets[0]!),
      })
    : undefined;
  const routeTable = new aws.ec2.RouteTable("AmphoraRouteTable", {
    vpcId: vpc.id,
    routes: nat ? [{ cidrBlock: "0.0.0.0/0", natGatewayId: nat.id }] : [],
    tags: { Name: `${$app.name}-${$app.stage}-amphorae` },
  });
  // As sst.aws.Vpc makes its own subnets: in the zones it picked, resources made once they are known.
  const subnets = vpc.nodes.privateSubnets.apply((privateSubnets) =>
    privateSubnets.map((zoneSubnet, i) => {
      const subnet = new aws.ec2.Subnet(`AmphoraSubnet${i + 1}`, {
        vpcId: vpc.id,
        cidrBlock: `10.0.${base + 16 * i}.0/20`,
        availabilityZone: zoneSubnet.availabilityZone,
        mapPublicIpOnLaunch: false,
        tags: { Name: `${$app.name}-${$app.stage}-amphorae-${i + 1}` },
      });
      new aws.ec2.RouteTableAssociation(`AmphoraSubnet${i + 1}RouteTable`, { subnetId: subnet.id, routeTableId: routeTable.id });
      return subnet.id;
    }),
  );
  const group = new aws.ec2.SecurityGroup("Amphorae", {
    vpcId: vpc.id,
    description: "Ottava amphorae: their management interface",
    ingress: [
      {
        protocol: "tcp",
        fromPort: plan.amphoraAgentPort,
        toPort: plan.amphoraAgentPort,
        securityGroups: [callers.id],
        description: "The amphora agent, from the task functions that call it",
      },
    ],
    egress: [
      {
        protocol: "udp",
        fromPort: plan.heartbeatPort,
        toPort: plan.heartbeatPort,
        cidrBlocks: [VPC_CIDR],
        description: "Heartbeats and VRRP promotion reports, to the health manager's load balancer",
      },
      {
        protocol: "tcp",
        fromPort: HTTPS,
        toPort: HTTPS,
        cidrBlocks: [VPC_CIDR],
        description: "Secrets Manager (the amphora's secret), through the interface endpoint",
      },
      ...(firstBoot
        ? [80, HTTPS].map((port) => ({
            protocol: "tcp",
            fromPort: port,
            toPort: port,
            cidrBlocks: ["0.0.0.0/0"],
            description: "The first-boot install: Debian's archive, through the NAT gateway",
          }))
        : []),
    ],
  });
  return {
    environment: {
      OTTAVA_AMP_BOOT_NETWORK_LIST: subnets.apply((ids) => $util.all(ids)).apply((ids) => ids.join(",")),
      OTTAVA_AMP_SECGROUP_LIST: group.id,
    },
  };
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
  // The tasks that push the listeners' configuration read its certificates (stacks/certificates.ts); with
  // ec2, the amphorae read their own secret at boot.
  if (plan.certManager === "secretsmanager" || plan.inAccount)
    interfaceEndpoint(
      vpc,
      "SecretsManager",
      "secretsmanager",
      "Secrets Manager",
      "certificates the agent callers upload, amphorae's own secrets",
    );
  // With ec2 (and so vpc), the agent callers' network-driver calls (the VIP's ENIs), and the health manager's.
  if (plan.inAccount) interfaceEndpoint(vpc, "Ec2", "ec2", "EC2", "the agent callers' and the health manager's EC2 calls");
  return { group: callers };
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
