// The EC2 test bed: moto plus Octavia's real agent. One bed a test file: its own moto_server on its own
// port, its own /20 of 198.18.0.0/15 (./range.ts), in its moto a VPC of the /20's first half (a /21) with
// management subnets, and the management network (./network.ts) whose controller address moto listens on. It watches moto's
// DescribeInstances (running, tagged with the bed's stage) and gives each instance a network namespace
// of its own (with PID, mount and UTS namespaces: ../agent/agent.ts startInstance) holding its
// PrivateIpAddress, an IMDSv2 stand-in on 169.254.169.254:80 (./imds) serving its id, placement, role
// credentials and user data (DescribeInstanceAttribute userData), and boots it: Debian's cloud-init
// against that metadata service, which applies the user data as on EC2. The harness boots nothing
// itself. An instance no longer running loses its namespaces. It also watches DescribeSubnets and
// DescribeNetworkInterfaces and gives the VPCs of its /20 their data plane (./vpc.ts): a router namespace
// a VPC, a bridge a subnet, an interface in the instance for each ENI attached to it (attached at boot or
// later, of the instance's VPC or another: each wired to its own subnet's router; gone once detached),
// and each address routed to the ENI that holds it (`addressOwners`). Other VPCs (vpc()) are /24s of the
// /20's second half: no two VPCs overlap (an amphora routes each VPC's range through its own ENI), and
// nothing routes between them. The product's EC2 calls go through the EC2 test proxy
// (`ec2Endpoint`); the bed's own go to moto. Tests add subnets, clients and backends (subnet, client,
// backend). stop() removes everything, after a failure too; every namespace is held by a process that
// ends with the test process, even when killed.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  CreateNetworkInterfaceCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  DeleteNetworkInterfaceCommand,
  DescribeInstanceAttributeCommand,
  DescribeInstancesCommand,
  DescribeNetworkInterfacesCommand,
  DescribeSubnetsCommand,
  EC2Client,
  type Instance,
} from "@aws-sdk/client-ec2";
import { STAGE_TAG_KEY } from "@ottava/aws";
import { MOTO_CLIENT, ec2Bed, startEc2Proxy, startMoto, type Ec2Proxy, type Moto } from "@ottava/aws/testing";
import { agentUnavailable, httpGet, serveHttp, startInstance, type AmphoraInstance, type ServerTls } from "../agent/agent";
import { allocateRange, type BedRange } from "./range";
import { managementNetwork, type ManagementNetwork } from "./network";
import { gatewayOf, intToIp, ipToInt, vpcPlane, type BedHost, type PlaneEni, type PlaneSubnet, type VpcPlane } from "./vpc";

const HERE = new URL(".", import.meta.url).pathname;

/** Why the bed cannot run here, or undefined when it can: the agent's needs, Debian's cloud-init and python3-boto3 (the configure step's). */
export function bedUnavailable(): string | undefined {
  const agent = agentUnavailable();
  if (agent) return agent;
  if (!existsSync("/usr/bin/cloud-init")) return "/usr/bin/cloud-init is missing";
  if (spawnSync("/usr/bin/python3", ["-c", "import boto3"]).status !== 0) return "Debian's python3-boto3 is missing";
  return undefined;
}
const REGION = MOTO_CLIENT.region;
/** The management network's prefix: the whole /20 (the controller's address is its last /24's). */
const PREFIX = 20;
/** The bed's VPC: the /20's first half (its /24s 0-7); the second half (8-14) is for other VPCs, the last /24 the controller's. */
const VPC_PREFIX = 21;

/**
 * The bed's cloud-init (a drop-in of the instance's /etc/cloud/cloud.cfg.d): the Ec2 datasource (the
 * instance's IMDS stand-in), and of Debian's
 * modules those the amphora's user data uses (write_files, runcmd, and scripts_user that runs the
 * runcmd). The others would act on the host's disks, users and hostname (growpart, mounts, users-groups, ...).
 */
