// Members of a pool and the batch member update (octavia/api/v2/controllers/member.py).
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { activeLb, activePool, fault, inProcessApp, pick, PROJECT, record, seed, SUBNET, webListener } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
let t: App;
let slow: App; // flows take a while, so the PENDING_* states can be seen
const LBS = "/v2/lbaas/loadbalancers";
const NOBODY = "11111111-2222-3333-4444-555555555555";
const members = (poolId: string) => `/v2/lbaas/pools/${poolId}/members`;

async function addMember(app: App, poolId: string, member: Record<string, unknown>) {
  const res = await app.call("POST", members(poolId), { member });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await app.settle();
  return res.body.member as Record<string, unknown> & { id: string };
}

const status = async (app: App, kind: string, id: string) => (await app.store.getChild(kind, id))?.record.provisioning_status;
const lbStatus = async (app: App, lbId: string) => (await app.store.getLoadBalancer(lbId))?.record.provisioning_status;
const list = async (poolId: string, query = "") =>
  (await t.call("GET", `${members(poolId)}${query}`)).body.members as Record<string, unknown>[];

beforeAll(async () => {
  t = await inProcessApp();
  slow = await inProcessApp({ OTTAVA_NOOP_LATENCY: "amphora.update:500" });
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe("create", () => {
  it("answers 201 with Octavia's defaults, NO_MONITOR without a health monitor, then the flow makes it ACTIVE", async () => {
    const { lbId, poolId } = await activePool(slow);
    // A listener using the pool is a parent of the change too.
    const listener = record(lbId, { default_pool_id: poolId, protocol: "HTTP", protocol_port: 80 });
    await seed(slow, lbId, [{ kind: "listener", put: listener }]);

    const res = await slow.call("POST", members(poolId), { member: { address: "192.0.2.10", protocol_port: 80 } });
    expect(res.status).toBe(201);
    const m = res.body.member;
    expect(m).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "",
      operating_status: "NO_MONITOR",
      provisioning_status: "PENDING_CREATE",
      admin_state_up: true,
      address: "192.0.2.10",
      protocol_port: 80,
      weight: 1,
      backup: false,
      subnet_id: null,
      project_id: PROJECT,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/),
      updated_at: null,
      monitor_address: null,
      monitor_port: null,
      tags: [],
      vnic_type: "normal",
    });
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    expect(await status(slow, "pool", poolId)).toBe("PENDING_UPDATE");
    expect(await status(slow, "listener", listener.id)).toBe("PENDING_UPDATE");
    // The LB is locked: Octavia checks the pool first, which is PENDING_UPDATE.
    expect(pick(await slow.call("POST", members(poolId), { member: { address: "192.0.2.11", protocol_port: 80 } }))).toEqual(
      fault(409, `Pool ${poolId} is immutable and cannot be updated.`),
    );

    await slow.settle();
    expect((await slow.call("GET", `${members(poolId)}/${m.id}`)).body.member).toMatchObject({
      provisioning_status: "ACTIVE",
      operating_status: "NO_MONITOR",
    });
    expect(await lbStatus(slow, lbId)).toBe("ACTIVE");
    expect(await status(slow, "pool", poolId)).toBe("ACTIVE");
    expect(await status(slow, "listener", listener.id)).toBe("ACTIVE");
    const stored = (await slow.store.getChild("member", m.id))!.record;
    expect(stored).toMatchObject({ pool_id: poolId, loadbalancer_id: lbId });
  });

  it("keeps every given field; a member of a monitored pool starts OFFLINE", async () => {
    const { lbId, poolId } = await activePool(t);
    await seed(t, lbId, [{ kind: "healthmonitor", put: record(lbId, { pool_id: poolId, type: "HTTP" }) }]);
    const m = await addMember(t, poolId, {
      name: "web1",
      address: "2001:db8::10",
      protocol_port: "8080",
      weight: 0,
      backup: true,
      admin_state_up: false,
      subnet_id: SUBNET.toUpperCase(),
      monitor_address: "192.0.2.99",
      monitor_port: 9000,
      tags: ["a", "b"],
      project_id: "ignored",
    });
    expect(m).toMatchObject({
      name: "web1",
      address: "2001:db8::10",
      protocol_port: 8080,
      weight: 0,
      backup: true,
      admin_state_up: false,
      subnet_id: SUBNET,
      monitor_address: "192.0.2.99",
      monitor_port: 9000,
      tags: ["a", "b"],
      project_id: PROJECT,
      operating_status: "OFFLINE",
    });
  });

  it("starts an admin-down member NO_MONITOR as well (Octavia does not look at admin_state_up)", async () => {
    const { poolId } = await activePool(t);
    expect((await addMember(t, poolId, { address: "192.0.2.1", protocol_port: 80, admin_state_up: false })).operating_status).toBe(
      "NO_MONITOR",
    );
  });

  it("answers bad input with wsme's 400 faults and writes nothing", async () => {
    const { lbId, poolId } = await activePool(t);
    const cases: [unknown, string][] = [
      [{ member: { protocol_port: 80 } }, "Invalid input for field/attribute address. Value: 'None'. Mandatory field missing."],
      [{ member: { address: "192.0.2.1" } }, "Invalid input for field/attribute protocol_port. Value: 'None'. Mandatory field missing."],
      [
        { member: { address: "192.0.2.300", protocol_port: 80 } },
        "Invalid input for field/attribute address. Value: '192.0.2.300'. Value should be IPv4 or IPv6 format",
      ],
      [
        { member: { address: "192.0.2.1", protocol_port: 0 } },
        "Invalid input for field/attribute protocol_port. Value: '0'. Value should be greater or equal to 1",
      ],
      [
        { member: { address: "192.0.2.1", protocol_port: 65536 } },
        "Invalid input for field/attribute protocol_port. Value: '65536'. Value should be lower or equal to 65535",
      ],
      [
        { member: { address: "192.0.2.1", protocol_port: "http" } },
        "Invalid input for field/attribute protocol_port. Value: 'http'. invalid literal for int() with base 10: 'http'",
      ],
      [
        { member: { address: "192.0.2.1", protocol_port: 80, weight: 257 } },
        "Invalid input for field/attribute weight. Value: '257'. Value should be lower or equal to 256",
      ],
      [
        { member: { address: "192.0.2.1", protocol_port: 80, weight: -1 } },
        "Invalid input for field/attribute weight. Value: '-1'. Value should be greater or equal to 0",
      ],
      [
        { member: { address: "192.0.2.1", protocol_port: 80, monitor_port: 0 } },
        "Invalid input for field/attribute monitor_port. Value: '0'. Value should be greater or equal to 1",
      ],
      [
        { member: { address: "192.0.2.1", protocol_port: 80, subnet_id: "x" } },
        "Invalid input for field/attribute subnet_id. Value: 'x'. Value should be UUID format",
      ],
      [
        { member: { address: "192.0.2.1", protocol_port: 80, backup: "maybe" } },
        "Invalid input for field/attribute backup. Value: 'maybe'. Value not an unambiguous boolean: maybe",
      ],
      [{ member: { address: "192.0.2.1", protocol_port: 80, pool_id: NOBODY } }, "Unknown attribute for argument member_.member: pool_id"],
      [{ member: { address: "169.254.169.254", protocol_port: 80 } }, "169.254.169.254 is not a valid option for member address"],
    ];
    for (const [body, message] of cases) expect(pick(await t.call("POST", members(poolId), body)), message).toEqual(fault(400, message));
    expect(await list(poolId)).toEqual([]);
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
  });

  it("refuses a second member on the same address and port with 409, but not on another port", async () => {
    const { poolId } = await activePool(t);
    await addMember(t, poolId, { address: "192.0.2.5", protocol_port: 80 });
    expect(pick(await t.call("POST", members(poolId), { member: { address: "192.0.2.5", protocol_port: 80, name: "again" } }))).toEqual(
      fault(409, "Another member on this pool is already using ip 192.0.2.5 on protocol_port 80"),
    );
    await addMember(t, poolId, { address: "192.0.2.5", protocol_port: 81 });
    expect((await list(poolId)).map((m) => m.protocol_port)).toEqual([80, 81]);
    // The same address and port in another pool is fine.
    const other = await activePool(t);
    await addMember(t, other.poolId, { address: "192.0.2.5", protocol_port: 80 });
  });

  it("frees an address and port once its member is deleted (its claim then names a DELETED member)", async () => {
    const { poolId } = await activePool(t);
    const first = await addMember(t, poolId, { address: "192.0.2.6", protocol_port: 80 });
    expect((await t.call("DELETE", `${members(poolId)}/${first.id}`)).status).toBe(204);
    await t.settle();
    const second = await addMember(t, poolId, { address: "192.0.2.6", protocol_port: 80 });
    expect(second.id).not.toBe(first.id);
    expect(pick(await t.call("POST", members(poolId), { member: { address: "192.0.2.6", protocol_port: 80 } }))).toEqual(
      fault(409, "Another member on this pool is already using ip 192.0.2.6 on protocol_port 80"),
    );
    expect((await list(poolId)).map((m) => m.id)).toEqual([second.id]);
  });

  it("refuses a member of a pool that is not ACTIVE", async () => {
    const { lbId, poolId } = await activePool(t);
    await seed(t, lbId, [{ kind: "pool", id: poolId, set: { provisioning_status: "ERROR" } }]);
    expect(pick(await t.call("POST", members(poolId), { member: { address: "192.0.2.1", protocol_port: 80 } }))).toEqual(
      fault(409, `Pool ${poolId} is immutable and cannot be updated.`),
    );
  });

  it("refuses IPv6 members of a UDP pool behind an IPv4 VIP, as the amphora driver (501)", async () => {
    const lbId = (await activeLb(t)).id;
    const pool = record(lbId, { protocol: "UDP", lb_algorithm: "ROUND_ROBIN" });
    await seed(t, lbId, [
      { kind: "pool", put: pool },
      { kind: "listener", put: record(lbId, { default_pool_id: pool.id, protocol: "UDP", protocol_port: 53 }) },
    ]);
    const message =
      "Provider 'amphora' does not support a requested option: This provider doesn't support mixing IPv4 and IPv6 addresses for its VIP and members in UDP load balancers.";
    expect(pick(await t.call("POST", members(pool.id), { member: { address: "2001:db8::1", protocol_port: 53 } }))).toEqual(
      fault(501, message),
    );
    await addMember(t, pool.id, { address: "192.0.2.1", protocol_port: 53 });
  });
});

