// Load-balancer resize (specs/loadbalancer-resize.rst): PUT/DELETE /v2/lbaas/loadbalancers/{id}/resize.
import { beforeAll, describe, expect, it } from "vitest";
import { SUBNET, inProcessApp } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
let t: App;
let n = 0;

async function flavor(app: App, data: Record<string, unknown>, opts: { enabled?: boolean; provider?: string } = {}) {
  n++;
  const profile = await app.call("POST", "/v2/lbaas/flavorprofiles", {
    flavorprofile: { name: `resize-fp-${n}`, provider_name: opts.provider ?? "amphora", flavor_data: JSON.stringify(data) },
  });
  expect(profile.status).toBe(201);
  const f = await app.call("POST", "/v2/lbaas/flavors", {
    flavor: {
      name: `resize-f-${n}-${Math.random().toString(36).slice(2)}`,
      flavor_profile_id: profile.body.flavorprofile.id,
      enabled: opts.enabled ?? true,
    },
  });
  expect(f.status).toBe(201);
  return f.body.flavor.id as string;
}

async function lb(app: App, flavorId: string) {
  const res = await app.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET, flavor_id: flavorId } });
  expect(res.status).toBe(201);
  await app.settle();
  return res.body.loadbalancer.id as string;
}

const show = async (app: App, id: string) => (await app.call("GET", `/v2/lbaas/loadbalancers/${id}`)).body.loadbalancer;
const amphorae = async (app: App, id: string) => (await app.store.amphoraeOf(id)).filter((a) => a.status !== "DELETED");
const resize = (app: App, id: string, flavorId: string) =>
  app.call("PUT", `/v2/lbaas/loadbalancers/${id}/resize`, { new_flavor_id: flavorId });

let small: string;
let large: string;
let haSmall: string;
let haLarge: string;

beforeAll(async () => {
  t = await inProcessApp();
  small = await flavor(t, { loadbalancer_topology: "SINGLE", compute_flavor: "m1.small" });
  large = await flavor(t, { loadbalancer_topology: "SINGLE", compute_flavor: "m1.large" });
  haSmall = await flavor(t, { loadbalancer_topology: "ACTIVE_STANDBY", compute_flavor: "m1.small" });
  haLarge = await flavor(t, { loadbalancer_topology: "ACTIVE_STANDBY", compute_flavor: "m1.large" });
});

describe("resize: refused requests", () => {
  it("answers 400 and changes nothing for an unknown, disabled, same or topology-changing flavor", async () => {
    const id = await lb(t, small);
    const before = await show(t, id);
    const ampsBefore = (await amphorae(t, id)).map((a) => a.id);
    const disabled = await flavor(t, { compute_flavor: "m1.large" }, { enabled: false });
    // The fault strings docs/api-compatibility.md gives.
    const refused = {
      "11111111-2222-3333-4444-555555555555": "Validation failure: Invalid new_flavor_id.",
      [disabled]: `The selected flavor is not allowed in this deployment: ${disabled}`,
      [small]: `Validation failure: Load Balancer ${id} already has flavor ${small}.`,
      [haLarge]: `Validation failure: Flavor ${haLarge} has topology ACTIVE_STANDBY; a resize cannot change the topology of Load Balancer ${id} (SINGLE).`,
    };
    for (const [f, faultstring] of Object.entries(refused)) {
      const res = await resize(t, id, f);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ faultcode: "Client", faultstring, debuginfo: null });
    }
    const body = async (b: unknown) => (await t.call("PUT", `/v2/lbaas/loadbalancers/${id}/resize`, b)).body.faultstring;
    expect(await body({ new_flavor_id: "nope" })).toBe(
      "Invalid input for field/attribute new_flavor_id. Value: 'nope'. Value should be UUID format",
    );
    expect(await body({})).toBe("Invalid input for field/attribute new_flavor_id. Value: 'None'. Mandatory field missing.");
    expect(await body({ resize: { new_flavor_id: large } })).toBe(
      "Invalid input for field/attribute new_flavor_id. Value: 'None'. Mandatory field missing.",
    );
    expect(await body({ new_flavor_id: large, x: 1 })).toBe("Unknown attribute for argument resize.resize: x");
    expect(await body([])).toBe("Invalid input for field/attribute resize. Value: '[]'. Value should be an object");
    await t.settle();
    expect(await show(t, id)).toEqual(before);
    expect((await amphorae(t, id)).map((a) => a.id)).toEqual(ampsBefore);
  });

  it("answers 400 for a flavor of another provider", async () => {
    const id = await lb(t, small);
    const other = await flavor(t, {}, { provider: "octavia" });
    const res = await resize(t, id, other);
    expect(res.status).toBe(400);
    expect(res.body.faultstring).toBe(`Flavor '${other}' is not compatible with provider 'amphora'`);
    expect((await show(t, id)).flavor_id).toBe(small);
  });

  it("answers 404 for an unknown load balancer", async () => {
    const id = "11111111-2222-3333-4444-555555555555";
    const res = await resize(t, id, large);
    expect(res.status).toBe(404);
    expect(res.body.faultstring).toBe(`Load Balancer ${id} not found.`);
    expect((await t.call("DELETE", `/v2/lbaas/loadbalancers/${id}/resize`)).status).toBe(404);
  });

  it("answers 409 while the load balancer is PENDING", async () => {
    const id = await lb(t, small);
    expect((await resize(t, id, large)).status).toBe(202);
    const again = await resize(t, id, large);
    expect(again.status).toBe(409);
    expect(again.body.faultstring).toBe(`Load Balancer ${id} is immutable and cannot be updated.`);
    await t.settle();
  });

  it("answers 409 to a cancel when no resize runs", async () => {
    const id = await lb(t, small);
    const idle = await t.call("DELETE", `/v2/lbaas/loadbalancers/${id}/resize`);
    expect(idle.status).toBe(409);
    expect(idle.body.faultstring).toBe(`Load Balancer ${id} has no resize in progress.`);
    expect((await t.call("PUT", `/v2/lbaas/loadbalancers/${id}/failover`)).status).toBe(202);
    expect((await t.call("DELETE", `/v2/lbaas/loadbalancers/${id}/resize`)).status).toBe(409);
    await t.settle();
  });
});