export const BED_CLOUD_CFG = `# The EC2 test bed's cloud-init (test/support/bed/bed.ts).
datasource_list: [Ec2]
datasource:
  Ec2:
    metadata_urls: ["http://169.254.169.254"]
    timeout: 5
    max_wait: 30
network: {config: disabled}
preserve_hostname: true
cloud_init_modules: [write_files]
cloud_config_modules: [runcmd]
cloud_final_modules: [scripts_user]
`;

/**
 * rsyslog's unit, for amphora-agent.service's Requires=rsyslog.service: the agent's log socket
 * (/run/rsyslog/octavia/log) is PID 1's (../agent/systemd), so there is nothing to start.
 */
const RSYSLOG_UNIT = `# Test scaffolding: the instance's PID 1 holds the agent's syslog socket.
[Service]
Type=oneshot
ExecStart=/bin/true
RemainAfterExit=yes
`;

/**
 * The instance's virtualization as an EC2 (Nitro) instance's shows it, in its /usr/sbin, first on PATH:
 * systemd-detect-virt (this host is a container; the instance is a VM) and dmidecode (this host has no
 * DMI). cloud-init reads them to know it is on AWS, and only then speaks IMDSv2.
 */
function ec2Identity(instanceId: string, instanceType: string): Record<string, string> {
  const h = createHash("sha256").update(instanceId).digest("hex");
  const uuid = `ec2${h.slice(0, 5)}-${h.slice(5, 9)}-${h.slice(9, 13)}-${h.slice(13, 17)}-${h.slice(17, 29)}`;
  return {
    "/usr/sbin/systemd-detect-virt:755": `#!/bin/sh
# Test scaffolding (test/support/bed): an EC2 instance is a VM, not a container.
case " $* " in *" --container "*|*" -c "*) echo none; exit 1 ;; esac
echo amazon
`,
    "/usr/sbin/dmidecode:755": `#!/bin/sh
# Test scaffolding (test/support/bed): the instance's DMI as an EC2 (Nitro) instance's (dmidecode --string <key>).
[ "$1" = --string ] || [ "$1" = -s ] || { echo "dmidecode stand-in: only --string" >&2; exit 2; }
case "$2" in
  system-uuid|system-serial-number) echo ${uuid.toUpperCase()} ;;
  system-manufacturer|chassis-asset-tag|chassis-manufacturer) echo "Amazon EC2" ;;
  system-product-name) echo ${instanceType} ;;
  *) echo ;;
esac
`,
  };
}

/** What an EC2 instance's init runs of cloud-init: its network, config and final stages (cloud-init.service, cloud-config.service, cloud-final.service). */
export const CLOUD_INIT_BOOT = [
  ["cloud-init", "init"],
  ["cloud-init", "modules", "--mode", "config"],
  ["cloud-init", "modules", "--mode", "final"],
];

/** What the bed's IMDS stand-in serves an instance (./imds). */
export interface InstanceMetadata {
  instance_id: string;
  ami_id: string;
  instance_type: string;
  local_ipv4: string;
  mac: string;
  availability_zone: string;
  region: string;
  /** The role of the instance's profile, for its credentials; null without a profile. */
  role: string | null;
  instance_profile_arn: string | null;
  credentials: { AccessKeyId: string; SecretAccessKey: string; Token: string };
  /** Base64, as DescribeInstanceAttribute answers it; null without user data. */
  user_data: string | null;
}

export interface BedInstance {
  id: string;
  address: string;
  /** With BedOptions.vipStandIn: the MAC of its stand-in VIP port (eth1, ./network.ts plug), for tests on the no-op network driver; else "". */
  vipMac: string;
  metadata: InstanceMetadata;
  /** The instance's namespaces: its files (read, exists), commands in its mount namespace (exec), logs. */
  ns: AmphoraInstance;
  /** Runs a command in the instance's network namespace (with the host's files). */
  netExec(args: string[]): { status: number | null; stdout: string; stderr: string };
  /** The metadata service's request log ("PUT /latest/api/token 200", ...). */
  imdsLog(): string[];
  /** Whether its boot has finished (cloud-init's last stage done). */
  booted(): boolean;
  /** The boot's, the agent's and the metadata service's logs, for a failure message. */
  logs(): string;
}

