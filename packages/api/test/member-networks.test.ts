// Member networks with the no-op drivers: the calls each flow makes to plug the amphorae into their
// members' networks and unplug them (Octavia's CalculateDelta, HandleNetworkDeltas, AmphoraePostNetworkPlug),
// watched on the real no-op drivers, through the real API, ASL and DynamoDB Local.
import { beforeAll, describe, expect, it } from "vitest";
import { noopDrivers, noopNetworkOf } from "@ottava/amphora";
import { noopDriversWith } from "@ottava/amphora/testing/noop-faults";
import type { Amphora, Drivers } from "@ottava/core";
import { inProcessApp, SUBNET } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
const LBS = "/v2/lbaas/loadbalancers";
const A = "0d1f4a52-6a3b-4b8e-8f0e-00000000000a";
const B = "0d1f4a52-6a3b-4b8e-8f0e-00000000000b";
const C = "0d1f4a52-6a3b-4b8e-8f0e-00000000000c";

interface Call {
  method: string;
  amphora: string;
  network?: string;
  port?: string;
}

/** The no-op drivers, with the network-plugging calls they answer kept in `calls`. */
function watched(d: Drivers): { drivers: Drivers; calls: Call[] } {
  const calls: Call[] = [];
  const network: Drivers["network"] = {
    ...d.network,
    async plugNetwork(lb, a, networkId, subnetIds, vnicType) {
      calls.push({ method: "plugNetwork", amphora: a.id, network: networkId });
      return d.network.plugNetwork(lb, a, networkId, subnetIds, vnicType);
    },
    async plugFixedIp(lb, a, port, subnetId) {
      calls.push({ method: "plugFixedIp", amphora: a.id, port: port.id });
      return d.network.plugFixedIp(lb, a, port, subnetId);
    },
    async unplugFixedIp(lb, a, port, subnetId) {
      calls.push({ method: "unplugFixedIp", amphora: a.id, port: port.id });
      return d.network.unplugFixedIp(lb, a, port, subnetId);
    },
    async unplugNetwork(a, port) {
      calls.push({ method: "unplugNetwork", amphora: a.id, network: port.network_id, port: port.id });
      return d.network.unplugNetwork(a, port);
    },
  };
  const amphora: Drivers["amphora"] = {
    ...d.amphora,
    async postNetworkPlug(lb, a, port, config) {
      calls.push({ method: "postNetworkPlug", amphora: a.id, network: port.network_id, port: port.id });
      return d.amphora.postNetworkPlug(lb, a, port, config);
    },
  };
  return { drivers: { ...d, network, amphora }, calls };
}

let t: App;
let calls: Call[];
let failing: App;
let failingCalls: Call[];

beforeAll(async () => {
  const w = watched(noopDrivers());
  calls = w.calls;
  t = await inProcessApp({}, { drivers: w.drivers });
  // Every configuration push fails: the member flows' reverts run.
  const f = watched(noopDriversWith("amphora.update", ""));
  failingCalls = f.calls;
  failing = await inProcessApp({}, { drivers: f.drivers });
});

/** The calls `fn`'s flows make. */
async function during(fn: () => Promise<unknown>, app = t, log = calls): Promise<Call[]> {
  await app.settle();
  log.length = 0;
  await fn();
  await app.settle();
  return log.map((c) => ({ ...c }));
}

async function ok(app: App, method: string, path: string, body?: unknown) {
  const r = await app.call(method, path, body);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
  return r.body;
}

