// The heartbeat receiver's pure parts: the envelope (status_message.py), the status computation
// (UpdateHealthDb.update_health) checked against what Octavia's own code answered for 300 generated
// cases (fixtures/octavia-heartbeat-cases.py), the counters (update_stats, StatsMixin) and the
// duplicate window.
import { readFileSync } from "node:fs";
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import {
  HeartbeatRejected,
  RecentPairs,
  applyStatsUpdates,
  heartbeatHmac,
  listenerStatistics,
  loadBalancerStatistics,
  poolKey,
  providerStats,
  readHeartbeat,
  unwrapEnvelope,
  updateHealth,
  updateStats,
  wrapEnvelope,
  type HealthView,
  type HeartbeatMessage,
  type ListenerStatsRow,
} from "@ottava/core";

const fixture = JSON.parse(readFileSync(new URL("./fixtures/octavia-heartbeat-cases.json", import.meta.url), "utf8")) as {
  envelopes: { key: string; message: unknown; hex: string; binary: string };
  cases: { db_lb: DbLb; health: unknown; updates: [string, string, string][]; amphora_health_replaced: boolean }[];
};

interface DbLb {
  id: string;
  enabled: boolean;
  provisioning_status: string;
  operating_status: string;
  listeners?: Record<string, { operating_status: string; protocol: string; enabled: boolean }>;
  pools?: Record<string, { operating_status: string; members: Record<string, { operating_status: string }> }>;
}

/** get_lb_for_health_update's dict as the view the store gives. */
function viewOf(db: DbLb, amphoraId = "amp"): HealthView {
  return {
    amphora: { id: amphoraId, loadbalancer_id: db.id, status: "ALLOCATED", compute_id: "c", listener_stats: {}, listener_stats_rev: 0 },
    lb: { id: db.id, enabled: db.enabled, provisioning_status: db.provisioning_status, operating_status: db.operating_status },
    listeners: Object.entries(db.listeners ?? {}).map(([id, l]) => ({
      id,
      enabled: l.enabled,
      protocol: l.protocol,
      operating_status: l.operating_status,
      default_pool_id: null,
    })),
    pools: Object.entries(db.pools ?? {}).map(([id, p]) => ({ id, operating_status: p.operating_status })),
    members: Object.entries(db.pools ?? {}).flatMap(([poolId, p]) =>
      Object.entries(p.members).map(([id, m]) => ({ id, pool_id: poolId, enabled: true, operating_status: m.operating_status })),
    ),
  };
}

const KEY = "insecure-heartbeat-key";
const msg = (m: Record<string, unknown>): HeartbeatMessage => readHeartbeat({ id: "amp", seq: 1, ver: 3, listeners: {}, pools: {}, ...m });
const stats = (tx = 0, rx = 0, conns = 0, totconns = 0, ereq = 0) => ({ tx, rx, conns, totconns, ereq });

describe("the envelope (status_message.py)", () => {
  it("reads what Octavia's wrap_envelope wrote, with a hex and with a legacy binary digest", () => {
    const { key, message, hex, binary } = fixture.envelopes;
    expect(unwrapEnvelope(Buffer.from(hex, "base64"), key)).toEqual(message);
    expect(unwrapEnvelope(Buffer.from(binary, "base64"), key)).toEqual(message);
  });

  it("round-trips its own envelopes, both digests", () => {
    const m = { id: "a", seq: 3, ver: 3, listeners: {}, pools: {} };
    expect(unwrapEnvelope(wrapEnvelope(m, KEY), KEY)).toEqual(m);
    expect(unwrapEnvelope(wrapEnvelope(m, KEY, false), KEY)).toEqual(m);
    expect(wrapEnvelope(m, KEY).subarray(-64).toString("utf8")).toMatch(/^[0-9a-f]{64}$/);
  });

  const rejects = (buf: Buffer, key: string, reason: string) => {
    let err: unknown;
    try {
      unwrapEnvelope(buf, key);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HeartbeatRejected);
    expect((err as HeartbeatRejected).reason).toBe(reason);
  };

  it("rejects a tampered byte anywhere, in the payload or in either digest", () => {
    for (const original of [Buffer.from(fixture.envelopes.hex, "base64"), Buffer.from(fixture.envelopes.binary, "base64")]) {
      for (const at of [0, 5, original.length - 40, original.length - 1]) {
        const bad = Buffer.from(original);
        bad[at] = bad[at]! ^ 0x01;
        rejects(bad, fixture.envelopes.key, "hmac");
      }
    }
  });

  it("rejects the wrong key, an empty key, short and empty packets", () => {
    const good = Buffer.from(fixture.envelopes.hex, "base64");
    rejects(good, "another-key", "hmac");
    rejects(good, "", "hmac");
    rejects(Buffer.alloc(0), KEY, "hmac");
    rejects(good.subarray(0, 20), fixture.envelopes.key, "hmac");
    rejects(good.subarray(0, good.length - 1), fixture.envelopes.key, "hmac");
  });

  it("rejects a signed payload that is not zlib, or not JSON", () => {
    const notZlib = Buffer.from("not compressed");
    rejects(Buffer.concat([notZlib, heartbeatHmac(notZlib, KEY)]), KEY, "decode");
    const notJson = deflateSync(Buffer.from("{nope"));
    rejects(Buffer.concat([notJson, heartbeatHmac(notJson, KEY, false)]), KEY, "decode");
    rejects(Buffer.concat([notJson, heartbeatHmac(notJson, KEY)]), KEY, "decode");
  });

  it("refuses messages without an amphora id, listeners, or (version 2 on) pools", () => {
    expect(() => readHeartbeat([])).toThrow(HeartbeatRejected);
    expect(() => readHeartbeat({ listeners: {} })).toThrow(/amphora id/);
    expect(() => readHeartbeat({ id: "a" })).toThrow(/listeners/);
    expect(() => readHeartbeat({ id: "a", ver: 3, listeners: {} })).toThrow(/pools/);
    expect(readHeartbeat({ id: "a", ver: 1, listeners: {} }).pools).toEqual({});
    expect(readHeartbeat({ id: "a", listeners: { l: { status: "OPEN", stats: { tx: -1, rx: "x" } } } }).listeners.l!.stats).toEqual(
      stats(),
    );
  });

  it("normalizes pool keys as Octavia: '<pool>:<listener>' and '<pool>'", () => {
    expect(poolKey("p1:l1")).toBe("p1");
    expect(poolKey("p1")).toBe("p1");
    expect(poolKey("a:b:c")).toBe("a:b");
  });
});

