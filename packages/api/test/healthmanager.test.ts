// Health-manager addresses and the amphora agent configuration refresh (/v2/octavia/healthmanager).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MUTABLE_STATUSES } from "@ottava/core";
import { inProcessApp, pick, SUBNET } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
const HM = "/v2/octavia/healthmanager";
const fault = (status: number, faultstring: string) => ({ status, body: { faultcode: "Client", faultstring, debuginfo: null } });

async function createLbs(t: App, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await t.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET } });
    expect(res.status).toBe(201);
    ids.push(res.body.loadbalancer.id);
  }
  await t.settle();
  return ids;
}

async function amphoraeOf(t: App, lbIds: string[]) {
  const out: (Record<string, unknown> & { id: string; agent_generation?: number })[] = [];
  for (const id of lbIds) out.push(...((await t.store.amphoraeOf(id)).filter((a) => a.status !== "DELETED") as never[]));
  return out;
}

async function statuses(t: App, lbIds: string[]) {
  return Promise.all(lbIds.map(async (id) => (await t.call("GET", `/v2/lbaas/loadbalancers/${id}`)).body.loadbalancer.provisioning_status));
}

describe("GET/PUT /v2/octavia/healthmanager", () => {
  it("answers the settings' list at generation 0 by default", async () => {
    const t = await inProcessApp({ OTTAVA_CONTROLLER_IP_PORT_LIST: "192.0.2.10:5555, 192.0.2.11:5555" });
    expect(pick(await t.call("GET", HM))).toEqual({
      status: 200,
      body: { controller_ip_port_list: ["192.0.2.10:5555", "192.0.2.11:5555"], generation: 0, refresh: { total: 0, done: 0, failed: 0 } },
    });
    expect((await t.call("GET", "/v2.0/octavia/healthmanager")).body.generation).toBe(0);
  });

  it("refuses bad bodies with 400 and changes nothing", async () => {
    const t = await inProcessApp({ OTTAVA_CONTROLLER_IP_PORT_LIST: "192.0.2.10:5555" });
    const msg = "Value should be an IPv4 address and port (ip:port) or a bracketed IPv6 address and port ([ip]:port), port 1..65535";
    const bad = (v: string) => fault(400, `Invalid input for field/attribute controller_ip_port_list. Value: '${v}'. ${msg}`);
    for (const v of [
      "192.0.2.1",
      "192.0.2.1:0",
      "192.0.2.1:65536",
      "300.0.2.1:5555",
      "2001:db8::1:5555",
      "[2001:db8::zz]:5555",
      "host:5555",
      "192.0.2.1:55a",
    ]) {
      expect(pick(await t.call("PUT", HM, { controller_ip_port_list: ["192.0.2.20:5555", v] }))).toEqual(bad(v));
    }
    expect(pick(await t.call("PUT", HM, { controller_ip_port_list: ["192.0.2.20:5555"], extra: 1 }))).toEqual(
      fault(400, "Unknown attribute for argument healthmanager: extra"),
    );
    expect(pick(await t.call("PUT", HM, {}))).toEqual(fault(400, 'Missing argument: "controller_ip_port_list"'));
    expect((await t.call("PUT", HM, { controller_ip_port_list: "192.0.2.20:5555" })).status).toBe(400);
    expect((await t.call("PUT", HM, { controller_ip_port_list: [] })).status).toBe(400);
    expect((await t.call("PUT", HM, { controller_ip_port_list: [5555] })).status).toBe(400);
    expect((await t.call("PUT", HM, "[1,")).status).toBe(400);
    expect((await t.call("PUT", HM, [])).status).toBe(400);
    expect((await t.call("GET", HM)).body).toEqual({
      controller_ip_port_list: ["192.0.2.10:5555"],
      generation: 0,
      refresh: { total: 0, done: 0, failed: 0 },
    });
    // IPv6 in brackets is fine.
    const ok = await t.call("PUT", HM, { controller_ip_port_list: ["[2001:db8::1]:5555", "192.0.2.20:65535"] });
    expect(ok.status).toBe(202);
    expect(ok.body).toEqual({
      controller_ip_port_list: ["[2001:db8::1]:5555", "192.0.2.20:65535"],
      generation: 1,
      refresh: { total: 0, done: 0, failed: 0 },
    });
    await t.settle();
  });
});

