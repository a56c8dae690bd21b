// The REST amphora driver (OTTAVA_AMPHORA_DRIVER=rest) end to end against Octavia's real amphora agent (/usr/bin/amphora-agent, Debian's python3-octavia) in its own PID and mount namespaces: mutual TLS with Ottava's CA, VIP plug, HAProxy configured, reloaded and serving in the amphora-haproxy namespace, certificates, agent configuration, VRRP, delete.
import { createHash, randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, Tree, type Amphora, type AmphoraNetworkConfig, type Drivers, type LoadBalancer, type TreeItem } from "@ottava/core";
import { createLogger } from "@ottava/edge";
import {
  AmphoraApiClient,
  AmphoraApiError,
  CLIENT_CERT_CN,
  LocalCertManager,
  createDrivers,
  noopDrivers,
  hasAgent,
  renderAgentConfig,
  renderHaproxyConfig,
  type HaproxyAmphoraLoadBalancerDriver,
} from "@ottava/amphora";
import { createLocalCa, LocalCertGenerator } from "@ottava/controller";
import {
  AGENT_CONFIG_PATH,
  AGENT_SERVER_PEM_PATH,
  agentUnavailable,
  clientNetwork,
  startAmphoraAgent,
  type AmphoraAgent,
  type ClientNetwork,
} from "./support/agent/agent";
import { amphora as amphoraRecord, listener, loadBalancer, member, pool } from "@ottava/amphora/testing";

const VIP = "198.51.100.10";
const VRRP_IP = "198.51.100.11";
const CLIENT_IP = "198.51.100.50";

const unavailable = agentUnavailable();
if (unavailable)
  throw new Error(
    `test/agent.e2e.test.ts needs root and Debian's python3-octavia, haproxy, keepalived, ipvsadm and iproute2 (.ci/run installs them): ${unavailable}`,
  );

let agent: AmphoraAgent;
let net: ClientNetwork;
let drivers: Drivers;
let driver: HaproxyAmphoraLoadBalancerDriver;
let client: AmphoraApiClient;
let certDir: string;
let certManager: LocalCertManager;
let gen: LocalCertGenerator;
let caPem: string;
let caFile: string;
let lb: LoadBalancer;
let amp: Amphora;
let items: TreeItem[];
let httpsListenerId: string;

const md5 = (s: string) => createHash("md5").update(s, "utf8").digest("hex");
const network: () => AmphoraNetworkConfig = () => ({
  vrrp_port: { mac_address: net.mac, mtu: 1500 },
  vip_subnet: { cidr: "198.51.100.0/24", gateway_ip: "198.51.100.1", host_routes: [] },
  additional_vip_data: [],
});

/** GETs through the VIP from the client namespace, `n` times. */
const bodies = (url: string, n: number, opts?: { ca?: string; host?: string }) => Array.from({ length: n }, () => net.get(url, opts));
const haproxyPid = () => Number((agent.read(`/var/lib/octavia/${lb.id}/${lb.id}.pid`) ?? "0").trim().split(/\s+/)[0]);
/** Whether a process of the amphora's PID namespace (its PID as the namespace numbers it: its own /proc) is alive. */
const aliveInAmphora = (pid: number) => pid > 0 && /^\d+ \(.*\) [^Z]/.test(agent.read(`/proc/${pid}/stat`) ?? "");