export interface BedOptions {
  /** OTTAVA_STAGE of the controller under test: the bed boots the instances tagged with it. */
  stage: string;
  /** Files of the amphora image beyond this host's packages: path[:mode] → content (../agent/agent.ts startInstance). */
  image?: Record<string, string>;
  /** The port the instances' agent listens on (its amphora-agent.conf's bind_port), for logs. Default 9443. */
  agentPort?: number;
  /** How often moto is asked for instances (ms); default 250. */
  pollMs?: number;
  /**
   * Each instance gets a stand-in VIP port (eth1, down, joined to nothing) and BedInstance.vipMac: for
   * tests on the no-op network driver, which attaches no ENI. Default false: eth1 is the ENI attached at
   * DeviceIndex 1, if any.
   */
  vipStandIn?: boolean;
}

/** A subnet a test made in one of the bed's VPCs (with its bridge in the VPC's namespace). */
export interface BedSubnet {
  id: string;
  vpcId: string;
  cidr: string;
  zone: string;
  /** Its first host address: the VPC router's. */
  gateway: string;
}

/** A client or a backend: a namespace with an ENI's address on its subnet's bridge, the router as its default gateway. */
export interface BedNode extends BedHost {
  /** GET <url> from the namespace (Python's sockets): status and body, or status 0 and `error`. */
  get(url: string, opts?: { ca?: string; host?: string; timeoutS?: number }): { status: number; body: string; error?: string };
  /** Serves HTTP on its address:port (HTTPS with `tls`), answering `body` to every GET. */
  serve(port: number, body: string, tls?: ServerTls): Promise<void>;
  /** Ends its servers, its namespace and its ENI. */
  remove(): Promise<void>;
}

export interface Bed {
  range: BedRange;
  /** The controller's address on the management network (moto and the heartbeat receiver listen there). */
  controllerIp: string;
  /** The file's moto_server: Secrets Manager and IAM (and EC2 without the proxy's corrections). */
  moto: Moto;
  /** The EC2 test proxy in front of moto (@ottava/aws/testing startEc2Proxy): its recorder and faults. */
  proxy: Ec2Proxy;
  /** The proxy's endpoint: OTTAVA_EC2_ENDPOINT, what the product's EC2 calls go through. */
  ec2Endpoint: string;
  /** An SDK client to the proxy (what the test does in EC2 is recorded there too). */
  ec2: EC2Client;
  /** The bed's VPC: the /20's first half. */
  vpcId: string;
  /** Its range, a /21 (other VPCs, vpc(), lie outside it). */
  vpcCidr: string;
  /** The management subnet of zone us-east-1a (the bed's instances may be in us-east-1b's too): OTTAVA_AMP_BOOT_NETWORK_LIST. */
  subnetId: string;
  zone: string;
  securityGroupId: string;
  /** A self-owned AMI tagged AMP_IMAGE_TAG_KEY = imageTag. */
  imageId: string;
  imageTag: string;
  network: ManagementNetwork;
  /** The instances the bed runs now, by instance id. */
  instances: Map<string, BedInstance>;
  /** Makes an instance profile with a role in moto's IAM (instances launched with it get the role's credentials from IMDS): its ARN. */
  instanceProfile(profile: string, role: string): string;
  /** Asks moto once and brings the instances in line (the bed also does so every pollMs). */
  sync(): Promise<void>;
  /** The instance's namespaces once they exist (within timeoutMs). */
  instance(id: string, timeoutMs?: number): Promise<BedInstance>;
  /** Errors of the background syncs and of the instances the bed could not start (each tried once) so far. */
  errors: Error[];
  /**
   * A new subnet of the VPC `vpcId` (default the bed's) in `zone` (default us-east-1a), with its bridge and
   * its router address: the next free /24 of the bed's VPC (its 3rd to 8th: the first two are the
   * management subnets), or the next /26 of another VPC's /24 (`vpc()`).
   */
  subnet(opts?: { zone?: string; vpcId?: string }): Promise<BedSubnet>;
  /**
   * A new VPC, a /24 of the /20's second half (the 9th to the 15th /24: outside the bed's VPC; the last
   * holds the controller): its id. It has a router of its own, and nothing joins it to another VPC.
   */
  vpc(): Promise<string>;
  /** A client: a namespace on the subnet's bridge with an ENI's address (moto picks it unless given). */
  client(subnetId: string, address?: string): Promise<BedNode>;
  /** A backend: a client serving HTTP (HTTPS with `tls`) on address:port, answering `body`. */
  backend(subnetId: string, address: string, port: number, body: string, tls?: ServerTls): Promise<BedNode>;
  /** Runs a command in the VPC's router namespace (default the bed's VPC), e.g. `ip neigh show`. */
  router(args: string[], vpcId?: string): string;
  stop(): Promise<void>;
}

