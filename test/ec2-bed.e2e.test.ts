// A load balancer on EC2 amphorae with its VIP in a VPC, end to end on the test bed (test/support/bed):
// OTTAVA_COMPUTE_DRIVER=ec2 and OTTAVA_NETWORK_DRIVER=vpc against the file's moto (behind the bed's EC2
// test proxy), the REST amphora driver. The API creates the load balancer and allocates its VIP (a
// secondary address of a reservation ENI); the real flows run RunInstances with the user data and the
// amphora's secret, and plug the VIP (an ENI attached to the instance, the VIP moved to it); the bed boots
// the instance (Debian's cloud-init, the user data, packages/aws/image/ottava-amphora-configure fetching
// the secret with the instance role's IMDSv2 credentials and starting Octavia's real agent), makes the
// attached ENI its eth1, and routes the VIP to the ENI the last AssignPrivateIpAddresses named (ARP does
// not move it). The REST driver reaches the agent on the instance's management address over mutual TLS;
// the agent's heartbeats reach the health manager's receiver on the controller's address. A client in
// another subnet of the VPC reaches the members, in a third subnet, through the VIP: after an amphora
// failover, and after keepalived promotes an ACTIVE_STANDBY pair's BACKUP (ottava-vrrp-master reports it
// to the receiver, whose flow moves the VIP). Member networks (Octavia's network deltas, the vpc driver's
// ENIs): a member on another subnet of the VIP's VPC, in another zone, needs no new ENI; a member in a
// second VPC, which the bed keeps apart from the first, is reached once the member create plugs an ENI
// of that VPC into the amphora, through a failover (the new amphora gets its own), and its delete
// removes the ENI. TLS (OTTAVA_CERT_MANAGER=secretsmanager, on the file's moto): a TERMINATED_HTTPS
// listener serves its default certificate (a PKCS#12 secret) and, by SNI, a second one (a JSON secret)
// to the client; a pool reaches its member over TLS, checked against a CA secret; both again after the
// failover, whose new amphora got them from Secrets Manager.
//
// The walkthrough (docs/deploying.md, "Your first load balancer on AWS"): the first describe makes, fails
// over and deletes its load balancer with the page's own `openstack loadbalancer` commands, read from the
// page (test/support/walkthrough.ts), through the real CLI (test/support/cli) against the same app served
// over HTTP, and checks that nothing is left with the page's `aws` commands, against the file's moto.
import { execFile, execFileSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { serve, type ServerType } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  CreateTagsCommand,
  DescribeInstancesCommand,
  DescribeNetworkInterfacesCommand,
  DescribeSecurityGroupRulesCommand,
  DescribeSecurityGroupsCommand,
} from "@aws-sdk/client-ec2";
import type { Amphora } from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { DynamoHealthStore, createClients } from "@ottava/db";
import { AmphoraApiClient, CLIENT_CERT_CN, freePort } from "@ottava/amphora";
import { HeartbeatReceiver, LocalCertGenerator, createLocalCa } from "@ottava/controller";
import { AMPHORA_TAG_KEY, LOAD_BALANCER_TAG_KEY, SHARED_TAG_KEY, STAGE_TAG_KEY, amphoraSecretName } from "@ottava/aws";
import { CertificateSecretStore } from "@ottava/aws/certs/store";
import { MOTO_CLIENT, awsCallsMissingFromRecord, motoSecretsManager, recordedAwsCalls } from "@ottava/aws/testing";
import { PROJECT, inProcessApp } from "@ottava/local/testing";
import { AGENT_CONFIG_PATH, AGENT_SERVER_PEM_PATH, httpGet } from "./support/agent/agent";
import { bedUnavailable, startBed, type Bed, type BedInstance, type BedNode, type BedSubnet } from "./support/bed/bed";
import { intToIp, ipToInt } from "./support/bed/vpc";
import { makeCli, type Cli } from "./support/cli/openstack";
import { walkthroughCommands, walkthroughLines, words } from "./support/walkthrough";

const unavailable = bedUnavailable();
if (unavailable)
  throw new Error(
    `test/ec2-bed.e2e.test.ts needs root, Debian's python3-octavia, python3-boto3 and cloud-init (.ci/run installs them): ${unavailable}`,
  );

try {
  execFileSync("aws", ["--version"], { stdio: "pipe" });
} catch (e) {
  throw new Error(
    `test/ec2-bed.e2e.test.ts runs the walkthrough's \`aws\` commands: the AWS CLI, which this kind of machine has in the pyenv Python beside moto_server: ${e}`,
  );
}

const IMAGE = new URL("../packages/aws/image/", import.meta.url).pathname;
const STAGE = `e2e${randomUUID().slice(0, 8)}`;
const HEARTBEAT_KEY = `bed-heartbeat-key-${randomUUID()}`;

let bed: Bed;
/** The VIP subnet (shared: any project may use it), the members' subnet, the client's subnet: one VPC. */
let vipSubnet: BedSubnet;
let vipSubnetUuid: string;
let client: BedNode;
let members: BedNode[];
let VIP: string;
let app: Awaited<ReturnType<typeof inProcessApp>>;
let receiver: HeartbeatReceiver;
let caPem: string;
let gen: LocalCertGenerator;
let lbId: string;
let amphora: Amphora;
let instance: BedInstance;
/** Member networks: a backend on another subnet of the VIP's VPC; a second VPC, its member backend and subnets. */
let sameVpcMember: BedNode;
let vpc2: string;
let vpc2EniSubnet: BedSubnet;
let vpc2MemberSubnet: BedSubnet;
let vpc2Member: BedNode;
let vpc2MemberId: string;
/** The members' subnet, and the nth address of it the file's backends use. */
let memberSubnet: BedSubnet;
const memberAddress = (n: number) => memberSubnet.cidr.replace(/\.0\/\d+$/, `.${20 + n}`);
/** TLS: the test PKI's directory (makePki), its files' paths, the certificate secrets' store. */
let pki: string;
const tlsFile = (name: string) => join(pki, name);
let certificates: CertificateSecretStore;
/** The walkthrough: the app served over HTTP for the `openstack` CLI, the CLI, the values of the page's shell variables. */
let server: ServerType;
let os: Cli;
const pageVars: Record<string, string> = { S: STAGE };
/** The page's `openstack loadbalancer` commands, taken in order by the steps (walkthroughStep). */
const pageCommands = walkthroughCommands("openstack loadbalancer");

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

