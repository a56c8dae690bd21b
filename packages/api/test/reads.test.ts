// What the API and the flows read, counted on the DynamoDB client (counts hold on any machine, and
// are what AWS bills): a GET reads the object's item alone, a list page no item per listed object, a
// member change its pool's part of the tree whatever the pool holds, a request under a pool or a
// policy its parent once, and a flow the tree at most once.
import { beforeAll, describe, expect, it } from "vitest";
import { DynamoMeter, addMetering, type MeterRow } from "@ottava/db/testing";
import { inProcessApp, SUBNET } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
const LBS = "/v2/lbaas/loadbalancers";
let t: App;
const meter = new DynamoMeter();

/** The requests `fn` makes: the API request's (scope "") and its flows' ("flow"), by operation and target. */
async function metered(fn: () => Promise<unknown>): Promise<{ api: MeterRow[]; flow: MeterRow[] }> {
  await t.settle();
  meter.reset();
  await fn();
  await t.settle();
  const rows = meter.rows();
  return { api: rows.filter((r) => r.scope === ""), flow: rows.filter((r) => r.scope === "flow") };
}
const requests = (rows: MeterRow[], pred: (r: MeterRow) => boolean = () => true) =>
  rows.filter(pred).reduce((n, r) => n + r.counts.requests, 0);
const items = (rows: MeterRow[]) => rows.reduce((n, r) => n + r.counts.items, 0);
/** The GetItems of a request, by target: an object found by its id alone is its pointer (`ID#/ID`), then its item. */
const gets = (rows: MeterRow[]) => rows.filter((r) => r.op === "GetItem").map((r) => [r.target, r.counts.requests]);
/** A read of a whole tree: its partition below the flow trail. */
const wholeTree = (r: MeterRow) => r.op === "Query" && r.target.startsWith("LB# ") && r.target.includes("sk < ");

/** An ACTIVE LB with two listener/pool pairs of `members` members each. */
async function tree(members: number) {
  const listeners = [0, 1].map((i) => ({
    protocol: "HTTP",
    protocol_port: 80 + i,
    default_pool: {
      name: `p${i}`,
      protocol: "HTTP",
      lb_algorithm: "ROUND_ROBIN",
      members: Array.from({ length: members }, (_, k) => ({
        address: `10.${i}.${Math.floor(k / 250)}.${(k % 250) + 1}`,
        protocol_port: 80,
      })),
    },
  }));
  const res = await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, listeners } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await t.settle();
  const lb = (await t.call("GET", `${LBS}/${res.body.loadbalancer.id}`)).body.loadbalancer;
  return { lbId: lb.id as string, poolId: lb.pools[0].id as string, listenerId: lb.listeners[0].id as string };
}

beforeAll(async () => {
  t = await inProcessApp({}, { decorateClient: (client) => addMetering(client, meter) });
  // Every execution starts in the meter's "flow" scope, so a flow's requests are told from the API's.
  const start = t.engine.start.bind(t.engine);
  t.engine.start = (flow, name, input) => meter.scope("flow", () => start(flow, name, input));
});