/** moto's IAM through boto3 (the SDK has no IAM client in this workspace): argv[1] endpoint, argv[2] a JSON request. */
const IAM = `
import json, sys, boto3
iam = boto3.client("iam", endpoint_url=sys.argv[1], region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing")
req = json.loads(sys.argv[2])
if req["op"] == "create":
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    iam.create_role(RoleName=req["role"], AssumeRolePolicyDocument=json.dumps(trust))
    arn = iam.create_instance_profile(InstanceProfileName=req["profile"])["InstanceProfile"]["Arn"]
    iam.add_role_to_instance_profile(InstanceProfileName=req["profile"], RoleName=req["role"])
    print(json.dumps(arn))
else:
    roles = iam.get_instance_profile(InstanceProfileName=req["profile"])["InstanceProfile"]["Roles"]
    print(json.dumps(roles[0]["RoleName"] if roles else None))
`;

function iam(endpoint: string, req: { op: "create"; profile: string; role: string } | { op: "role"; profile: string }): string | null {
  const r = spawnSync("python3", ["-c", IAM, endpoint, JSON.stringify(req)], {
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, AWS_EC2_METADATA_DISABLED: "true" },
  });
  if (r.status !== 0) throw new Error(`moto IAM ${req.op} ${req.profile}: ${r.stderr}`);
  return JSON.parse(r.stdout) as string | null;
}

/** Static test credentials of an instance's role, in IMDS's format (moto accepts any). */
function credentialsOf(instanceId: string): InstanceMetadata["credentials"] {
  const h = createHash("sha256").update(instanceId).digest("hex").toUpperCase();
  return { AccessKeyId: `ASIA${h.slice(0, 16)}`, SecretAccessKey: `bed/${h.slice(16, 56)}`, Token: `bed-token-${instanceId}` };
}