beforeAll(async () => {
  bed = await startBed({
    stage: STAGE,
    // The baked image: what install.sh installs beyond Debian's packages (this host has those).
    image: {
      "/usr/local/sbin/ottava-amphora-configure:755": readFileSync(`${IMAGE}ottava-amphora-configure`, "utf8"),
      "/usr/local/sbin/ottava-vrrp-master:755": readFileSync(`${IMAGE}ottava-vrrp-master`, "utf8"),
      "/usr/lib/systemd/system/amphora-agent.service": readFileSync(`${IMAGE}amphora-agent.service`, "utf8"),
      // install.sh's kernel settings that the amphora-haproxy namespace loads (amphora-netns runs sysctl
      // --system there): HAProxy binds the VIP on the BACKUP too, where keepalived has not put it. Only
      // these two: the file's others are the whole kernel's (fs.*), not this test's to change.
      "/etc/sysctl.d/60-octavia-amphora.conf": "net.ipv4.ip_nonlocal_bind = 1\nnet.ipv6.ip_nonlocal_bind = 1\n",
    },
  });
  vipSubnet = await bed.subnet({ zone: bed.zone });
  // Named as the walkthrough names its VIP subnet (its `--vip-subnet-id web-subnet`, resolved through /network).
  await bed.ec2.send(
    new CreateTagsCommand({
      Resources: [vipSubnet.id],
      Tags: [
        { Key: SHARED_TAG_KEY, Value: "true" },
        { Key: "Name", Value: "web-subnet" },
      ],
    }),
  );
  memberSubnet = await bed.subnet({ zone: bed.zone });
  const clientSubnet = await bed.subnet({ zone: bed.zone });
  members = await Promise.all([1, 2].map((n) => bed.backend(memberSubnet.id, memberAddress(n), 8080, `member-${n}`)));
  pageVars.MEMBER1 = members[0]!.address;
  pageVars.MEMBER2 = members[1]!.address;
  client = await bed.client(clientSubnet.id);
  pki = makePki(memberAddress(3), memberAddress(4));
  certificates = new CertificateSecretStore(motoSecretsManager(bed.moto), STAGE);
  const ca = await createLocalCa({ commonName: "Ottava EC2 bed CA" });
  caPem = ca.certificate;
  gen = new LocalCertGenerator(() => ca);
  // The receiver listens on the controller's address (o-hm0's), where the amphorae send their heartbeats.
  const heartbeatPort = await freePort(bed.controllerIp);
  vi.stubEnv("AWS_REGION", MOTO_CLIENT.region);
  vi.stubEnv("AWS_ACCESS_KEY_ID", MOTO_CLIENT.credentials.accessKeyId);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", MOTO_CLIENT.credentials.secretAccessKey);
  app = await inProcessApp({
    OTTAVA_STAGE: STAGE,
    OTTAVA_COMPUTE_DRIVER: "ec2",
    OTTAVA_AMPHORA_DRIVER: "rest",
    OTTAVA_NETWORK_DRIVER: "vpc",
    OTTAVA_EC2_ENDPOINT: bed.ec2Endpoint,
    OTTAVA_SECRETSMANAGER_ENDPOINT: bed.moto.endpoint,
    // Listeners' and pools' certificates: Secrets Manager secrets of the file's moto.
    OTTAVA_CERT_MANAGER: "secretsmanager",
    OTTAVA_AMP_IMAGE_TAG: bed.imageTag,
    OTTAVA_AMP_FLAVOR_ID: "t3.small",
    OTTAVA_AMP_BOOT_NETWORK_LIST: bed.subnetId,
    OTTAVA_AMP_SECGROUP_LIST: bed.securityGroupId,
    OTTAVA_AMP_INSTANCE_PROFILE: bed.instanceProfile("ottava-amphora", "ottava-amphora-role"),
    OTTAVA_AMP_ACTIVE_WAIT_SEC: "1",
    OTTAVA_CA_CERTIFICATE: ca.certificate,
    OTTAVA_CA_PRIVATE_KEY: ca.privateKey,
    OTTAVA_CONTROLLER_IP_PORT_LIST: `${bed.controllerIp}:${heartbeatPort}`,
    OTTAVA_HEARTBEAT_KEY: HEARTBEAT_KEY,
    OTTAVA_HEARTBEAT_INTERVAL: "1",
    OTTAVA_CONNECTION_MAX_RETRIES: "90",
    OTTAVA_CONNECTION_RETRY_INTERVAL: "2",
    OTTAVA_ACTIVE_CONNECTION_MAX_RETRIES: "5",
    OTTAVA_ACTIVE_CONNECTION_RETRY_INTERVAL: "1",
  });
  receiver = new HeartbeatReceiver({
    key: HEARTBEAT_KEY,
    host: bed.controllerIp,
    port: heartbeatPort,
    store: new DynamoHealthStore(createClients(app.config.dynamodbEndpoint).doc, { tableName: app.config.tableName }),
    compute: app.tasks.drivers.compute,
    log: createLogger({ service: "bed-heartbeats" }, "error"),
    metrics,
    // keepalived's promotion reports (ottava-vrrp-master) start the flow that moves the VIP.
    promotions: { engine: app.engine, store: app.store },
  });
  await receiver.start();
  // The app over HTTP for the CLI, as API Gateway serves it; every request as the project's (what Keystone's
  // token says on AWS; under noauth the X-Project-Id header, which app.call sends too).
  const url = await new Promise<string>((ok) => {
    server = serve(
      {
        fetch: (req: Request) => {
          const headers = new Headers(req.headers);
          headers.set("x-project-id", PROJECT);
          return app.app.fetch(new Request(req, { headers }));
        },
        hostname: "127.0.0.1",
        port: 0,
      },
      (info: AddressInfo) => ok(`http://127.0.0.1:${info.port}`),
    );
  });
  // The catalog's two endpoints (the walkthrough's step 4): the look-ups at /network, the API itself.
  os = makeCli(`${url}/network`, url, { timeoutMs: 300_000 });
  // The VIP subnet's UUID, as a client finds it: the Neutron look-up by its AWS id.
  const found = await app.call("GET", `/network/v2.0/subnets/${vipSubnet.id}`);
  expect(found.status).toBe(200);
  vipSubnetUuid = found.body.subnet.id;
}, 180_000);

afterAll(async () => {
  os?.dispose();
  server?.close();
  await receiver?.stop();
  await app?.settle();
  await bed?.stop();
  vi.unstubAllEnvs();
  if (pki) rmSync(pki, { recursive: true, force: true });
});

/**
 * The test PKI, in a new directory: a CA (ca.pem) and its empty CRL (ca.crl), and certificates it signs, EC P-256: www.a.test's
 * (a.pem, a.key, and a.p12, a PKCS#12 bundle without a password), www.b.test's (b.pem, b.key), and the
 * TLS backend's at `memberIp` (member.pem, member.key); and a self-signed one for `strangerIp`, which the
 * CA does not sign (stranger.pem, stranger.key).
 */
