// The REST amphora driver (Octavia's HaproxyAmphoraLoadBalancerDriver and keepalived VRRP driver) against stand-ins of the amphora agent's API: which calls each driver method makes, with what, and what it does with the answers.
import { createHash, createPrivateKey } from "node:crypto";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { CertificateError, loadConfig, type AmphoraNetworkConfig, type CertManager, type Logger, type TlsCertificate } from "@ottava/core";
import {
  AmphoraApiClient,
  CLIENT_CERT_CN,
  HaproxyAmphoraLoadBalancerDriver,
  VRRP_NOTIFY_MASTER_SCRIPT,
  createDrivers,
  createRestAmphoraDriver,
  derivedVrrpGroup,
  hasAgent,
  noopVrrpMac,
} from "@ottava/amphora";
import { splitPem } from "../src/rest/client";
import { agentDriver, startFakeAgent, testPki, type FakeAgent, type TestPki } from "./support/fake-agent";
import { amphora, listener, loadBalancer, member, pool, tree } from "./support/tree";

let pki: TestPki;
const agents: FakeAgent[] = [];
const clients: AmphoraApiClient[] = [];

/** A certificate manager over a map of references (the CertManager port, as Barbican would answer). */
function mapCertManager(certs: Record<string, TlsCertificate>, secrets: Record<string, string>): CertManager {
  return {
    async getCert(_project, ref) {
      const c = certs[ref];
      if (!c) throw new CertificateError(`Could not retrieve certificate: ${ref}`);
      return c;
    },
    async getSecret(_project, ref) {
      const s = secrets[ref];
      if (s === undefined) throw new CertificateError(`Could not retrieve secret: ${ref}`);
      return s;
    },
  };
}

function captureLog() {
  const lines: { level: string; message: string }[] = [];
  const log: Logger = {
    debug: (message) => void lines.push({ level: "debug", message }),
    info: (message) => void lines.push({ level: "info", message }),
    warn: (message) => void lines.push({ level: "warn", message }),
    error: (message) => void lines.push({ level: "error", message }),
    child: () => log,
  };
  return { log, lines };
}

async function driverFor(port: number, over: Partial<ConstructorParameters<typeof HaproxyAmphoraLoadBalancerDriver>[0]> = {}) {
  const { client, driver } = await agentDriver(pki, port, { certManager: mapCertManager({}, {}), ...over });
  clients.push(client);
  return driver;
}

const sha1 = (s: string) => createHash("sha1").update(s, "utf8").digest("hex");
const calls = (a: FakeAgent) => a.calls.map((c) => `${c.method} ${c.path}`);

const network: AmphoraNetworkConfig = {
  vrrp_port: { mac_address: "fa:16:3e:12:34:56", mtu: 1450 },
  vip_subnet: {
    cidr: "198.51.100.0/24",
    gateway_ip: "198.51.100.1",
    host_routes: [{ destination: "203.0.113.0/24", nexthop: "198.51.100.254" }],
  },
  additional_vip_data: [{ ip_address: "2001:db8::10", subnet: { cidr: "2001:db8::/64", gateway_ip: null, host_routes: [] } }],
};

beforeAll(async () => {
  pki = await testPki();
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(agents.splice(0).map((a) => a.close()));
});

async function fakeAgent(amphoraId: string, host = "127.0.0.1", port?: number) {
  const a = await startFakeAgent({ pki, amphoraId, host, ...(port ? { port } : {}) });
  agents.push(a);
  return a;
}