describe("update_health, as Octavia's own code answers", () => {
  it(`gives the same operating_status updates, in the same order, for ${fixture.cases.length} generated cases`, () => {
    let compared = 0;
    for (const c of fixture.cases) {
      const out = updateHealth(readHeartbeat(c.health), viewOf(c.db_lb));
      expect({ id: c.db_lb.id, updates: out.statuses.map((s) => [s.kind, s.id, s.to]), replaced: out.recordHeartbeat }).toEqual({
        id: c.db_lb.id,
        updates: c.updates,
        replaced: c.amphora_health_replaced,
      });
      compared += c.updates.length;
    }
    expect(compared).toBeGreaterThan(1000);
  });

  const db: DbLb = {
    id: "lb",
    enabled: true,
    provisioning_status: "ACTIVE",
    operating_status: "bogus",
    listeners: { l1: { operating_status: "bogus", protocol: "HTTP", enabled: true } },
    pools: {
      p1: { operating_status: "bogus", members: { m1: { operating_status: "NOTHING_MATCHABLE" }, m2: { operating_status: "NO_MONITOR" } } },
    },
  };
  const changes = (m: HeartbeatMessage, view = viewOf(db)) => Object.fromEntries(updateHealth(m, view).statuses.map((s) => [s.id, s.to]));

  it("all up: ONLINE everywhere; a member not reported is OFFLINE unless it is NO_MONITOR", () => {
    const m = msg({ listeners: { l1: { status: "OPEN", stats: stats() } }, pools: { "p1:l1": { status: "UP", members: { m1: "UP" } } } });
    expect(changes(m)).toEqual({ l1: "ONLINE", p1: "ONLINE", m1: "ONLINE", lb: "ONLINE" });
    expect(changes(msg({ listeners: { l1: { status: "OPEN", stats: stats() } }, pools: { p1: { status: "UP", members: {} } } }))).toEqual({
      l1: "ONLINE",
      p1: "ONLINE",
      m1: "OFFLINE",
      lb: "ONLINE",
    });
  });

  it("a DOWN member degrades its pool and the LB; a DOWN pool is ERROR and so is the LB; FULL degrades the listener", () => {
    expect(
      changes(
        msg({
          listeners: { l1: { status: "OPEN", stats: stats() } },
          pools: { p1: { status: "UP", members: { m1: "DOWN 1/2", m2: "no check" } } },
        }),
      ),
    ).toEqual({
      l1: "ONLINE",
      p1: "DEGRADED",
      m1: "ERROR",
      lb: "DEGRADED",
    });
    expect(
      changes(msg({ listeners: { l1: { status: "OPEN", stats: stats() } }, pools: { p1: { status: "DOWN", members: { m1: "DOWN" } } } })),
    ).toMatchObject({
      p1: "ERROR",
      m1: "ERROR",
      lb: "ERROR",
    });
    expect(
      changes(
        msg({
          listeners: { l1: { status: "FULL", stats: stats() } },
          pools: { p1: { status: "UP", members: { m1: "DRAIN", m2: "MAINT" } } },
        }),
      ),
    ).toEqual({
      l1: "DEGRADED",
      p1: "ONLINE",
      m1: "DRAINING",
      m2: "OFFLINE",
      lb: "DEGRADED",
    });
  });

  it("a listener missing from the message is ERROR (enabled, LB ACTIVE) and the heartbeat does not count; a pool missing is OFFLINE", () => {
    const out = updateHealth(msg({}), viewOf(db));
    expect(out.recordHeartbeat).toBe(false);
    expect(Object.fromEntries(out.statuses.map((s) => [s.id, s.to]))).toEqual({ l1: "ERROR", p1: "OFFLINE", lb: "ONLINE" });
    expect(out.warnings.map((w) => w.fields)).toContainEqual({ amphoraId: "amp", found: 0, expected: 1 });
  });

  it("RESTARTING keeps a member's status; an unknown word is logged and changes nothing", () => {
    const out = updateHealth(
      msg({
        listeners: { l1: { status: "OPEN", stats: stats() } },
        pools: { p1: { status: "UP", members: { m1: "RESTARTING", m2: "weird" } } },
      }),
      viewOf(db),
    );
    expect(out.statuses.map((s) => s.id)).toEqual(["l1", "p1", "lb"]);
    expect(out.warnings.map((w) => w.message)).toContain("Member reported an unknown status");
  });

  it("writes only what changed, comparing without case", () => {
    const settled: DbLb = {
      ...db,
      operating_status: "online",
      listeners: { l1: { operating_status: "ONLINE", protocol: "HTTP", enabled: true } },
      pools: { p1: { operating_status: "ONLINE", members: { m1: "x" as never } } },
    };
    settled.pools!.p1!.members = { m1: { operating_status: "ONLINE" } };
    const out = updateHealth(
      msg({ listeners: { l1: { status: "OPEN", stats: stats() } }, pools: { p1: { status: "UP", members: { m1: "UP" } } } }),
      viewOf(settled),
    );
    expect(out.statuses).toEqual([]);
    expect(out.recordHeartbeat).toBe(true);
  });

  it("a disabled or PENDING LB ignores the listener count; a disabled LB is OFFLINE", () => {
    const disabled = updateHealth(msg({}), viewOf({ ...db, enabled: false }));
    expect(disabled.recordHeartbeat).toBe(true);
    expect(disabled.statuses.find((s) => s.kind === "loadbalancer")?.to).toBe("OFFLINE");
    expect(updateHealth(msg({}), viewOf({ ...db, provisioning_status: "PENDING_UPDATE" })).recordHeartbeat).toBe(true);
  });

  it("a heartbeat processed later than heartbeat_interval changes nothing", () => {
    const out = updateHealth(msg({ listeners: { l1: { status: "OPEN", stats: stats() } } }), viewOf(db), {
      processingDelay: 10,
      heartbeatInterval: 10,
    });
    expect(out).toMatchObject({ outcome: "too-slow", recordHeartbeat: false, statuses: [] });
  });

  it("zombies: an amphora that is DELETED or whose LB is gone has its instance deleted; an unknown one is only logged", () => {
    const zombie = updateHealth(msg({}), { ...viewOf(db), lb: undefined });
    expect(zombie).toMatchObject({ outcome: "zombie", computeId: "c", statuses: [], recordHeartbeat: false });
    const unknown = updateHealth(msg({}), { amphora: undefined, lb: undefined, listeners: [], pools: [], members: [] });
    expect(unknown).toMatchObject({ outcome: "unknown-amphora", computeId: null });
  });

  it("pre-versioning heartbeats: a UDP listener without enabled members is not expected", () => {
    const view: HealthView = {
      ...viewOf({
        ...db,
        listeners: {
          l1: { operating_status: "ONLINE", protocol: "HTTP", enabled: true },
          u1: { operating_status: "OFFLINE", protocol: "UDP", enabled: true },
        },
      }),
    };
    view.listeners[1]!.default_pool_id = "p1";
    view.members = [{ id: "m1", pool_id: "p1", enabled: false, operating_status: "OFFLINE" }];
    const legacy = readHeartbeat({ id: "amp", listeners: { l1: { status: "OPEN", stats: stats(), pools: {} } } });
    expect(updateHealth(legacy, view).recordHeartbeat).toBe(true);
    view.members[0]!.enabled = true;
    expect(updateHealth(legacy, view).recordHeartbeat).toBe(false);
  });
});

