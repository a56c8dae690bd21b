// The local data plane (`npm start -- --dataplane haproxy`, packages/amphora/src/local: Octavia's amphora provider on one machine) with real traffic: real HAProxy processes in front of HTTP and TCP servers this test starts on loopback, driven through the Octavia API.
//
// One stack, started as `npm start` starts it (with a data directory of its own, so that a second
// start can bring its load balancers back), with its own VIP range. The cases share a load
// balancer where they can and run in order; each says what it proves.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalCertManager } from "@ottava/amphora";
import { startStack, waitSettled, type Stack } from "./support/stack";
import { get, refused, startHttpBackend, startTcpBackend, tally, tcpExchange, waitFor, type HttpBackend } from "./support/backends";
import { SUBNET } from "@ottava/core/testing";
import { webListener } from "@ottava/db/testing";

const RANGE = "127.0.102.0/24";
const ENV = {
  OTTAVA_LOCAL_VIP_RANGE: RANGE,
  // Heartbeats every second, so operating statuses follow HAProxy's health checks within seconds.
  OTTAVA_HEARTBEAT_INTERVAL: "1",
  // No automatic failover while the test runs (a listener left in ERROR makes heartbeats not count).
  OTTAVA_HEARTBEAT_TIMEOUT: "600",
  // The flows' info lines: the network deltas are read from them.
  OTTAVA_LOG_LEVEL: "info",
};

let dataDir: string;
let stack: Stack;
const backends: Record<string, HttpBackend> = {};
let tcp: Awaited<ReturnType<typeof startTcpBackend>>;

/** The HAProxy masters running now (a master has -Ws and no -sf), by amphora id. */
function haproxyMasters(): Map<string, { pid: number; config: string }> {
  const out = new Map<string, { pid: number; config: string }>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    if (!args[0]?.endsWith("haproxy") || !args.includes("-Ws") || args.includes("-sf")) continue;
    const config = args[args.indexOf("-f") + 1] ?? "";
    const m = /\/amphorae\/([^/]+)\//.exec(config);
    if (m && config.startsWith(dataDir)) out.set(m[1]!, { pid: Number(name), config });
  }
  return out;
}

/** A member subnet other than the VIP's: the flows plug its network into the amphorae (the local driver: a loopback port). */
const MEMBER_SUBNET = "6c1e0f7a-2b44-4e52-9d1b-0000000000aa";

/** The network deltas the stack logged for an amphora: the networks each added and removed. */
function networkDeltas(amphoraId: string): { add: number; remove: number }[] {
  return stack
    .output()
    .split("\n")
    .filter((l) => l.includes('"network delta"'))
    .map((l) => JSON.parse(l) as { amphora: string; delta: { add_nics: unknown[]; delete_nics: unknown[] } })
    .filter((l) => l.amphora === amphoraId)
    .map((l) => ({ add: l.delta.add_nics.length, remove: l.delta.delete_nics.length }));
}

async function api(method: string, path: string, body?: unknown) {
  return stack.call(method, path, body);
}

/** Waits for the load balancer's flow to end; answers its record (ACTIVE expected unless `status` says). */
async function settled(lbId: string, status = "ACTIVE") {
  const r = await waitSettled(stack, lbId, 40_000);
  expect(r.body.loadbalancer.provisioning_status).toBe(status);
  return r.body.loadbalancer;
}