describe("reads that do not grow with the tree", () => {
  it("GET of a load balancer is one GetItem of one item, whatever its tree holds; its listeners and pools are on it", async () => {
    for (const size of [1, 60]) {
      const { lbId } = await tree(size);
      let shown: Record<string, unknown> = {};
      const use = await metered(async () => (shown = (await t.call("GET", `${LBS}/${lbId}`)).body.loadbalancer));
      expect(use.api.map((r) => r.op)).toEqual(["GetItem"]);
      expect(items(use.api)).toBe(1);
      expect((shown.listeners as unknown[]).length).toBe(2);
      expect((shown.pools as unknown[]).length).toBe(2);
    }
  });

  it("a list page reads its index Queries only, no item per listed load balancer", async () => {
    await tree(1);
    const use = await metered(async () => expect((await t.call("GET", `${LBS}?limit=100`)).status).toBe(200));
    expect(requests(use.api, (r) => r.op !== "Query" || !/^by(Project|Shard) /.test(r.target))).toBe(0);
  });

  it("a member create reads its pool's part of the tree: the same requests and items for a pool of 1 and of 60, and its flow reads the tree once", async () => {
    const counts = [];
    for (const size of [1, 60]) {
      const { poolId } = await tree(size);
      const use = await metered(async () =>
        expect(
          (await t.call("POST", `/v2/lbaas/pools/${poolId}/members`, { member: { address: "192.0.2.50", protocol_port: 80 } })).status,
        ).toBe(201),
      );
      // The pool's pointer and item are read once: the route's lookup (routes/children.ts, scopeLb)
      // hands the pool's LB to the create, which read them again before (6 requests then).
      expect(gets(use.api)).toEqual([
        ["ID#/ID", 1],
        ["LB#/POOL#", 1],
      ]);
      expect(requests(use.api)).toBe(4);
      expect(requests(use.api, wholeTree)).toBe(0);
      expect(requests(use.flow, wholeTree)).toBe(1);
      counts.push({ requests: requests(use.api), items: items(use.api) });
    }
    expect(counts[1]).toEqual(counts[0]);
  });

  it("a request under a pool or an L7 policy reads its parent's pointer and item once: member list and batch update, rule create and list", async () => {
    const { poolId, listenerId } = await tree(1);
    /** The GetItems of the parent's pointer and of its item (what the route's lookup reads). */
    const parentReads = (rows: MeterRow[], item: string) => [
      requests(rows, (r) => r.op === "GetItem" && r.target === "ID#/ID"),
      requests(rows, (r) => r.op === "GetItem" && r.target === item),
    ];
    const list = await metered(async () => expect((await t.call("GET", `/v2/lbaas/pools/${poolId}/members`)).status).toBe(200));
    expect(parentReads(list.api, "LB#/POOL#")).toEqual([1, 1]);
    const members = [{ address: "10.0.0.1", protocol_port: 80 }];
    const batch = await metered(async () =>
      expect((await t.call("PUT", `/v2/lbaas/pools/${poolId}/members`, { members })).status).toBe(202),
    );
    expect(parentReads(batch.api, "LB#/POOL#")).toEqual([1, 1]);

    const policy = await t.call("POST", "/v2/lbaas/l7policies", { l7policy: { listener_id: listenerId, action: "REJECT" } });
    expect(policy.status, JSON.stringify(policy.body)).toBe(201);
    await t.settle();
    const rules = `/v2/lbaas/l7policies/${policy.body.l7policy.id}/rules`;
    const create = await metered(async () =>
      expect((await t.call("POST", rules, { rule: { type: "PATH", compare_type: "STARTS_WITH", value: "/api" } })).status).toBe(201),
    );
    expect(parentReads(create.api, "LB#/L7POLICY#")).toEqual([1, 1]);
    const listed = await metered(async () => expect((await t.call("GET", rules)).status).toBe(200));
    expect(parentReads(listed.api, "LB#/L7POLICY#")).toEqual([1, 1]);
  });

  it("a listener update reads the structure, not the members; its flow finishes by its change set (one tree read: the configuration push)", async () => {
    const small = await tree(1);
    const big = await tree(60);
    const read = [];
    for (const { listenerId } of [small, big]) {
      const use = await metered(async () =>
        expect((await t.call("PUT", `/v2/lbaas/listeners/${listenerId}`, { listener: { name: "renamed" } })).status).toBe(200),
      );
      expect(requests(use.api, wholeTree)).toBe(0);
      expect(requests(use.flow, wholeTree)).toBe(1);
      read.push(items(use.api));
    }
    expect(read[1]).toBe(read[0]);
  });
});

/**
 * The flows' DynamoDB requests and capacity units of member changes that move no network (members with
 * no subnet, or on the VIP's), measured with this same test at beb2914, before the member flows computed
 * network deltas: the deltas cost nothing when nothing moves (they read what the configuration push reads).
 */