describe("HaproxyAmphoraLoadBalancerDriver.update (update_amphora_listeners)", () => {
  it("uploads the UDP listeners' LVS configuration, the TLS material, one haproxy.cfg, reloads, and removes UDP listeners the tree lost", async () => {
    const lb = loadBalancer();
    const amp = amphora(lb);
    const agent = await fakeAgent(amp.id);
    const [www, sni, backend] = await Promise.all([
      pki.issue("www.example.com"),
      pki.issue("sni.example.com"),
      pki.issue("client.example.com"),
    ]);
    const asCert = (pem: string): TlsCertificate => {
      const { cert, key } = splitPem(pem);
      return { certificate: cert, private_key: key, private_key_passphrase: null, intermediates: [] };
    };
    const clientCa = pki.ca.certificate;
    const certManager = mapCertManager(
      { "ref:www": asCert(www), "ref:sni": asCert(sni), "ref:backend": asCert(backend) },
      { "ref:ca": clientCa, "ref:poolca": clientCa },
    );
    const driver = await driverFor(agent.port, { certManager });

    const httpPool = pool(lb);
    const tlsPool = pool(lb, { tls_enabled: true, tls_container_ref: "ref:backend", ca_tls_container_ref: "ref:poolca" });
    const udpPool = pool(lb, { protocol: "UDP" });
    const http = listener(lb, { default_pool_id: httpPool.record.id });
    const https = listener(lb, {
      protocol: "TERMINATED_HTTPS",
      protocol_port: 443,
      peer_port: 1026,
      default_pool_id: tlsPool.record.id,
      default_tls_container_ref: "ref:www",
      sni_container_refs: ["ref:sni"],
      client_ca_tls_container_ref: "ref:ca",
      client_authentication: "OPTIONAL",
    });
    const udp = listener(lb, { protocol: "UDP", protocol_port: 53, peer_port: 1027, default_pool_id: udpPool.record.id });
    const t = tree(lb, [
      http,
      https,
      udp,
      httpPool,
      tlsPool,
      udpPool,
      member(lb, httpPool.record.id, "192.0.2.21", 8080),
      member(lb, tlsPool.record.id, "192.0.2.22", 8443),
      member(lb, udpPool.record.id, "192.0.2.23", 5353),
    ]);
    agent.lvs.set("0f0e0d0c-0000-4000-8000-000000000001", "a UDP listener the tree no longer holds");

    await driver.update(t, [amp]);

    const wwwId = sha1(asCert(www).certificate);
    const sniId = sha1(asCert(sni).certificate);
    const backendId = sha1(asCert(backend).certificate);
    const caName = `${sha1(clientCa)}.pem`;
    const certPath = (p: string) => `/1.0/loadbalancer/${lb.id}/certificates/${p}`;
    expect(calls(agent)).toEqual([
      `PUT /1.0/listeners/${amp.id}/${udp.record.id}/udp_listener`,
      `PUT /1.0/loadbalancer/${udp.record.id}/reload`,
      "GET /1.0/info",
      `GET ${certPath(`${wwwId}.pem`)}`,
      `PUT ${certPath(`${wwwId}.pem`)}`,
      `GET ${certPath(`${sniId}.pem`)}`,
      `PUT ${certPath(`${sniId}.pem`)}`,
      `GET ${certPath(`${https.record.id}.pem`)}`,
      `PUT ${certPath(`${https.record.id}.pem`)}`,
      `GET ${certPath(caName)}`,
      `PUT ${certPath(caName)}`,
      `GET ${certPath(`${backendId}.pem`)}`,
      `PUT ${certPath(`${backendId}.pem`)}`,
      // The pool's CA is the same secret as the listener's client CA: the agent has it already.
      `GET ${certPath(caName)}`,
      `PUT /1.0/loadbalancer/${amp.id}/${lb.id}/haproxy`,
      `PUT /1.0/loadbalancer/${lb.id}/reload`,
      "GET /1.0/listeners",
      "DELETE /1.0/listeners/0f0e0d0c-0000-4000-8000-000000000001",
    ]);
    // build_pem: certificate, key, one per line; the crt-list names the default certificate first.
    const { cert: wwwCert, key: wwwKey } = splitPem(www);
    expect(agent.certs.get(`${lb.id}/${wwwId}.pem`)).toBe(`${wwwCert}\n${createKeyPem(wwwKey)}\n`);
    expect(agent.certs.get(`${lb.id}/${https.record.id}.pem`)).toBe(
      `/var/lib/octavia/certs/${lb.id}/${wwwId}.pem\n/var/lib/octavia/certs/${lb.id}/${sniId}.pem\n`,
    );
    expect(agent.certs.get(`${lb.id}/${caName}`)).toBe(clientCa);
    const cfg = agent.haproxy.get(lb.id)!;
    expect(cfg).toContain(`frontend ${http.record.id}`);
    expect(cfg).toContain(`frontend ${https.record.id}`);
    expect(cfg).toContain(`ssl crt-list /var/lib/octavia/certs/${lb.id}/${https.record.id}.pem`);
    expect(cfg).toContain(`ca-file /var/lib/octavia/certs/${lb.id}/${caName}`);
    expect(cfg).toContain(`crt /var/lib/octavia/certs/${lb.id}/${backendId}.pem`);
    expect(cfg).not.toContain(udp.record.id);
    expect(agent.lvs.get(udp.record.id)).toContain("virtual_server");
    expect([...agent.lvs.keys()]).toEqual([udp.record.id]);
    // No secret travels outside the certificate calls.
    for (const c of agent.calls.filter((c) => !c.path.includes("/certificates/"))) expect(c.body).not.toContain("PRIVATE KEY");

    // Again, unchanged: the certificates the agent holds (same MD5) are not uploaded again.
    agent.calls.length = 0;
    await driver.update(t, [amp]);
    expect(calls(agent).filter((c) => c.startsWith("PUT") && c.includes("/certificates/"))).toEqual([]);
    expect(calls(agent).filter((c) => c.includes("/certificates/"))).toHaveLength(6);
    expect(calls(agent)).toContain(`PUT /1.0/loadbalancer/${amp.id}/${lb.id}/haproxy`);
  });

  it("deletes the HAProxy configuration when no listener is HAProxy's (the last one deleted), and skips DELETED amphorae", async () => {
    const lb = loadBalancer();
    const amp = amphora(lb);
    const gone = amphora(lb, { status: "DELETED", lb_network_ip: "127.0.0.9" });
    const agent = await fakeAgent(amp.id);
    agent.haproxy.set(lb.id, "old");
    const driver = await driverFor(agent.port);
    await driver.update(tree(lb, []), [amp, gone]);
    expect(calls(agent)).toEqual([`DELETE /1.0/listeners/${lb.id}`, "GET /1.0/listeners"]);
    expect(agent.haproxy.has(lb.id)).toBe(false);
  });

  it("fails the update when a certificate reference cannot be read, before any configuration is uploaded", async () => {
    const lb = loadBalancer();
    const amp = amphora(lb);
    const agent = await fakeAgent(amp.id);
    const driver = await driverFor(agent.port);
    const l = listener(lb, { protocol: "TERMINATED_HTTPS", protocol_port: 443, default_tls_container_ref: "ref:missing" });
    await expect(driver.update(tree(lb, [l]), [amp])).rejects.toMatchObject({ name: "CertificateError" });
    expect(calls(agent)).toEqual(["GET /1.0/info"]);
  });

  it("fails with the agent's answer when it refuses the configuration (haproxy -c)", async () => {
    const lb = loadBalancer();
    const amp = amphora(lb);
    const agent = await fakeAgent(amp.id);
    agent.override = (c) =>
      c.path.endsWith("/haproxy") ? [400, { message: "Invalid request", details: "[ALERT] parsing [haproxy.cfg:12]" }] : undefined;
    const driver = await driverFor(agent.port);
    const p = pool(lb);
    const err = (await driver
      .update(tree(lb, [listener(lb, { default_pool_id: p.record.id }), p]), [amp])
      .catch((e: unknown) => e)) as Error;
    expect(err.name).toBe("DriverError");
    expect(err.message).toBe(
      `Amphora ${amp.id}: PUT /1.0/loadbalancer/${amp.id}/${lb.id}/haproxy answered 400 InvalidRequest: Invalid request: [ALERT] parsing [haproxy.cfg:12]`,
    );
    expect(calls(agent).some((c) => c.endsWith("/reload"))).toBe(false);
  });
});

