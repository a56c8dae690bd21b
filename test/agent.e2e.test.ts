// The REST amphora driver (OTTAVA_AMPHORA_DRIVER=rest) end to end against Octavia's real amphora agent (/usr/bin/amphora-agent, Debian's python3-octavia) in its own PID and mount namespaces: mutual TLS with Ottava's CA, VIP plug, member network plug (plug_network), HAProxy configured, reloaded and serving in the amphora-haproxy namespace, certificates, agent configuration, VRRP, delete.
import { createHash, randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  loadConfig,
  Tree,
  type Amphora,
  type AmphoraNetworkConfig,
  type Drivers,
  type LoadBalancer,
  type NetworkPort,
  type TreeItem,
} from "@ottava/core";
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
  httpGet,
  startAmphoraAgent,
  type AmphoraAgent,
  type ClientNetwork,
} from "./support/agent/agent";
import { amphora as amphoraRecord, listener, loadBalancer, member, pool } from "@ottava/amphora/testing";

const VIP = "198.51.100.10";
const VRRP_IP = "198.51.100.11";
const CLIENT_IP = "198.51.100.50";
/** A member network: the amphora's port on it, a member there, a host route through it. */
const MEMBER_SUBNET = {
  cidr: "203.0.113.0/24",
  gateway_ip: "203.0.113.1",
  host_routes: [{ destination: "10.20.0.0/16", nexthop: "203.0.113.254" }],
};
const MEMBER_PORT_IP = "203.0.113.10";
const MEMBER_IP = "203.0.113.50";
/** A second subnet of the member network. */
const MEMBER_SUBNET_2 = { cidr: "198.18.0.0/24", gateway_ip: null, host_routes: [] };
/** A second subnet of the VIP network (a fixed IP of the VRRP port), with a host route. */
const VIP_NET_SUBNET_2 = {
  cidr: "192.0.2.0/24",
  gateway_ip: "192.0.2.1",
  host_routes: [{ destination: "10.30.0.0/16", nexthop: "192.0.2.254" }],
};

const unavailable = agentUnavailable();
if (unavailable)
  throw new Error(
    `test/agent.e2e.test.ts needs root and Debian's python3-octavia, haproxy, keepalived, ipvsadm and iproute2 (.ci/run installs them): ${unavailable}`,
  );