async function lbWithPools(app = t, body: Record<string, unknown> = {}) {
  const created = await ok(app, "POST", LBS, {
    loadbalancer: {
      vip_subnet_id: SUBNET,
      pools: [
        { name: "p1", protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" },
        { name: "p2", protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" },
        { name: "p3", protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" },
      ],
      ...body,
    },
  });
  await app.settle();
  const lb = (await ok(app, "GET", `${LBS}/${created.loadbalancer.id}`)).loadbalancer;
  const pools = (await ok(app, "GET", `/v2/lbaas/pools?loadbalancer_id=${lb.id}`)).pools as { id: string; name: string }[];
  const pool = (name: string) => pools.find((p) => p.name === name)!.id;
  return { lbId: lb.id as string, p1: pool("p1"), p2: pool("p2"), p3: pool("p3") };
}

const amphoraeOf = async (app: App, lbId: string) => (await app.store.amphoraeOf(lbId)).filter((a) => a.status !== "DELETED");
const portsOf = (a: Amphora) => (a.member_ports ?? []).map((p) => p.network_id).sort();
const member = (address: string, subnet_id?: string) => ({ address, protocol_port: 80, ...(subnet_id ? { subnet_id } : {}) });
const net = noopNetworkOf;

describe("member networks (no-op drivers)", () => {
  it("a member on a new network plugs it, a second member on it plugs nothing, removing the last member unplugs it", async () => {
    const { lbId, p1, p2 } = await lbWithPools();
    const [amp] = await amphoraeOf(t, lbId);

    let m1 = "";
    const first = await during(
      async () => (m1 = (await ok(t, "POST", `/v2/lbaas/pools/${p1}/members`, { member: member("10.1.0.5", A) })).member.id),
    );
    expect(first.map((c) => [c.method, c.network])).toEqual([
      ["plugNetwork", net(A)],
      ["postNetworkPlug", net(A)],
    ]);
    expect(portsOf((await amphoraeOf(t, lbId))[0]!)).toEqual([net(A)]);

    let m2 = "";
    const second = await during(
      async () => (m2 = (await ok(t, "POST", `/v2/lbaas/pools/${p2}/members`, { member: member("10.1.0.6", A) })).member.id),
    );
    expect(second).toEqual([]);
    // A member on the VIP's subnet, or with none, needs no network.
    expect(await during(() => ok(t, "POST", `/v2/lbaas/pools/${p2}/members`, { member: member("10.1.0.7", SUBNET) }))).toEqual([]);
    expect(await during(() => ok(t, "POST", `/v2/lbaas/pools/${p2}/members`, { member: member("10.1.0.8") }))).toEqual([]);

    expect(await during(() => ok(t, "DELETE", `/v2/lbaas/pools/${p1}/members/${m1}`))).toEqual([]);
    const last = await during(() => ok(t, "DELETE", `/v2/lbaas/pools/${p2}/members/${m2}`));
    expect(last).toEqual([{ method: "unplugNetwork", amphora: amp!.id, network: net(A), port: expect.any(String) }]);
    expect(portsOf((await amphoraeOf(t, lbId))[0]!)).toEqual([]);
  });

  it("a cross-pool update that adds and removes networks does both in one flow", async () => {
    const { lbId, p1, p2, p3 } = await lbWithPools();
    await ok(t, "POST", `/v2/lbaas/pools/${p1}/members`, { member: member("10.2.0.1", A) });
    await t.settle();
    await ok(t, "POST", `/v2/lbaas/pools/${p3}/members`, { member: member("10.2.0.9", C) });
    await t.settle();
    // p1 loses its member on A; p2 gains one on B; p3 keeps C's.
    const flow = await during(() =>
      ok(t, "PUT", "/v2/lbaas/pools/members", {
        members: [
          { pool_id: p1, ...member("10.2.0.2") },
          { pool_id: p2, ...member("10.2.0.3", B) },
        ],
      }),
    );
    expect(flow.map((c) => [c.method, c.network]).sort()).toEqual(
      [
        ["plugNetwork", net(B)],
        ["postNetworkPlug", net(B)],
        ["unplugNetwork", net(A)],
      ].sort(),
    );
    const flows = (await ok(t, "GET", `${LBS}/${lbId}/flows`)).flows as { flow: string; outcome: string }[];
    expect(flows[0]).toMatchObject({ flow: "member-cross-pool-update", outcome: "SUCCEEDED" });
    expect(portsOf((await amphoraeOf(t, lbId))[0]!)).toEqual([net(B), net(C)].sort());
  });

  it("a pool's batch update plugs the networks its new members are on and unplugs those its members left", async () => {
    const { lbId, p1 } = await lbWithPools();
    await ok(t, "PUT", `/v2/lbaas/pools/${p1}/members`, { members: [member("10.3.0.1", A), member("10.3.0.2", B)] });
    await t.settle();
    expect(portsOf((await amphoraeOf(t, lbId))[0]!)).toEqual([net(A), net(B)].sort());
    const flow = await during(() =>
      ok(t, "PUT", `/v2/lbaas/pools/${p1}/members`, { members: [member("10.3.0.1", A), member("10.3.0.3", C)] }),
    );
    expect(flow.map((c) => [c.method, c.network]).sort()).toEqual(
      [
        ["plugNetwork", net(C)],
        ["postNetworkPlug", net(C)],
        ["unplugNetwork", net(B)],
      ].sort(),
    );
  });

  it("a fully populated create plugs its members' networks; the load balancer's delete unplugs every member port", async () => {
    let lbId = "";
    const create = await during(async () => {
      const body = await ok(t, "POST", LBS, {
        loadbalancer: {
          vip_subnet_id: SUBNET,
          pools: [{ protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", members: [member("10.4.0.1", A), member("10.4.0.2", B)] }],
        },
      });
      lbId = body.loadbalancer.id;
    });
    const [amp] = await amphoraeOf(t, lbId);
    expect(create.map((c) => [c.method, c.amphora, c.network]).sort()).toEqual(
      [
        ["plugNetwork", amp!.id, net(A)],
        ["plugNetwork", amp!.id, net(B)],
        ["postNetworkPlug", amp!.id, net(A)],
        ["postNetworkPlug", amp!.id, net(B)],
      ].sort(),
    );
    const del = await during(() => ok(t, "DELETE", `${LBS}/${lbId}?cascade=true`));
    expect(del.map((c) => [c.method, c.amphora, c.network]).sort()).toEqual(
      [
        ["unplugNetwork", amp!.id, net(A)],
        ["unplugNetwork", amp!.id, net(B)],
      ].sort(),
    );
  });

  it("a pool's delete unplugs the networks only its members were on (beyond Octavia, whose pool delete leaves them plugged)", async () => {
    const { lbId, p1, p2 } = await lbWithPools();
    await ok(t, "PUT", `/v2/lbaas/pools/${p1}/members`, { members: [member("10.5.0.1", A), member("10.5.0.2", B)] });
    await t.settle();
    await ok(t, "POST", `/v2/lbaas/pools/${p2}/members`, { member: member("10.5.0.3", B) });
    await t.settle();
    const del = await during(() => ok(t, "DELETE", `/v2/lbaas/pools/${p1}`));
    expect(del.map((c) => [c.method, c.network])).toEqual([["unplugNetwork", net(A)]]);
    expect(portsOf((await amphoraeOf(t, lbId))[0]!)).toEqual([net(B)]);
  });

  it("failover plugs the new amphora into every network its old one had, and unplugs the old one", async () => {
    const { lbId, p1 } = await lbWithPools();
    await ok(t, "PUT", `/v2/lbaas/pools/${p1}/members`, {
      members: [member("10.6.0.1", A), member("10.6.0.2", B), member("10.6.0.3", SUBNET)],
    });
    await t.settle();
    const [old] = await amphoraeOf(t, lbId);
    const flow = await during(() => ok(t, "PUT", `${LBS}/${lbId}/failover`));
    const [fresh] = await amphoraeOf(t, lbId);
    expect(fresh!.id).not.toBe(old!.id);
    expect(flow.map((c) => [c.method, c.amphora, c.network]).sort()).toEqual(
      [
        ["unplugNetwork", old!.id, net(A)],
        ["unplugNetwork", old!.id, net(B)],
        ["plugNetwork", fresh!.id, net(A)],
        ["plugNetwork", fresh!.id, net(B)],
        ["postNetworkPlug", fresh!.id, net(A)],
        ["postNetworkPlug", fresh!.id, net(B)],
      ].sort(),
    );
    expect(portsOf(fresh!)).toEqual([net(A), net(B)].sort());
  });

  it("a member create whose configuration push fails: its revert unplugs the network it plugged, the member ERROR", async () => {
    const { lbId, p1 } = await lbWithPools(failing);
    const [amp] = await amphoraeOf(failing, lbId);
    let id = "";
    const flow = await during(
      async () => (id = (await ok(failing, "POST", `/v2/lbaas/pools/${p1}/members`, { member: member("10.7.0.1", A) })).member.id),
      failing,
      failingCalls,
    );
    // Three attempts (the step's Retry): the first plugs, the retries find the port recorded; then the revert.
    expect(flow.map((c) => [c.method, c.amphora, c.network])).toEqual([
      ["plugNetwork", amp!.id, net(A)],
      ["postNetworkPlug", amp!.id, net(A)],
      ["unplugNetwork", amp!.id, net(A)],
    ]);
    expect((await ok(failing, "GET", `/v2/lbaas/pools/${p1}/members/${id}`)).member.provisioning_status).toBe("ERROR");
    expect(portsOf((await amphoraeOf(failing, lbId))[0]!)).toEqual([]);
  });
});