describe("HaproxyAmphoraLoadBalancerDriver: VIP plug, VRRP, agent configuration, certificate rotation, connectivity", () => {
  it("plugs the VIP with Octavia's net_info, and takes a 409 (already plugged) as done", async () => {
    const lb = loadBalancer({ additional_vips: [{ subnet_id: "s2", ip_address: "2001:db8::10", port_id: "p", network_id: "n" }] as never });
    const amp = amphora(lb);
    const agent = await fakeAgent(amp.id);
    const { log, lines } = captureLog();
    const seen: string[] = [];
    const driver = await driverFor(agent.port, {
      network: { getNetworkConfigs: async (l, a) => (seen.push(`${l.id}/${a.id}`), network) },
      log,
    });
    await driver.postVipPlug(lb, amp);
    expect(seen).toEqual([`${lb.id}/${amp.id}`]);
    expect(calls(agent)).toEqual(["POST /1.0/plug/vip/198.51.100.10"]);
    expect(JSON.parse(agent.calls[0]!.body)).toEqual({
      subnet_cidr: "198.51.100.0/24",
      gateway: "198.51.100.1",
      mac_address: "fa:16:3e:12:34:56",
      vrrp_ip: "198.51.100.11",
      mtu: 1450,
      host_routes: [{ nexthop: "198.51.100.254", destination: "203.0.113.0/24" }],
      additional_vips: [{ subnet_cidr: "2001:db8::/64", ip_address: "2001:db8::10", gateway: null, host_routes: [] }],
      is_sriov: false,
    });
    await driver.postVipPlug(lb, amp); // the agent answers 409
    expect(lines.some((l) => l.level === "warn" && /already exists/.test(l.message))).toBe(true);
    await driver.postVipPlug(lb, { ...amp, status: "DELETED" });
    expect(agent.calls).toHaveLength(2);
  });

  it("post_network_plug: Octavia's port info; the VRRP port's with the VIP's net info; a 409 (an agent before Stein: already plugged) is done", async () => {
    const lb = loadBalancer({ vip_vnic_type: "direct" });
    const amp = amphora(lb);
    const agent = await fakeAgent(amp.id);
    agent.override = (c) => (c.path === "/1.0/plug/network" ? [202, { message: "OK" }] : undefined);
    const { log, lines } = captureLog();
    const driver = await driverFor(agent.port, { network: { getNetworkConfigs: async () => network }, log });
    const subnet = {
      cidr: "203.0.113.0/24",
      gateway_ip: "203.0.113.1",
      host_routes: [{ destination: "10.0.0.0/8", nexthop: "203.0.113.254" }],
    };
    const port = {
      id: "member-port",
      network_id: "member-net",
      mac_address: "fa:16:3e:00:00:02",
      mtu: 9000,
      vnic_type: "direct",
      fixed_ips: [{ subnet_id: "member-subnet", ip_address: "203.0.113.10", subnet }],
    };
    await driver.postNetworkPlug(lb, amp, port, network);
    expect(calls(agent)).toEqual(["POST /1.0/plug/network"]);
    expect(JSON.parse(agent.calls[0]!.body)).toEqual({
      mac_address: "fa:16:3e:00:00:02",
      fixed_ips: [
        {
          ip_address: "203.0.113.10",
          subnet_cidr: "203.0.113.0/24",
          host_routes: [{ nexthop: "203.0.113.254", destination: "10.0.0.0/8" }],
          gateway: "203.0.113.1",
        },
      ],
      mtu: 9000,
      is_sriov: true,
    });

    // The VRRP port (a subnet added on the VIP network): the VIP's net info as post_vip_plug sends it, for this port, with the VIP.
    const vrrpPort = { ...port, id: amp.vrrp_port_id!, mac_address: "fa:16:3e:12:34:56", mtu: 1450, vnic_type: "normal" };
    await driver.postNetworkPlug(lb, amp, vrrpPort, network);
    expect(JSON.parse(agent.calls[1]!.body)).toEqual({
      mac_address: "fa:16:3e:12:34:56",
      fixed_ips: [expect.objectContaining({ ip_address: "203.0.113.10" })],
      mtu: 1450,
      is_sriov: false,
      vip_net_info: {
        subnet_cidr: "198.51.100.0/24",
        gateway: "198.51.100.1",
        mac_address: "fa:16:3e:12:34:56",
        vrrp_ip: "198.51.100.11",
        mtu: 1450,
        host_routes: [{ nexthop: "198.51.100.254", destination: "203.0.113.0/24" }],
        additional_vips: [{ subnet_cidr: "2001:db8::/64", ip_address: "2001:db8::10", gateway: null, host_routes: [] }],
        is_sriov: false,
        vip: "198.51.100.10",
      },
    });

    agent.override = (c) => (c.path === "/1.0/plug/network" ? [409, { message: "Interface already exists" }] : undefined);
    await driver.postNetworkPlug(lb, amp, port, network);
    expect(lines.filter((l) => l.level === "warn").map((l) => l.message)).toEqual([
      "Network with MAC already exists on amphora, skipping post_network_plug",
    ]);
    agent.override = (c) => (c.path === "/1.0/plug/network" ? [400, { message: "Invalid network port" }] : undefined);
    await expect(driver.postNetworkPlug(lb, amp, port, network)).rejects.toThrow(
      /plug\/network answered 400 InvalidRequest: Invalid network port/,
    );
  });

  it("plugs the VIP with the network driver's configuration (the no-op driver's: a MAC derived from the amphora)", async () => {
    const lb = loadBalancer();
    const amp = amphora(lb);
    const agent = await fakeAgent(amp.id);
    const driver = await driverFor(agent.port);
    await driver.postVipPlug(lb, amp);
    expect(JSON.parse(agent.calls[0]!.body)).toMatchObject({ mac_address: noopVrrpMac(amp.id), subnet_cidr: "198.51.100.0/24" });
  });

  it("ACTIVE_STANDBY: uploads each allocated amphora's keepalived.conf, then starts keepalived on each", async () => {
    const lb = loadBalancer({ topology: "ACTIVE_STANDBY" });
    const master = amphora(lb, {
      role: "MASTER",
      vrrp_priority: 100,
      vrrp_id: 1,
      vrrp_interface: "eth1",
      vrrp_ip: "198.51.100.11",
      lb_network_ip: "127.0.0.2",
    });
    const backup = amphora(lb, {
      role: "BACKUP",
      vrrp_priority: 90,
      vrrp_id: 1,
      vrrp_interface: "eth1",
      vrrp_ip: "198.51.100.12",
      lb_network_ip: "127.0.0.3",
    });
    const booting = amphora(lb, { status: "BOOTING", lb_network_ip: "127.0.0.4" });
    const a1 = await fakeAgent(master.id, "127.0.0.2");
    const a2 = await fakeAgent(backup.id, "127.0.0.3", a1.port);
    const driver = await driverFor(a1.port, { network: { getNetworkConfigs: async () => network } });
    await driver.startVrrp(tree(lb, []), [master, backup, booting]);
    expect(calls(a1)).toEqual(["PUT /1.0/vrrp/upload", "PUT /1.0/vrrp/start"]);
    expect(calls(a2)).toEqual(["PUT /1.0/vrrp/upload", "PUT /1.0/vrrp/start"]);
    // Both uploads come before either start (AmphoraVRRPUpdate, then AmphoraVRRPStart).
    const group = derivedVrrpGroup(lb);
    expect(group.vrrp_group_name).toBe(lb.id.replaceAll("-", ""));
    expect(group.vrrp_auth_pass).toMatch(/^[0-9a-f]{7}$/);
    expect(a1.vrrpConfig).toContain("state MASTER");
    expect(a1.vrrpConfig).toContain("priority 100");
    expect(a1.vrrpConfig).toContain("198.51.100.12"); // its unicast peer
    expect(a1.vrrpConfig).toContain(`auth_pass ${group.vrrp_auth_pass}`);
    expect(a2.vrrpConfig).toContain("state BACKUP");
    expect(a2.vrrpConfig).toContain(`auth_pass ${group.vrrp_auth_pass}`);
  });

  it("pushes the rendered agent configuration (PUT config), skipping an agent without that API as Octavia does", async () => {
    const lb = loadBalancer();
    const amp = amphora(lb);
    const agent = await fakeAgent(amp.id);
    const { log, lines } = captureLog();
    const driver = await driverFor(agent.port, { log });
    await driver.updateAgentConfig(amp, "[health_manager]\nheartbeat_key = s3cret\n");
    expect(agent.agentConfig).toBe("[health_manager]\nheartbeat_key = s3cret\n");
    agent.override = (c) => (c.path === "/1.0/config" ? [404, { message: "Not Found" }] : undefined);
    await driver.updateAgentConfig(amp, "[DEFAULT]\n");
    expect(lines.some((l) => l.level === "error" && /does not support agent configuration update/.test(l.message))).toBe(true);
    agent.override = (c) => (c.path === "/1.0/config" ? [500, { message: "Unable to update amphora-agent configuration." }] : undefined);
    await expect(driver.updateAgentConfig(amp, "[DEFAULT]\n")).rejects.toMatchObject({ name: "DriverError", status: 500 });
  });

  it("rotates the agent's server certificate (PUT certificate)", async () => {
    const lb = loadBalancer();
    const amp = amphora(lb);
    const agent = await fakeAgent(amp.id);
    const driver = await driverFor(agent.port);
    const pem = await pki.issue(amp.id);
    await driver.uploadCert(amp, pem);
    expect(calls(agent)).toEqual(["PUT /1.0/certificate"]);
    expect(agent.serverPem).toBe(pem);
  });

  it("answers whether a booting amphora's agent is reachable: one GET info, no waiting", async () => {
    const lb = loadBalancer();
    const amp = amphora(lb);
    const agent = await fakeAgent(amp.id);
    const driver = await driverFor(agent.port);
    expect(hasAgent(driver)).toBe(true);
    expect(await driver.agentReachable(amp)).toBe(true);
    expect(calls(agent)).toEqual(["GET /1.0/info"]);
    agent.override = () => [200, { api_version: "0.5" }];
    await expect(driver.agentReachable(amp)).rejects.toThrow(/speaks amphora API 0.5; Ottava speaks 1.0/);
    agent.override = () => [500, { message: "boom" }];
    await expect(driver.agentReachable(amp)).rejects.toMatchObject({ status: 500 });
    const port = agent.port;
    await agent.close();
    agents.splice(agents.indexOf(agent), 1);
    const t0 = Date.now();
    expect(await (await driverFor(port)).agentReachable(amp)).toBe(false);
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});

describe("createDrivers with OTTAVA_AMPHORA_DRIVER=rest", () => {
  it("reads the REST driver's settings with Octavia's defaults ([haproxy_amphora])", () => {
    expect(loadConfig({})).toMatchObject({
      amphoraAgentPort: 9443,
      restRequestConnTimeout: 10,
      restRequestReadTimeout: 60,
      connectionMaxRetries: 120,
      connectionRetryInterval: 5,
      activeConnectionMaxRetries: 15,
      activeConnectionRetryInterval: 2,
      clientCert: undefined,
      serverCa: undefined,
      lbNetworkInterface: "o-hm0",
    });
    expect(
      loadConfig({
        OTTAVA_REST_REQUEST_CONN_TIMEOUT: "2.5",
        OTTAVA_SERVER_CA: "-----BEGIN CERTIFICATE-----\\nAAA\\n-----END CERTIFICATE-----",
      }),
    ).toMatchObject({
      restRequestConnTimeout: 2.5,
      serverCa: "-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----",
    });
    expect(() => loadConfig({ OTTAVA_REST_REQUEST_READ_TIMEOUT: "0" })).toThrow(
      /OTTAVA_REST_REQUEST_READ_TIMEOUT must be a number of seconds > 0/,
    );
    expect(() => loadConfig({ OTTAVA_CONNECTION_MAX_RETRIES: "0" })).toThrow(/OTTAVA_CONNECTION_MAX_RETRIES must be an integer >= 1/);
  });

  it("builds the REST driver from the settings; the no-op driver has no agent to wait for", async () => {
    expect(hasAgent(createDrivers(loadConfig({})).amphora)).toBe(false);
    const rest = createDrivers(loadConfig({ OTTAVA_AMPHORA_DRIVER: "rest" })).amphora;
    expect(rest).toBeInstanceOf(HaproxyAmphoraLoadBalancerDriver);
    expect(hasAgent(rest)).toBe(true);
  });

  it("names the missing settings at the first call: no CA, then no client certificate", async () => {
    const lb = loadBalancer();
    const amp = amphora(lb);
    const none = createDrivers(loadConfig({ OTTAVA_AMPHORA_DRIVER: "rest" })).amphora;
    await expect(none.uploadCert(amp, "x")).rejects.toThrow(/OTTAVA_SERVER_CA \(or OTTAVA_CA_CERTIFICATE\)/);
    const noClient = createDrivers(loadConfig({ OTTAVA_AMPHORA_DRIVER: "rest", OTTAVA_SERVER_CA: pki.ca.certificate })).amphora;
    await expect(noClient.uploadCert(amp, "x")).rejects.toMatchObject({
      name: "CertificateError",
      message: expect.stringMatching(/OTTAVA_CLIENT_CERT/),
    });
  });

  it("speaks to the agent on OTTAVA_AMPHORA_AGENT_PORT with OTTAVA_CLIENT_CERT, or a client certificate the CA issues", async () => {
    const lb = loadBalancer();
    const amp = amphora(lb);
    const agent = await fakeAgent(amp.id);
    const env = { OTTAVA_AMPHORA_DRIVER: "rest", OTTAVA_AMPHORA_AGENT_PORT: String(agent.port), OTTAVA_SERVER_CA: pki.ca.certificate };
    const given = createDrivers(
      loadConfig({ ...env, OTTAVA_CLIENT_CERT: (await pki.issue("operator-given")).replace(/\n/g, "\\n") }),
    ).amphora;
    await given.uploadCert(amp, "PEM");
    const issued = createDrivers(loadConfig(env), {
      certs: { generateServerPem: async (cn) => ({ pem: await pki.issue(cn), expiration: "" }) },
    }).amphora;
    await issued.uploadCert(amp, "PEM");
    expect(agent.calls.map((c) => c.clientCn)).toEqual(["operator-given", CLIENT_CERT_CN]);
  });
});

describe("createRestAmphoraDriver: keepalived's notify_master follows the network driver", () => {
  it("adds the promotion script when the network moves VIPs itself (takeVip), Octavia's file otherwise, none when told so", async () => {
    const lb = loadBalancer({ topology: "ACTIVE_STANDBY" });
    const vrrp = { vrrp_id: 1, vrrp_interface: "eth1", vrrp_priority: 100 };
    const master = amphora(lb, { ...vrrp, role: "MASTER", vrrp_ip: "198.51.100.11", lb_network_ip: "127.0.0.2" });
    const backup = amphora(lb, { ...vrrp, role: "BACKUP", vrrp_priority: 90, vrrp_ip: "198.51.100.12", lb_network_ip: "127.0.0.3" });
    const a1 = await fakeAgent(master.id, "127.0.0.2");
    const a2 = await fakeAgent(backup.id, "127.0.0.3", a1.port);
    const config = loadConfig({
      OTTAVA_AMPHORA_DRIVER: "rest",
      OTTAVA_AMPHORA_AGENT_PORT: String(a1.port),
      OTTAVA_SERVER_CA: pki.ca.certificate,
      OTTAVA_CLIENT_CERT: (await pki.issue("ottava")).replace(/\n/g, "\\n"),
    });
    const plain = { getNetworkConfigs: async () => network };
    const moving = { ...plain, takeVip: async () => true };
    const configs = async (net: typeof plain, setup: Parameters<typeof createRestAmphoraDriver>[3] = {}) => {
      await createRestAmphoraDriver(config, mapCertManager({}, {}), net, setup).startVrrp(tree(lb, []), [master, backup]);
      return [a1.vrrpConfig!, a2.vrrpConfig!];
    };
    const line = `    notify_master "${VRRP_NOTIFY_MASTER_SCRIPT}"\n`;
    expect(VRRP_NOTIFY_MASTER_SCRIPT).toBe("/usr/local/sbin/ottava-vrrp-master");
    const octavias = await configs(plain);
    for (const c of octavias) expect(c).not.toContain("notify_master");
    const promoted = await configs(moving);
    // Both amphorae: either may be promoted.
    promoted.forEach((c, i) => expect(c).toBe(octavias[i]!.replace(/\n}\n$/, `\n\n${line}}\n`)));
    for (const c of await configs(moving, { vrrpNotifyMaster: null })) expect(c).not.toContain("notify_master");
    for (const c of await configs(plain, { vrrpNotifyMaster: "/opt/notify" })) expect(c).toContain('    notify_master "/opt/notify"\n');
  });
});

/** The key as tlsContainer writes it (SEC1 for EC keys). */
function createKeyPem(pkcs8: string): string {
  return (createPrivateKey(pkcs8).export({ format: "pem", type: "sec1" }) as string).trim();
}