function makePki(memberIp: string, strangerIp: string): string {
  const dir = mkdtempSync(join(tmpdir(), "ottava-bed-tls-"));
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  openssl("req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=Bed TLS CA", "-days", "2");
  writeFileSync(join(dir, "index.txt"), "");
  writeFileSync(join(dir, "crlnumber"), "01\n");
  writeFileSync(
    join(dir, "ca.cnf"),
    "[ca]\ndefault_ca = d\n[d]\ndatabase = index.txt\ncrlnumber = crlnumber\ndefault_md = sha256\ndefault_crl_days = 2\n",
  );
  openssl("ca", "-gencrl", "-config", "ca.cnf", "-keyfile", "ca.key", "-cert", "ca.pem", "-out", "ca.crl");
  const sign = (name: string, cn: string, san: string) => {
    writeFileSync(join(dir, `${name}.ext`), `subjectAltName = ${san}\n`);
    openssl("req", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${cn}`);
    const ca = ["-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2"];
    openssl("x509", "-req", "-in", `${name}.csr`, ...ca, "-extfile", `${name}.ext`, "-out", `${name}.pem`);
  };
  sign("a", "www.a.test", "DNS:www.a.test");
  sign("b", "www.b.test", "DNS:www.b.test");
  sign("member", memberIp, `IP:${memberIp}`);
  const stranger = ["-subj", `/CN=${strangerIp}`, "-addext", `subjectAltName=IP:${strangerIp}`, "-days", "2"];
  openssl("req", "-x509", ...ec, "-keyout", "stranger.key", "-out", "stranger.pem", ...stranger);
  openssl("pkcs12", "-export", "-inkey", "a.key", "-in", "a.pem", "-passout", "pass:", "-out", "a.p12");
  return dir;
}

const inCidr = (ip: string, cidr: string) => {
  const n = (a: string) => a.split(".").reduce((v, o) => v * 256 + Number(o), 0);
  const [base, bits] = cidr.split("/");
  return Math.floor(n(ip) / 2 ** (32 - Number(bits))) === Math.floor(n(base!) / 2 ** (32 - Number(bits)));
};

/** The ENIs the vpc driver made for an amphora, as EC2 describes them. */
async function amphoraEnis(amphoraId: string) {
  const out = await bed.ec2.send(
    new DescribeNetworkInterfacesCommand({ Filters: [{ Name: `tag:${AMPHORA_TAG_KEY}`, Values: [amphoraId] }] }),
  );
  return out.NetworkInterfaces ?? [];
}

/** The ENI the vpc driver made for an amphora in the VIP subnet (its VRRP port), as EC2 describes it. */
async function amphoraEni(amphoraId: string) {
  const enis = (await amphoraEnis(amphoraId)).filter((e) => e.SubnetId === vipSubnet.id);
  expect(enis).toHaveLength(1);
  return enis[0]!;
}

/** The amphora's ENIs in the second VPC (its member port there), as EC2 describes them. */
async function vpc2Enis(amphoraId: string) {
  return (await amphoraEnis(amphoraId)).filter((e) => e.VpcId === vpc2);
}

/** An ENI by id, as EC2 describes it, or undefined once it is gone. */
async function eniById(id: string) {
  return (await bed.ec2.send(new DescribeNetworkInterfacesCommand({ Filters: [{ Name: "network-interface-id", Values: [id] }] })))
    .NetworkInterfaces?.[0];
}

/** A subnet's UUID, as a client finds it: the Neutron look-up by its AWS id. */
async function subnetUuid(awsId: string): Promise<string> {
  const found = await app.call("GET", `/network/v2.0/subnets/${awsId}`);
  expect(found.status, JSON.stringify(found.body)).toBe(200);
  return found.body.subnet.id;
}

/** The subnet's nth host address. */
const hostOf = (s: BedSubnet, n: number) => intToIp(ipToInt(s.cidr.split("/")[0]!) + n);

/** The load balancer's pool of its HTTP listener on port 80 (the walkthrough's web-pool). */
async function poolOf(id: string): Promise<string> {
  const listeners = (await app.call("GET", `/v2/lbaas/listeners?loadbalancer_id=${id}&protocol_port=80`)).body.listeners;
  expect(listeners).toHaveLength(1);
  return listeners[0].default_pool_id;
}

/** Creates a child of the load balancer (`path`, `key`, `body`) through the API and waits for the LB to be ACTIVE again: its id. */
async function create(path: string, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await app.call("POST", `/v2/lbaas/${path}`, { [key]: body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await settled(lbId);
  return res.body[key].id;
}

/** A GET of https://VIP/ from the client's subnet, trusting the test PKI's CA, for `host` (its SNI and name check). */
const httpsGet = (host: string) => client.get(`https://${VIP}/`, { ca: tlsFile("ca.pem"), host, timeoutS: 5 });

/** nsenter's option for the instance's amphora-haproxy namespace (a file of its mount namespace). */
const haproxyNs = (i: BedInstance) => `--net=/proc/${i.ns.pid()}/root/run/netns/amphora-haproxy`;
/** The instance's links (`ip -o link`) in its own network namespace and in amphora-haproxy. */
const linksOf = (i: BedInstance) => ({
  instance: i.netExec(["/usr/sbin/ip", "-o", "link"]).stdout,
  haproxy: i.ns.exec(["ip", "netns", "exec", "amphora-haproxy", "ip", "-o", "link"]).stdout,
});
/** A GET of `url` from the instance's amphora-haproxy namespace, where HAProxy reaches its members from. */
const fromAmphora = (i: BedInstance, url: string, timeoutS = 2) => httpGet(haproxyNs(i), url, { timeoutS });

/** Waits for the load balancer to leave PENDING_*; it must be ACTIVE. */
async function settled(id: string) {
  await withLogs(async () => {
    await vi.waitFor(
      async () =>
        expect((await app.call("GET", `/v2/lbaas/loadbalancers/${id}`)).body.loadbalancer.provisioning_status).not.toMatch(/^PENDING/),
      { timeout: 240_000, interval: 1000 },
    );
    expect((await app.call("GET", `/v2/lbaas/loadbalancers/${id}`)).body.loadbalancer.provisioning_status).toBe("ACTIVE");
  });
}

/** A load balancer in the VIP subnet with an HTTP listener on 80 and a round-robin pool of both members, fully populated; ACTIVE. */
async function createLoadBalancer(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await app.call("POST", "/v2/lbaas/loadbalancers", {
    loadbalancer: {
      name,
      vip_subnet_id: vipSubnetUuid,
      ...extra,
      listeners: [
        {
          protocol: "HTTP",
          protocol_port: 80,
          // HAProxy raises its open-files limit to fit maxconn (50000 by default: 125029 files); this
          // host's hard limit (20000) is the instance's, as test/agent.e2e.test.ts's listeners say too.
          connection_limit: 1000,
          default_pool: {
            name: `${name}-pool`,
            protocol: "HTTP",
            lb_algorithm: "ROUND_ROBIN",
            members: members.map((m) => ({ address: m.address, protocol_port: 8080 })),
          },
        },
      ],
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await settled(res.body.loadbalancer.id);
  return res.body.loadbalancer.id;
}

/** `n` GETs of the VIP from the client's subnet: how many each member answered (and failures). */
function spread(n: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const r = client.get(`http://${VIP}/`, { timeoutS: 5 });
    const key = r.status === 200 ? r.body.trim() : `status ${r.status}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** Runs a step; on failure the instances' boot, agent and metadata logs come with the error. */
async function withLogs<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    (e as Error).message +=
      `\n${[...bed.instances.values()].map((i) => `=== ${i.id}\n${i.logs()}`).join("\n")}\n${bed.errors.map(String).join("\n")}`;
    throw e;
  }
}

/**
 * The bed's listeners' connection limit: HAProxy raises its open-files limit to fit maxconn (50000 by
 * default: 125029 files), and this host's hard limit (20000) is the instance's. The walkthrough's listener
 * commands get it added, as createLoadBalancer's listener has it.
 */
const BED_LISTENER = ["--connection-limit", "1000"];

/**
 * Runs the walkthrough's next `openstack loadbalancer` command, which must be `openstack <expected> …`,
 * with the real CLI: the page's shell variables from pageVars, `extra` arguments after the page's. A
 * create's JSON output (`-f json`); the others print nothing.
 */
async function walkthroughStep(expected: string, extra: string[] = []): Promise<any> {
  const line = pageCommands.shift();
  expect(line, "the walkthrough's next openstack command").toMatch(new RegExp(`^openstack ${expected} `));
  const args = [...words(line!, pageVars).slice(1), ...extra];
  return withLogs(async () => (expected.endsWith(" create") ? os.json(args) : os.ok(args)));
}

/** Runs the walkthrough's `aws ec2 describe-…` commands that filter on the stage's tag, against the file's moto: what each prints. */
async function walkthroughAwsChecks(): Promise<Record<string, string>> {
  const checks = walkthroughLines().filter((l) => l.startsWith("aws ec2 describe-") && l.includes("tag:ottava:stage"));
  expect(checks.length).toBeGreaterThan(0);
  const env = {
    PATH: process.env.PATH,
    HOME: os.home,
    AWS_ENDPOINT_URL: bed.moto.endpoint,
    AWS_DEFAULT_REGION: MOTO_CLIENT.region,
    AWS_ACCESS_KEY_ID: MOTO_CLIENT.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: MOTO_CLIENT.credentials.secretAccessKey,
  };
  const printed = await Promise.all(
    checks.map(async (line) => {
      const [command, ...args] = words(line, pageVars);
      return (await promisify(execFile)(command!, args, { env, timeout: 60_000 })).stdout.trim();
    }),
  );
  return Object.fromEntries(checks.map((line, i) => [words(line, pageVars).slice(0, 3).join(" "), printed[i]!]));
}

describe("a load balancer on EC2 amphorae booted by the test bed", () => {
  it("reaches ACTIVE through the real flows: the VIP allocated in the VPC, RunInstances, the instance's boot, the agent reached over mutual TLS, the VIP plugged", async () => {
    // The walkthrough's step 5: the load balancer on the subnet named web-subnet, an HTTP listener, its pool, two members.
    lbId = (await walkthroughStep("loadbalancer create")).id;
    await walkthroughStep("loadbalancer listener create", BED_LISTENER);
    await walkthroughStep("loadbalancer pool create");
    await walkthroughStep("loadbalancer member create");
    await walkthroughStep("loadbalancer member create");
    await settled(lbId);
    const lb = (await app.call("GET", `/v2/lbaas/loadbalancers/${lbId}`)).body.loadbalancer;
    VIP = lb.vip_address;
    expect(lb).toMatchObject({ vip_subnet_id: vipSubnetUuid, vip_network_id: expect.any(String), vip_port_id: expect.any(String) });
    expect(inCidr(VIP, vipSubnet.cidr)).toBe(true);
    const amphorae = (await app.call("GET", `/v2/octavia/amphorae?loadbalancer_id=${lbId}`)).body.amphorae;
    expect(amphorae).toHaveLength(1);
    amphora = (await app.store.getAmphora(amphorae[0].id))!;
    expect(amphora.status).toBe("ALLOCATED");
    // Its VRRP port: an ENI in the VIP subnet, attached to the instance, holding the VIP (the proxy's record).
    const eni = await amphoraEni(amphora.id);
    expect(eni).toMatchObject({
      SubnetId: vipSubnet.id,
      PrivateIpAddress: amphora.vrrp_ip,
      Attachment: { InstanceId: amphora.compute_id, DeviceIndex: 1 },
    });
    expect(bed.proxy.vipHolder(VIP)).toBe(eni.NetworkInterfaceId);
    instance = await bed.instance(amphora.compute_id!);
    // The management address the flow reached the agent on is the instance's, from moto, in the bed's subnet.
    expect(amphora.lb_network_ip).toBe(instance.address);
    expect(instance.metadata.role).toBe("ottava-amphora-role");
  }, 300_000);

  it("booted the instance from its user data: cloud-init wrote the files, the configure step fetched the secret with the role's IMDSv2 credentials and started the agent", async () => {
    const secret = JSON.parse(
      String(
        (await motoSecretsManager(bed.moto)("GetSecretValue", { SecretId: amphoraSecretName(STAGE, amphora.id) }, "test")).SecretString,
      ),
    ) as { server_pem: string; agent_conf: string };
    // The user data carries no secret: where the secret is, and the controller CA.
    const userData = Buffer.from(instance.metadata.user_data!, "base64").toString();
    expect(userData).toMatch(/^#cloud-config\n/);
    expect(userData).toContain(amphoraSecretName(STAGE, amphora.id));
    expect(userData).not.toContain(HEARTBEAT_KEY);
    expect(userData).not.toContain("PRIVATE KEY");
    expect(instance.ns.read("/etc/octavia/certs/client_ca.pem")).toBe(caPem.endsWith("\n") ? caPem : `${caPem}\n`);
    expect(JSON.parse(instance.ns.read("/etc/ottava/amphora.json")!)).toEqual({
      region: MOTO_CLIENT.region,
      secret_id: amphoraSecretName(STAGE, amphora.id),
      secretsmanager_endpoint: bed.moto.endpoint,
    });
    // The secret's files, root's alone, as the agent read them at its start.
    expect(sha256(instance.ns.read(AGENT_SERVER_PEM_PATH)!)).toBe(sha256(secret.server_pem));
    expect(instance.ns.exec(["stat", "-c", "%a", AGENT_SERVER_PEM_PATH, AGENT_CONFIG_PATH]).stdout.split("\n").slice(0, 2)).toEqual([
      "600",
      "600",
    ]);
    expect(instance.ns.read(AGENT_CONFIG_PATH)).toContain(`heartbeat_key = ${HEARTBEAT_KEY}`);
    expect(instance.ns.read(AGENT_CONFIG_PATH)).toContain(`controller_ip_port_list = ${bed.controllerIp}:`);
    // Through the metadata service: a token, then the role's credentials (botocore), and nothing refused.
    const log = instance.imdsLog();
    expect(log).toContain("GET /latest/meta-data/iam/security-credentials/ottava-amphora-role 200");
    expect(log.filter((l) => / 401$/.test(l))).toEqual([]);
    // Octavia's agent, started by the configure step through systemctl: the unit's process.
    expect(instance.ns.exec(["systemctl", "is-active", "amphora-agent"]).stdout.trim()).toBe("active");
    expect(instance.ns.exec(["pgrep", "-f", "/usr/bin/amphora-agent --config-file /etc/octavia/amphora-agent.conf"]).status).toBe(0);
    // The flow's VIP plug reached the agent: the ENI (the instance's eth1, found by its MAC) moved into its amphora-haproxy namespace with the VIP.
    expect(instance.ns.exec(["ip", "netns", "exec", "amphora-haproxy", "ip", "-4", "-o", "addr"]).stdout).toContain(`inet ${VIP}/`);
  });

  it("answers the REST client on the management address over mutual TLS, with the certificate from its secret (CN = the amphora id)", async () => {
    const agentClient = (clientPem: string, maxRetries: number) =>
      new AmphoraApiClient({
        port: app.config.amphoraAgentPort,
        tls: { ca: caPem, clientPem },
        connTimeout: 5,
        readTimeout: 30,
        retries: { maxRetries, retryInterval: 1 },
      });
    const client = agentClient((await gen.generateServerPem(CLIENT_CERT_CN, 3600)).pem, 2);
    try {
      expect(await client.getInfo(amphora)).toMatchObject({ api_version: "1.0" });
      // A client certificate from another CA is refused.
      const other = new LocalCertGenerator(await createLocalCa({ commonName: "another CA" }).then((c) => () => c));
      const stranger = agentClient((await other.generateServerPem(CLIENT_CERT_CN, 60)).pem, 0);
      await expect(stranger.getInfo(amphora)).rejects.toThrow();
      stranger.close();
    } finally {
      client.close();
    }
  });

  it("takes the agent configuration (the amphora config flow) and a certificate upload (the rotation's), as the agent's files show", async () => {
    // The agent rewrites its file in place (O_TRUNC): its modification time tells the PUT config came.
    const mtime = () => instance.ns.exec(["stat", "-c", "%y", AGENT_CONFIG_PATH]).stdout.trim();
    const before = mtime();
    expect((await app.call("PUT", `/v2/octavia/amphorae/${amphora.id}/config`)).status).toBe(202);
    await app.settle();
    await vi.waitFor(() => expect(mtime()).not.toBe(before), { timeout: 30_000, interval: 250 });
    expect(instance.ns.read(AGENT_CONFIG_PATH)).toContain(`amphora_id = ${amphora.id}`);
    expect(instance.ns.read(AGENT_CONFIG_PATH)).toContain(`heartbeat_key = ${HEARTBEAT_KEY}`);
    const rotated = await gen.generateServerPem(amphora.id, 7200);
    await app.tasks.drivers.amphora.uploadCert(amphora, rotated.pem);
    expect(sha256(instance.ns.read(AGENT_SERVER_PEM_PATH)!)).toBe(sha256(rotated.pem));
  });

  it("sends heartbeats that reach the health manager's receiver on the controller's address", async () => {
    await vi.waitFor(
      async () => {
        expect(receiver.counters.accepted).toBeGreaterThan(0);
        const heard = ((await app.store.getAmphora(amphora.id)) as unknown as Record<string, unknown>).last_heartbeat;
        expect(Date.parse(String(heard))).toBeGreaterThan(Date.parse(amphora.created_at ?? "1970-01-01T00:00:00Z"));
      },
      { timeout: 60_000, interval: 500 },
    );
    expect(receiver.counters.rejected).toBe(0);
    expect(receiver.counters.unknown).toBe(0);
  });

  it("serves the members through the VIP to a client in another subnet: 30 requests split by round robin", () => {
    expect(spread(30)).toEqual({ "member-1": 15, "member-2": 15 });
  });

  it("holds Octavia's rules in the load balancer's security group: the listener's port from anywhere, the peer port", async () => {
    const group = (
      await bed.ec2.send(new DescribeSecurityGroupsCommand({ Filters: [{ Name: `tag:${LOAD_BALANCER_TAG_KEY}`, Values: [lbId] }] }))
    ).SecurityGroups!;
    expect(group).toHaveLength(1);
    const rules = (
      await bed.ec2.send(new DescribeSecurityGroupRulesCommand({ Filters: [{ Name: "group-id", Values: [group[0]!.GroupId!] }] }))
    ).SecurityGroupRules!.filter((r) => !r.IsEgress);
    expect(rules.map((r) => `${r.IpProtocol} ${r.FromPort}-${r.ToPort} ${r.CidrIpv4}`).sort()).toEqual([
      "tcp 1025-1025 0.0.0.0/0",
      "tcp 80-80 0.0.0.0/0",
    ]);
  });

  it("takes a member on another subnet of the VIP's VPC, in another zone: no new ENI (the VPC routes between its subnets), and the member is reached through the VIP", async () => {
    const subnet = await bed.subnet({ zone: "us-east-1b" });
    await bed.ec2.send(new CreateTagsCommand({ Resources: [subnet.id], Tags: [{ Key: SHARED_TAG_KEY, Value: "true" }] }));
    sameVpcMember = await bed.backend(subnet.id, hostOf(subnet, 20), 8080, "member-3");
    const enisBefore = (await amphoraEnis(amphora.id)).map((e) => e.NetworkInterfaceId);
    const callsBefore = bed.proxy.calls.length;
    const res = await app.call("POST", `/v2/lbaas/pools/${await poolOf(lbId)}/members`, {
      member: { address: sameVpcMember.address, protocol_port: 8080, subnet_id: await subnetUuid(subnet.id) },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await settled(lbId);
    // Nothing plugged: no ENI made or attached, the amphora's ENIs as they were, no new interface in the instance.
    const calls = bed.proxy.calls.slice(callsBefore).map((c) => c.action);
    expect(calls.filter((a) => /^(Create|Attach)NetworkInterface$/.test(a))).toEqual([]);
    expect((await amphoraEnis(amphora.id)).map((e) => e.NetworkInterfaceId)).toEqual(enisBefore);
    expect(linksOf(instance).haproxy).not.toMatch(/: eth2[:@]/);
    expect((await app.store.getAmphora(amphora.id))!.member_ports ?? []).toEqual([]);
    await withLogs(async () =>
      vi.waitFor(() => expect(spread(30)).toEqual({ "member-1": 10, "member-2": 10, "member-3": 10 }), { timeout: 60_000, interval: 1000 }),
    );
  }, 120_000);

  it("takes a member in a second VPC: unreachable from the amphora until the member create plugs an ENI of that VPC (in the amphora's zone) into it; then reached through the VIP", async () => {
    vpc2 = await bed.vpc();
    // The ENI's subnet in the amphora's zone; the member in the VPC's other zone, reached through the VPC's router.
    vpc2EniSubnet = await bed.subnet({ vpcId: vpc2, zone: bed.zone });
    vpc2MemberSubnet = await bed.subnet({ vpcId: vpc2, zone: "us-east-1b" });
    await bed.ec2.send(
      new CreateTagsCommand({ Resources: [vpc2EniSubnet.id, vpc2MemberSubnet.id], Tags: [{ Key: SHARED_TAG_KEY, Value: "true" }] }),
    );
    vpc2Member = await bed.backend(vpc2MemberSubnet.id, hostOf(vpc2MemberSubnet, 10), 8080, "member-vpc2");
    const url = `http://${vpc2Member.address}:8080/`;
    // The bed keeps the VPCs apart: from the amphora's amphora-haproxy namespace (its VIP ENI's) the
    // member does not answer, and the VIP's VPC's router has no route to the second VPC.
    expect(fromAmphora(instance, url)).toMatchObject({ status: 0 });
    expect(bed.router(["/usr/sbin/ip", "-4", "route"])).not.toContain(vpc2MemberSubnet.cidr);
    expect(await vpc2Enis(amphora.id)).toEqual([]);

    const callsBefore = bed.proxy.calls.length;
    const res = await app.call("POST", `/v2/lbaas/pools/${await poolOf(lbId)}/members`, {
      member: { address: vpc2Member.address, protocol_port: 8080, subnet_id: await subnetUuid(vpc2MemberSubnet.id) },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    vpc2MemberId = res.body.member.id;
    await settled(lbId);
    // One ENI of the second VPC, in its subnet of the amphora's zone, attached to the amphora's instance
    // beside its management and VIP ones; on the amphora's record as its member port on that network.
    const [eni, ...more] = await vpc2Enis(amphora.id);
    expect(more).toEqual([]);
    expect(eni).toMatchObject({ SubnetId: vpc2EniSubnet.id, Attachment: { InstanceId: amphora.compute_id, Status: "attached" } });
    expect(eni!.Attachment!.DeviceIndex).toBeGreaterThanOrEqual(2);
    const created = bed.proxy.calls.slice(callsBefore).filter((c) => c.action === "CreateNetworkInterface" && c.status === 200);
    expect(created.map((c) => c.params.SubnetId)).toEqual([vpc2EniSubnet.id]);
    const record = (await app.store.getAmphora(amphora.id))!;
    expect(record.member_ports).toEqual([expect.objectContaining({ mac_address: eni!.MacAddress, network_id: expect.any(String) })]);
    // The agent's plug_network found it by its MAC and moved it into amphora-haproxy with its address.
    expect(linksOf(instance).haproxy).toContain(`link/ether ${eni!.MacAddress} `);
    expect(instance.ns.exec(["ip", "netns", "exec", "amphora-haproxy", "ip", "-4", "-o", "addr"]).stdout).toContain(
      `inet ${eni!.PrivateIpAddress}/`,
    );
    await withLogs(async () => {
      await vi.waitFor(() => expect(fromAmphora(instance, url)).toMatchObject({ status: 200, body: "member-vpc2" }), {
        timeout: 30_000,
        interval: 500,
      });
      await vi.waitFor(() => expect(spread(40)).toEqual({ "member-1": 10, "member-2": 10, "member-3": 10, "member-vpc2": 10 }), {
        timeout: 60_000,
        interval: 1000,
      });
    });
  }, 120_000);

  it("serves a TERMINATED_HTTPS listener with certificates from Secrets Manager: the default one (PKCS#12) to any name, the SNI one (JSON) to its own", async () => {
    const owner = { projectId: (await app.call("GET", `/v2/lbaas/loadbalancers/${lbId}`)).body.loadbalancer.project_id };
    // The walkthrough's TLS listener: its $CERT (a PKCS#12 bundle) and $CERT2 (PEMs), stored as `npm run cert -- store` stores them.
    pageVars.CERT = await certificates.storePkcs12(owner, readFileSync(tlsFile("a.p12")));
    pageVars.CERT2 = await certificates.storeCert(owner, {
      certificate: readFileSync(tlsFile("b.pem"), "utf8"),
      private_key: readFileSync(tlsFile("b.key"), "utf8"),
    });
    const listenerId = (await walkthroughStep("loadbalancer listener create", BED_LISTENER)).id;
    await walkthroughStep("loadbalancer pool create");
    await walkthroughStep("loadbalancer member create");
    await walkthroughStep("loadbalancer member create");
    await settled(lbId);
    // The agent keeps the PEMs it was sent under the LB's directory; the listener's crt-list names both.
    const crtList = instance.ns.read(`/var/lib/octavia/certs/${lbId}/${listenerId}.pem`) ?? "";
    const files = crtList
      .trim()
      .split("\n")
      .map((line) => line.split(/\s+/)[0]!);
    expect(files).toHaveLength(2);
    const held = files.map((f) => instance.ns.read(f) ?? "").join("\n");
    for (const name of ["a.pem", "b.pem"]) expect(held).toContain(readFileSync(tlsFile(name), "utf8").split("\n")[1]);
    await withLogs(async () => {
      await vi.waitFor(() => expect(httpsGet("www.a.test")).toMatchObject({ status: 200, body: expect.stringMatching(/^member-[12]$/) }), {
        timeout: 30_000,
        interval: 500,
      });
      expect(httpsGet("www.b.test")).toMatchObject({ status: 200, body: expect.stringMatching(/^member-[12]$/) });
      // A name no certificate holds gets the default one, for www.a.test: the client's name check refuses it.
      expect(httpsGet("www.c.test")).toMatchObject({ status: 0, error: expect.stringMatching(/match|hostname/i) });
    });
  }, 120_000);

  it("reaches a pool's member over TLS, its certificate checked against a CA and a CRL kept in Secrets Manager; a member the CA did not sign gets no request", async () => {
    const tlsBackend = (n: number, name: string) =>
      bed.backend(memberSubnet.id, memberAddress(n), 8443, `member-${name}`, { cert: tlsFile(`${name}.pem`), key: tlsFile(`${name}.key`) });
    const [member, stranger] = await Promise.all([tlsBackend(3, "member"), tlsBackend(4, "stranger")]);
    const owner = { projectId: (await app.call("GET", `/v2/lbaas/loadbalancers/${lbId}`)).body.loadbalancer.project_id };
    const caRef = await certificates.storeSecret(owner, readFileSync(tlsFile("ca.pem"), "utf8"));
    const crlRef = await certificates.storeSecret(owner, readFileSync(tlsFile("ca.crl"), "utf8"));
    // Listener 8081's pool reaches the member the CA signed; 8082's the stranger.
    for (const [port, backend] of [
      [8081, member],
      [8082, stranger],
    ] as const) {
      const listenerId = await create("listeners", "listener", {
        loadbalancer_id: lbId,
        protocol: "HTTP",
        protocol_port: port,
        connection_limit: 1000,
      });
      const pool = {
        listener_id: listenerId,
        protocol: "HTTP",
        lb_algorithm: "ROUND_ROBIN",
        tls_enabled: true,
        ca_tls_container_ref: caRef,
        crl_container_ref: crlRef,
      };
      const poolId = await create("pools", "pool", pool);
      await create(`pools/${poolId}/members`, "member", { address: backend!.address, protocol_port: 8443 });
    }
    // Octavia's server line: ssl with the CA's and the CRL's files, verify required.
    const config = instance.ns.read(`/var/lib/octavia/${lbId}/haproxy.cfg`) ?? "";
    const server = config.split("\n").find((l) => l.includes(`${member.address}:8443`)) ?? "";
    const [, caFile, crlFile] = / ssl ca-file (\S+) crl-file (\S+) verify required /.exec(server) ?? [];
    expect(instance.ns.read(caFile!)).toContain(readFileSync(tlsFile("ca.pem"), "utf8").split("\n")[1]);
    expect(instance.ns.read(crlFile!)).toBe(readFileSync(tlsFile("ca.crl"), "utf8"));
    await withLogs(async () => {
      await vi.waitFor(
        () => expect(client.get(`http://${VIP}:8081/`, { timeoutS: 5 })).toMatchObject({ status: 200, body: "member-member" }),
        {
          timeout: 30_000,
          interval: 500,
        },
      );
      expect(client.get(`http://${VIP}:8082/`, { timeoutS: 5 })).toMatchObject({ status: 503 });
    });
  }, 120_000);

  it("fails the amphora over: the new amphora's ENI takes the VIP (AllowReassignment) before the old one goes; traffic resumes; the old instance and ENI are gone", async () => {
    const oldEni = (await amphoraEni(amphora.id)).NetworkInterfaceId!;
    const [oldVpc2Eni] = await vpc2Enis(amphora.id);
    expect(oldVpc2Eni).toBeDefined();
    const oldInstance = amphora.compute_id!;
    bed.proxy.reset();
    // The walkthrough's step 7 (a SINGLE load balancer's failover replaces its one amphora, as the amphora's does).
    await walkthroughStep("loadbalancer failover");
    await settled(lbId);
    const [replacement] = (await app.store.amphoraeOf(lbId)).filter((a) => a.status === "ALLOCATED");
    expect(replacement!.id).not.toBe(amphora.id);
    const newEni = (await amphoraEni(replacement!.id)).NetworkInterfaceId!;
    // The VIP moved to the new ENI with AllowReassignment, before the old ENI was detached, and never back.
    const calls = bed.proxy.calls.filter((c) => c.status === 200);
    const move = calls.findIndex(
      (c) => c.action === "AssignPrivateIpAddresses" && c.params.NetworkInterfaceId === newEni && c.params["PrivateIpAddress.1"] === VIP,
    );
    expect(move).toBeGreaterThanOrEqual(0);
    expect(calls[move]!.params.AllowReassignment).toBe("true");
    const detach = calls.findIndex((c) => c.action === "DetachNetworkInterface");
    expect(detach).toBeGreaterThan(move);
    expect(calls.filter((c) => c.action === "UnassignPrivateIpAddresses")).toEqual([]);
    expect(bed.proxy.vipHolder(VIP)).toBe(newEni);
    const replacementInstance = await bed.instance(replacement!.compute_id!);
    // The member network goes with the amphora: the new one has its own ENI of the second VPC, plugged by
    // its agent, and the member there is reached from it and through the VIP.
    const [newVpc2Eni, ...more] = await vpc2Enis(replacement!.id);
    expect(more).toEqual([]);
    expect(newVpc2Eni).toMatchObject({ SubnetId: vpc2EniSubnet.id, Attachment: { InstanceId: replacement!.compute_id } });
    expect(newVpc2Eni!.NetworkInterfaceId).not.toBe(oldVpc2Eni!.NetworkInterfaceId);
    expect(linksOf(replacementInstance).haproxy).toContain(`link/ether ${newVpc2Eni!.MacAddress} `);
    await withLogs(async () => {
      await vi.waitFor(
        () =>
          expect(fromAmphora(replacementInstance, `http://${vpc2Member.address}:8080/`)).toMatchObject({
            status: 200,
            body: "member-vpc2",
          }),
        { timeout: 30_000, interval: 500 },
      );
      await vi.waitFor(() => expect(spread(40)).toEqual({ "member-1": 10, "member-2": 10, "member-3": 10, "member-vpc2": 10 }), {
        timeout: 60_000,
        interval: 1000,
      });
      // TLS too: the new amphora read the certificates from Secrets Manager.
      expect(httpsGet("www.b.test")).toMatchObject({ status: 200 });
      expect(client.get(`http://${VIP}:8081/`, { timeoutS: 5 })).toMatchObject({ status: 200, body: "member-member" });
    });
    // The old amphora's instance and ENIs (its VIP's and its member's) are gone.
    expect(await eniById(oldEni)).toBeUndefined();
    expect(await eniById(oldVpc2Eni!.NetworkInterfaceId!)).toBeUndefined();
    await vi.waitFor(() => expect(bed.instances.has(oldInstance)).toBe(false), { timeout: 30_000, interval: 500 });
    amphora = replacement!;
    instance = replacementInstance;
  }, 300_000);

  it("deletes the member in the second VPC: its ENI is detached and deleted (gone in EC2 and from the instance), and the amphora no longer reaches that VPC", async () => {
    const [eni] = await vpc2Enis(amphora.id);
    expect(eni).toBeDefined();
    expect((await app.call("DELETE", `/v2/lbaas/pools/${await poolOf(lbId)}/members/${vpc2MemberId}`)).status).toBe(204);
    await settled(lbId);
    expect(await vpc2Enis(amphora.id)).toEqual([]);
    expect(await eniById(eni!.NetworkInterfaceId!)).toBeUndefined();
    expect((await app.store.getAmphora(amphora.id))!.member_ports ?? []).toEqual([]);
    // The bed unplugs it at its next sync: from amphora-haproxy, where the agent had moved it.
    await vi.waitFor(
      () => {
        const links = linksOf(instance);
        expect(links.haproxy).not.toContain(eni!.MacAddress);
        expect(links.instance).not.toContain(eni!.MacAddress);
      },
      { timeout: 10_000, interval: 250 },
    );
    expect(fromAmphora(instance, `http://${vpc2Member.address}:8080/`)).toMatchObject({ status: 0 });
    await withLogs(async () =>
      vi.waitFor(() => expect(spread(30)).toEqual({ "member-1": 10, "member-2": 10, "member-3": 10 }), { timeout: 60_000, interval: 1000 }),
    );
  }, 120_000);

  it("deletes the load balancer: nothing tagged with it remains (no ENI, group or instance); the walkthrough's aws commands find nothing of the stage", async () => {
    await walkthroughStep("loadbalancer delete");
    await app.settle();
    await vi.waitFor(async () => expect(await taggedWith(lbId)).toEqual({ enis: [], groups: [], instances: [] }), {
      timeout: 60_000,
      interval: 1000,
    });
    // The walkthrough's step 8: each prints nothing.
    expect(await walkthroughAwsChecks()).toEqual({
      "aws ec2 describe-instances": "",
      "aws ec2 describe-network-interfaces": "",
      "aws ec2 describe-security-groups": "",
    });
    // Every `openstack loadbalancer` command of the page ran.
    expect(pageCommands).toEqual([]);
  }, 120_000);
});

/** What EC2 holds tagged with the load balancer: ENIs, security groups, instances not terminated. */
async function taggedWith(id: string) {
  const filter = [
    { Name: `tag:${LOAD_BALANCER_TAG_KEY}`, Values: [id] },
    { Name: `tag:${STAGE_TAG_KEY}`, Values: [STAGE] },
  ];
  const enis = (await bed.ec2.send(new DescribeNetworkInterfacesCommand({ Filters: filter }))).NetworkInterfaces ?? [];
  const groups = (await bed.ec2.send(new DescribeSecurityGroupsCommand({ Filters: filter }))).SecurityGroups ?? [];
  const instances = (
    await bed.ec2.send(
      new DescribeInstancesCommand({
        Filters: [...filter, { Name: "instance-state-name", Values: ["pending", "running", "stopping", "stopped"] }],
      }),
    )
  ).Reservations!.flatMap((r) => r.Instances ?? []);
  return {
    enis: enis.map((e) => e.NetworkInterfaceId),
    groups: groups.map((g) => g.GroupId),
    instances: instances.map((i) => i.InstanceId),
  };
}

describe("an ACTIVE_STANDBY pair in the VPC: keepalived's promotion moves the VIP", () => {
  let pair: string;

  it("serves through the MASTER, which holds the VIP", async () => {
    const profile = await app.call("POST", "/v2/lbaas/flavorprofiles", {
      flavorprofile: {
        name: "act-stdby",
        provider_name: "amphora",
        flavor_data: JSON.stringify({ loadbalancer_topology: "ACTIVE_STANDBY" }),
      },
    });
    expect(profile.status).toBe(201);
    const flavor = await app.call("POST", "/v2/lbaas/flavors", {
      flavor: { name: "act-stdby", flavor_profile_id: profile.body.flavorprofile.id },
    });
    expect(flavor.status).toBe(201);
    // The EC2 calls of this create: the pair's VIP may be the address the first load balancer held.
    const callsBefore = bed.proxy.calls.length;
    pair = await createLoadBalancer("pair", { flavor_id: flavor.body.flavor.id });
    VIP = (await app.call("GET", `/v2/lbaas/loadbalancers/${pair}`)).body.loadbalancer.vip_address;
    const amphorae = await app.store.amphoraeOf(pair);
    const master = amphorae.find((a) => a.role === "MASTER")!;
    // The VIP plug gave it to the MASTER's ENI (keepalived's reports may move it later, should it flap).
    const masterEni = (await amphoraEni(master.id)).NetworkInterfaceId;
    const plugged = bed.proxy.calls
      .slice(callsBefore)
      .filter((c) => c.action === "AssignPrivateIpAddresses" && c.params["PrivateIpAddress.1"] === VIP);
    expect(plugged.find((c) => c.params.AllowReassignment === "true")?.params.NetworkInterfaceId).toBe(masterEni);
    await withLogs(async () =>
      vi.waitFor(() => expect(spread(10)).toEqual({ "member-1": 5, "member-2": 5 }), { timeout: 60_000, interval: 1000 }),
    );
  }, 300_000);

  it("kills the MASTER's keepalived: the BACKUP's reports its promotion, the flow moves the VIP to its ENI, traffic resumes", async () => {
    // The MASTER is keepalived's, as its promotions reported it: the amphora whose ENI holds the VIP (on a
    // loaded machine keepalived may have flapped since the create: then the roles are swapped).
    const amphorae = (await app.store.amphoraeOf(pair)).filter((a) => a.status === "ALLOCATED");
    const enis = await Promise.all(amphorae.map(async (a) => (await amphoraEni(a.id)).NetworkInterfaceId!));
    const holder = enis.indexOf(bed.proxy.vipHolder(VIP)!);
    expect(holder).toBeGreaterThanOrEqual(0);
    const master = amphorae[holder]!;
    const backupEni = enis[1 - holder]!;
    const callsBefore = bed.proxy.calls.length;
    const masterInstance = await bed.instance(master.compute_id!);
    // Its keepalived: the processes in the instance's PID namespace (as the host numbers them) running it.
    const pidNs = readlinkSync(`/proc/${masterInstance.ns.pid()}/ns/pid`);
    const keepalived = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return (
            readlinkSync(`/proc/${p}/ns/pid`) === pidNs && readFileSync(`/proc/${p}/cmdline`, "utf8").startsWith("/usr/sbin/keepalived")
          );
        } catch {
          return false; // gone meanwhile
        }
      });
    expect(keepalived.length).toBeGreaterThan(0);
    for (const p of keepalived) process.kill(Number(p), "SIGKILL");
    await withLogs(async () => {
      await vi.waitFor(() => expect(bed.proxy.vipHolder(VIP)).toBe(backupEni), { timeout: 60_000, interval: 500 });
      expect(receiver.counters.promotions).toBeGreaterThan(0);
      // Moved after the kill, by the promotion's flow, with AllowReassignment.
      const moved = bed.proxy.calls
        .slice(callsBefore)
        .filter((c) => c.action === "AssignPrivateIpAddresses" && c.params.NetworkInterfaceId === backupEni && c.status === 200);
      expect(moved.at(-1)?.params.AllowReassignment).toBe("true");
      await vi.waitFor(() => expect(spread(10)).toEqual({ "member-1": 5, "member-2": 5 }), { timeout: 60_000, interval: 1000 });
    });
    expect((await app.call("DELETE", `/v2/lbaas/loadbalancers/${pair}?cascade=true`)).status).toBe(204);
    await app.settle();
    await vi.waitFor(async () => expect(await taggedWith(pair)).toEqual({ enis: [], groups: [], instances: [] }), {
      timeout: 60_000,
      interval: 1000,
    });
  }, 300_000);
});

it("called only the EC2 and Secrets Manager actions the IAM record holds for each workload (test/fixtures/aws-calls.json)", async () => {
  await app.settle();
  expect(awsCallsMissingFromRecord(await recordedAwsCalls({ moto: bed.moto, proxy: bed.proxy }))).toEqual([]);
});