let agent: AmphoraAgent;
let net: ClientNetwork;
let memberNet: ClientNetwork | undefined;
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
const VIP_SUBNET = { cidr: "198.51.100.0/24", gateway_ip: "198.51.100.1", host_routes: [] };
const network: () => AmphoraNetworkConfig = () => ({
  vrrp_port: { mac_address: net.mac, mtu: 1500 },
  vip_subnet: VIP_SUBNET,
  additional_vip_data: [],
});
/** A command in the amphora's amphora-haproxy namespace: its output (its stderr and the agent's logs when it fails). */
const inHaproxyNs = (args: string[]) => {
  const r = agent.exec(["/usr/sbin/ip", "netns", "exec", "amphora-haproxy", ...args]);
  if (r.status !== 0) throw new Error(`${args.join(" ")}: ${r.stderr}\n${agent.logs()}`);
  return r.stdout;
};
/** nsenter's option for the amphora's amphora-haproxy namespace (a file of its mount namespace). */
const haproxyNs = () => `--net=/proc/${agent.pid()}/root/run/netns/amphora-haproxy`;

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
  memberNet?.remove();
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

  it("plugs a member network (plug_network): the port's interface moves into amphora-haproxy with its fixed IP, MTU and host routes, and reaches the member", async () => {
    memberNet = await clientNetwork(MEMBER_IP, 24);
    await memberNet.member(MEMBER_IP, 8080, "member-net");
    const port: NetworkPort = {
      id: randomUUID(),
      network_id: randomUUID(),
      mac_address: memberNet.mac,
      mtu: 1400,
      vnic_type: "normal",
      fixed_ips: [{ subnet_id: randomUUID(), ip_address: MEMBER_PORT_IP, subnet: MEMBER_SUBNET }],
    };
    await withLogs(() => driver.postNetworkPlug(lb, amp, port, network()));

    // Named by the agent after the links of the namespace (lo, eth1): eth2, found by the port's MAC.
    expect(existsSync(`/sys/class/net/${memberNet.hostIf}`)).toBe(false);
    expect(inHaproxyNs(["/usr/sbin/ip", "-o", "link", "show", "dev", "eth2"])).toMatch(
      new RegExp(`mtu 1400 .*link/ether ${memberNet.mac}`),
    );
    const addrs = () => inHaproxyNs(["/usr/sbin/ip", "-o", "-4", "addr", "show", "dev", "eth2"]);
    expect(addrs()).toContain(`inet ${MEMBER_PORT_IP}/24`);
    const routes = () => inHaproxyNs(["/usr/sbin/ip", "-o", "route", "show", "dev", "eth2"]);
    expect(routes()).toMatch(/10\.20\.0\.0\/16 via 203\.0\.113\.254 proto static onlink/);
    // What the agent wrote of the port (its interface file, read again at the amphora's boot).
    expect(JSON.parse(agent.read("/etc/octavia/interfaces/eth2.json") ?? "{}")).toMatchObject({
      name: "eth2",
      mtu: 1400,
      addresses: [{ address: MEMBER_PORT_IP, prefixlen: 24 }],
      routes: [{ dst: "10.20.0.0/16", gateway: "203.0.113.254", flags: ["onlink"] }],
    });
    expect(agent.read("/var/lib/octavia/plugged_interfaces")).toContain(`${memberNet.mac} eth2`);
    // From the amphora-haproxy namespace, where HAProxy runs, the member answers through the new interface.
    expect(httpGet(haproxyNs(), `http://${MEMBER_IP}:8080/`)).toMatchObject({ status: 200, body: "member-net" });

    // Again (the port already plugged: a replayed task): the agent updates the interface it has, which stays as it was.
    const before = { addrs: addrs(), routes: routes() };
    await withLogs(() => driver.postNetworkPlug(lb, amp, port, network()));
    expect({ addrs: addrs(), routes: routes() }).toEqual(before);

    // A second subnet of the network on the same port (plug_fixed_ip then post_network_plug): both addresses.
    const twoSubnets = {
      ...port,
      fixed_ips: [...port.fixed_ips, { subnet_id: randomUUID(), ip_address: "198.18.0.10", subnet: MEMBER_SUBNET_2 }],
    };
    await withLogs(() => driver.postNetworkPlug(lb, amp, twoSubnets, network()));
    expect(addrs()).toContain(`inet ${MEMBER_PORT_IP}/24`);
    expect(addrs()).toContain("inet 198.18.0.10/24");
    // Still one interface of the port: no new one.
    const links = [...inHaproxyNs(["/usr/sbin/ip", "-o", "link", "show"]).matchAll(/^\d+: ([^:@]+)/gm)].map((m) => m[1]);
    expect(links.sort()).toEqual(["eth1", "eth2", "lo"]); // listed by index, which the test's ports do not order
  });

  it("plugs a subnet on the VRRP port (plug_network with vip_net_info): the VIP interface is re-written with the new fixed IP and route, and keeps the VIP and VRRP addresses", async () => {
    const vrrpPort: NetworkPort = {
      id: amp.vrrp_port_id!,
      network_id: randomUUID(),
      mac_address: net.mac,
      mtu: 1500,
      vnic_type: "normal",
      fixed_ips: [
        { subnet_id: lb.vip_subnet_id!, ip_address: VRRP_IP, subnet: VIP_SUBNET },
        { subnet_id: randomUUID(), ip_address: "192.0.2.10", subnet: VIP_NET_SUBNET_2 },
      ],
    };
    await withLogs(() => driver.postNetworkPlug(lb, amp, vrrpPort, network()));
    const addrs = inHaproxyNs(["/usr/sbin/ip", "-o", "-4", "addr", "show", "dev", "eth1"]);
    expect(addrs).toContain(`inet ${VIP}/32`);
    expect(addrs).toContain(`inet ${VRRP_IP}/24`);
    expect(addrs).toContain("inet 192.0.2.10/24");
    expect(inHaproxyNs(["/usr/sbin/ip", "-o", "route", "show", "dev", "eth1"])).toMatch(
      /10\.30\.0\.0\/16 via 192\.0\.2\.254 proto static onlink/,
    );
    // The agent wrote the VIP interface from vip_net_info (the VRRP address, the VIP), then the port's fixed IPs.
    const file = JSON.parse(agent.read("/etc/octavia/interfaces/eth1.json") ?? "{}") as { addresses: { address: string }[] };
    expect(file.addresses.map((a) => a.address)).toEqual([VRRP_IP, VIP, VRRP_IP, "192.0.2.10"]);
    // A member on the new subnet of the VIP network is reached through the VIP interface.
    expect(net.exec(["/usr/sbin/ip", "addr", "add", "192.0.2.50/24", "dev", net.peerIf]).status).toBe(0);
    await net.member("192.0.2.50", 8090, "vip-net-member");
    expect(httpGet(haproxyNs(), "http://192.0.2.50:8090/")).toMatchObject({ status: 200, body: "vip-net-member" });
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