beforeAll(async () => {
  const ca = await createLocalCa({ commonName: "Ottava e2e CA" });
  caPem = ca.certificate;
  gen = new LocalCertGenerator(() => ca);
  lb = loadBalancer({ vip_address: VIP });
  amp = amphoraRecord(lb, { lb_network_ip: "127.0.0.1", vrrp_ip: VRRP_IP, status: "ALLOCATED" });
  // As computeCreate: the amphora's server certificate (CN = its id) from Ottava's CA.
  const serverPem = (await gen.generateServerPem(amp.id, 3600)).pem;
  agent = await startAmphoraAgent({
    serverPem,
    clientCa: caPem, // the agent checks the controller's client certificate against Ottava's CA
    // The agent listens on 127.0.0.1 (it shares the host's network namespace) on a free port; its certificates at Octavia's paths.
    agentConfig: (port) =>
      renderAgentConfig(
        { amphora: amp, topology: "SINGLE", controllerIpPortList: [], heartbeatKey: "e2e-key" },
        { debug: true, bindHost: "127.0.0.1", bindPort: port },
      ),
  });
  net = await clientNetwork(CLIENT_IP, 24);
  certDir = mkdtempSync(join(tmpdir(), "ottava-certs-"));
  caFile = join(agent.dir, "ca.pem");
  writeFileSync(caFile, caPem);
  const config = loadConfig({
    OTTAVA_AMPHORA_DRIVER: "rest",
    OTTAVA_AMPHORA_AGENT_PORT: String(agent.port),
    OTTAVA_SERVER_CA: caPem,
    OTTAVA_CERT_MANAGER: "local",
    OTTAVA_CERT_STORAGE_PATH: certDir,
    OTTAVA_ACTIVE_CONNECTION_MAX_RETRIES: "5",
    OTTAVA_ACTIVE_CONNECTION_RETRY_INTERVAL: "1",
  });
  // As the controller builds them: Ottava's client certificate issued by its CA, the network's VIP port.
  drivers = createDrivers(config, {
    certs: gen,
    // The no-op network driver, answering the network this test made (its VIP port: the client network's interface).
    noop: { ...noopDrivers(), network: { ...noopDrivers().network, getNetworkConfigs: async () => network() } },
    log: createLogger({ service: "agent-e2e" }, "error"),
  });
  driver = drivers.amphora as HaproxyAmphoraLoadBalancerDriver;
  certManager = drivers.certificates as LocalCertManager;
  client = new AmphoraApiClient({
    port: agent.port,
    tls: { ca: caPem, clientPem: (await gen.generateServerPem(CLIENT_CERT_CN, 3600)).pem },
    connTimeout: 5,
    readTimeout: 30,
    retries: { maxRetries: 2, retryInterval: 1 },
  });
}, 60_000);

afterAll(async () => {
  client?.close();
  net?.remove();
  await agent?.stop();
  if (certDir) rmSync(certDir, { recursive: true, force: true });
});

/** Runs a step; on failure the agent's logs come with the error. */
async function withLogs<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    (e as Error).message += `\n${agent.logs()}`;
    throw e;
  }
}