describe("resize", () => {
  it("replaces every amphora with the new compute flavor and sets flavor_id at the end", async () => {
    const id = await lb(t, small);
    const old = await amphorae(t, id);
    expect(old).toHaveLength(1);
    const res = await resize(t, id, large);
    expect(res.status).toBe(202);
    expect(res.body).toBeUndefined();
    const during = await show(t, id);
    expect(during.provisioning_status).toBe("PENDING_UPDATE");
    expect(during.flavor_id).toBe(small);
    await t.settle();
    const after = await show(t, id);
    expect(after).toMatchObject({ provisioning_status: "ACTIVE", flavor_id: large });
    const amps = await amphorae(t, id);
    expect(amps).toHaveLength(1);
    expect(amps[0]).toMatchObject({ status: "ALLOCATED", role: "STANDALONE", compute_flavor: "m1.large" });
    expect(amps[0]!.id).not.toBe(old[0]!.id);
    expect((await t.store.getAmphora(old[0]!.id))?.status).toBe("DELETED");
    // The resize is over: there is nothing left to cancel.
    expect((await t.call("DELETE", `/v2/lbaas/loadbalancers/${id}/resize`)).status).toBe(409);
    // And the LB can be resized back.
    expect((await t.call("PUT", `/v2.0/lbaas/loadbalancers/${id}/resize`, { new_flavor_id: small })).status).toBe(202);
    await t.settle();
    expect(await show(t, id)).toMatchObject({ provisioning_status: "ACTIVE", flavor_id: small });
  });

  it("keeps the MASTER and BACKUP roles of an ACTIVE_STANDBY load balancer", async () => {
    const id = await lb(t, haSmall);
    const old = await amphorae(t, id);
    expect(old.map((a) => a.role).sort()).toEqual(["BACKUP", "MASTER"]);
    expect((await resize(t, id, haLarge)).status).toBe(202);
    await t.settle();
    expect(await show(t, id)).toMatchObject({ provisioning_status: "ACTIVE", flavor_id: haLarge });
    const amps = await amphorae(t, id);
    expect(amps.map((a) => a.role).sort()).toEqual(["BACKUP", "MASTER"]);
    expect(amps.every((a) => a.compute_flavor === "m1.large" && a.status === "ALLOCATED")).toBe(true);
    expect(amps.some((a) => old.some((o) => o.id === a.id))).toBe(false);
    const byRole = (xs: typeof amps, r: string) => xs.find((a) => a.role === r)!.vrrp_priority;
    expect(byRole(amps, "MASTER")).toBe(byRole(old, "MASTER"));
    expect(byRole(amps, "BACKUP")).toBe(byRole(old, "BACKUP"));
  });
});

describe("resize failures", () => {
  it("a failing resize leaves the LB in ERROR with its old flavor and amphorae; a retry from ERROR is accepted", async () => {
    const id = await lb(t, small);
    const old = (await amphorae(t, id)).map((a) => a.id);
    // A second app over the same table whose no-op network fails every VIP plug.
    const f = await inProcessApp({ OTTAVA_TABLE_NAME: t.config.tableName, OTTAVA_NOOP_FAULTS: "network.plugVip" });
    expect((await resize(f, id, large)).status).toBe(202);
    await f.settle();
    expect(await show(t, id)).toMatchObject({ provisioning_status: "ERROR", flavor_id: small });
    expect((await amphorae(t, id)).map((a) => a.id)).toEqual(old);
    // Retried (from ERROR) where the network works.
    expect((await resize(t, id, large)).status).toBe(202);
    await t.settle();
    expect(await show(t, id)).toMatchObject({ provisioning_status: "ACTIVE", flavor_id: large });
    const amps = await amphorae(t, id);
    expect(amps).toHaveLength(1);
    expect(amps[0]!.compute_flavor).toBe("m1.large");
    expect(old).not.toContain(amps[0]!.id);
  }, 30_000);

  it("a cancel during the resize rolls back: old flavor and amphorae kept, new ones DELETED, LB ACTIVE", async () => {
    const s = await inProcessApp({ OTTAVA_TABLE_NAME: t.config.tableName, OTTAVA_NOOP_LATENCY: "compute.build:800" });
    const id = await lb(s, haSmall);
    const old = (await amphorae(s, id)).map((a) => a.id).sort();
    expect((await resize(s, id, haLarge)).status).toBe(202);
    await new Promise((r) => setTimeout(r, 200));
    const cancel = await s.call("DELETE", `/v2/lbaas/loadbalancers/${id}/resize`);
    expect(cancel.status).toBe(202);
    expect(cancel.body).toBeUndefined();
    await s.settle();
    expect(await show(s, id)).toMatchObject({ provisioning_status: "ACTIVE", flavor_id: haSmall });
    const all = await s.store.amphoraeOf(id);
    expect(
      all
        .filter((a) => a.status !== "DELETED")
        .map((a) => a.id)
        .sort(),
    ).toEqual(old);
    const built = all.filter((a) => !old.includes(a.id));
    expect(built.length).toBeGreaterThan(0);
    expect(built.every((a) => a.status === "DELETED")).toBe(true);
    expect((await s.call("DELETE", `/v2/lbaas/loadbalancers/${id}/resize`)).status).toBe(409);
  }, 30_000);
});