const BEFORE_DELTAS: Record<string, string[]> = {
  "member create": [
    "GetItem LB#/LB requests=3 read=3 write=0",
    "Query LB# [pk = :pk AND begins_with(sk, :p)] requests=2 read=2 write=0",
    "Query LB# [pk = :pk AND sk < :trail] requests=1 read=3 write=0",
    "TransactWriteItems  requests=1 read=0 write=19",
    "UpdateItem LB#/LB requests=1 read=0 write=8",
    "UpdateItem LB#/~FLOW# requests=1 read=0 write=1",
  ],
  "member delete": [
    "GetItem LB#/LB requests=3 read=3 write=0",
    "Query LB# [pk = :pk AND begins_with(sk, :p)] requests=2 read=2 write=0",
    "Query LB# [pk = :pk AND sk < :trail] requests=1 read=3 write=0",
    "TransactWriteItems  requests=2 read=0 write=31",
    "UpdateItem LB#/~FLOW# requests=1 read=0 write=1",
  ],
  "batch update": [
    "GetItem LB#/LB requests=3 read=3 write=0",
    "Query LB# [pk = :pk AND begins_with(sk, :p)] requests=2 read=2 write=0",
    "Query LB# [pk = :pk AND sk < :trail] requests=1 read=3 write=0",
    "TransactWriteItems  requests=2 read=0 write=37",
    "UpdateItem LB#/~FLOW# requests=1 read=0 write=1",
  ],
  "cross-pool update": [
    "DeleteItem LB#/CHANGESET# requests=1 read=0 write=2",
    "GetItem LB#/CHANGESET# requests=2 read=2 write=0",
    "GetItem LB#/LB requests=5 read=5 write=0",
    "Query LB# [pk = :pk AND begins_with(sk, :p)] requests=3 read=3 write=0",
    "Query LB# [pk = :pk AND sk < :trail] requests=1 read=4 write=0",
    "TransactGetItems  requests=1 read=2 write=0",
    "TransactWriteItems  requests=3 read=0 write=78",
    "UpdateItem LB#/~FLOW# requests=1 read=0 write=1",
  ],
};

describe("member changes that move no network", () => {
  it("make the flow requests and use the capacity units they did before the network deltas", async () => {
    const { lbId, poolId } = await tree(3);
    const pools = (await t.call("GET", `/v2/lbaas/pools?loadbalancer_id=${lbId}`)).body.pools as { id: string }[];
    const other = pools.find((p) => p.id !== poolId)!.id;
    const rows = (use: { flow: MeterRow[] }) =>
      use.flow
        .map((r) => `${r.op} ${r.target} requests=${r.counts.requests} read=${r.counts.computedRead} write=${r.counts.computedWrite}`)
        .sort();
    const seen: Record<string, string[]> = {};
    let memberId = "";
    seen["member create"] = rows(
      await metered(async () => {
        const r = await t.call("POST", `/v2/lbaas/pools/${poolId}/members`, {
          member: { address: "192.0.2.50", protocol_port: 80, subnet_id: SUBNET },
        });
        expect(r.status).toBe(201);
        memberId = r.body.member.id;
      }),
    );
    seen["member delete"] = rows(
      await metered(async () => expect((await t.call("DELETE", `/v2/lbaas/pools/${poolId}/members/${memberId}`)).status).toBe(204)),
    );
    seen["batch update"] = rows(
      await metered(async () =>
        expect(
          (await t.call("PUT", `/v2/lbaas/pools/${poolId}/members`, { members: [{ address: "192.0.2.60", protocol_port: 80 }] })).status,
        ).toBe(202),
      ),
    );
    seen["cross-pool update"] = rows(
      await metered(async () =>
        expect(
          (
            await t.call("PUT", "/v2/lbaas/pools/members", {
              members: [
                { pool_id: poolId, address: "192.0.2.61", protocol_port: 80 },
                { pool_id: other, address: "192.0.2.62", protocol_port: 80 },
              ],
            })
          ).status,
        ).toBe(202),
      ),
    );
    expect(seen).toEqual(BEFORE_DELTAS);
  });
});