describe("update_stats and the /stats sums", () => {
  const db2: DbLb = {
    id: "lb",
    enabled: true,
    provisioning_status: "ACTIVE",
    operating_status: "ONLINE",
    listeners: {
      l1: { operating_status: "ONLINE", protocol: "HTTP", enabled: true },
      l2: { operating_status: "ONLINE", protocol: "HTTP", enabled: true },
    },
  };
  const view = (rows: Record<string, ListenerStatsRow>): HealthView => ({
    ...viewOf(db2),
    amphora: { id: "amp", loadbalancer_id: "lb", status: "ALLOCATED", compute_id: null, listener_stats: rows, listener_stats_rev: 1 },
  });
  const row = (bytes_in: number, bytes_out: number, active_connections: number, total_connections: number, request_errors: number) => ({
    bytes_in,
    bytes_out,
    active_connections,
    total_connections,
    request_errors,
  });

  it("version 3: deltas added, active connections replaced; unchanged rows and unknown listeners are not written", () => {
    const m = msg({
      listeners: {
        l1: { status: "OPEN", stats: stats(10, 20, 3, 4, 1) },
        l2: { status: "OPEN", stats: stats(0, 0, 2) },
        lx: { status: "OPEN", stats: stats(1) },
      },
    });
    const rows = { l1: row(100, 200, 9, 40, 0), l2: row(5, 5, 2, 5, 0) };
    const updates = updateStats(m, view(rows));
    expect(updates).toEqual([{ listener_id: "l1", mode: "increment", ...row(20, 10, 3, 4, 1) }]);
    expect(applyStatsUpdates(rows, updates)).toEqual({ l1: row(120, 210, 3, 44, 1), l2: row(5, 5, 2, 5, 0) });
  });

  it("a listener's first report is stored even with zeros (Octavia creates the row)", () => {
    const updates = updateStats(msg({ listeners: { l1: { status: "OPEN", stats: stats() } } }), view({}));
    expect(updates).toEqual([{ listener_id: "l1", mode: "increment", ...row(0, 0, 0, 0, 0) }]);
  });

  it("older versions report absolutes: rows replaced", () => {
    const m = readHeartbeat({ id: "amp", ver: 2, listeners: { l1: { status: "OPEN", stats: stats(1, 2, 3, 4, 5) } }, pools: {} });
    const updates = updateStats(m, view({ l1: row(9, 9, 9, 9, 9) }));
    expect(updates).toEqual([{ listener_id: "l1", mode: "replace", ...row(2, 1, 3, 4, 5) }]);
    expect(applyStatsUpdates({ l1: row(9, 9, 9, 9, 9) }, updates)).toEqual({ l1: row(2, 1, 3, 4, 5) });
  });

  it("listener and LB sums: every amphora's bytes, only ALLOCATED amphorae's active connections", () => {
    const amphorae = [
      { id: "a1", status: "ALLOCATED", listener_stats: { l1: row(1, 2, 3, 4, 5), l2: row(10, 20, 30, 40, 50) } },
      { id: "a2", status: "READY", listener_stats: { l1: row(100, 200, 300, 400, 500) } },
      { id: "a3", status: "DELETED", listener_stats: { l1: row(1000, 0, 7, 0, 0) } },
    ];
    expect(listenerStatistics("l1", amphorae)).toEqual(row(1101, 202, 3, 404, 505));
    expect(loadBalancerStatistics(["l1", "l2"], amphorae)).toEqual(row(1111, 222, 33, 444, 555));
    expect(loadBalancerStatistics([], amphorae)).toEqual(row(0, 0, 0, 0, 0));
    // Counters on the listener record itself (another provider's): summed with their active connections.
    const provider = providerStats([{ id: "l2", stats: row(1, 1, 1, 1, 1) }, { id: "l1" }]);
    expect(listenerStatistics("l2", [...amphorae, ...provider])).toEqual(row(11, 21, 31, 41, 51));
  });
});

describe("the duplicate window", () => {
  it("drops a repeated (amphora, seq) pair while it is recent, not after, and lets a restarted agent count again", () => {
    const r = new RecentPairs(30_000, 1000);
    expect(r.check("a", 0, 0)).toBe(false);
    expect(r.check("a", 0, 1000)).toBe(true);
    expect(r.check("b", 0, 1000)).toBe(false);
    expect(r.check("a", 1, 1000)).toBe(false);
    expect(r.check("a", 0, 31_000)).toBe(false); // restarted long after: seq 0 is new again
  });

  it("is bounded: the oldest pairs go first", () => {
    const r = new RecentPairs(60_000, 3);
    for (let seq = 0; seq < 10; seq++) expect(r.check("a", seq, seq)).toBe(false);
    expect(r.size).toBe(3);
    expect(r.check("a", 9, 20)).toBe(true);
    expect(r.check("a", 0, 20)).toBe(false);
  });
});