export async function startBed(opts: BedOptions): Promise<Bed> {
  const range = allocateRange();
  // The /20's last host address: in its last /24, which no VPC holds, so never an instance's.
  const controllerIp = range.address(4094);
  const cleanups: (() => unknown)[] = [() => range.release()];
  const stopAll = async () => {
    for (const c of cleanups.splice(0).reverse()) {
      try {
        await c();
      } catch {
        // the rest still goes
      }
    }
  };
  try {
    const network = await managementNetwork({ index: range.index, controllerIp, prefix: PREFIX });
    cleanups.push(() => network.remove());
    const moto = await startMoto({ host: controllerIp });
    cleanups.push(() => moto.stop());
    // Its Secrets Manager calls, by workload, for the IAM record (@ottava/aws/testing recordedAwsCalls).
    await moto.record();
    // The account as the flows find it (@ottava/aws/testing's ec2Bed): a VPC of the /20's first half,
    // management subnets (its first two /24s, in two zones), a security group, and an AMI tagged as an
    // amphora image.
    const account = await ec2Bed(moto, range.address(0), VPC_PREFIX);
    const motoEc2 = account.ec2;
    cleanups.push(() => motoEc2.destroy());
    const proxy = await startEc2Proxy(moto.endpoint);
    cleanups.push(() => proxy.stop());
    const ec2 = new EC2Client({ ...MOTO_CLIENT, endpoint: proxy.endpoint });
    cleanups.push(() => ec2.destroy());
    const zone = "us-east-1a";
    const subnetId = account.subnets[zone];
    const vpcId = (await motoEc2.send(new DescribeSubnetsCommand({ SubnetIds: [subnetId] }))).Subnets![0]!.VpcId!;
    const securityGroupId = account.securityGroup;
    const imageTag = `bed-${range.index}`;
    const imageId = await account.taggedImage(imageTag);
    const plane = vpcPlane();
    cleanups.push(() => plane.stop());
    const bed = await watch({
      opts,
      range,
      controllerIp,
      network,
      moto,
      proxy,
      ec2Endpoint: proxy.endpoint,
      ec2,
      vpcId,
      vpcCidr: `${range.address(0)}/${VPC_PREFIX}`,
      zone,
      subnetId,
      securityGroupId,
      imageId,
      imageTag,
      motoEc2,
      plane,
      managementSubnets: new Set(Object.values(account.subnets)),
    });
    cleanups.push(() => bed.stopInstances());
    return { ...bed, stop: stopAll };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

type Parts = Omit<
  Bed,
  "instances" | "sync" | "instance" | "errors" | "instanceProfile" | "stop" | "subnet" | "vpc" | "client" | "backend" | "router"
> & {
  opts: BedOptions;
  /** A client straight to moto: the bed's own calls (the proxy's recorder and boot behaviour are the tests'). */
  motoEc2: EC2Client;
  plane: VpcPlane;
  managementSubnets: Set<string>;
};

/**
 * Where the VPC sends each private address: the ENI that holds it. The source of truth of VIP routing is
 * the EC2 test proxy's record of the last AssignPrivateIpAddresses of each address (`vipHolder`); the
 * proxy also makes moto's DescribeNetworkInterfaces honest (an address moved with AllowReassignment leaves
 * the old ENI), so an address the proxy never assigned (an ENI's primary) goes to the ENI that lists it.
 */
export function addressOwners(enis: PlaneEni[], vipHolder: (address: string) => string | undefined): Map<string, PlaneEni> {
  const owners = new Map<string, PlaneEni>();
  for (const eni of enis)
    for (const address of eni.addresses) {
      const holder = vipHolder(address);
      if (holder === undefined ? !owners.has(address) : holder === eni.id) owners.set(address, eni);
    }
  return owners;
}

/** Whether `cidr` lies within `outer` (both IPv4). */
function within(cidr: string, outer: string): boolean {
  const [a, p] = cidr.split("/") as [string, string];
  const [b, q] = outer.split("/") as [string, string];
  if (Number(p) < Number(q)) return false;
  const mask = Number(q) === 0 ? 0 : (~0 << (32 - Number(q))) >>> 0;
  return (ipToInt(a) & mask) >>> 0 === (ipToInt(b) & mask) >>> 0;
}

async function watch(parts: Parts) {
  const { opts, moto, motoEc2: ec2, network, plane, range } = parts;
  const instances = new Map<string, BedInstance>();
  const starting = new Map<string, Promise<BedInstance | undefined>>();
  const errors: Error[] = [];
  const failed = new Map<string, Error>();
  let stopped = false;
  let syncing: Promise<void> = Promise.resolve();

  const boot = async (instance: Instance): Promise<BedInstance> => {
    const id = instance.InstanceId!;
    const attr = await ec2.send(new DescribeInstanceAttributeCommand({ InstanceId: id, Attribute: "userData" }));
    const profileArn = instance.IamInstanceProfile?.Arn ?? null;
    const metadata: InstanceMetadata = {
      instance_id: id,
      ami_id: instance.ImageId!,
      instance_type: instance.InstanceType!,
      local_ipv4: instance.PrivateIpAddress!,
      mac: instance.NetworkInterfaces?.[0]?.MacAddress ?? "",
      availability_zone: instance.Placement?.AvailabilityZone ?? parts.zone,
      region: REGION,
      // IMDS names the role of the instance's profile.
      role: profileArn ? iam(moto.endpoint, { op: "role", profile: profileArn.split("/").pop()! }) : null,
      instance_profile_arn: profileArn,
      credentials: credentialsOf(id),
      user_data: attr.UserData?.Value ?? null,
    };
    const ns = await startInstance({
      image: {
        "/etc/cloud/cloud.cfg.d/99-ottava-bed.cfg": BED_CLOUD_CFG,
        "/usr/lib/systemd/system/rsyslog.service": RSYSLOG_UNIT,
        ...ec2Identity(id, metadata.instance_type),
        ...opts.image,
      },
      boot: CLOUD_INIT_BOOT,
      port: opts.agentPort ?? 9443,
    });
    let imds: ChildProcess | undefined;
    let vipMac = "";
    const imdsLines: string[] = [];
    try {
      vipMac = network.plug(ns.netns, metadata.local_ipv4, metadata.mac || undefined, opts.vipStandIn).vipMac;
      const file = join(ns.dir, "instance.json");
      writeFileSync(file, JSON.stringify(metadata));
      imds = spawn("/usr/bin/nsenter", [`--net=${ns.netns}`, "--", "/usr/bin/python3", join(HERE, "imds"), file], {
        stdio: ["pipe", "pipe", "pipe"],
      });
      let pending = "";
      imds.stderr!.on("data", (d: Buffer) => {
        pending += d.toString();
        const lines = pending.split("\n");
        pending = lines.pop()!;
        imdsLines.push(...lines);
      });
      const server = imds;
      await new Promise<void>((resolve, reject) => {
        server.stdout!.once("data", () => resolve());
        server.once("exit", (code) => reject(new Error(`the metadata service of ${id} exited (${code}): ${imdsLines.join("\n")}`)));
      });
    } catch (e) {
      imds?.kill("SIGKILL");
      await ns.stop();
      throw e;
    }
    const stopImds = imds;
    ns.go();
    const bedInstance: BedInstance = {
      id,
      address: metadata.local_ipv4,
      vipMac,
      metadata,
      ns: {
        ...ns,
        stop: async () => {
          stopImds.stdin?.end();
          stopImds.kill("SIGKILL");
          await ns.stop();
        },
      },
      netExec: (args) => spawnSyncIn(ns.netns, args),
      imdsLog: () => [...imdsLines],
      booted: () => (readText(join(ns.dir, "boot.log")) ?? "").includes("boot finished"),
      logs: () =>
        [
          ns.logs(),
          `--- cloud-init-output.log\n${ns.read("/var/log/cloud-init-output.log") ?? "(none)"}`,
          `--- imds\n${imdsLines.slice(-20).join("\n")}`,
        ].join("\n"),
    };
    return bedInstance;
  };

  const syncOnce = async () => {
    const out = await ec2.send(
      new DescribeInstancesCommand({
        Filters: [
          { Name: `tag:${STAGE_TAG_KEY}`, Values: [opts.stage] },
          { Name: "instance-state-name", Values: ["running"] },
        ],
      }),
    );
    const running = new Map<string, Instance>();
    for (const r of out.Reservations ?? [])
      for (const i of r.Instances ?? []) if (i.InstanceId && i.PrivateIpAddress) running.set(i.InstanceId, i);
    for (const [id, instance] of running) {
      if (instances.has(id) || starting.has(id) || failed.has(id)) continue;
      const p = boot(instance).then(
        (b) => {
          starting.delete(id);
          if (stopped) return void b.ns.stop();
          instances.set(id, b);
          return b;
        },
        (e: unknown) => {
          starting.delete(id);
          failed.set(id, e as Error); // not tried again: the test sees why
          errors.push(e as Error);
          return undefined;
        },
      );
      starting.set(id, p);
    }
    for (const [id, b] of instances) {
      if (running.has(id)) continue;
      instances.delete(id); // terminated (or stopped): its namespaces go
      await b.ns.stop();
    }
    if (stopped) return;
    // The VPCs' data plane: the subnets of the /20 (not the management subnets: those are ./network.ts's
    // bridge), the ENIs, who holds each address.
    const [subnetsOut, enisOut] = await Promise.all([
      ec2.send(new DescribeSubnetsCommand({})),
      ec2.send(new DescribeNetworkInterfacesCommand({})),
    ]);
    const subnets: PlaneSubnet[] = (subnetsOut.Subnets ?? [])
      .filter((s) => s.CidrBlock && within(s.CidrBlock, range.cidr) && !parts.managementSubnets.has(s.SubnetId!))
      .map((s) => ({ id: s.SubnetId!, vpcId: s.VpcId!, cidr: s.CidrBlock! }));
    const inPlane = new Set(subnets.map((s) => s.id));
    const enis: PlaneEni[] = (enisOut.NetworkInterfaces ?? [])
      .filter((n) => inPlane.has(n.SubnetId!) && n.MacAddress)
      .map((n) => ({
        id: n.NetworkInterfaceId!,
        subnetId: n.SubnetId!,
        mac: n.MacAddress!,
        addresses: [...(n.PrivateIpAddresses ?? [])]
          .sort((x, y) => Number(y.Primary ?? false) - Number(x.Primary ?? false))
          .map((a) => a.PrivateIpAddress!)
          .filter(Boolean),
        attachment: n.Attachment?.InstanceId
          ? {
              id: n.Attachment.AttachmentId!,
              instanceId: n.Attachment.InstanceId,
              deviceIndex: n.Attachment.DeviceIndex ?? 0,
              status: n.Attachment.Status ?? "",
            }
          : undefined,
      }));
    const netns = new Map([...instances].map(([id, b]) => [id, b.ns.netns]));
    errors.push(...(await plane.apply({ subnets, enis, owners: addressOwners(enis, (a) => parts.proxy.vipHolder(a)), instances: netns })));
  };
  // One sync at a time; a failed one (moto busy) leaves the next to run.
  const sync = () => {
    const next = syncing.then(() => (stopped ? undefined : syncOnce()));
    syncing = next.catch(() => undefined);
    return next;
  };

  const timer = setInterval(() => {
    sync().catch((e: unknown) => errors.push(e as Error));
  }, opts.pollMs ?? 250);

  // Address blocks for the tests' subnets: the bed's VPC's /24s after the management subnets' two; the
  // /24s of the /20's second half but the controller's for other VPCs; in another VPC (a /24), its four /26s.
  const free24 = Array.from({ length: 6 }, (_, i) => i + 2);
  const freeVpc24 = Array.from({ length: 7 }, (_, i) => i + 8);
  const otherVpcs = new Map<string, { base: string; free: number[] }>();
  /** How to end each client and backend (servers, namespace) at stop. */
  const nodeEnds = new Set<() => void>();

  const subnetOf = async (subnetId: string): Promise<PlaneSubnet> => {
    const s = (await ec2.send(new DescribeSubnetsCommand({ SubnetIds: [subnetId] }))).Subnets![0]!;
    if (!within(s.CidrBlock!, range.cidr) || parts.managementSubnets.has(subnetId))
      throw new Error(
        `${subnetId} (${s.CidrBlock}) is not a subnet of the bed's data plane: a management subnet, or outside ${range.cidr}`,
      );
    return { id: subnetId, vpcId: s.VpcId!, cidr: s.CidrBlock! };
  };

  const client = async (subnetId: string, address?: string): Promise<BedNode> => {
    const subnet = await subnetOf(subnetId);
    const eni = (
      await ec2.send(
        new CreateNetworkInterfaceCommand({
          SubnetId: subnetId,
          ...(address ? { PrivateIpAddress: address } : {}),
          Description: "ottava test bed: a client or backend namespace",
        }),
      )
    ).NetworkInterface!;
    const deleteEni = () =>
      ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: eni.NetworkInterfaceId! })).catch(() => undefined);
    let host: BedHost;
    try {
      host = await plane.plugHost(subnet, eni.NetworkInterfaceId!, eni.PrivateIpAddress!, eni.MacAddress!);
    } catch (e) {
      await deleteEni();
      throw e;
    }
    const servers: ChildProcess[] = [];
    const end = () => {
      nodeEnds.delete(end);
      for (const p of servers) {
        p.stdin?.end();
        p.kill("SIGKILL");
      }
      host.remove();
    };
    const node: BedNode = {
      ...host,
      get: (url, o) => httpGet(host.nsenter, url, o),
      serve: async (port, body, tls) => void servers.push(await serveHttp(host.nsenter, host.address, port, body, tls)),
      remove: async () => {
        end();
        await deleteEni();
      },
    };
    nodeEnds.add(end);
    // The router learns its address at the next sync.
    await sync();
    return node;
  };

  return {
    ...parts,
    instances,
    errors,
    instanceProfile: (profile: string, role: string) => iam(moto.endpoint, { op: "create", profile, role })!,
    sync,
    subnet: async ({ zone = "us-east-1a", vpcId = parts.vpcId }: { zone?: string; vpcId?: string } = {}) => {
      let cidr: string;
      if (vpcId === parts.vpcId) {
        const i = free24.shift();
        if (i === undefined) throw new Error(`the bed's VPC ${parts.vpcCidr} has no free /24 left for a subnet`);
        cidr = `${range.address(i * 256)}/24`;
      } else {
        const other = otherVpcs.get(vpcId);
        if (!other) throw new Error(`${vpcId} is neither the bed's VPC nor one of bed.vpc()`);
        const i = other.free.shift();
        if (i === undefined) throw new Error(`${vpcId} has no free /26 left for a subnet`);
        cidr = `${intToIp(ipToInt(other.base) + i * 64)}/26`;
      }
      const id = (await ec2.send(new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: cidr, AvailabilityZone: zone }))).Subnet!.SubnetId!;
      for (const started = Date.now(); !plane.hasBridge(vpcId, id); await new Promise((r) => setTimeout(r, 50))) {
        if (Date.now() - started > 20_000) throw new Error(`no bridge for ${id} within 20 s: ${errors.map((e) => e.message).join("; ")}`);
        await sync();
      }
      return { id, vpcId, cidr, zone, gateway: gatewayOf(cidr) };
    },
    vpc: async () => {
      const i = freeVpc24.shift();
      if (i === undefined) throw new Error(`the bed's /20 has no free /24 left for a VPC`);
      const base = range.address(i * 256);
      const id = (await ec2.send(new CreateVpcCommand({ CidrBlock: `${base}/24` }))).Vpc!.VpcId!;
      otherVpcs.set(id, { base, free: [0, 1, 2, 3] });
      return id;
    },
    client,
    backend: async (subnetId: string, address: string, port: number, body: string, tls?: ServerTls) => {
      const node = await client(subnetId, address);
      try {
        await node.serve(port, body, tls);
      } catch (e) {
        await node.remove();
        throw e;
      }
      return node;
    },
    router: (args: string[], vpcId = parts.vpcId) => plane.exec(vpcId, args),
    instance: async (id: string, timeoutMs = 30_000) => {
      for (const started = Date.now(); Date.now() - started < timeoutMs;) {
        const b = instances.get(id) ?? (await starting.get(id));
        if (b) return b;
        const error = failed.get(id);
        if (error) throw new Error(`the bed could not start instance ${id}: ${error.message}`, { cause: error });
        await sync();
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(
        `instance ${id} was not booted by the bed within ${timeoutMs} ms${errors.length ? `: ${errors.map((e) => e.message).join("; ")}` : ""}`,
      );
    },
    stopInstances: async () => {
      stopped = true;
      clearInterval(timer);
      await syncing;
      await Promise.all([...starting.values()]);
      await Promise.all([...instances.values()].map((b) => b.ns.stop()));
      instances.clear();
      // Clients and backends: their servers and namespaces (moto, and their ENIs, go next).
      for (const end of [...nodeEnds]) end();
    },
    moto,
  };
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

function spawnSyncIn(netns: string, args: string[]) {
  const r = spawnSync("/usr/bin/nsenter", [`--net=${netns}`, "--", ...args], { encoding: "utf8", timeout: 15_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
