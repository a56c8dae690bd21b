// The cross-pool member batch update (PUT /v2/lbaas/pools/members, specs/member-update-across-pools.rst).
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { activeLb, fault, inProcessApp, pick, record, seed } from "@ottava/local/testing";
import { memberFields } from "@ottava/core/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
let t: App;
const CROSS = "/v2/lbaas/pools/members";
const NOBODY = "11111111-2222-3333-4444-555555555555";

const put = (app: App, members: Record<string, unknown>[], query = "", prefix = "/v2") =>
  app.call("PUT", `${prefix}/lbaas/pools/members${query}`, { members });

const pool = (lbId: string) => record(lbId, { protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", name: "" });
const member = (lbId: string, poolId: string, address: string, port: number, fields: Record<string, unknown> = {}) =>
  record(lbId, {
    ...memberFields(poolId, address, port),
    tags: [],
    operating_status: "NO_MONITOR",
    ...fields,
  });

/** An ACTIVE LB with `n` ACTIVE pools (seeded, no flows) and the given members. */
async function lbWithPools(app: App, n: number, members: (pools: string[], lbId: string) => ReturnType<typeof member>[] = () => []) {
  const lbId = (await activeLb(app)).id;
  const pools = Array.from({ length: n }, () => pool(lbId));
  const ids = pools.map((p) => p.id);
  const ms = members(ids, lbId);
  await seed(app, lbId, [...pools.map((p) => ({ kind: "pool", put: p })), ...ms.map((m) => ({ kind: "member", put: m }))]);
  return { lbId, pools: ids, members: ms };
}

/** Every member of the LB (DELETED ones left out), comparable across runs. */
async function memberSet(app: App, lbId: string) {
  const { items } = await app.store.tree(lbId);
  return items
    .filter((i) => i.kind === "member" && i.record.provisioning_status !== "DELETED")
    .map(({ record: r }) => ({
      id: r.id,
      pool_id: r.pool_id,
      address: r.address,
      protocol_port: r.protocol_port,
      weight: r.weight,
      backup: r.backup,
      name: r.name,
      tags: r.tags,
      admin_state_up: r.admin_state_up,
      monitor_address: r.monitor_address,
      monitor_port: r.monitor_port,
      provisioning_status: r.provisioning_status,
    }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}
const statuses = async (app: App, lbId: string) => {
  const { lb, items } = await app.store.tree(lbId);
  return {
    lb: lb!.record.provisioning_status,
    objects: items
      .filter((i) => i.kind !== "amphora" && i.record.provisioning_status !== "DELETED")
      .map((i) => i.record.provisioning_status),
  };
};

beforeAll(async () => {
  t = await inProcessApp();
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("routing", () => {
  it("is matched before /pools/{pool_id}, which still shows and updates pools (/v2 and /v2.0)", async () => {
    const { pools } = await lbWithPools(t, 1);
    const id = pools[0]!;
    expect((await t.call("GET", `/v2/lbaas/pools/${id}`)).body.pool.id).toBe(id);
    expect((await t.call("GET", `/v2.0/lbaas/pools/${id}`)).body.pool.id).toBe(id);
    const upd = await t.call("PUT", `/v2/lbaas/pools/${id}`, { pool: { name: "renamed" } });
    expect(upd.status).toBe(200);
    expect(upd.body.pool.name).toBe("renamed");
    await t.settle();
    expect((await put(t, [{ pool_id: id, address: "192.0.2.1", protocol_port: 80 }], "", "/v2.0")).status).toBe(202);
    await t.settle();
    expect((await t.call("GET", `/v2/lbaas/pools/${id}/members`)).body.members.map((m: { address: string }) => m.address)).toEqual([
      "192.0.2.1",
    ]);
  });
});

describe("validation", () => {
  it("refuses bad requests with the right fault, changing nothing and starting no flow", async () => {
    const { lbId, pools } = await lbWithPools(t, 2, (p, lb) => [member(lb, p[0]!, "192.0.2.1", 80)]);
    const other = await lbWithPools(t, 1);
    const before = await memberSet(t, lbId);
    const version = (await t.store.getLoadBalancer(lbId))!.version;
    const start = vi.spyOn(t.engine, "start");
    const [p0, p1] = pools as [string, string];

    expect(pick(await put(t, []))).toEqual(
      fault(400, "Validation failure: The members list must name at least one member (with its pool_id)."),
    );
    expect(pick(await put(t, [{ pool_id: NOBODY, address: "192.0.2.1", protocol_port: 80 }]))).toEqual(
      fault(404, `Pool ${NOBODY} not found.`),
    );
    expect(
      pick(
        await put(t, [
          { pool_id: p0, address: "192.0.2.1", protocol_port: 80 },
          { pool_id: other.pools[0], address: "192.0.2.1", protocol_port: 80 },
        ]),
      ),
    ).toEqual(fault(400, "Validation failure: All pools named in a cross-pool member update must belong to the same load balancer."));
    expect(
      pick(
        await put(t, [
          { pool_id: p0, address: "192.0.2.1", protocol_port: 80 },
          { pool_id: p0, address: "192.0.2.1", protocol_port: 80, weight: 3 },
        ]),
      ),
    ).toEqual(fault(400, "Validation failure: Member must be updated only once in the same request."));
    // The same address and port in two pools is two members.
    expect(
      pick(
        await put(t, [
          { pool_id: p1, address: "192.0.2.9", protocol_port: 80 },
          { pool_id: p1, address: "192.0.2.9", protocol_port: 80 },
        ]),
      ),
    ).toEqual(fault(400, "Validation failure: Member must be updated only once in the same request."));
    expect(pick(await put(t, [{ pool_id: p1, address: "169.254.169.254", protocol_port: 80 }]))).toEqual(
      fault(400, "169.254.169.254 is not a valid option for member address"),
    );
    expect((await put(t, [{ address: "192.0.2.1", protocol_port: 80 }])).status).toBe(400);
    expect((await put(t, [{ pool_id: p0, address: "192.0.2.1" }])).status).toBe(400);
    // The body's shape, in docs/api-compatibility.md's words.
    const shape = async (body: unknown) => pick(await t.call("PUT", CROSS, body));
    expect(await shape({ members: "x" })).toEqual(
      fault(400, "Invalid input for field/attribute members. Value: 'x'. Value should be a list"),
    );
    expect(await shape([])).toEqual(fault(400, "Invalid input for field/attribute members_. Value: '[]'. Value should be an object"));
    expect(await shape({})).toEqual(fault(400, 'Missing argument: "members"'));
    expect(await shape({ members: [], x: 1 })).toEqual(fault(400, "Unknown attribute for argument members_: x"));
    expect(await shape({ members: [{ pool_id: p0, address: "192.0.2.1", protocol_port: 80, foo: 1 }] })).toEqual(
      fault(400, "Unknown attribute for argument members_.members: foo"),
    );
    expect(await shape({ members: [{ address: "192.0.2.1", protocol_port: 80 }] })).toEqual(
      fault(400, "Invalid input for field/attribute pool_id. Value: 'None'. Mandatory field missing."),
    );
    // A valid first pool does not make a later refusal partial.
    expect(
      (
        await put(t, [
          { pool_id: p1, address: "192.0.2.7", protocol_port: 80 },
          { pool_id: p0, address: "169.254.169.254", protocol_port: 80 },
        ])
      ).status,
    ).toBe(400);

    expect(start).not.toHaveBeenCalled();
    expect((await t.store.getLoadBalancer(lbId))!.version).toBe(version);
    expect(await memberSet(t, lbId)).toEqual(before);
    expect(await statuses(t, lbId)).toEqual({ lb: "ACTIVE", objects: ["ACTIVE", "ACTIVE", "ACTIVE"] });
  });
});

describe("update", () => {
  it("creates, updates and deletes across 3 pools with one lock and one flow, leaving unnamed pools alone", async () => {
    const { lbId, pools, members } = await lbWithPools(t, 4, (p, lb) => [
      member(lb, p[0]!, "192.0.2.1", 80, { weight: 9, name: "a", tags: ["t"] }),
      member(lb, p[0]!, "192.0.2.2", 80),
      member(lb, p[1]!, "192.0.2.1", 80),
      member(lb, p[2]!, "192.0.2.3", 80),
      member(lb, p[3]!, "192.0.2.4", 80),
    ]);
    const [p0, p1, p2, p3] = pools as [string, string, string, string];
    const untouched = (await memberSet(t, lbId)).filter((m) => m.pool_id === p3);
    const start = vi.spyOn(t.engine, "start");
    const lockWith = vi.spyOn(t.store, "lockWith");

    const res = await put(t, [
      { pool_id: p0, address: "192.0.2.1", protocol_port: 80, weight: 5 },
      { pool_id: p1, address: "192.0.2.1", protocol_port: 80, backup: true },
      { pool_id: p1, address: "192.0.2.10", protocol_port: 8080, name: "new" },
      { pool_id: p2, address: "2001:db8::1", protocol_port: 443 },
    ]);
    expect(pick(res)).toEqual({ status: 202, body: undefined });
    expect(start).toHaveBeenCalledTimes(1);
    expect(start.mock.calls[0]![0]).toBe("member-cross-pool-update");
    expect(lockWith).toHaveBeenCalledTimes(1);
    // The member changes are not in the flow's input: only the pools the lock marked (and the request's id, which its event carries).
    const input = start.mock.calls[0]![2] as { changes: { groups: { kind: string; ids: string[] }[] } };
    expect(Object.keys(input).sort()).toEqual(["changes", "chunks", "lbId", "owner", "requestId", "subject"]);
    expect(input.changes.groups.map((g) => [g.kind, g.ids.length])).toEqual([["pool", 3]]);
    expect((await t.store.getLoadBalancer(lbId))!.record.provisioning_status).toBe("PENDING_UPDATE");

    await t.settle();
    const after = await memberSet(t, lbId);
    const key = (m: { pool_id: unknown; address: unknown; protocol_port: unknown }) => `${m.pool_id}/${m.address}/${m.protocol_port}`;
    expect(after.map(key).sort()).toEqual(
      [`${p0}/192.0.2.1/80`, `${p1}/192.0.2.1/80`, `${p1}/192.0.2.10/8080`, `${p2}/2001:db8::1/443`, `${p3}/192.0.2.4/80`].sort(),
    );
    const byKey = new Map(after.map((m) => [key(m), m]));
    expect(byKey.get(`${p0}/192.0.2.1/80`)).toMatchObject({ id: members[0]!.id, weight: 5, name: "a", tags: ["t"], backup: false });
    expect(byKey.get(`${p1}/192.0.2.1/80`)).toMatchObject({ id: members[2]!.id, backup: true });
    expect(byKey.get(`${p1}/192.0.2.10/8080`)).toMatchObject({ name: "new", weight: 1 });
    expect(after.filter((m) => m.pool_id === p3)).toEqual(untouched);
    expect(after.every((m) => m.provisioning_status === "ACTIVE")).toBe(true);
    expect((await t.store.getChild("member", members[1]!.id))!.record.provisioning_status).toBe("DELETED");
    expect((await t.store.getChild("member", members[3]!.id))!.record.provisioning_status).toBe("DELETED");
    expect(await statuses(t, lbId)).toEqual({
      lb: "ACTIVE",
      objects: after.map(() => "ACTIVE").concat(["ACTIVE", "ACTIVE", "ACTIVE", "ACTIVE"]),
    });
    // The change set is gone.
    const { items } = await t.store.tree(lbId);
    expect(items.some((i) => !["pool", "member", "amphora"].includes(i.kind))).toBe(false);
    expect(await t.changeSets.getChangeSetChunk(lbId, String(start.mock.calls[0]![1]), 0)).toBeUndefined();
  });

  it("with additive_only=true deletes nothing", async () => {
    const { lbId, pools, members } = await lbWithPools(t, 2, (p, lb) => [
      member(lb, p[0]!, "192.0.2.1", 80),
      member(lb, p[1]!, "192.0.2.2", 80),
    ]);
    const [p0, p1] = pools as [string, string];
    expect(
      (
        await put(
          t,
          [
            { pool_id: p0, address: "192.0.2.5", protocol_port: 80 },
            { pool_id: p1, address: "192.0.2.2", protocol_port: 80, weight: 7 },
          ],
          "?additive_only=true",
        )
      ).status,
    ).toBe(202);
    await t.settle();
    const after = await memberSet(t, lbId);
    expect(after).toHaveLength(3);
    expect(after.find((m) => m.id === members[0]!.id)).toMatchObject({ provisioning_status: "ACTIVE", address: "192.0.2.1" });
    expect(after.find((m) => m.id === members[1]!.id)).toMatchObject({ weight: 7 });
    expect((await t.store.getLoadBalancer(lbId))!.record.provisioning_status).toBe("ACTIVE");
  });

  it("handles 1000 members across 20 pools in one request and one flow", async () => {
    const { lbId, pools } = await lbWithPools(t, 20, (p, lb) => p.map((id) => member(lb, id, "10.255.0.1", 80)));
    const start = vi.spyOn(t.engine, "start");
    const body = pools.flatMap((poolId, i) =>
      Array.from({ length: 50 }, (_, j) => ({
        pool_id: poolId,
        address: `10.${i}.${Math.floor(j / 100)}.${(j % 100) + 1}`,
        protocol_port: 80,
        name: `m-${i}-${j}`,
        tags: ["bulk", `pool-${i}`],
      })),
    );
    expect(body).toHaveLength(1000);
    expect((await put(t, body)).status).toBe(202);
    expect(start).toHaveBeenCalledTimes(1);
    // 1000 creations and the 20 seeded members' deletions, 200 a chunk.
    expect(start.mock.calls[0]![2].chunks).toBe(6);
    await t.settle();
    const after = await memberSet(t, lbId);
    expect(after).toHaveLength(1000);
    expect(after.every((m) => m.provisioning_status === "ACTIVE")).toBe(true);
    expect(new Set(after.map((m) => m.pool_id)).size).toBe(20);
    expect((await t.store.getLoadBalancer(lbId))!.record.provisioning_status).toBe("ACTIVE");
  });
});

describe("all or nothing", () => {
  it("restores the member set exactly and leaves everything ACTIVE when the config push fails", async () => {
    const f = await inProcessApp({ OTTAVA_NOOP_FAULTS: "amphora.update:3" });
    const { lbId, pools } = await lbWithPools(f, 3, (p, lb) => [
      member(lb, p[0]!, "192.0.2.1", 80, { weight: 9, name: "a", tags: ["t"], monitor_port: 8000 }),
      member(lb, p[0]!, "192.0.2.2", 80),
      member(lb, p[1]!, "192.0.2.3", 80, { backup: true }),
      member(lb, p[2]!, "192.0.2.4", 80),
    ]);
    const [p0, p1] = pools as [string, string];
    const before = await memberSet(f, lbId);
    const res = await put(f, [
      { pool_id: p0, address: "192.0.2.1", protocol_port: 80, weight: 2 },
      { pool_id: p0, address: "192.0.2.20", protocol_port: 80 },
      { pool_id: p1, address: "192.0.2.21", protocol_port: 80 },
    ]);
    expect(res.status).toBe(202);
    await f.settle();
    expect(await memberSet(f, lbId)).toEqual(before);
    expect(await statuses(f, lbId)).toEqual({ lb: "ACTIVE", objects: Array(7).fill("ACTIVE") });
    // And the LB takes the next request.
    expect((await put(f, [{ pool_id: p0, address: "192.0.2.1", protocol_port: 80, weight: 3 }], "?additive_only=true")).status).toBe(202);
    await f.settle();
    expect((await memberSet(f, lbId)).find((m) => m.address === "192.0.2.1")).toMatchObject({ weight: 3, provisioning_status: "ACTIVE" });
  });

  it("puts the touched members in ERROR (the rest ACTIVE) only when the restore itself fails", async () => {
    const f = await inProcessApp({ OTTAVA_NOOP_FAULTS: "amphora.update" });
    const { lbId, pools, members } = await lbWithPools(f, 2, (p, lb) => [
      member(lb, p[0]!, "192.0.2.1", 80),
      member(lb, p[1]!, "192.0.2.2", 80),
    ]);
    expect((await put(f, [{ pool_id: pools[0], address: "192.0.2.1", protocol_port: 80, weight: 2 }])).status).toBe(202);
    await f.settle();
    expect((await f.store.getChild("member", members[0]!.id))!.record.provisioning_status).toBe("ERROR");
    expect((await f.store.getChild("member", members[1]!.id))!.record.provisioning_status).toBe("ACTIVE");
    expect((await f.store.getLoadBalancer(lbId))!.record.provisioning_status).toBe("ACTIVE");
    expect((await f.store.getChild("pool", pools[0]!))!.record.provisioning_status).toBe("ACTIVE");
  });
});
