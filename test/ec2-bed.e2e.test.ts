// A load balancer on EC2 amphorae, end to end on the test bed (test/support/bed): OTTAVA_COMPUTE_DRIVER=ec2
// against the file's moto, the REST amphora driver, the no-op network driver. The API creates the load
// balancer; the real flows run RunInstances with the user data and the amphora's secret; the bed boots the
// instance (Debian's cloud-init, the user data, packages/aws/image/ottava-amphora-configure fetching the
// secret with the instance role's IMDSv2 credentials and starting Octavia's real agent); the REST driver
// reaches the agent on the instance's management address over mutual TLS with the certificate from that
// secret; the agent's heartbeats reach the health manager's receiver on the controller's address.
//
// The no-op network driver makes no VIP port, and the create flow's VIP plug (AmphoraePostVipPlug) needs
// one: the REST driver is given the network configuration as test/agent.e2e.test.ts gives it, with the
// MAC of the bed's stand-in VIP port (each instance's dummy eth1: vipStandIn). The product's EC2 calls go
// through the bed's EC2 test proxy.
import { createHash, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { NOOP_VIP_ADDRESS, type Amphora } from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { DynamoHealthStore, createClients } from "@ottava/db";
import { AmphoraApiClient, CLIENT_CERT_CN, createRestAmphoraDriver, freePort } from "@ottava/amphora";
import { HeartbeatReceiver, LocalCertGenerator, createLocalCa } from "@ottava/controller";
import { amphoraSecretName } from "@ottava/aws";
import { MOTO_CLIENT, motoSecretsManager } from "@ottava/aws/testing";
import { inProcessApp, SUBNET } from "@ottava/local/testing";
import { AGENT_CONFIG_PATH, AGENT_SERVER_PEM_PATH } from "./support/agent/agent";
import { bedUnavailable, startBed, type Bed, type BedInstance } from "./support/bed/bed";

const unavailable = bedUnavailable();
if (unavailable)
  throw new Error(
    `test/ec2-bed.e2e.test.ts needs root, Debian's python3-octavia, python3-boto3 and cloud-init (.ci/run installs them): ${unavailable}`,
  );

const IMAGE = new URL("../packages/aws/image/", import.meta.url).pathname;
const STAGE = `e2e${randomUUID().slice(0, 8)}`;
const HEARTBEAT_KEY = `bed-heartbeat-key-${randomUUID()}`;
const VIP = "198.51.100.10";

let bed: Bed;
let app: Awaited<ReturnType<typeof inProcessApp>>;
let receiver: HeartbeatReceiver;
let caPem: string;
let gen: LocalCertGenerator;
let lbId: string;
let amphora: Amphora;
let instance: BedInstance;

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

beforeAll(async () => {
  bed = await startBed({
    stage: STAGE,
    vipStandIn: true,
    // The baked image: what install.sh installs beyond Debian's packages (this host has those).
    image: {
      "/usr/local/sbin/ottava-amphora-configure:755": readFileSync(`${IMAGE}ottava-amphora-configure`, "utf8"),
      "/usr/local/sbin/ottava-vrrp-master:755": readFileSync(`${IMAGE}ottava-vrrp-master`, "utf8"),
      "/usr/lib/systemd/system/amphora-agent.service": readFileSync(`${IMAGE}amphora-agent.service`, "utf8"),
    },
  });
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
    OTTAVA_NETWORK_DRIVER: "noop",
    OTTAVA_EC2_ENDPOINT: bed.ec2Endpoint,
    OTTAVA_SECRETSMANAGER_ENDPOINT: bed.moto.endpoint,
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
  // The VIP port the no-op network driver does not make: each instance's stand-in (see the header).
  const network = {
    getNetworkConfigs: async (_lb: unknown, amp: Amphora) => ({
      vrrp_port: { mac_address: (await bed.instance(amp.compute_id!)).vipMac, mtu: 1500 },
      vip_subnet: { cidr: "198.51.100.0/24", gateway_ip: "198.51.100.254", host_routes: [] },
      additional_vip_data: [],
    }),
  };
  app.tasks.drivers.amphora = createRestAmphoraDriver(app.config, app.tasks.drivers.certificates, network, {
    certs: app.tasks.certs!,
    log: app.tasks.log,
  });
  receiver = new HeartbeatReceiver({
    key: HEARTBEAT_KEY,
    host: bed.controllerIp,
    port: heartbeatPort,
    store: new DynamoHealthStore(createClients(app.config.dynamodbEndpoint).doc, { tableName: app.config.tableName }),
    compute: app.tasks.drivers.compute,
    log: createLogger({ service: "bed-heartbeats" }, "error"),
    metrics,
  });
  await receiver.start();
}, 180_000);

afterAll(async () => {
  await receiver?.stop();
  await app?.settle();
  await bed?.stop();
  vi.unstubAllEnvs();
});

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

describe("a load balancer on EC2 amphorae booted by the test bed", () => {
  it("reaches ACTIVE through the real flows: RunInstances, the instance's boot, the agent reached over mutual TLS, the VIP plugged", async () => {
    const res = await app.call("POST", "/v2/lbaas/loadbalancers", {
      loadbalancer: { vip_subnet_id: SUBNET, vip_address: VIP, name: "on-ec2" },
    });
    expect(res.status).toBe(201);
    lbId = res.body.loadbalancer.id;
    await withLogs(async () => {
      await vi.waitFor(
        async () => {
          const lb = (await app.call("GET", `/v2/lbaas/loadbalancers/${lbId}`)).body.loadbalancer;
          expect(lb.provisioning_status).not.toMatch(/^PENDING/);
        },
        { timeout: 240_000, interval: 1000 },
      );
      expect((await app.call("GET", `/v2/lbaas/loadbalancers/${lbId}`)).body.loadbalancer.provisioning_status).toBe("ACTIVE");
    });
    const amphorae = (await app.call("GET", `/v2/octavia/amphorae?loadbalancer_id=${lbId}`)).body.amphorae;
    expect(amphorae).toHaveLength(1);
    amphora = (await app.store.getAmphora(amphorae[0].id))!;
    expect(amphora).toMatchObject({ status: "ALLOCATED", vrrp_ip: NOOP_VIP_ADDRESS });
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
    // The flow's VIP plug reached the agent: the stand-in VIP port moved into its amphora-haproxy namespace with the VIP.
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
});