describe("the REST amphora driver against Octavia's amphora agent", () => {
  it("waits for the agent to come up, then reads its version and info over mutual TLS", async () => {
    expect(hasAgent(driver)).toBe(true);
    let up = false;
    for (let i = 0; i < 100 && !up; i++) {
      up = await driver.agentReachable(amp);
      if (!up) await new Promise((r) => setTimeout(r, 200));
    }
    expect(up, agent.logs()).toBe(true);
    expect(await client.getApiVersion(amp)).toEqual({ api_version: "1.0" });
    const info = await client.getInfo(amp);
    const debianHaproxy = spawnSync("dpkg-query", ["-W", "-f=${Version}", "haproxy"], { encoding: "utf8" }).stdout;
    expect(info).toMatchObject({ api_version: "1.0", haproxy_version: debianHaproxy });
    expect(await client.getDetails(amp)).toMatchObject({ api_version: "1.0", listeners: [], haproxy_count: 0 });
  });

  it("is refused by the agent without a client certificate of Ottava's CA, and refuses an agent that is not the amphora", async () => {
    const other = new LocalCertGenerator(() => createLocalCa({ commonName: "Not Ottava's CA" }));
    const stranger = new AmphoraApiClient({
      port: agent.port,
      tls: { ca: caPem, clientPem: (await other.generateServerPem(CLIENT_CERT_CN, 3600)).pem },
      connTimeout: 2,
      readTimeout: 5,
      retries: { maxRetries: 1, retryInterval: 1 },
    });
    await expect(stranger.getInfo(amp)).rejects.toThrow(/contacting the amphora timed out/);
    stranger.close();
    // The agent's certificate names the amphora: asked as another amphora at that address, the client refuses it.
    await expect(client.getInfo({ id: randomUUID(), lb_network_ip: "127.0.0.1" })).rejects.toThrow(/does not match certificate's altnames/);
  });

  it("plugs the VIP: the VRRP port moves into the amphora-haproxy namespace with the VIP and the VRRP address", async () => {
    await withLogs(() => driver.postVipPlug(lb, amp));
    const addrs = agent.exec(["/usr/sbin/ip", "netns", "exec", "amphora-haproxy", "/usr/sbin/ip", "-o", "addr", "show", "dev", "eth1"]);
    expect(addrs.stdout, addrs.stderr).toContain(`inet ${VIP}/32`);
    expect(addrs.stdout).toContain(`inet ${VRRP_IP}/24`);
    expect(
      agent.exec(["/usr/sbin/ip", "netns", "exec", "amphora-haproxy", "/usr/sbin/ip", "-o", "link", "show", "dev", "eth1"]).stdout,
    ).toContain(net.mac);
    expect(existsSync(`/sys/class/net/${net.hostIf}`)).toBe(false); // no longer in the host's namespace
    await driver.postVipPlug(lb, amp); // again: the agent answers 409, which is done
  });

  it("uploads the rendered haproxy.cfg of an HTTP and a TERMINATED_HTTPS listener and their pool of two members, reloads, and HAProxy serves through the VIP", async () => {
    await Promise.all([net.member(CLIENT_IP, 8080, "member-1"), net.member(CLIENT_IP, 8081, "member-2")]);
    const www = await gen.generateServerPem("www.example.com", 3600);
    const [cert, key] = [
      www.pem.slice(0, www.pem.indexOf("-----BEGIN PRIVATE KEY-----")),
      www.pem.slice(www.pem.indexOf("-----BEGIN PRIVATE KEY-----")),
    ];
    const tlsRef = await certManager.storeCert({ certificate: cert, private_key: key });
    const p = pool(lb);
    // Connection limits keep HAProxy's file descriptors within this host's hard limit, which a test
    // cannot raise (an amphora image raises fs.nr_open for the default 50000 per listener).
    const http = listener(lb, { default_pool_id: p.record.id, connection_limit: 1000 });
    const https = listener(lb, {
      protocol: "TERMINATED_HTTPS",
      protocol_port: 443,
      peer_port: 1026,
      default_pool_id: p.record.id,
      default_tls_container_ref: tlsRef,
      connection_limit: 1000,
    });
    httpsListenerId = https.record.id;
    items = [http, https, p, member(lb, p.record.id, CLIENT_IP, 8080), member(lb, p.record.id, CLIENT_IP, 8081)];
    await withLogs(() => driver.update(new Tree(lb, items), [amp]));

    // What the agent installed is what Ottava rendered (less the group line the agent takes out).
    const rendered = renderHaproxyConfig({
      tree: new Tree(lb, items),
      amphora: amp,
      amphorae: [amp],
      haproxyVersion: (await client.getInfo(amp)).haproxy_version as string,
    });
    expect(agent.read(`/var/lib/octavia/${lb.id}/haproxy.cfg`)).toBe(rendered.replace(/\s+group\s.+/g, ""));
    expect(agent.exists(`/usr/lib/systemd/system/haproxy-${lb.id}.service`)).toBe(true);
    expect(aliveInAmphora(haproxyPid()), agent.logs()).toBe(true);

    const plain = bodies(`http://${VIP}:80/`, 4);
    expect(
      plain.map((r) => r.status),
      JSON.stringify(plain) + agent.logs(),
    ).toEqual([200, 200, 200, 200]);
    expect(new Set(plain.map((r) => r.body))).toEqual(new Set(["member-1", "member-2"])); // round robin over both
    // TLS terminated with the certificate the driver uploaded (its CN checked against Ottava's CA).
    const tls = net.get(`https://${VIP}:443/`, { ca: caFile, host: "www.example.com" });
    expect(tls, agent.logs()).toMatchObject({ status: 200 });
    expect(["member-1", "member-2"]).toContain(tls.body);
  });

  it("reloads a changed configuration without restarting HAProxy's master", async () => {
    const master = haproxyPid();
    items = items.map((i) =>
      i.kind === "member" && i.record.protocol_port === 8080 ? { ...i, record: { ...i.record, admin_state_up: false } } : i,
    );
    await withLogs(() => driver.update(new Tree(lb, items), [amp]));
    await new Promise((r) => setTimeout(r, 500));
    expect(bodies(`http://${VIP}:80/`, 4).map((r) => r.body)).toEqual(["member-2", "member-2", "member-2", "member-2"]);
    expect(haproxyPid()).toBe(master);
  });

  it("fails with the agent's haproxy -c output when the configuration is invalid, and HAProxy keeps serving", async () => {
    const err = (await client.uploadConfig(amp, lb.id, "global\n    no-such-keyword\n").catch((e: unknown) => e)) as AmphoraApiError;
    expect(err).toBeInstanceOf(AmphoraApiError);
    expect(err).toMatchObject({ name: "DriverError", status: 400 });
    expect(err.message).toMatch(/no-such-keyword/);
    expect(net.get(`http://${VIP}:80/`)).toMatchObject({ status: 200, body: "member-2" });
  });

  it("uploads, checks and deletes certificate files, and rotates the agent's own certificate", async () => {
    const pem = (await gen.generateServerPem("files.example.com", 3600)).pem;
    await client.uploadCertPem(amp, lb.id, "e2e.pem", pem);
    expect(await client.getCertMd5sum(amp, lb.id, "e2e.pem")).toBe(md5(pem));
    expect(agent.read(`/var/lib/octavia/certs/${lb.id}/e2e.pem`)).toBe(pem);
    // The TLS listener's crt-list names the certificate the driver uploaded.
    expect(agent.read(`/var/lib/octavia/certs/${lb.id}/${httpsListenerId}.pem`)).toMatch(
      new RegExp(`^/var/lib/octavia/certs/${lb.id}/[0-9a-f]{40}\\.pem\\n$`),
    );
    await client.deleteCertPem(amp, lb.id, "e2e.pem");
    expect(await client.getCertMd5sum(amp, lb.id, "e2e.pem", [404])).toBeNull();

    const rotated = (await gen.generateServerPem(amp.id, 7200)).pem;
    await driver.uploadCert(amp, rotated);
    expect(agent.read(AGENT_SERVER_PEM_PATH)).toBe(rotated);
  });

  it("replaces the agent's configuration file (PUT config) and the agent goes on", async () => {
    const next = renderAgentConfig(
      { amphora: amp, topology: "SINGLE", controllerIpPortList: ["192.0.2.5:5555"], heartbeatKey: "rotated-key" },
      { debug: true, bindHost: "127.0.0.1", bindPort: agent.port },
    );
    await driver.updateAgentConfig(amp, next);
    expect(agent.read(AGENT_CONFIG_PATH)).toBe(next);
    expect(await client.getInfo(amp)).toMatchObject({ api_version: "1.0" });
  });

  it("uploads keepalived.conf and starts keepalived in the amphora-haproxy namespace (ACTIVE_STANDBY)", async () => {
    const activeStandby = { ...lb, topology: "ACTIVE_STANDBY" };
    const master = { ...amp, role: "MASTER", vrrp_interface: "eth1", vrrp_id: 1, vrrp_priority: 100 };
    await withLogs(() => driver.startVrrp(new Tree(activeStandby, items), [master]));
    const conf = agent.read("/var/lib/octavia/vrrp/octavia-keepalived.conf") ?? "";
    expect(conf).toContain(`vrrp_instance ${lb.id.replaceAll("-", "")}`);
    expect(conf).toContain("state MASTER");
    expect(conf).toContain(VIP);
    const pid = Number((agent.read("/var/lib/octavia/vrrp/octavia-keepalived.pid") ?? "0").trim());
    expect(aliveInAmphora(pid), agent.logs()).toBe(true);
    // Started again: the agent reloads the running keepalived.
    await driver.startVrrp(new Tree(activeStandby, items), [master]);
    expect(Number((agent.read("/var/lib/octavia/vrrp/octavia-keepalived.pid") ?? "0").trim())).toBe(pid);
  });

  it("deletes the HAProxy configuration when the last listener goes: HAProxy stops, the VIP answers no more", async () => {
    const pid = haproxyPid();
    await withLogs(() =>
      driver.update(
        new Tree(
          lb,
          items.filter((i) => i.kind !== "listener"),
        ),
        [amp],
      ),
    );
    expect(agent.exists(`/var/lib/octavia/${lb.id}/haproxy.cfg`)).toBe(false);
    expect(agent.exists(`/var/lib/octavia/certs/${lb.id}`)).toBe(false);
    expect(aliveInAmphora(pid)).toBe(false);
    expect(net.get(`http://${VIP}:80/`).status).toBe(0);
    expect(await client.getDetails(amp)).toMatchObject({ listeners: [], haproxy_count: 0 });
  });
});