async function create(path: string, root: string, body: Record<string, unknown>, lbId: string) {
  const r = await api("POST", `/v2/lbaas/${path}`, { [root]: body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await settled(lbId);
  return r.body[root];
}

async function update(path: string, root: string, body: Record<string, unknown>, lbId: string) {
  const r = await api("PUT", `/v2/lbaas/${path}`, { [root]: body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  await settled(lbId);
}

/** Deletes a load balancer with its tree and waits until it is gone (its state and last flow in the failure otherwise). */
async function deleteLoadBalancer(lbId: string) {
  expect((await api("DELETE", `/v2/lbaas/loadbalancers/${lbId}?cascade=true`)).status).toBe(204);
  await waitFor(
    "the load balancer deleted",
    async () => (await api("GET", `/v2/lbaas/loadbalancers/${lbId}`)).status === 404,
    30_000,
  ).catch(async (e: Error) => {
    const state = (await api("GET", `/v2/lbaas/loadbalancers/${lbId}`)).body;
    const flows = (await api("GET", `/v2/lbaas/loadbalancers/${lbId}/flows`)).body;
    throw new Error(`${e.message}: ${JSON.stringify(state)} ${JSON.stringify(flows?.flows?.[0])}\n${stack.output().slice(-3000)}`);
  });
}

const member = (b: HttpBackend, extra: Record<string, unknown> = {}) => ({ address: "127.0.0.1", protocol_port: b.port, ...extra });

async function memberIds(poolId: string): Promise<Record<string, string>> {
  const r = await api("GET", `/v2/lbaas/pools/${poolId}/members`);
  const byPort = new Map(Object.values(backends).map((b) => [b.port, b.name]));
  return Object.fromEntries(r.body.members.map((m: { id: string; protocol_port: number }) => [byPort.get(m.protocol_port), m.id]));
}

/** Until `n` GETs answer as `expected` (a configuration just applied, a check just run). */
const distribution = (vip: string, port: number, n: number, expected: Record<string, number>, path = "/") =>
  waitFor(`${JSON.stringify(expected)} from ${vip}:${port}`, async () => {
    const counts = await tally(vip, port, n, path);
    return JSON.stringify(sorted(counts)) === JSON.stringify(sorted(expected)) && counts;
  });
const sorted = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).sort());

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "ottava-dataplane-e2e-"));
  for (const name of ["b1", "b2", "b3", "b4", "b5", "b6"]) backends[name] = await startHttpBackend(name);
  tcp = await startTcpBackend("t1");
  stack = await startStack(["--data-dir", dataDir, "--dataplane", "haproxy"], ENV);
});

afterAll(async () => {
  await stack?.stop();
  for (const b of Object.values(backends)) await b.close();
  await tcp?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe("npm start -- --dataplane haproxy", () => {
  it("stops at start with a clear message when there is no HAProxy", async () => {
    const failed = await startStack(["--in-memory", "--dataplane", "haproxy"], {
      ...ENV,
      OTTAVA_LOCAL_VIP_RANGE: "127.0.105.0/24",
      OTTAVA_HAPROXY_BINARY: "/nonexistent/haproxy",
    }).then(
      (s) => s.stop().then(() => "started"),
      (e: Error) => e.message,
    );
    expect(failed).toMatch(/exited with 1/);
    expect(failed).toContain(
      "Ottava could not start: --dataplane haproxy runs HAProxy, and there is none at /nonexistent/haproxy: install it (Debian/Ubuntu: sudo apt-get install haproxy",
    );
  });
});

describe("npm start -- --dataplane haproxy without root", () => {
  it("a listener port below 1024 ends the change in ERROR, with HAProxy's reason in the flow trail", async () => {
    // As root HAProxy may bind any port: the stack runs without that right, as `npm start` does for a newcomer.
    const own = mkdtempSync(join(tmpdir(), "ottava-dataplane-unprivileged-"));
    const low = await startStack(
      ["--data-dir", own, "--dataplane", "haproxy"],
      { ...ENV, OTTAVA_LOCAL_VIP_RANGE: "127.0.108.0/24" },
      { noLowPorts: true },
    );
    try {
      const created = await low.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { name: "low", vip_subnet_id: SUBNET } });
      expect(created.status).toBe(201);
      const lbId = created.body.loadbalancer.id;
      await waitSettled(low, lbId);
      const r = await low.call("POST", "/v2/lbaas/listeners", { listener: { loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80 } });
      expect(r.status).toBe(201);
      await waitSettled(low, lbId);
      expect((await low.call("GET", `/v2/lbaas/listeners/${r.body.listener.id}`)).body.listener.provisioning_status).toBe("ERROR");
      const [flow] = (await low.call("GET", `/v2/lbaas/loadbalancers/${lbId}/flows`)).body.flows;
      expect(flow).toMatchObject({ flow: "listener-create", outcome: "FAILED", failed_step: "UpdateAmphoraeConfig" });
      expect(flow.error.cause).toContain(`cannot bind socket (Permission denied) for [${created.body.loadbalancer.vip_address}:80]`);
    } finally {
      await low.stop();
      rmSync(own, { recursive: true, force: true });
    }
  });
});