describe("show, update, delete, list", () => {
  it("404s unknown pools and members, and members of another pool", async () => {
    const { poolId } = await activePool(t);
    const other = await activePool(t);
    const m = await addMember(t, poolId, { address: "192.0.2.7", protocol_port: 80 });
    const poolMissing = fault(404, `Pool ${NOBODY} not found.`);
    expect(pick(await t.call("GET", members(NOBODY)))).toEqual(poolMissing);
    expect(pick(await t.call("POST", members(NOBODY), { member: { address: "192.0.2.1", protocol_port: 80 } }))).toEqual(poolMissing);
    expect(pick(await t.call("PUT", members(NOBODY), { members: [] }))).toEqual(poolMissing);
    expect(pick(await t.call("GET", `${members(NOBODY)}/${m.id}`))).toEqual(poolMissing);
    expect(pick(await t.call("PUT", `${members(NOBODY)}/${m.id}`, { member: { name: "x" } }))).toEqual(poolMissing);
    expect(pick(await t.call("DELETE", `${members(NOBODY)}/${m.id}`))).toEqual(poolMissing);
    const memberMissing = fault(404, `Member ${m.id} not found.`);
    expect(pick(await t.call("GET", `${members(other.poolId)}/${m.id}`))).toEqual(memberMissing);
    expect(pick(await t.call("PUT", `${members(other.poolId)}/${m.id}`, { member: { name: "x" } }))).toEqual(memberMissing);
    expect(pick(await t.call("DELETE", `${members(other.poolId)}/${m.id}`))).toEqual(memberMissing);
    expect(pick(await t.call("GET", `${members(poolId)}/${NOBODY}`))).toEqual(fault(404, `Member ${NOBODY} not found.`));
    expect((await t.call("GET", `/v2.0/lbaas/pools/${poolId}/members/${m.id}`)).body.member.id).toBe(m.id);
  });

  it("updates the MemberPUT fields: 200 PENDING_UPDATE, then ACTIVE; null weight and backup go back to defaults", async () => {
    const { lbId, poolId } = await activePool(slow);
    const m = await addMember(slow, poolId, { address: "192.0.2.8", protocol_port: 80, name: "a", tags: ["x"], weight: 7, backup: true });
    const res = await slow.call("PUT", `${members(poolId)}/${m.id}`, {
      member: {
        name: "b",
        weight: 3,
        admin_state_up: false,
        backup: false,
        monitor_address: "192.0.2.200",
        monitor_port: 8081,
        tags: ["y", "y"],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.member).toMatchObject({
      id: m.id,
      name: "b",
      weight: 3,
      admin_state_up: false,
      backup: false,
      monitor_address: "192.0.2.200",
      monitor_port: 8081,
      tags: ["y"],
      address: "192.0.2.8",
      provisioning_status: "PENDING_UPDATE",
      updated_at: expect.stringMatching(/^\d{4}-/),
    });
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    expect(await status(slow, "pool", poolId)).toBe("PENDING_UPDATE");
    await slow.settle();
    expect((await slow.call("GET", `${members(poolId)}/${m.id}`)).body.member).toMatchObject({
      name: "b",
      weight: 3,
      provisioning_status: "ACTIVE",
    });

    const cleared = await slow.call("PUT", `${members(poolId)}/${m.id}`, {
      member: { weight: null, backup: null, name: null, monitor_address: null, monitor_port: null },
    });
    expect(cleared.body.member).toMatchObject({
      weight: 1,
      backup: false,
      name: "",
      monitor_address: null,
      monitor_port: null,
      tags: ["y"],
    });
    await slow.settle();
  });

  it("refuses immutable fields and bad values on update", async () => {
    const { poolId } = await activePool(t);
    const m = await addMember(t, poolId, { address: "192.0.2.9", protocol_port: 80 });
    expect(pick(await t.call("PUT", `${members(poolId)}/${m.id}`, { member: { address: "192.0.2.10" } }))).toEqual(
      fault(400, "Unknown attribute for argument member_.member: address"),
    );
    expect(pick(await t.call("PUT", `${members(poolId)}/${m.id}`, { member: { weight: 300 } }))).toEqual(
      fault(400, "Invalid input for field/attribute weight. Value: '300'. Value should be lower or equal to 256"),
    );
    expect((await t.call("GET", `${members(poolId)}/${m.id}`)).body.member).toMatchObject({ weight: 1, provisioning_status: "ACTIVE" });
  });

  it("deletes (204): PENDING_DELETE, then 404 and no longer listed", async () => {
    const { lbId, poolId } = await activePool(slow);
    const m = await addMember(slow, poolId, { address: "192.0.2.12", protocol_port: 80 });
    expect((await slow.call("DELETE", `${members(poolId)}/${m.id}`)).status).toBe(204);
    expect(await status(slow, "member", m.id)).toBe("PENDING_DELETE");
    expect(await status(slow, "pool", poolId)).toBe("PENDING_UPDATE");
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    await slow.settle();
    expect(pick(await slow.call("GET", `${members(poolId)}/${m.id}`))).toEqual(fault(404, `Member ${m.id} not found.`));
    expect((await slow.call("GET", members(poolId))).body.members).toEqual([]);
    expect(await status(slow, "pool", poolId)).toBe("ACTIVE");
  });

  it("goes with its pool (cascade)", async () => {
    const { poolId } = await activePool(t);
    const m = await addMember(t, poolId, { address: "192.0.2.13", protocol_port: 80 });
    expect((await t.call("DELETE", `/v2/lbaas/pools/${poolId}`)).status).toBe(204);
    await t.settle();
    expect(await status(t, "member", m.id)).toBe("DELETED");
    expect(pick(await t.call("GET", members(poolId)))).toEqual(fault(404, `Pool ${poolId} not found.`));
  });

  it("lists a pool's members only, with filters, fields and paging", async () => {
    const { poolId } = await activePool(t);
    const other = await activePool(t);
    await addMember(t, other.poolId, { address: "192.0.2.1", protocol_port: 80 });
    const a = await addMember(t, poolId, { address: "192.0.2.1", protocol_port: 80, name: "a", tags: ["blue"] });
    const b = await addMember(t, poolId, { address: "192.0.2.2", protocol_port: 81, name: "b" });
    expect((await list(poolId)).map((m) => m.id)).toEqual([a.id, b.id]);
    expect((await list(poolId, "?protocol_port=81")).map((m) => m.id)).toEqual([b.id]);
    expect((await list(poolId, "?address=192.0.2.1")).map((m) => m.id)).toEqual([a.id]);
    expect((await list(poolId, "?tags=blue")).map((m) => m.id)).toEqual([a.id]);
    expect(await list(poolId, "?fields=name&fields=weight")).toEqual([
      { name: "a", weight: 1 },
      { name: "b", weight: 1 },
    ]);
    expect((await list(poolId, "?sort=name:desc")).map((m) => m.name)).toEqual(["b", "a"]);
    const page = await t.call("GET", `${members(poolId)}?limit=1`);
    expect(page.body.members.map((m: { id: string }) => m.id)).toEqual([a.id]);
    expect(page.body.members_links[0].rel).toBe("next");
    expect((await t.call("GET", `/v2.0/lbaas/pools/${poolId}/members`)).body.members).toHaveLength(2);
  });
});

describe("batch update", () => {
  const batch = (app: App, poolId: string, list: Record<string, unknown>[], query = "") =>
    app.call("PUT", `${members(poolId)}${query}`, { members: list });

  it("creates, updates and deletes in one request and one flow, answering 202 with no body", async () => {
    const { lbId, poolId } = await activePool(slow);
    const a = await addMember(slow, poolId, { address: "192.0.2.1", protocol_port: 80, weight: 9, backup: true, name: "a", tags: ["t"] });
    const b = await addMember(slow, poolId, { address: "192.0.2.2", protocol_port: 80 });
    const c = await addMember(slow, poolId, { address: "192.0.2.1", protocol_port: 81 });
    const start = vi.spyOn(slow.engine, "start");

    const res = await batch(slow, poolId, [
      { address: "192.0.2.1", protocol_port: 80, weight: 5 },
      { address: "192.0.2.3", protocol_port: 80, name: "d", tags: ["new"] },
    ]);
    expect(pick(res)).toEqual({ status: 202, body: undefined });
    expect(start).toHaveBeenCalledTimes(1);
    expect(start.mock.calls[0]![0]).toBe("member-batch-update");

    const during = new Map(
      (await slow.call("GET", members(poolId))).body.members.map((m: { address: string; protocol_port: number }) => [
        `${m.address}:${m.protocol_port}`,
        m,
      ]),
    );
    expect(during.get("192.0.2.1:80")).toMatchObject({ id: a.id, provisioning_status: "PENDING_UPDATE" });
    expect(during.get("192.0.2.2:80")).toMatchObject({ id: b.id, provisioning_status: "PENDING_DELETE" });
    expect(during.get("192.0.2.1:81")).toMatchObject({ id: c.id, provisioning_status: "PENDING_DELETE" });
    expect(during.get("192.0.2.3:80")).toMatchObject({ provisioning_status: "PENDING_CREATE", operating_status: "NO_MONITOR", name: "d" });
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    expect(await status(slow, "pool", poolId)).toBe("PENDING_UPDATE");
    expect(pick(await batch(slow, poolId, []))).toEqual(fault(409, `Pool ${poolId} is immutable and cannot be updated.`));

    await slow.settle();
    const after = (await slow.call("GET", members(poolId))).body.members as Record<string, unknown>[];
    expect(after.map((m) => [m.address, m.protocol_port, m.provisioning_status])).toEqual([
      ["192.0.2.1", 80, "ACTIVE"],
      ["192.0.2.3", 80, "ACTIVE"],
    ]);
    // A resubmitted member takes the MemberPOST defaults for what the request leaves out (name and tags stay).
    expect(after[0]).toMatchObject({ id: a.id, weight: 5, backup: false, name: "a", tags: ["t"] });
    expect(after[1]).toMatchObject({ name: "d", tags: ["new"], weight: 1 });
    expect(await lbStatus(slow, lbId)).toBe("ACTIVE");
    expect(await status(slow, "pool", poolId)).toBe("ACTIVE");
    expect(await status(slow, "member", b.id)).toBe("DELETED");
  });

  it("with additive_only=true leaves the members it does not name alone", async () => {
    const { poolId } = await activePool(t);
    const a = await addMember(t, poolId, { address: "192.0.2.1", protocol_port: 80 });
    const b = await addMember(t, poolId, { address: "192.0.2.2", protocol_port: 80 });
    expect(
      (
        await batch(
          t,
          poolId,
          [
            { address: "192.0.2.1", protocol_port: 80, weight: 2 },
            { address: "192.0.2.4", protocol_port: 80 },
          ],
          "?additive_only=true",
        )
      ).status,
    ).toBe(202);
    expect(await status(t, "member", b.id)).toBe("ACTIVE");
    await t.settle();
    const after = await list(poolId);
    expect(after.map((m) => [m.address, m.weight, m.provisioning_status])).toEqual([
      ["192.0.2.1", 2, "ACTIVE"],
      ["192.0.2.2", 1, "ACTIVE"],
      ["192.0.2.4", 1, "ACTIVE"],
    ]);
    expect(after[0]!.id).toBe(a.id);
    expect(after[1]!.id).toBe(b.id);
  });

  it("refuses any member named twice (400, as current upstream), a reserved address and bad input, changing nothing", async () => {
    const { lbId, poolId } = await activePool(t);
    await addMember(t, poolId, { address: "192.0.2.1", protocol_port: 80 });
    const start = vi.spyOn(t.engine, "start");
    expect(
      pick(
        await batch(t, poolId, [
          { address: "192.0.2.1", protocol_port: 80 },
          { address: "192.0.2.1", protocol_port: 80, weight: 3 },
        ]),
      ),
    ).toEqual(fault(400, "Validation failure: Member must be updated only once in the same request."));
    expect(
      pick(
        await batch(t, poolId, [
          { address: "192.0.2.9", protocol_port: 80 },
          { address: "192.0.2.9", protocol_port: 80 },
        ]),
      ),
    ).toEqual(fault(400, "Validation failure: Member must be updated only once in the same request."));
    expect(pick(await batch(t, poolId, [{ address: "169.254.169.254", protocol_port: 80 }]))).toEqual(
      fault(400, "169.254.169.254 is not a valid option for member address"),
    );
    expect(pick(await batch(t, poolId, [{ address: "192.0.2.1" }]))).toEqual(
      fault(400, "Invalid input for field/attribute protocol_port. Value: 'None'. Mandatory field missing."),
    );
    expect(pick(await batch(t, poolId, [{ address: "192.0.2.1", protocol_port: 80, id: NOBODY }]))).toEqual(
      fault(400, "Unknown attribute for argument members_.members: id"),
    );
    expect(start).not.toHaveBeenCalled();
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
    expect((await list(poolId)).map((m) => [m.address, m.provisioning_status])).toEqual([["192.0.2.1", "ACTIVE"]]);
  });

  it("answers 202 and moves nothing when nothing is new, updated or deleted; a resubmitted member is an update", async () => {
    const { lbId, poolId } = await activePool(t);
    const start = vi.spyOn(t.engine, "start");
    const before = (await t.store.getLoadBalancer(lbId))!.version;
    expect(pick(await batch(t, poolId, []))).toEqual({ status: 202, body: undefined });
    expect(pick(await batch(t, poolId, [], "?additive_only=true"))).toEqual({ status: 202, body: undefined });
    expect(start).not.toHaveBeenCalled();
    expect((await t.store.getLoadBalancer(lbId))!.version).toBe(before);
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
    expect(await status(t, "pool", poolId)).toBe("ACTIVE");

    const m = await addMember(t, poolId, { address: "192.0.2.1", protocol_port: 80 });
    start.mockClear();
    expect((await batch(t, poolId, [{ address: "192.0.2.1", protocol_port: 80 }])).status).toBe(202);
    expect(start).toHaveBeenCalledTimes(1);
    expect(await status(t, "member", m.id)).toMatch(/^(PENDING_UPDATE|ACTIVE)$/);
    await t.settle();
    expect(await status(t, "member", m.id)).toBe("ACTIVE");
  });

  it("handles 120 members (several DynamoDB transactions) in one flow, then replaces them all", async () => {
    const { lbId, poolId } = await activePool(t);
    const start = vi.spyOn(t.engine, "start");
    const set = (third: number) =>
      Array.from({ length: 120 }, (_, i) => ({ address: `10.${third}.${Math.floor(i / 100)}.${i % 100}`, protocol_port: 80 }));
    expect((await batch(t, poolId, set(1))).status).toBe(202);
    expect(start).toHaveBeenCalledTimes(1);
    await t.settle();
    let now = await list(poolId);
    expect(now).toHaveLength(120);
    expect(now.every((m) => m.provisioning_status === "ACTIVE")).toBe(true);
    expect(new Set(now.map((m) => m.address))).toEqual(new Set(set(1).map((m) => m.address)));

    expect((await batch(t, poolId, set(2))).status).toBe(202);
    expect(start).toHaveBeenCalledTimes(2);
    expect(
      (await t.store.tree(lbId)).items.filter((i) => i.kind === "member" && i.record.provisioning_status === "PENDING_DELETE"),
    ).toHaveLength(120);
    await t.settle();
    now = await list(poolId);
    expect(now).toHaveLength(120);
    expect(new Set(now.map((m) => m.address))).toEqual(new Set(set(2).map((m) => m.address)));
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
  });

  it("on a failed flow puts the pool in ERROR and everything else back to ACTIVE", async () => {
    const f = await inProcessApp({ OTTAVA_NOOP_FAULTS: "amphora.update" });
    const lbId = (await activeLb(f)).id;
    // Seeded, so that no flow (which would fail) runs for the pool itself.
    const pool = record(lbId, { protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" });
    await seed(f, lbId, [{ kind: "pool", put: pool }]);
    expect((await f.call("PUT", members(pool.id), { members: [{ address: "192.0.2.1", protocol_port: 80 }] })).status).toBe(202);
    await f.settle();
    expect(await status(f, "pool", pool.id)).toBe("ERROR");
    expect(await lbStatus(f, lbId)).toBe("ACTIVE");
    expect((await f.call("GET", members(pool.id))).body.members.map((m: { provisioning_status: string }) => m.provisioning_status)).toEqual(
      ["ACTIVE"],
    );
  });
});

// ---- v2.30: SR-IOV member ports ------------------------------------------------------------------

const SRIOV_DISABLED = "The load balancer flavor does not allow SR-IOV member ports.";

/** A flavor (with its profile) whose metadata is `data`. */
async function flavorOf(app: App, data: Record<string, unknown>) {
  const profile = await app.call("POST", "/v2/lbaas/flavorprofiles", {
    flavorprofile: { name: "fp", provider_name: "amphora", flavor_data: JSON.stringify(data) },
  });
  expect(profile.status, JSON.stringify(profile.body)).toBe(201);
  // Flavor names are unique.
  const name = `f-${profile.body.flavorprofile.id}`;
  const flavor = await app.call("POST", "/v2/lbaas/flavors", { flavor: { name, flavor_profile_id: profile.body.flavorprofile.id } });
  expect(flavor.status, JSON.stringify(flavor.body)).toBe(201);
  return flavor.body.flavor.id as string;
}

/** An ACTIVE LB of that flavor (none: no flavor) with an ACTIVE HTTP pool. */
async function flavoredPool(app: App, data: Record<string, unknown> | undefined) {
  const flavor_id = data === undefined ? undefined : await flavorOf(app, data);
  const lb = await app.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, flavor_id } });
  expect(lb.status, JSON.stringify(lb.body)).toBe(201);
  await app.settle();
  const lbId = lb.body.loadbalancer.id as string;
  const pool = await app.call("POST", "/v2/lbaas/pools", {
    pool: { loadbalancer_id: lbId, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" },
  });
  expect(pool.status).toBe(201);
  await app.settle();
  return { lbId, poolId: pool.body.pool.id as string };
}

/** A pool's members by address (those created together share created_at, so their list order is not fixed). */
const byAddress = (ms: Record<string, unknown>[]) => [...ms].sort((a, b) => String(a.address).localeCompare(String(b.address)));
const vnics = async (poolId: string) => byAddress(await list(poolId)).map((m) => [m.address, m.protocol_port, m.vnic_type]);

describe("request_sriov (v2.30)", () => {
  it("defaults to a normal port, and is refused without a flavor allowing SR-IOV members", async () => {
    const { lbId, poolId } = await flavoredPool(t, undefined);
    expect((await addMember(t, poolId, { address: "192.0.2.1", protocol_port: 80 })).vnic_type).toBe("normal");
    expect((await addMember(t, poolId, { address: "192.0.2.2", protocol_port: 80, request_sriov: false })).vnic_type).toBe("normal");
    // wsme makes a null None, which is as false as False.
    expect((await addMember(t, poolId, { address: "192.0.2.3", protocol_port: 80, request_sriov: null })).vnic_type).toBe("normal");
    // The answer never carries request_sriov.
    expect((await t.call("GET", `${members(poolId)}?address=192.0.2.1`)).body.members[0]).not.toHaveProperty("request_sriov");

    const start = vi.spyOn(t.engine, "start");
    expect(
      pick(await t.call("POST", members(poolId), { member: { address: "192.0.2.4", protocol_port: 80, request_sriov: true } })),
    ).toEqual(fault(400, SRIOV_DISABLED));
    expect(
      pick(await t.call("POST", members(poolId), { member: { address: "192.0.2.4", protocol_port: 80, request_sriov: "maybe" } })),
    ).toEqual(fault(400, "Invalid input for field/attribute request_sriov. Value: 'maybe'. Value not an unambiguous boolean: maybe"));
    expect(start).not.toHaveBeenCalled();
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
    expect(await vnics(poolId)).toEqual([
      ["192.0.2.1", 80, "normal"],
      ["192.0.2.2", 80, "normal"],
      ["192.0.2.3", 80, "normal"],
    ]);
  });

  it("is refused when the flavor does not set allow_member_sriov, or sets it false", async () => {
    for (const data of [{}, { loadbalancer_topology: "SINGLE", sriov_vip: false }, { allow_member_sriov: false }]) {
      const { lbId, poolId } = await flavoredPool(t, data);
      expect(
        pick(await t.call("POST", members(poolId), { member: { address: "192.0.2.1", protocol_port: 80, request_sriov: true } })),
        JSON.stringify(data),
      ).toEqual(fault(400, SRIOV_DISABLED));
      expect(await lbStatus(t, lbId)).toBe("ACTIVE");
      expect(await list(poolId)).toEqual([]);
      // The same member without SR-IOV is fine.
      expect((await addMember(t, poolId, { address: "192.0.2.1", protocol_port: 80 })).vnic_type).toBe("normal");
    }
  });

  it("creates a direct (SR-IOV) port where the flavor has allow_member_sriov; shown, filtered on, never updated", async () => {
    const { poolId } = await flavoredPool(t, { allow_member_sriov: true });
    const direct = await addMember(t, poolId, { address: "192.0.2.1", protocol_port: 80, request_sriov: true });
    expect(direct).toMatchObject({ address: "192.0.2.1", vnic_type: "direct", provisioning_status: "PENDING_CREATE" });
    expect(direct).not.toHaveProperty("request_sriov");
    const normal = await addMember(t, poolId, { address: "192.0.2.2", protocol_port: 80 });
    expect(normal.vnic_type).toBe("normal");

    expect((await t.call("GET", `${members(poolId)}/${direct.id}`)).body.member).toMatchObject({
      id: direct.id,
      vnic_type: "direct",
      provisioning_status: "ACTIVE",
    });
    expect((await t.store.getChild("member", direct.id))?.record.vnic_type).toBe("direct");
    expect((await list(poolId, "?vnic_type=direct")).map((m) => m.id)).toEqual([direct.id]);
    expect((await list(poolId, "?vnic_type=normal")).map((m) => m.id)).toEqual([normal.id]);
    expect(await list(poolId, "?vnic_type=direct&fields=vnic_type")).toEqual([{ vnic_type: "direct" }]);

    // MemberPUT has no request_sriov: wsme's unknown attribute.
    for (const request_sriov of [false, true]) {
      expect(pick(await t.call("PUT", `${members(poolId)}/${direct.id}`, { member: { request_sriov } }))).toEqual(
        fault(400, "Unknown attribute for argument member_.member: request_sriov"),
      );
    }
    expect(pick(await t.call("PUT", `${members(poolId)}/${direct.id}`, { member: { vnic_type: "normal" } }))).toEqual(
      fault(400, "Unknown attribute for argument member_.member: vnic_type"),
    );
    expect(
      pick(await t.call("POST", members(poolId), { member: { address: "192.0.2.3", protocol_port: 80, vnic_type: "direct" } })),
    ).toEqual(fault(400, "Unknown attribute for argument member_.member: vnic_type"));
    expect((await t.call("GET", `${members(poolId)}/${direct.id}`)).body.member.vnic_type).toBe("direct");
  });

  it("is checked before the load balancer's state, as Octavia's post does", async () => {
    const { lbId, poolId } = await flavoredPool(slow, undefined);
    expect((await slow.call("POST", members(poolId), { member: { address: "192.0.2.1", protocol_port: 80 } })).status).toBe(201);
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    expect(
      pick(await slow.call("POST", members(poolId), { member: { address: "192.0.2.2", protocol_port: 80, request_sriov: true } })),
    ).toEqual(fault(400, SRIOV_DISABLED));
    expect(pick(await slow.call("POST", members(poolId), { member: { address: "192.0.2.2", protocol_port: 80 } }))).toEqual(
      fault(409, `Pool ${poolId} is immutable and cannot be updated.`),
    );
    await slow.settle();
  });
});

describe("request_sriov in batch updates and the fully populated create", () => {
  const batch = (app: App, poolId: string, list: Record<string, unknown>[]) => app.call("PUT", members(poolId), { members: list });

  it("batch update: new members get their VNIC type; a resubmitted member's request_sriov is dropped silently", async () => {
    const { lbId, poolId } = await flavoredPool(t, { allow_member_sriov: true });
    const a = await addMember(t, poolId, { address: "192.0.2.1", protocol_port: 80 });
    const b = await addMember(t, poolId, { address: "192.0.2.2", protocol_port: 80, request_sriov: true });
    const res = await batch(t, poolId, [
      { address: "192.0.2.1", protocol_port: 80, request_sriov: true, weight: 3 },
      { address: "192.0.2.2", protocol_port: 80, request_sriov: false, weight: 4 },
      { address: "192.0.2.3", protocol_port: 80, request_sriov: true },
      { address: "192.0.2.4", protocol_port: 80 },
    ]);
    expect(pick(res)).toEqual({ status: 202, body: undefined });
    await t.settle();
    const after = byAddress(await list(poolId));
    expect(after.map((m) => [m.address, m.weight, m.vnic_type, m.provisioning_status])).toEqual([
      ["192.0.2.1", 3, "normal", "ACTIVE"],
      ["192.0.2.2", 4, "direct", "ACTIVE"],
      ["192.0.2.3", 1, "direct", "ACTIVE"],
      ["192.0.2.4", 1, "normal", "ACTIVE"],
    ]);
    expect(after.slice(0, 2).map((m) => m.id)).toEqual([a.id, b.id]);
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
  });

  it("batch update: a new SR-IOV member is refused without the flavor's consent, a resubmitted one is not", async () => {
    const { lbId, poolId } = await flavoredPool(t, { allow_member_sriov: false });
    const a = await addMember(t, poolId, { address: "192.0.2.1", protocol_port: 80 });
    const start = vi.spyOn(t.engine, "start");
    expect(
      pick(
        await batch(t, poolId, [
          { address: "192.0.2.1", protocol_port: 80 },
          { address: "192.0.2.2", protocol_port: 80, request_sriov: true },
        ]),
      ),
    ).toEqual(fault(400, SRIOV_DISABLED));
    // Reserved addresses are found first, while the request's members are sorted into new and updated.
    expect(
      pick(
        await batch(t, poolId, [
          { address: "192.0.2.2", protocol_port: 80, request_sriov: true },
          { address: "169.254.169.254", protocol_port: 80 },
        ]),
      ),
    ).toEqual(fault(400, "169.254.169.254 is not a valid option for member address"));
    expect(start).not.toHaveBeenCalled();
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
    expect(await vnics(poolId)).toEqual([["192.0.2.1", 80, "normal"]]);

    expect(pick(await batch(t, poolId, [{ address: "192.0.2.1", protocol_port: 80, request_sriov: true, weight: 7 }]))).toEqual({
      status: 202,
      body: undefined,
    });
    await t.settle();
    expect((await list(poolId)).map((m) => [m.id, m.weight, m.vnic_type])).toEqual([[a.id, 7, "normal"]]);
  });

  it("cross-pool update: new members get their VNIC type where the flavor allows it, and are refused where it does not", async () => {
    const { lbId, poolId } = await flavoredPool(t, { allow_member_sriov: true });
    const put = (list: Record<string, unknown>[]) => t.call("PUT", "/v2/lbaas/pools/members", { members: list });
    expect(
      pick(
        await put([
          { pool_id: poolId, address: "192.0.2.1", protocol_port: 80, request_sriov: true },
          { pool_id: poolId, address: "192.0.2.2", protocol_port: 80 },
        ]),
      ),
    ).toEqual({ status: 202, body: undefined });
    await t.settle();
    expect(await vnics(poolId)).toEqual([
      ["192.0.2.1", 80, "direct"],
      ["192.0.2.2", 80, "normal"],
    ]);
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");

    const other = await flavoredPool(t, undefined);
    expect(pick(await put([{ pool_id: other.poolId, address: "192.0.2.1", protocol_port: 80, request_sriov: true }]))).toEqual(
      fault(400, SRIOV_DISABLED),
    );
    expect(await list(other.poolId)).toEqual([]);
    expect(await lbStatus(t, other.lbId)).toBe("ACTIVE");
  });

  it("fully populated create: members may ask for SR-IOV when the new LB's flavor allows it", async () => {
    const body = (flavor_id: string | undefined) => ({
      loadbalancer: {
        vip_subnet_id: SUBNET,
        flavor_id,
        listeners: [
          webListener({
            members: [
              { address: "192.0.2.10", protocol_port: 8080, request_sriov: true },
              { address: "192.0.2.11", protocol_port: 8080 },
            ],
          }),
        ],
      },
    });
    const allowed = await flavorOf(t, { allow_member_sriov: true });
    const res = await t.call("POST", LBS, body(allowed));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const pool = res.body.loadbalancer.pools[0];
    expect(byAddress(pool.members).map((m) => [m.address, m.vnic_type])).toEqual([
      ["192.0.2.10", "direct"],
      ["192.0.2.11", "normal"],
    ]);
    expect(pool.members.some((m: Record<string, unknown>) => "request_sriov" in m)).toBe(false);
    await t.settle();
    expect(await vnics(pool.id)).toEqual([
      ["192.0.2.10", 8080, "direct"],
      ["192.0.2.11", 8080, "normal"],
    ]);

    const before = (await t.call("GET", LBS)).body.loadbalancers.length;
    for (const flavor of [undefined, await flavorOf(t, { allow_member_sriov: false })]) {
      expect(pick(await t.call("POST", LBS, body(flavor)))).toEqual(fault(400, SRIOV_DISABLED));
    }
    expect((await t.call("GET", LBS)).body.loadbalancers.length).toBe(before);
  });
});