describe("refresh", () => {
  it("pushes a change to every amphora of several LBs without touching their status", async () => {
    const t = await inProcessApp({ OTTAVA_LOADBALANCER_TOPOLOGY: "ACTIVE_STANDBY", OTTAVA_NOOP_LATENCY: "amphora.updateAgentConfig:20" });
    const lbs = await createLbs(t, 3);
    expect((await amphoraeOf(t, lbs)).map((a) => a.agent_generation)).toEqual([0, 0, 0, 0, 0, 0]);
    const res = await t.call("PUT", HM, { controller_ip_port_list: ["192.0.2.30:5555"] });
    expect(res.status).toBe(202);
    expect(res.body.generation).toBe(1);
    const exec = await t.engine.describe(t.engine.executionArn("healthmanager-refresh", "healthmanager-refresh-g1"));
    expect(exec?.input).toEqual({ generation: 1 });
    expect(exec?.input).not.toHaveProperty("owner");
    expect(await statuses(t, lbs)).toEqual(["ACTIVE", "ACTIVE", "ACTIVE"]);
    await new Promise((r) => setTimeout(r, 15));
    expect(await statuses(t, lbs)).toEqual(["ACTIVE", "ACTIVE", "ACTIVE"]);
    await t.settle();
    expect((await t.engine.describe(exec!.executionArn))?.status).toBe("SUCCEEDED");
    expect(await statuses(t, lbs)).toEqual(["ACTIVE", "ACTIVE", "ACTIVE"]);
    const amps = await amphoraeOf(t, lbs);
    expect(amps).toHaveLength(6);
    for (const a of amps) expect(a).toMatchObject({ agent_generation: 1, agent_config_at: expect.any(String) });
    expect((await t.call("GET", HM)).body).toEqual({
      controller_ip_port_list: ["192.0.2.30:5555"],
      generation: 1,
      refresh: { total: 6, done: 6, failed: 0 },
    });
    // Not part of Octavia's amphora response.
    expect((await t.call("GET", `/v2/octavia/amphorae/${amps[0]!.id}`)).body.amphora).not.toHaveProperty("agent_generation");
  });

  it("reports amphorae that keep failing and refreshes the others", async () => {
    // 6 amphorae refreshed at once, 3 attempts each: 14 injected faults leave at least one failing for good.
    const t = await inProcessApp({ OTTAVA_LOADBALANCER_TOPOLOGY: "ACTIVE_STANDBY", OTTAVA_NOOP_FAULTS: "amphora.updateAgentConfig:14" });
    const lbs = await createLbs(t, 3);
    expect((await t.call("PUT", HM, { controller_ip_port_list: ["192.0.2.31:5555"] })).status).toBe(202);
    await t.settle();
    const { refresh } = (await t.call("GET", HM)).body;
    expect(refresh.total).toBe(6);
    expect(refresh.failed).toBeGreaterThanOrEqual(1);
    expect(refresh.failed).toBeLessThanOrEqual(4);
    expect(refresh.done + refresh.failed).toBe(6);
    const amps = await amphoraeOf(t, lbs);
    expect(amps.filter((a) => a.agent_generation === 1)).toHaveLength(refresh.done);
    expect(amps.filter((a) => a.agent_generation === 0)).toHaveLength(refresh.failed);
    expect(await statuses(t, lbs)).toEqual(["ACTIVE", "ACTIVE", "ACTIVE"]);
    // A later change reaches them (the faults are used up).
    expect((await t.call("PUT", HM, { controller_ip_port_list: ["192.0.2.32:5555"] })).status).toBe(202);
    await t.settle();
    expect((await t.call("GET", HM)).body.refresh).toEqual({ total: 6, done: 6, failed: 0 });
  });

  it("loses no update when PUTs race", async () => {
    const t = await inProcessApp();
    const lbs = await createLbs(t, 1);
    const lists = Array.from({ length: 8 }, (_, i) => [`192.0.2.${40 + i}:5555`]);
    const results = await Promise.all(lists.map((l) => t.call("PUT", HM, { controller_ip_port_list: l })));
    const accepted = results.filter((r) => r.status === 202);
    expect(accepted).toHaveLength(8);
    expect(accepted.map((r) => r.body.generation).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const last = accepted.find((r) => r.body.generation === 8)!.body.controller_ip_port_list;
    await t.settle();
    const now = (await t.call("GET", HM)).body;
    expect(now.generation).toBe(accepted.length);
    expect(now.controller_ip_port_list).toEqual(last);
    expect(now.refresh).toEqual({ total: 1, done: 1, failed: 0 });
    expect((await amphoraeOf(t, lbs))[0]!.agent_generation).toBe(8);
  });

  it("gives an amphora built after a change the new generation", async () => {
    const t = await inProcessApp();
    expect((await t.call("PUT", HM, { controller_ip_port_list: ["192.0.2.50:5555"] })).status).toBe(202);
    expect((await t.call("PUT", HM, { controller_ip_port_list: ["192.0.2.51:5555"] })).status).toBe(202);
    await t.settle();
    const lbs = await createLbs(t, 1);
    const [amp] = await amphoraeOf(t, lbs);
    expect(amp!.agent_generation).toBe(2);
    // A failover's replacement too.
    expect((await t.call("PUT", HM, { controller_ip_port_list: ["192.0.2.52:5555"] })).status).toBe(202);
    await t.settle();
    expect((await t.call("PUT", `/v2/octavia/amphorae/${amp!.id}/failover`)).status).toBe(202);
    await t.settle();
    const [replacement] = await amphoraeOf(t, lbs);
    expect(replacement!.id).not.toBe(amp!.id);
    expect(replacement!.agent_generation).toBe(3);
  });

  it("the single-amphora config push records the current generation", async () => {
    const t = await inProcessApp();
    const lbs = await createLbs(t, 1);
    await t.healthManagerConfig.putHealthManagerConfig(["192.0.2.60:5555"], 0); // changed without its refresh
    const [amp] = await amphoraeOf(t, lbs);
    expect(amp!.agent_generation).toBe(0);
    expect((await t.call("PUT", `/v2/octavia/amphorae/${amp!.id}/config`)).status).toBe(202);
    await t.settle();
    expect((await amphoraeOf(t, lbs))[0]!.agent_generation).toBe(1);
  });

  it("refreshes every amphora page by page", async () => {
    const t = await inProcessApp({ OTTAVA_HEALTHMANAGER_REFRESH_PAGE_SIZE: "7" });
    const lbs = await createLbs(t, 2);
    // 40 more amphorae written directly under the first LB's lock (cheaper than 40 LBs).
    const owner = "test-bulk-amphorae";
    const lb = (await t.store.getLoadBalancer(lbs[0]!))!;
    await t.store.lock(lbs[0]!, {
      from: MUTABLE_STATUSES,
      to: "PENDING_UPDATE",
      owner,
      executionArn: "arn:test",
      expectVersion: lb.version,
    });
    const [template] = await t.store.amphoraeOf(lbs[0]!);
    for (let i = 0; i < 40; i++) {
      await t.store.createAmphora(
        { ...template!, id: randomUUID(), status: "ALLOCATED", created_at: new Date(Date.now() + i).toISOString() },
        owner,
      );
    }
    await t.store.updateLoadBalancer(lbs[0]!, owner, { provisioning_status: "ACTIVE" }, true);
    expect(await amphoraeOf(t, lbs)).toHaveLength(42);
    expect((await t.call("PUT", HM, { controller_ip_port_list: ["192.0.2.70:5555"] })).status).toBe(202);
    await t.settle();
    const exec = await t.engine.describe(t.engine.executionArn("healthmanager-refresh", "healthmanager-refresh-g1"));
    expect(exec?.status).toBe("SUCCEEDED");
    const amps = await amphoraeOf(t, lbs);
    expect(amps.every((a) => a.agent_generation === 1)).toBe(true);
    expect((await t.call("GET", HM)).body.refresh).toEqual({ total: 42, done: 42, failed: 0 });
    expect(await statuses(t, lbs)).toEqual(["ACTIVE", "ACTIVE"]);
  });

  it("an older refresh stops when a newer generation starts", async () => {
    const t = await inProcessApp({ OTTAVA_HEALTHMANAGER_REFRESH_PAGE_SIZE: "1", OTTAVA_NOOP_LATENCY: "amphora.updateAgentConfig:30" });
    const lbs = await createLbs(t, 4);
    expect((await t.call("PUT", HM, { controller_ip_port_list: ["192.0.2.80:5555"] })).status).toBe(202);
    await new Promise((r) => setTimeout(r, 40));
    expect((await t.call("PUT", HM, { controller_ip_port_list: ["192.0.2.81:5555"] })).status).toBe(202);
    await t.settle();
    expect((await t.call("GET", HM)).body).toMatchObject({ generation: 2, refresh: { total: 4, done: 4, failed: 0 } });
    expect((await amphoraeOf(t, lbs)).map((a) => a.agent_generation)).toEqual([2, 2, 2, 2]);
  });
});