describe("the local data plane with real traffic", () => {
  let lb: { id: string; vip_address: string };
  let listenerId: string;
  let poolId: string;

  it("an HTTP listener with a ROUND_ROBIN pool of three members spreads 30 requests across the three", async () => {
    const r = await api("POST", "/v2/lbaas/loadbalancers", {
      loadbalancer: {
        name: "web",
        vip_subnet_id: SUBNET,
        listeners: [webListener({ members: ["b1", "b2", "b3"].map((n) => member(backends[n]!)) }, { name: "http", protocol_port: 8080 })],
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    lb = await settled(r.body.loadbalancer.id);
    // The VIP is a loopback address of the range, claimed in the table.
    expect(lb.vip_address).toMatch(/^127\.0\.102\.\d+$/);
    const listeners = (await api("GET", `/v2/lbaas/listeners?loadbalancer_id=${lb.id}`)).body.listeners;
    listenerId = listeners[0].id;
    poolId = listeners[0].default_pool_id;
    expect(await tally(lb.vip_address, 8080, 30)).toEqual({ b1: 10, b2: 10, b3: 10 });
    // One HAProxy master serves it, from the amphora's directory in the data directory.
    const [amphora] = (await api("GET", `/v2/octavia/amphorae?loadbalancer_id=${lb.id}`)).body.amphorae;
    expect(haproxyMasters().get(amphora.id)?.config).toBe(join(dataDir, "amphorae", amphora.id, lb.id, "haproxy.cfg"));
  });

  it("admin_state_up=false on a member stops its traffic, true brings it back", async () => {
    const ids = await memberIds(poolId);
    await update(`pools/${poolId}/members/${ids.b3}`, "member", { admin_state_up: false }, lb.id);
    expect(await tally(lb.vip_address, 8080, 30)).toEqual({ b1: 15, b2: 15 });
    await update(`pools/${poolId}/members/${ids.b3}`, "member", { admin_state_up: true }, lb.id);
    expect(await tally(lb.vip_address, 8080, 30)).toEqual({ b1: 10, b2: 10, b3: 10 });
  });

  it("weights and a backup member behave as HAProxy's: 1:3, and the backup only when no other member serves", async () => {
    const r = await api("PUT", `/v2/lbaas/pools/${poolId}/members`, {
      members: [member(backends.b1!, { weight: 1 }), member(backends.b2!, { weight: 3 }), member(backends.b3!, { backup: true })],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    await settled(lb.id);
    expect(await tally(lb.vip_address, 8080, 40)).toEqual({ b1: 10, b2: 30 });
    const ids = await memberIds(poolId);
    await update(`pools/${poolId}/members/${ids.b1}`, "member", { admin_state_up: false }, lb.id);
    await update(`pools/${poolId}/members/${ids.b2}`, "member", { admin_state_up: false }, lb.id);
    expect(await tally(lb.vip_address, 8080, 10)).toEqual({ b3: 10 });
    // Back to three equal members for what follows.
    await api("PUT", `/v2/lbaas/pools/${poolId}/members`, { members: ["b1", "b2", "b3"].map((n) => member(backends[n]!)) });
    await settled(lb.id);
    expect(await tally(lb.vip_address, 8080, 30)).toEqual({ b1: 10, b2: 10, b3: 10 });
  });

  it("a configuration change reloads HAProxy in place: a request under way completes, the master stays", async () => {
    const [amphora] = (await api("GET", `/v2/octavia/amphorae?loadbalancer_id=${lb.id}`)).body.amphorae;
    const master = haproxyMasters().get(amphora.id)!.pid;
    const slow = get(lb.vip_address, 8080, "/slow");
    await new Promise((r) => setTimeout(r, 150)); // the request is at a backend when the reload comes
    await update(`listeners/${listenerId}`, "listener", { timeout_client_data: 40000 }, lb.id);
    expect((await slow).status).toBe(200);
    expect(haproxyMasters().get(amphora.id)!.pid).toBe(master);
  });

  it("L7 policies route as configured: REJECT, REDIRECT_TO_URL, REDIRECT_TO_POOL on PATH and HEADER rules", async () => {
    const pool2 = await create(
      "pools",
      "pool",
      { name: "api", protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", loadbalancer_id: lb.id },
      lb.id,
    );
    await create(`pools/${pool2.id}/members`, "member", member(backends.b4!), lb.id);
    const policy = (body: Record<string, unknown>) => create("l7policies", "l7policy", { listener_id: listenerId, ...body }, lb.id);
    await policy({ action: "REJECT", position: 1, rules: [{ type: "PATH", compare_type: "STARTS_WITH", value: "/blocked" }] });
    await policy({
      action: "REDIRECT_TO_URL",
      redirect_url: "https://example.org/moved",
      position: 2,
      rules: [{ type: "HEADER", key: "X-Go", compare_type: "EQUAL_TO", value: "away" }],
    });
    await policy({
      action: "REDIRECT_TO_POOL",
      redirect_pool_id: pool2.id,
      position: 3,
      rules: [{ type: "PATH", compare_type: "STARTS_WITH", value: "/api" }],
    });
    await policy({
      action: "REDIRECT_TO_POOL",
      redirect_pool_id: pool2.id,
      position: 4,
      rules: [{ type: "HEADER", key: "X-Pool", compare_type: "EQUAL_TO", value: "two" }],
    });

    expect((await get(lb.vip_address, 8080, "/blocked/page")).status).toBe(403);
    const moved = await get(lb.vip_address, 8080, "/", { headers: { "X-Go": "away" } });
    expect(moved.status).toBe(302);
    expect(moved.headers.location).toBe("https://example.org/moved");
    expect(await tally(lb.vip_address, 8080, 3, "/api/items")).toEqual({ b4: 3 });
    expect(await tally(lb.vip_address, 8080, 3, "/", { headers: { "X-Pool": "two" } })).toEqual({ b4: 3 });
    expect(await tally(lb.vip_address, 8080, 3, "/", { headers: { "X-Pool": "one" } })).toEqual({ b1: 1, b2: 1, b3: 1 });
  });

  it("SOURCE_IP session persistence sticks each client address to one member", async () => {
    const listener = await create("listeners", "listener", { loadbalancer_id: lb.id, protocol: "HTTP", protocol_port: 8082 }, lb.id);
    const pool = await create(
      "pools",
      "pool",
      { listener_id: listener.id, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", session_persistence: { type: "SOURCE_IP" } },
      lb.id,
    );
    const r = await api("PUT", `/v2/lbaas/pools/${pool.id}/members`, { members: ["b1", "b2", "b3"].map((n) => member(backends[n]!)) });
    expect(r.status).toBe(202);
    await settled(lb.id);
    const first = await tally(lb.vip_address, 8082, 12, "/", { localAddress: "127.0.0.2" });
    const second = await tally(lb.vip_address, 8082, 12, "/", { localAddress: "127.0.0.3" });
    // Each source address stays on one member; round robin gave the second address the next member.
    expect(Object.values(first)).toEqual([12]);
    expect(Object.values(second)).toEqual([12]);
    expect(Object.keys(first)[0]).not.toBe(Object.keys(second)[0]);
  });

  it("a TCP listener passes bytes through", async () => {
    const listener = await create("listeners", "listener", { loadbalancer_id: lb.id, protocol: "TCP", protocol_port: 9000 }, lb.id);
    const pool = await create("pools", "pool", { listener_id: listener.id, protocol: "TCP", lb_algorithm: "ROUND_ROBIN" }, lb.id);
    await create(`pools/${pool.id}/members`, "member", { address: "127.0.0.1", protocol_port: tcp.port }, lb.id);
    expect(await tcpExchange(lb.vip_address, 9000, "hello over TCP\0\u00ff")).toBe("t1:hello over TCP\0\u00ff");
  });

  it("a TERMINATED_HTTPS listener answers over TLS with the stored certificate", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ottava-dataplane-tls-"));
    try {
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:P-256",
          "-nodes",
          "-days",
          "1",
          "-subj",
          "/CN=www.example.test",
          "-addext",
          "subjectAltName=DNS:www.example.test",
          "-keyout",
          join(dir, "key.pem"),
          "-out",
          join(dir, "cert.pem"),
        ],
        { stdio: "ignore" },
      );
      const certificate = readFileSync(join(dir, "cert.pem"), "utf8");
      // Stored as `npm run cert -- store` stores it: the local certificate manager of the stack's data directory.
      const ref = await new LocalCertManager({ storagePath: join(dataDir, "certificates") }).storeCert({
        certificate,
        private_key: readFileSync(join(dir, "key.pem"), "utf8"),
      });
      const listener = await create(
        "listeners",
        "listener",
        { loadbalancer_id: lb.id, protocol: "TERMINATED_HTTPS", protocol_port: 8443, default_tls_container_ref: ref },
        lb.id,
      );
      const pool = await create("pools", "pool", { listener_id: listener.id, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" }, lb.id);
      await create(`pools/${pool.id}/members`, "member", member(backends.b5!), lb.id);
      const answer = await get(lb.vip_address, 8443, "/", { tls: { ca: certificate, servername: "www.example.test" } });
      expect(answer).toMatchObject({ status: 200, body: "b5" });
      const fingerprint = execFileSync("openssl", ["x509", "-noout", "-fingerprint", "-sha256", "-in", join(dir, "cert.pem")])
        .toString()
        .split("=")[1]!
        .trim();
      expect(answer.fingerprint).toBe(fingerprint);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("an HTTP health monitor takes a failing member out (ERROR) and back (ONLINE) once it recovers", async () => {
    await create(
      "healthmonitors",
      "healthmonitor",
      { pool_id: poolId, type: "HTTP", delay: 1, timeout: 1, max_retries: 1, max_retries_down: 1, url_path: "/health" },
      lb.id,
    );
    const ids = await memberIds(poolId);
    const status = async (name: string) =>
      (await api("GET", `/v2/lbaas/pools/${poolId}/members/${ids[name]}`)).body.member.operating_status;
    await waitFor(
      "the members ONLINE",
      async () => (await status("b1")) === "ONLINE" && (await status("b2")) === "ONLINE" && (await status("b3")) === "ONLINE",
    );
    backends.b2!.healthy = false;
    await waitFor("b2 ERROR", async () => (await status("b2")) === "ERROR");
    expect(await tally(lb.vip_address, 8080, 10)).toEqual({ b1: 5, b3: 5 });
    backends.b2!.healthy = true;
    await waitFor("b2 ONLINE", async () => (await status("b2")) === "ONLINE");
    await distribution(lb.vip_address, 8080, 30, { b1: 10, b2: 10, b3: 10 });
  });

  it("a cross-pool member update (PUT /v2/lbaas/pools/members) moves traffic to the new members; one on a member subnet gets its network plugged", async () => {
    const r = await api("PUT", "/v2/lbaas/pools/members", {
      members: [
        { pool_id: poolId, ...member(backends.b5!, { subnet_id: MEMBER_SUBNET }) },
        { pool_id: poolId, ...member(backends.b6!) },
      ],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    await settled(lb.id);
    await distribution(lb.vip_address, 8080, 20, { b5: 10, b6: 10 });
    // The local network driver plugged the member's network (a loopback port) into the amphora.
    const [amphora] = (await api("GET", `/v2/octavia/amphorae?loadbalancer_id=${lb.id}&status=ALLOCATED`)).body.amphorae;
    expect(networkDeltas(amphora.id)).toEqual([{ add: 1, remove: 0 }]);
  });

  it("a listener port already taken by another process ends the change in ERROR, with HAProxy's reason in the flow trail", async () => {
    const holder: Server = createServer();
    await new Promise<void>((ok) => holder.listen(8090, lb.vip_address, ok));
    try {
      const r = await api("POST", "/v2/lbaas/listeners", { listener: { loadbalancer_id: lb.id, protocol: "TCP", protocol_port: 8090 } });
      expect(r.status).toBe(201);
      await settled(lb.id);
      expect((await api("GET", `/v2/lbaas/listeners/${r.body.listener.id}`)).body.listener.provisioning_status).toBe("ERROR");
      const [flow] = (await api("GET", `/v2/lbaas/loadbalancers/${lb.id}/flows`)).body.flows;
      expect(flow).toMatchObject({
        flow: "listener-create",
        outcome: "FAILED",
        failed_step: "UpdateAmphoraeConfig",
        error: { error: "DriverError" },
      });
      expect(flow.error.cause).toContain(`cannot bind socket (Address already in use) for [${lb.vip_address}:8090]`);
      // The amphora goes on serving what it served.
      expect((await get(lb.vip_address, 8080)).status).toBe(200);
      // Without the listener, changes apply again.
      expect((await api("DELETE", `/v2/lbaas/listeners/${r.body.listener.id}`)).status).toBe(204);
      await settled(lb.id);
    } finally {
      await new Promise((ok) => holder.close(ok));
    }
  });

  it("a UDP listener is rendered (keepalived LVS) but not served: this machine has no IPVS", async () => {
    const r = await api("POST", "/v2/lbaas/loadbalancers", {
      loadbalancer: {
        name: "udp",
        vip_subnet_id: SUBNET,
        listeners: [
          {
            protocol: "UDP",
            protocol_port: 5353,
            default_pool: {
              name: "dns",
              protocol: "UDP",
              lb_algorithm: "ROUND_ROBIN",
              members: [{ address: "127.0.0.1", protocol_port: 5353 }],
            },
          },
        ],
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const udp = await settled(r.body.loadbalancer.id);
    const [amphora] = (await api("GET", `/v2/octavia/amphorae?loadbalancer_id=${udp.id}`)).body.amphorae;
    const [listener] = (await api("GET", `/v2/lbaas/listeners?loadbalancer_id=${udp.id}`)).body.listeners;
    const conf = readFileSync(join(dataDir, "amphorae", amphora.id, "lvs", `octavia-keepalivedlvs-${listener.id}.conf`), "utf8");
    expect(conf).toContain(`    ${udp.vip_address} 5353`);
    expect(conf).toContain("    protocol UDP");
    expect(conf).toContain("    real_server 127.0.0.1 5353 {");
    // No HAProxy: it has no listener HAProxy serves.
    expect(haproxyMasters().has(amphora.id)).toBe(false);
    await deleteLoadBalancer(udp.id);
  });

  it("ACTIVE_STANDBY: both amphorae's configurations are written; only the MASTER's HAProxy serves", async () => {
    const profile = (
      await api("POST", "/v2/lbaas/flavorprofiles", {
        flavorprofile: { name: "ha", provider_name: "amphora", flavor_data: JSON.stringify({ loadbalancer_topology: "ACTIVE_STANDBY" }) },
      })
    ).body.flavorprofile;
    const flavor = (await api("POST", "/v2/lbaas/flavors", { flavor: { name: "ha", flavor_profile_id: profile.id, enabled: true } })).body
      .flavor;
    const r = await api("POST", "/v2/lbaas/loadbalancers", {
      loadbalancer: {
        name: "ha",
        vip_subnet_id: SUBNET,
        flavor_id: flavor.id,
        listeners: [
          {
            protocol: "HTTP",
            protocol_port: 8088,
            default_pool: { name: "ha", protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", members: [member(backends.b1!)] },
          },
        ],
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const ha = await settled(r.body.loadbalancer.id);
    const amphorae: { id: string; role: string }[] = (await api("GET", `/v2/octavia/amphorae?loadbalancer_id=${ha.id}`)).body.amphorae;
    expect(amphorae.map((a) => a.role).sort()).toEqual(["BACKUP", "MASTER"]);
    const masters = haproxyMasters();
    for (const a of amphorae) {
      expect(existsSync(join(dataDir, "amphorae", a.id, ha.id, "haproxy.cfg"))).toBe(true);
      expect(readFileSync(join(dataDir, "amphorae", a.id, "vrrp", "octavia-keepalived.conf"), "utf8")).toContain(`state ${a.role}`);
      expect(masters.has(a.id)).toBe(a.role === "MASTER");
    }
    expect(await tally(ha.vip_address, 8088, 3)).toEqual({ b1: 3 });
    // Deleting the load balancer stops its HAProxy: its port closes, its amphorae's directories go.
    await deleteLoadBalancer(ha.id);
    expect(await refused(ha.vip_address, 8088)).toBe(true);
    for (const a of amphorae) expect(existsSync(join(dataDir, "amphorae", a.id))).toBe(false);
  });

  it("a load-balancer failover replaces the HAProxy process and traffic resumes", async () => {
    const [before] = (await api("GET", `/v2/octavia/amphorae?loadbalancer_id=${lb.id}&status=ALLOCATED`)).body.amphorae;
    const oldMaster = haproxyMasters().get(before.id)!.pid;
    expect((await api("PUT", `/v2/lbaas/loadbalancers/${lb.id}/failover`)).status).toBe(202);
    await settled(lb.id);
    const [after] = (await api("GET", `/v2/octavia/amphorae?loadbalancer_id=${lb.id}&status=ALLOCATED`)).body.amphorae;
    expect(after.id).not.toBe(before.id);
    const masters = haproxyMasters();
    expect(masters.has(before.id)).toBe(false);
    expect(masters.get(after.id)?.pid).not.toBe(oldMaster);
    expect(existsSync(`/proc/${oldMaster}`)).toBe(false);
    await distribution(lb.vip_address, 8080, 20, { b5: 10, b6: 10 });
    // The new amphora is plugged into the network of the member on MEMBER_SUBNET, as its old one was.
    expect(networkDeltas(after.id)).toEqual([{ add: 1, remove: 0 }]);
  });

  it("a second start brings back the load balancers that were ACTIVE; stopping Ottava stops their HAProxy", async () => {
    await stack.stop();
    expect(haproxyMasters().size).toBe(0);
    expect(await refused(lb.vip_address, 8080)).toBe(true);
    stack = await startStack(["--data-dir", dataDir, "--dataplane", "haproxy"], ENV);
    await distribution(lb.vip_address, 8080, 20, { b5: 10, b6: 10 });
    expect(await tcpExchange(lb.vip_address, 9000, "again")).toBe("t1:again");
    // Deleting the load balancer closes its ports and gives its address back to the range.
    await deleteLoadBalancer(lb.id);
    expect(await refused(lb.vip_address, 8080)).toBe(true);
    const next = await api("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET, vip_address: lb.vip_address } });
    expect(next.status, JSON.stringify(next.body)).toBe(201);
    await settled(next.body.loadbalancer.id);
  });
});
