// API benchmark (`npm run bench:api`): latency, throughput, DynamoDB use and AWS cost of each Octavia API operation and its flow, on small and big trees and tables, checked against the performance budgets.
//
// The local stack runs in this process (DynamoDB Local in memory, startRuntime with its DynamoDB
// clients metered, the no-op data plane), so that the DynamoDB meter (@ottava/db/testing/metering)
// can be read: every request of a flow is counted under the scope "flow" (its execution is started
// inside that scope), every other one under the API request that caused it. The health check and
// housekeeping run on hour-long timers, so that nothing else touches DynamoDB while an operation is
// measured. HTTP goes through node:http on loopback without keep-alive (a new connection per
// request), as the Octavia comparison was measured. A mutation's latency runs from sending it until
// its flow has ended (the load balancer ACTIVE again), seen in process rather than by polling.
//
// Reads are timed in RUNS runs at each concurrency, each alternating with a run of its floor (the
// same DynamoDB reads alone): latency percentiles and throughput (requests answered per second of the
// run's wall time) are the median of the runs, since this machine is shared and noisy. Mutations are
// timed in one run. The name lookup and the sorted list (slow until the name index lands) take few
// samples, and stop after the first run that overran its time cap.
//
// Sizes: a tree of 10 members (1 listener, 1 pool) and one of 1000 (20 listeners, 20 pools of 50),
// a table of 100 load balancers and one of 10,000. One tree of each size is created through the API;
// the others are copies of it written straight into the table (BatchWriteItem; see copyTree: every
// item of the template's partition, ids replaced, index attributes recomputed for records, the id
// pointers the template had, quota usage). The reads and the LB creates are measured first, at 100
// and then at 10,000 load balancers (the same first page of the list at both sizes); the mutations
// last, taking the trees in turn (each adds to the tree it uses: a listener, a pool, a member; a
// small tree's cross-pool update, 30 members, so each is used once).
//
// Cost model: while an operation is counted, the bench also notes the API request's time in the
// server (its Lambda's duration), each flow's Step Functions state transitions (states entered and
// retries, from the local runner's event log of the real ASL: Map iterations included) and each task
// invocation's time (a task Lambda's duration); with the DynamoDB units AWS would bill, it prices one
// million calls and one flow at the list prices in PRICES (./cost.ts: assumed, not measured), beside the
// always-on servers of an Octavia deployment.
//
//   npm run bench:api              # the issue's sizes (about 20 minutes on 2 cores today, most of it the lookups)
//   npm run bench:api -- --quick   # 200-member trees, a table of 1,000, fewer samples
//
// The exit code is 1 when a budget is missed (after everything is printed); a retired target is printed, never fails.
// The absolute time budgets (the list page's requests a second, the lookups' p50) are scaled to this machine (machineScale).
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { ExecutionDescription } from "@ottava/core";
import type { DynamoMeter, MeterCounts, MeterRow } from "@ottava/db/testing/metering";
import type { Runtime, TaskDecorator } from "@ottava/local";
import {
  benchStackSettings,
  checkLines,
  countFlows,
  flag,
  listenersWithPools,
  machineScale,
  noFlowUse,
  pct,
  sleep,
  SUBNET,
  timeServer,
  type Check,
  type FlowUse,
} from "./common";
import {
  cents,
  dollars,
  flowDollars,
  healthManagerMonthly,
  lambdaMemory,
  noCounts,
  OCTAVIA_SERVERS,
  PRICES,
  serversMonthly,
  type LambdaMemory,
} from "./cost";

// Before the app's modules load: no metric lines on stdout.
process.env.POWERTOOLS_METRICS_DISABLED ??= "true";

const QUICK = flag("quick");
const PROJECT = "bench-project";
const TABLE = "ottava";
const POOLS = 20;
const SMALL_MEMBERS = 10;
const BIG_MEMBERS = QUICK ? 200 : 1000;
const SMALL_TABLE = 100;
const BIG_TABLE = QUICK ? 1000 : 10_000;
/** Trees of each size in the table: one per client, so that 10 clients never wait on each other's lock. */
const BIG_TREES = 10;
const CLIENTS = [1, 10] as const;
/** Samples per measurement at 1 and at 10 clients (in total), unless its time is up first (then at least MIN_SAMPLES). */
const READ_SAMPLES: Record<1 | 10, number> = QUICK ? { 1: 40, 10: 100 } : { 1: 150, 10: 400 };
const MUTATION_SAMPLES: Record<1 | 10, number> = QUICK ? { 1: 4, 10: 10 } : { 1: 20, 10: 50 };
const MIN_SAMPLES: Record<1 | 10, number> = { 1: 10, 10: 20 };
/** Time for one measurement at one concurrency, ms. */
const TIME_CAP = QUICK ? 5_000 : 15_000;
/** Counting runs per operation (1 client, metered). */
const COUNT_RUNS = { read: 3, mutation: 2 };
/** Members a cross-pool update names. */
const CROSS_POOL_MEMBERS = 40;
/** Budgets on latency: the big size's p50 within this factor of the small one's. */
const LATENCY_BUDGET = 1.25;
/** Timed runs of each read measurement (alternating with its floor's); the median of the runs is reported. */
const RUNS = 3;
/**
 * GET one LB at 10 clients against its floor (a bare GetItem loop): a regression budget below the
 * measured 0.47–0.55×; and the former target of 2/3, retired (a new HTTP connection per request sets
 * that floor: docs/benchmarks.md), still printed with its ratio.
 */
const GET_FLOOR_SHARE = 0.4;
const GET_FLOOR_SHARE_RETIRED = 2 / 3;
/**
 * The list page of 100 at 10 clients: at least this many requests a second on the machine the budgets
 * were set on (divided by machineScale here), and this share of its floor's.
 */
const LIST_RPS = 55;
const LIST_FLOOR_SHARE = 1 / 2;
/**
 * The name lookup and the sorted list: each answers within this at the big table, ms, on the machine
 * the budgets were set on (times machineScale here) (p50 of one client's requests, as the issue's 29 s
 * and 37 s were single requests; 10 clients are shown, not budgeted: ten sorts at once each read the
 * whole table's index items).
 */
const LOOKUP_BUDGET_MS = 1000;
/** LB list requests that want a name index: a name that matches nothing, and the list sorted by name. */
const LOOKUPS = [
  { op: "name lookup, no match (limit 10)", path: "/v2/lbaas/loadbalancers?name=bench-no-such-name&limit=10" },
  { op: "list sorted by name desc (limit 10)", path: "/v2/lbaas/loadbalancers?sort=name:desc&limit=10" },
] as const;
/** Their samples, least samples and time cap per run (few: each reads the whole table today), and counting runs. */
const LOOKUP_TIMING: Timing = {
  samples: { 1: 5, 10: 20 },
  min: { 1: 1, 10: 10 },
  cap: QUICK ? 2_000 : 10_000,
  countRuns: 1,
  stopWhenSlow: true,
};

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const log = (line: string) => process.stderr.write(`${line}\n`);
const began = Date.now();
const elapsed = () => `${((Date.now() - began) / 1000).toFixed(0)} s`;

// ---- the stack and its clients ----------------------------------------------------------------

interface Bench {
  runtime: Runtime;
  meter: DynamoMeter;
  host: string;
  port: number;
  client: DynamoDBClient;
  doc: DynamoDBDocumentClient;
  /** Executions started per load balancer id (their ends), in start order. */
  flows: Map<string, Promise<ExecutionDescription | undefined>[]>;
  stop(): Promise<void>;
}

async function startBench(decorateTask: TaskDecorator): Promise<Bench> {
  const { loadConfig } = await import("@ottava/core");
  const { startDynamoDbLocal, startRuntime } = await import("@ottava/local");
  const { createClients } = await import("@ottava/db");
  const { DynamoMeter, addMetering } = await import("@ottava/db/testing/metering");
  const dataDir = mkdtempSync(join(tmpdir(), "ottava-bench-"));
  const dynamo = await startDynamoDbLocal({ inMemory: true, dataDir });
  try {
    const config = loadConfig({ ...benchStackSettings(dynamo.endpoint), OTTAVA_TABLE_NAME: TABLE });
    // Every DynamoDB client of the runtime but its journal's, and the bench's own, carry the meter.
    const meter = new DynamoMeter();
    const metered = (client: DynamoDBClient) => addMetering(client, meter);
    const runtime = await startRuntime({ config, inMemory: true, dataDir, decorateClient: metered, decorateTask });
    meter.active = false;
    const url = new URL(runtime.url);
    const flows = new Map<string, Promise<ExecutionDescription | undefined>[]>();
    // Every execution is started inside the meter's "flow" scope, and its end is noted by load balancer.
    const engine = runtime.engine;
    const start = engine.start.bind(engine);
    engine.start = (flow, name, input) =>
      meter.scope("flow", async () => {
        const started = await start(flow, name, input);
        const lbId = UUID.exec(name)?.[0];
        if (!lbId) throw new Error(`execution ${name} names no load balancer`);
        const list = flows.get(lbId) ?? [];
        list.push(engine.wait(started.executionArn));
        flows.set(lbId, list);
        return started;
      });
    const { client, doc } = createClients(dynamo.endpoint, metered);
    return {
      runtime,
      meter,
      host: url.hostname,
      port: Number(url.port),
      client,
      doc,
      flows,
      async stop() {
        await runtime.stop();
        await dynamo.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await dynamo.stop();
    throw e;
  }
}

/** One HTTP request on a new connection (no keep-alive). */
function call(b: Bench, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((ok, fail) => {
    const req = httpRequest(
      {
        host: b.host,
        port: b.port,
        method,
        path,
        agent: false,
        headers: {
          connection: "close",
          "x-project-id": PROJECT,
          ...(payload === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          try {
            ok({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
          } catch (e) {
            fail(e);
          }
        });
        res.on("error", fail);
      },
    );
    req.on("error", fail);
    req.end(payload);
  });
}

async function read(b: Bench, path: string): Promise<any> {
  const res = await call(b, "GET", path);
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A mutating request, then its flows' ends: fails unless it was accepted and every flow succeeded. */
async function mutate(b: Bench, lbId: string | undefined, method: string, path: string, body: unknown): Promise<any> {
  const before = lbId ? (b.flows.get(lbId)?.length ?? 0) : 0;
  const res = await call(b, method, path, body);
  if (res.status < 200 || res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  const lb = lbId ?? res.body.loadbalancer.id;
  const ends = (b.flows.get(lb) ?? []).slice(before);
  if (ends.length === 0) throw new Error(`${method} ${path} started no flow`);
  for (const d of await Promise.all(ends)) {
    if (d?.status !== "SUCCEEDED") throw new Error(`${method} ${path}: flow ${d?.name} ${d?.status} ${d?.error ?? ""} ${d?.cause ?? ""}`);
  }
  return res.body;
}

// ---- trees: one through the API, copies in bulk -------------------------------------------------

interface Tree {
  lbId: string;
  /** Pool id → its members (address, port). */
  pools: { id: string; members: { address: string; port: number }[] }[];
  /** Listener ports in use. */
  ports: Set<number>;
  /** Used by a cross-pool update already (a small tree then holds 40 members). */
  crossPooled: boolean;
  uses: number;
  busy: boolean;
}

const address = (pool: number, k: number) => `10.${pool}.${Math.floor(k / 250)}.${(k % 250) + 1}`;

async function createTemplate(b: Bench, members: number, pools: number): Promise<Tree> {
  const per = members / pools;
  const listeners = listenersWithPools(pools, (p) =>
    Array.from({ length: per }, (_, k) => ({ address: address(p, k), protocol_port: 80 })),
  );
  const made = await mutate(b, undefined, "POST", "/v2/lbaas/loadbalancers", {
    loadbalancer: { name: `bench-${members}`, vip_subnet_id: SUBNET, listeners },
  });
  return treeOf(b, made.loadbalancer.id);
}

async function treeOf(b: Bench, lbId: string): Promise<Tree> {
  const lb = (await read(b, `/v2/lbaas/loadbalancers/${lbId}`)).loadbalancer;
  const pools = await Promise.all(
    lb.pools.map(async (p: { id: string }) => ({
      id: p.id,
      members: (await read(b, `/v2/lbaas/pools/${p.id}/members?limit=1000`)).members.map((m: any) => ({
        address: m.address,
        port: m.protocol_port,
      })),
    })),
  );
  const ports = new Set<number>();
  for (const l of lb.listeners) ports.add((await read(b, `/v2/lbaas/listeners/${l.id}`)).listener.protocol_port);
  return { lbId, pools, ports, crossPooled: false, uses: 0, busy: false };
}

type Db = typeof import("@ottava/db");

/** A tree's record kind: the load balancer's, or one of TREE_KINDS (with an id); undefined for any other item of the partition. */
function recordKind(db: Db, item: Record<string, unknown>) {
  if (typeof item.id !== "string") return undefined;
  if (item.sk === db.LB_SK || item.kind === db.LOADBALANCER.kind) return db.LOADBALANCER;
  return db.TREE_KINDS[String(item.kind)];
}

/** What copyTree copies of a template tree. */
interface Template {
  tree: Tree;
  /** Every item of its partition below the flow trail, as stored: records and whatever else the layout keeps there. */
  items: Record<string, unknown>[];
  /** The id pointers (`ID#<id>`) of its records that have one, by record id. */
  pointers: Map<string, Record<string, unknown>>;
  /** The ids the tree owns, replaced in every copy: its records', those in its items' keys, and the ports and server it holds. */
  owned: Set<string>;
}

/**
 * Reads a template tree as stored: its partition (not its flow trail), and the id pointers of its
 * records. Warns about items elsewhere in the table that name the tree's ids (other than those
 * pointers): copies would lack them.
 */
async function templateOf(b: Bench, tree: Tree): Promise<Template> {
  const db = await import("@ottava/db");
  const { BatchGetCommand, ScanCommand } = await import("@aws-sdk/lib-dynamodb");
  const items: Record<string, unknown>[] = await db.queryAll(b.doc, {
    TableName: TABLE,
    KeyConditionExpression: "pk = :pk AND sk < :trail",
    ExpressionAttributeValues: { ":pk": db.treePk(tree.lbId), ":trail": db.TRAIL_BOUND },
    ConsistentRead: true,
  });
  const owned = new Set<string>([tree.lbId]);
  const uuids = (text: string) => text.match(new RegExp(UUID.source, "g")) ?? [];
  for (const item of items) {
    if (recordKind(db, item)) owned.add(String(item.id));
    for (const id of uuids(`${String(item.pk)} ${String(item.sk)}`)) owned.add(id);
    for (const [k, v] of Object.entries(item))
      if ((k.endsWith("_port_id") || k === "compute_id") && typeof v === "string" && UUID.test(v)) owned.add(v);
  }
  // The pointers the records have (the layout decides which have one).
  const pointers = new Map<string, Record<string, unknown>>();
  const ids = items.filter((i) => recordKind(db, i)).map((i) => String(i.id));
  for (let i = 0; i < ids.length; i += 100) {
    let keys: Record<string, unknown>[] = ids.slice(i, i + 100).map((id) => db.pointerKey(id));
    while (keys.length) {
      const out = await b.doc.send(new BatchGetCommand({ RequestItems: { [TABLE]: { Keys: keys, ConsistentRead: true } } }));
      for (const p of out.Responses?.[TABLE] ?? []) pointers.set(String(p.pk).slice("ID#".length), p);
      keys = (out.UnprocessedKeys?.[TABLE]?.Keys ?? []) as Record<string, unknown>[];
      if (keys.length) await sleep(20);
    }
  }
  // Anything else naming the tree (the table holds only the templates yet: one Scan is cheap).
  const pattern = new RegExp([...owned].join("|"));
  const elsewhere = new Map<string, number>();
  let start: Record<string, unknown> | undefined;
  do {
    const out = await b.doc.send(new ScanCommand({ TableName: TABLE, ExclusiveStartKey: start }));
    for (const item of out.Items ?? []) {
      const pk = String(item.pk);
      if (pk === db.treePk(tree.lbId) || (pk.startsWith("ID#") && pointers.has(pk.slice(3)))) continue;
      if (!pattern.test(JSON.stringify(item))) continue;
      const family = pk.replace(new RegExp(UUID.source, "g"), "<id>");
      elsewhere.set(family, (elsewhere.get(family) ?? 0) + 1);
    }
    start = out.LastEvaluatedKey;
  } while (start);
  if (elsewhere.size) {
    log(
      `  WARNING: copyTree copies the tree's partition and id pointers only; other items name the tree ${tree.lbId}: ${[...elsewhere].map(([f, n]) => `${n} × ${f}`).join(", ")}`,
    );
  }
  return { tree, items, pointers, owned };
}

/**
 * Writes `count` copies of a template tree, every item of its partition copied generically: the
 * tree's ids (template.owned) replaced by new ones everywhere (keys, attributes, lists of child ids),
 * as text; for records (the load balancer, and kinds in TREE_KINDS), `created_at` spread over time
 * (so that lists are ordered as if created one by one) and the index attributes recomputed by the
 * layout's own functions; every other item (uniqueness items and the like) as it is, ids replaced.
 * A record gets an id pointer when the template's had one: the template's, ids replaced, pointing at
 * the copy's keys. Raises the quota usage by the records added. Answers the copies' trees.
 */
async function copyTree(b: Bench, template: Template, count: number, since: number): Promise<Tree[]> {
  const db = await import("@ottava/db");
  const { usageUpdate } = await import("@ottava/db/usage");
  const { BatchWriteCommand, UpdateCommand } = await import("@aws-sdk/lib-dynamodb");
  const pattern = new RegExp([...template.owned].join("|"), "g");
  const json = template.items.map((i) => JSON.stringify(i));
  const pointerJson = new Map([...template.pointers].map(([id, p]) => [id, JSON.stringify(p)]));
  const puts: Record<string, unknown>[] = [];
  const trees: Tree[] = [];
  for (let n = 0; n < count; n++) {
    const ids = new Map([...template.owned].map((id) => [id, randomUUID()]));
    const replace = (text: string) => JSON.parse(text.replace(pattern, (id) => ids.get(id)!)) as Record<string, unknown>;
    const createdAt = new Date(since + n * 1000).toISOString();
    template.items.forEach((original, i) => {
      const item = replace(json[i]!);
      const kind = recordKind(db, original);
      if (kind) {
        for (const k of db.KEY_ATTRIBUTES) if (k !== "pk" && k !== "sk") delete item[k];
        item.created_at = createdAt;
        const rec = item as { id: string; project_id: string; created_at: string };
        Object.assign(item, db.indexAttributes(kind, rec, String(item[kind.statusField])));
        if (kind === db.AMPHORA) {
          if (typeof item.cert_expiration === "string") Object.assign(item, db.certAttributes(rec.id, item.cert_expiration));
          if (typeof item.last_heartbeat === "string") Object.assign(item, db.heartbeatAttributes(rec.id, item.last_heartbeat));
        }
        const pointer = pointerJson.get(String(original.id));
        if (pointer) puts.push({ ...replace(pointer), ref_pk: item.pk, ref_sk: item.sk });
      }
      puts.push(item);
    });
    trees.push({
      lbId: ids.get(template.tree.lbId)!,
      pools: template.tree.pools.map((p) => ({ id: ids.get(p.id)!, members: p.members.map((m) => ({ ...m })) })),
      ports: new Set(template.tree.ports),
      crossPooled: false,
      uses: 0,
      busy: false,
    });
  }
  // 25 items a BatchWriteItem, 8 at a time; what DynamoDB leaves unprocessed is sent again.
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < puts.length; i += 25) batches.push(puts.slice(i, i + 25));
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < batches.length) {
        let requests = batches[next++]!.map((Item) => ({ PutRequest: { Item } }));
        while (requests.length) {
          const out = await b.doc.send(new BatchWriteCommand({ RequestItems: { [TABLE]: requests } }));
          requests = (out.UnprocessedItems?.[TABLE] ?? []) as typeof requests;
          if (requests.length) await sleep(20);
        }
      }
    }),
  );
  const of = (kind: string) => template.items.filter((i) => recordKind(db, i)?.kind === kind).length * count;
  const usage = usageUpdate(TABLE, {
    project: PROJECT,
    delta: { load_balancer: count, listener: of("listener"), pool: of("pool"), member: of("member") },
  });
  if (usage) await b.doc.send(new UpdateCommand(usage));
  return trees;
}

// ---- measuring ------------------------------------------------------------------------------

type Clients = (typeof CLIENTS)[number];

/** DynamoDB use of one request (averaged over the counting runs): the meter's counts, and whole-tree reads. */
interface Use extends MeterCounts {
  /** Whole-tree reads: Queries of a load balancer's partition not limited to a prefix (first pages only). */
  treeReads: number;
  /** Requests that read one listed object: GetItems, and Queries of a load balancer's partition. */
  perObjectReads: number;
}

/** A timed run: each request's latency (ms), and the requests answered per second of the run's wall time. */
interface Run {
  times: number[];
  rps: number;
  wallMs: number;
}

interface Measurement {
  op: string;
  size: string;
  latency: Partial<Record<Clients, Run[]>>;
  floor: Partial<Record<Clients, Run[]>>;
  api?: Use;
  flow?: Use;
  /** The API request's own time in the server (from its arrival to the end of its response), ms: each sample at 1 client. */
  serverMs: number[];
  flowUse?: FlowUse;
  /** Requests (or their flows) that failed while timed. */
  failures: string[];
}

const results: Measurement[] = [];

function useOf(rows: MeterRow[], scope: string, runs: number): Use {
  const u: Use = {
    requests: 0,
    items: 0,
    reportedRead: 0,
    reportedWrite: 0,
    computedRead: 0,
    computedWrite: 0,
    computedIndexWrite: 0,
    estimated: 0,
    errors: 0,
    treeReads: 0,
    perObjectReads: 0,
  };
  for (const r of rows.filter((r) => r.scope === scope)) {
    const c = r.counts;
    u.requests += c.requests / runs;
    u.items += c.items / runs;
    u.reportedRead += c.reportedRead / runs;
    u.reportedWrite += c.reportedWrite / runs;
    u.computedRead += c.computedRead / runs;
    u.computedWrite += c.computedWrite / runs;
    u.computedIndexWrite += c.computedIndexWrite / runs;
    u.estimated += c.estimated / runs;
    u.errors += c.errors / runs;
    const partitionQuery = r.op === "Query" && r.target.startsWith("LB# ");
    // A whole tree is the partition below the flow trail (`sk < "~"`); a pool's members (`begins_with`)
    // and the structure (`BETWEEN` its two ranges) are parts of it.
    if (partitionQuery && r.target.includes("sk < ") && !r.target.endsWith("(next page)")) u.treeReads += c.requests / runs;
    if (r.op === "GetItem" || r.op === "BatchGetItem" || (partitionQuery && !r.target.endsWith("(next page)")))
      u.perObjectReads += c.requests / runs;
  }
  return u;
}

/** Server-side times of the API requests answered while `into` is set (the counting runs and the timed runs at 1 client). */
const serverTimes = timeServer();
/** The flows started while `into` is set are counted into it (the counting runs). */
let flows: Awaited<ReturnType<typeof countFlows>>;

/**
 * Counts one operation: `runs` requests, one at a time, with the meter on; each run's API and flow
 * requests kept apart, and the API request's server time, its flows' transitions and task times
 * noted. Answers the requests of the last run as sent (for floors).
 */
async function count(b: Bench, m: Measurement, runs: number, once: (run: number) => Promise<void>): Promise<Record<string, unknown>[][]> {
  const sent: Record<string, unknown>[][] = [];
  const use = noFlowUse();
  b.meter.reset();
  b.meter.active = true;
  serverTimes.into = m.serverMs;
  flows.into = use;
  try {
    for (let run = 0; run < runs; run++) {
      const mine: Record<string, unknown>[] = [];
      const stop = b.meter.listen((r) => {
        if (r.scope === "") mine.push({ op: r.op, input: r.input });
      });
      try {
        await once(run);
      } finally {
        stop();
      }
      sent.push(mine);
    }
  } finally {
    b.meter.active = false;
    serverTimes.into = undefined;
    flows.into = undefined;
  }
  const rows = b.meter.rows();
  m.api = useOf(rows, "", runs);
  const flow = useOf(rows, "flow", runs);
  if (flow.requests > 0) m.flow = flow;
  if (use.executions > 0) {
    m.flowUse = {
      executions: use.executions / runs,
      transitions: use.transitions / runs,
      tasks: use.tasks / runs,
      taskMs: use.taskMs / runs,
      taskBilledMs: use.taskBilledMs / runs,
    };
  }
  return sent;
}

/** How a measurement is timed: samples at 1 and 10 clients (in total), least samples, time cap (ms) per run, counting runs. */
interface Timing {
  samples: Record<Clients, number>;
  min: Record<Clients, number>;
  cap: number;
  countRuns: number;
  /** No further run after one that overran its cap (a slow read, timed once). */
  stopWhenSlow?: boolean;
}

const READ_TIMING: Timing = { samples: READ_SAMPLES, min: MIN_SAMPLES, cap: TIME_CAP, countRuns: COUNT_RUNS.read };
const MUTATION_TIMING: Timing = { samples: MUTATION_SAMPLES, min: MIN_SAMPLES, cap: TIME_CAP, countRuns: COUNT_RUNS.mutation };

/**
 * One run: `total` requests from `clients` concurrent clients (each its own sequence), fewer when the
 * time cap has passed (but at least the least samples, or `total` if smaller).
 */
async function load(m: Measurement, clients: Clients, timing: Timing, once: (client: number, i: number) => Promise<void>): Promise<Run> {
  const times: number[] = [];
  const per = Math.ceil(timing.samples[clients] / clients);
  const least = Math.min(per, Math.ceil(timing.min[clients] / clients));
  const t0 = process.hrtime.bigint();
  const until = Date.now() + timing.cap;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; i < per && (i < least || Date.now() < until); i++) {
        const t0 = process.hrtime.bigint();
        try {
          await once(c, i);
          times.push(Number(process.hrtime.bigint() - t0) / 1e6);
        } catch (e) {
          // A failed request is reported, not timed.
          m.failures.push(e instanceof Error ? e.message : String(e));
        }
      }
    }),
  );
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  return { times, rps: times.length / (wallMs / 1000), wallMs };
}

const median = (xs: number[]) => pct(xs, 0.5);
/** A percentile of the runs: the median of each run's. */
const runPct = (runs: Run[] | undefined, q: number) => (runs?.length ? median(runs.map((r) => pct(r.times, q))) : NaN);
/** Throughput of the runs: the median of each run's. */
const runRps = (runs: Run[] | undefined) => (runs?.length ? median(runs.map((r) => r.rps)) : NaN);
const samples = (runs: Run[] | undefined) => (runs ?? []).reduce((n, r) => n + r.times.length, 0);

function measurement(op: string, size: string): Measurement {
  const m: Measurement = { op, size, latency: {}, floor: {}, serverMs: [], failures: [] };
  results.push(m);
  return m;
}

/**
 * A read: counted, then timed at 1 and 10 clients in RUNS runs each, each run followed by one of its
 * floor (the same DynamoDB reads alone, built from the last counting run's requests) when it has one.
 */
async function measureRead(
  b: Bench,
  op: string,
  size: string,
  path: string,
  floor?: (sent: Record<string, unknown>[]) => Promise<() => Promise<void>>,
  timing = READ_TIMING,
) {
  const m = measurement(op, size);
  log(`  ${op} (${size}) at ${elapsed()}`);
  const sent = await count(b, m, timing.countRuns, async () => void (await read(b, path)));
  const bare = floor ? await floor(sent[sent.length - 1]!) : undefined;
  for (const c of CLIENTS) {
    const runs: Run[] = (m.latency[c] = []);
    const floors: Run[] = (m.floor[c] = []);
    for (let i = 0; i < RUNS; i++) {
      if (c === 1) serverTimes.into = m.serverMs;
      try {
        runs.push(await load(m, c, timing, async () => void (await read(b, path))));
      } finally {
        serverTimes.into = undefined;
      }
      if (bare) floors.push(await load(m, c, timing, bare));
      if (timing.stopWhenSlow && runs[i]!.wallMs > timing.cap) break;
    }
  }
  return m;
}

/**
 * A mutation, each request on a target `take` hands out (a tree no other client is working on, the
 * least used one): counted, then timed at 1 and 10 clients (one run each).
 */
async function measureMutation<T>(
  b: Bench,
  op: string,
  size: string,
  take: () => { target: T; release(): void },
  once: (target: T, n: number) => Promise<void>,
) {
  const m = measurement(op, size);
  log(`  ${op} (${size}) at ${elapsed()}`);
  let n = 0;
  const run = async () => {
    const { target, release } = take();
    try {
      await once(target, n++);
    } finally {
      release();
    }
  };
  await count(b, m, MUTATION_TIMING.countRuns, run);
  for (const c of CLIENTS) {
    if (c === 1) serverTimes.into = m.serverMs;
    try {
      m.latency[c] = [await load(m, c, MUTATION_TIMING, run)];
    } finally {
      serverTimes.into = undefined;
    }
  }
  return m;
}

/** Hands out the least used tree among those `eligible` that no client is working on. */
function treesOf(list: Tree[], eligible: (t: Tree) => boolean = () => true) {
  return () => {
    const free = list.filter((t) => !t.busy && eligible(t));
    if (free.length === 0) throw new Error("no tree left to use");
    const t = free.reduce((a, c) => (c.uses < a.uses ? c : a));
    t.uses++;
    t.busy = true;
    return { target: t, release: () => (t.busy = false) };
  };
}

// ---- the operations -------------------------------------------------------------------------

/** The Queries a request made (`which` of them), sent again as they were, all at once. */
async function queriesFloor(
  b: Bench,
  sent: Record<string, unknown>[],
  which: (input: Record<string, unknown>) => boolean,
): Promise<() => Promise<void>> {
  const { QueryCommand } = await import("@aws-sdk/client-dynamodb");
  const queries = sent
    .filter((r) => r.op === "Query" && which(r.input as Record<string, unknown>))
    .map((r) => {
      const { ReturnConsumedCapacity: _asked, ...input } = r.input as Record<string, unknown>;
      return input;
    });
  return async () => void (await Promise.all(queries.map((q) => b.client.send(new QueryCommand(q as never)))));
}

async function reads(b: Bench, table: string, small: Tree[], big: Tree[], withStatus: boolean) {
  const n = sizeNames();
  const get = (t: Tree) => async () => {
    const { GetCommand } = await import("@aws-sdk/lib-dynamodb");
    return async () =>
      void (await b.doc.send(new GetCommand({ TableName: TABLE, Key: { pk: `LB#${t.lbId}`, sk: "LB" }, ConsistentRead: true })));
  };
  await measureRead(b, "GET one LB", `${n.smallTree}, ${table}`, `/v2/lbaas/loadbalancers/${small[0]!.lbId}`, get(small[0]!));
  await measureRead(b, "GET one LB", `${n.bigTree}, ${table}`, `/v2/lbaas/loadbalancers/${big[0]!.lbId}`, get(big[0]!));
  // The list's floor: its index Queries (the page itself), not what it reads per listed object.
  await measureRead(b, "list page of 100", table, "/v2/lbaas/loadbalancers?limit=100", (sent) =>
    queriesFloor(b, sent, (q) => q.IndexName !== undefined),
  );
  // The name lookup and the sorted list: no floor (what they should cost depends on the index to come).
  for (const l of LOOKUPS) await measureRead(b, l.op, table, l.path, undefined, LOOKUP_TIMING);
  if (withStatus) {
    for (const [t, size] of [
      [small[0]!, n.smallTree],
      [big[0]!, n.bigTree],
    ] as const) {
      await measureRead(b, "GET status tree", size, `/v2/lbaas/loadbalancers/${t.lbId}/status`, (sent) =>
        queriesFloor(b, sent, () => true),
      );
    }
  }
}

async function mutations(b: Bench, small: Tree[], big: Tree[]) {
  for (const [trees, members] of [
    [small, SMALL_MEMBERS],
    [big, BIG_MEMBERS],
  ] as const) {
    const size = `${members} members`;
    await measureMutation(b, "listener create → ACTIVE", size, treesOf(trees), async (t) => {
      let port = 9000;
      while (t.ports.has(port)) port++;
      t.ports.add(port);
      await mutate(b, t.lbId, "POST", "/v2/lbaas/listeners", {
        listener: { loadbalancer_id: t.lbId, protocol: "HTTP", protocol_port: port },
      });
    });
    await measureMutation(b, "pool create → ACTIVE", size, treesOf(trees), async (t, n) => {
      await mutate(b, t.lbId, "POST", "/v2/lbaas/pools", {
        pool: { loadbalancer_id: t.lbId, name: `bench-${n}`, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" },
      });
    });
    await measureMutation(b, "member create → ACTIVE", size, treesOf(trees), async (t, n) => {
      const pool = t.pools[0]!;
      const m = { address: `10.200.${Math.floor(n / 250)}.${(n % 250) + 1}`, port: 80 };
      pool.members.push(m);
      await mutate(b, t.lbId, "POST", `/v2/lbaas/pools/${pool.id}/members`, { member: { address: m.address, protocol_port: m.port } });
    });
    await measureMutation(b, "LB update → ACTIVE", size, treesOf(trees), async (t, n) => {
      await mutate(b, t.lbId, "PUT", `/v2/lbaas/loadbalancers/${t.lbId}`, { loadbalancer: { description: `bench update ${n}` } });
    });
    // 40 members named: as many as the tree has, spread over its pools (weights changed), the rest new;
    // additive only, so that the pools keep the members not named. Each small tree is used once.
    await measureMutation(
      b,
      `cross-pool update of ${CROSS_POOL_MEMBERS} members → ACTIVE`,
      size,
      treesOf(trees, (t) => members !== SMALL_MEMBERS || !t.crossPooled),
      async (t, n) => {
        const named: { pool_id: string; address: string; protocol_port: number; weight: number }[] = [];
        const perPool = Math.ceil(CROSS_POOL_MEMBERS / t.pools.length);
        for (const p of t.pools)
          for (const m of p.members.slice(0, perPool))
            if (named.length < CROSS_POOL_MEMBERS)
              named.push({ pool_id: p.id, address: m.address, protocol_port: m.port, weight: 2 + (n % 50) });
        for (let k = 0; named.length < CROSS_POOL_MEMBERS; k++) {
          const m = { address: `10.201.${k}.${(n % 250) + 1}`, port: 80 };
          t.pools[0]!.members.push(m);
          named.push({ pool_id: t.pools[0]!.id, address: m.address, protocol_port: m.port, weight: 1 });
        }
        t.crossPooled = true;
        await mutate(b, t.lbId, "PUT", "/v2/lbaas/pools/members?additive_only=true", { members: named });
      },
    );
  }
}

/** Load balancers created through the API so far (by the LB create measurements). */
let created = 0;

async function creates(b: Bench, table: string) {
  const none = () => ({ target: undefined, release: () => undefined });
  await measureMutation(b, "LB create → ACTIVE", table, none, async () => {
    await mutate(b, undefined, "POST", "/v2/lbaas/loadbalancers", { loadbalancer: { name: "bench-create", vip_subnet_id: SUBNET } });
    created++;
  });
}

// ---- report ---------------------------------------------------------------------------------

const ms = (x: number) => (Number.isNaN(x) ? "–" : x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : x.toFixed(0));
const num = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));
/** "1 request", "14 items". */
const counted = (x: number, word: string) => `${num(x)} ${word}${x === 1 ? "" : "s"}`;
const ratio = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? `${(a / b).toFixed(2)}×` : "–");
/** Requests a second. */
const rate = (x: number) => (Number.isFinite(x) ? (x < 10 ? x.toFixed(2) : x.toFixed(0)) : "–");
/** DynamoDB's figure, and AWS's where it differs. */
const units = (reported: number, computed: number) =>
  Math.abs(reported - computed) < 0.05 ? num(reported) : `${num(reported)} (AWS ${num(computed)})`;
const both = (api: number | undefined, flow: number | undefined, f: (x: number) => string = num) =>
  `${api === undefined ? "–" : f(api)} / ${flow === undefined ? "–" : f(flow)}`;

function report(): string[] {
  const out: string[] = [];
  const p = (s = "") => out.push(s);
  p(
    `Octavia API on the local stack (in process, DynamoDB Local in memory, no-op data plane), HTTP without keep-alive; ${QUICK ? "--quick sizes" : "the issue's sizes"}; run of ${((Date.now() - began) / 60000).toFixed(1)} min.`,
  );
  p(
    `Latency in ms; a mutation's runs until its flow has ended (ACTIVE). Floors: the same DynamoDB reads alone, at the same concurrency (GET: GetItem of the LB by key; list: the index Queries of the page; status: the Queries the request made; each floor's Queries sent at once).`,
  );
  p();
  p(
    `Reads: the median of ${RUNS} runs at each concurrency (each run's percentile, and its requests answered per second of wall time), fewer when a slow lookup overran its time cap; mutations: one run.`,
  );
  p();
  p(
    "| Operation | Size | n (1 / 10 clients) | runs | p50, 1 client | p99, 1 client | p50, 10 clients | p99, 10 clients | req/s, 10 clients | floor p50 (1 / 10) | floor req/s, 10 clients | p50 vs floor (1 / 10) | req/s vs floor |",
  );
  p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const m of results) {
    const f1 = runPct(m.floor[1], 0.5);
    const f10 = runPct(m.floor[10], 0.5);
    const floored = (m.floor[1]?.length ?? 0) > 0;
    p(
      `| ${m.op} | ${m.size} | ${samples(m.latency[1])} / ${samples(m.latency[10])} | ${m.latency[1]?.length ?? 0} / ${m.latency[10]?.length ?? 0} | ` +
        `${ms(runPct(m.latency[1], 0.5))} | ${ms(runPct(m.latency[1], 0.99))} | ${ms(runPct(m.latency[10], 0.5))} | ${ms(runPct(m.latency[10], 0.99))} | ${rate(runRps(m.latency[10]))} | ` +
        `${floored ? `${ms(f1)} / ${ms(f10)}` : "–"} | ${floored ? rate(runRps(m.floor[10])) : "–"} | ` +
        `${floored ? `${ratio(runPct(m.latency[1], 0.5), f1)} / ${ratio(runPct(m.latency[10], 0.5), f10)}` : "–"} | ${floored ? ratio(runRps(m.latency[10]), runRps(m.floor[10])) : "–"} |`,
    );
  }
  p();
  p(
    `DynamoDB per request, API request / its flow (mean of ${COUNT_RUNS.read} runs for reads, ${COUNT_RUNS.mutation} for mutations). Capacity units as DynamoDB Local reports them, with AWS's (computed from item sizes) where they differ; WCU by AWS includes the index writes shown.`,
  );
  p();
  p("| Operation | Size | DynamoDB requests | items read | whole-tree reads | RCU | WCU | of which index WCU (AWS) |");
  p("|---|---|---:|---:|---:|---:|---:|---:|");
  for (const m of results) {
    const a = m.api;
    const f = m.flow;
    p(
      `| ${m.op} | ${m.size} | ${both(a?.requests, f?.requests)} | ${both(a?.items, f?.items)} | ${both(a?.treeReads, f?.treeReads)} | ` +
        `${a ? units(a.reportedRead, a.computedRead) : "–"} / ${f ? units(f.reportedRead, f.computedRead) : "–"} | ` +
        `${a ? units(a.reportedWrite, a.computedWrite) : "–"} / ${f ? units(f.reportedWrite, f.computedWrite) : "–"} | ${both(a?.computedIndexWrite, f?.computedIndexWrite)} |`,
    );
  }
  for (const m of results) {
    const refused = (m.api?.errors ?? 0) + (m.flow?.errors ?? 0);
    const estimated = (m.api?.estimated ?? 0) + (m.flow?.estimated ?? 0);
    const notes = [
      refused ? `${counted(refused, "DynamoDB request")} refused` : "",
      estimated ? `${counted(estimated, "item")} sized by estimate (written while the meter was paused, or only read in part)` : "",
    ].filter(Boolean);
    if (notes.length) p(`  ${m.op} (${m.size}), per request: ${notes.join(", ")}`);
  }
  p();
  const n = sizeNames();
  p(
    `Big / small (the same operation on a table of ${n.bigTable} vs ${n.smallTable}, or a tree of ${n.bigTree} vs ${n.smallTree}; DynamoDB figures of the request and its flow together):`,
  );
  p();
  p("| Operation | Sizes | p50, 1 client | p50, 10 clients | DynamoDB requests | items read | RCU (AWS) | WCU (AWS) |");
  p("|---|---|---:|---:|---:|---:|---:|---:|");
  for (const [smallSize, bigSize] of sizePairs()) {
    for (const op of [...new Set(results.map((m) => m.op))]) {
      const s = results.find((m) => m.op === op && m.size === smallSize);
      const g = results.find((m) => m.op === op && m.size === bigSize);
      if (!s || !g) continue;
      const total = (m: Measurement, k: keyof Use) => (m.api?.[k] ?? 0) + (m.flow?.[k] ?? 0);
      p(
        `| ${op} | ${bigSize} / ${smallSize} | ${ratio(runPct(g.latency[1], 0.5), runPct(s.latency[1], 0.5))} | ${ratio(runPct(g.latency[10], 0.5), runPct(s.latency[10], 0.5))} | ` +
          `${ratio(total(g, "requests"), total(s, "requests"))} | ${ratio(total(g, "items"), total(s, "items"))} | ${ratio(total(g, "computedRead"), total(s, "computedRead"))} | ${ratio(total(g, "computedWrite"), total(s, "computedWrite"))} |`,
      );
    }
  }
  return out;
}

// ---- cost model -----------------------------------------------------------------------------

/** What one call of an operation costs on AWS, in dollars, by service (./cost.ts); and its flow alone (per execution). */
function costOf(m: Measurement, memory: LambdaMemory) {
  const apiMs = median(m.serverMs);
  const f = m.flowUse;
  const units = (u: Use | undefined) => ({ readUnits: u?.computedRead ?? 0, writeUnits: u?.computedWrite ?? 0 });
  const flow = {
    ...noCounts(),
    ...units(m.flow),
    transitions: f?.transitions ?? 0,
    tasks: f?.tasks ?? 0,
    taskBilledMs: f?.taskBilledMs ?? 0,
  };
  const api = units(m.api);
  const call = flowDollars(
    {
      ...flow,
      apiRequests: 1,
      apiBilledMs: Math.max(1, Math.ceil(apiMs)),
      readUnits: flow.readUnits + api.readUnits,
      writeUnits: flow.writeUnits + api.writeUnits,
    },
    memory,
  );
  const perFlow = f && f.executions > 0 ? flowDollars(flow, memory).total / f.executions : undefined;
  return { ...call, apiMs, perFlow };
}

function costReport(): string[] {
  const memory = lambdaMemory();
  const out: string[] = [];
  const p = (s = "") => out.push(s);
  const octavia = serversMonthly(OCTAVIA_SERVERS);
  p(
    `Cost model: AWS on-demand list prices in ${PRICES.region} as of ${PRICES.date}, assumed by the bench (not measured): ` +
      `DynamoDB $${(PRICES.dynamoReadUnit * 1e6).toFixed(3)} per million read request units and $${(PRICES.dynamoWriteUnit * 1e6).toFixed(3)} per million write request units; ` +
      `Lambda $${(PRICES.lambdaRequest * 1e6).toFixed(2)} per million requests and $${PRICES.lambdaGbSecond} per GB-second (${memory.note}); ` +
      `Step Functions Standard $${(PRICES.sfnTransition * 1000).toFixed(3)} per 1,000 state transitions; API Gateway HTTP API $${(PRICES.apiRequest * 1e6).toFixed(2)} per million requests.`,
  );
  p(
    `Measured here: the request units AWS would bill (from item sizes, index writes included; API request and flow), the API request's time in the server ` +
      `(median at 1 client: its Lambda's billed duration, rounded up to the ms), each flow's state transitions (states entered and retries, Map iterations included) ` +
      `and task invocations with their time (each a Lambda invocation, rounded up to the ms), means of the counting runs. Times are this machine's against DynamoDB Local ` +
      `on loopback: on AWS each DynamoDB round trip is slower and cold starts add to them, so the Lambda figures are low estimates; the free tiers are left out.`,
  );
  p();
  p(
    "| Operation | Size | API ms | RRU / WRU a call | transitions / task calls / task ms a call | $ a million calls: API Gateway | API Lambda | DynamoDB | Step Functions | task Lambdas | total | $ one flow | calls a month = Octavia's fixed cost |",
  );
  p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const m of results) {
    const c = costOf(m, memory);
    const f = m.flowUse;
    const rru = (m.api?.computedRead ?? 0) + (m.flow?.computedRead ?? 0);
    const wru = (m.api?.computedWrite ?? 0) + (m.flow?.computedWrite ?? 0);
    const M = (x: number) => dollars(x * 1e6);
    p(
      `| ${m.op} | ${m.size} | ${ms(c.apiMs)} | ${num(rru)} / ${num(wru)} | ${f ? `${num(f.transitions)} / ${num(f.tasks)} / ${ms(f.taskMs)}` : "–"} | ` +
        `${M(c.gateway)} | ${M(c.apiLambda)} | ${M(c.dynamo)} | ${M(c.sfn)} | ${M(c.tasks)} | **${M(c.total)}** | ${cents(c.perFlow)} | ${(octavia.total / c.total / 1e6).toFixed(0)} million |`,
    );
  }
  p();
  p(
    `Always-on cost of an Octavia deployment, list prices assumed by the bench (on-demand, ${PRICES.region}, ${PRICES.hoursPerMonth} h a month), not measured:`,
  );
  p();
  p("| Octavia component | Instances (each with a gp3 volume) | $ an hour each | $ a month |");
  p("|---|---|---:|---:|");
  for (const r of octavia.rows)
    p(
      `| ${r.server.what} | ${r.server.count} × EC2 ${r.server.instanceType}, ${r.server.volumeGb} GB | $${r.hourly.toFixed(4)} | ${dollars(r.monthly)} |`,
    );
  p(`| **total** | | | **${dollars(octavia.total)}** |`);
  p();
  const hm = healthManagerMonthly();
  p(
    `Ottava's own always-on part, also assumed: the heartbeat receiver (stacks/health.ts), ${hm.note}: ${dollars(hm.monthly)} a month; ` +
      `the scheduled housekeeping Lambdas (two runs a minute) and DynamoDB storage are not priced here.`,
  );
  return out;
}

const sizeNames = () => ({
  smallTree: `${SMALL_MEMBERS} members`,
  bigTree: `${BIG_MEMBERS} members`,
  smallTable: `${SMALL_TABLE} LBs`,
  bigTable: `${BIG_TABLE.toLocaleString("en")} LBs`,
});

function sizePairs(): [string, string][] {
  const n = sizeNames();
  return [
    [n.smallTable, n.bigTable],
    [`${n.smallTree}, ${n.smallTable}`, `${n.smallTree}, ${n.bigTable}`],
    [`${n.bigTree}, ${n.smallTable}`, `${n.bigTree}, ${n.bigTable}`],
    [`${n.smallTree}, ${n.smallTable}`, `${n.bigTree}, ${n.smallTable}`],
    [n.smallTree, n.bigTree],
  ];
}

function budgets(scale: number): Check[] {
  const n = sizeNames();
  const out: Check[] = [];
  const find = (op: string, size: string) => results.find((m) => m.op === op && m.size === size);
  for (const m of results.filter((m) => m.op === "GET one LB")) {
    // One read: one request that reads one item (the load balancer's), not its tree.
    out.push({
      name: `GET one LB = 1 DynamoDB read (${m.size})`,
      ok: m.api!.requests === 1 && m.api!.items <= 1,
      detail: `${counted(m.api!.requests, "request")} reading ${counted(m.api!.items, "item")}`,
    });
  }
  for (const m of results.filter((m) => m.op === "list page of 100")) {
    out.push({
      name: `list page reads no item per listed object (${m.size})`,
      ok: m.api!.perObjectReads === 0,
      detail: `${counted(m.api!.perObjectReads, "per-object read")} among ${counted(m.api!.requests, "request")}, ${counted(m.api!.items, "item")}`,
    });
  }
  for (const m of results.filter((m) => m.op === "member create → ACTIVE")) {
    out.push({
      name: `member create's API request ≤ 6 DynamoDB requests (${m.size})`,
      ok: m.api!.requests <= 6,
      detail: counted(m.api!.requests, "request"),
    });
    out.push({
      name: `member flow reads the tree at most once (${m.size})`,
      ok: (m.flow?.treeReads ?? 0) <= 1,
      detail: counted(m.flow?.treeReads ?? 0, "whole-tree read"),
    });
  }
  const within = (name: string, small: Measurement | undefined, big: Measurement | undefined) => {
    if (!small || !big) return;
    for (const c of CLIENTS) {
      const r = runPct(big.latency[c], 0.5) / runPct(small.latency[c], 0.5);
      out.push({
        name: `${name}, ${c} client${c > 1 ? "s" : ""}`,
        ok: r <= LATENCY_BUDGET,
        detail: `${r.toFixed(2)}× (${ms(runPct(big.latency[c], 0.5))} vs ${ms(runPct(small.latency[c], 0.5))} ms)`,
      });
    }
  };
  for (const tree of [n.smallTree, n.bigTree]) {
    within(
      `GET p50 (${tree}) at ${n.bigTable} within ${LATENCY_BUDGET}× of ${n.smallTable}`,
      find("GET one LB", `${tree}, ${n.smallTable}`),
      find("GET one LB", `${tree}, ${n.bigTable}`),
    );
  }
  within(
    `list p50 at ${n.bigTable} within ${LATENCY_BUDGET}× of ${n.smallTable}`,
    find("list page of 100", n.smallTable),
    find("list page of 100", n.bigTable),
  );
  within(
    `GET p50 of an LB of ${BIG_MEMBERS} members within ${LATENCY_BUDGET}× of one of ${SMALL_MEMBERS}`,
    find("GET one LB", `${n.smallTree}, ${n.smallTable}`),
    find("GET one LB", `${n.bigTree}, ${n.smallTable}`),
  );
  // Throughput at 10 clients (medians of the runs), against the bare loop of the same DynamoDB reads.
  const share = (x: number) => `${(x * 100).toFixed(0)} %`;
  for (const m of results.filter((m) => m.op === "GET one LB")) {
    const got = runRps(m.latency[10]);
    const bare = runRps(m.floor[10]);
    const detail = `${rate(got)} vs ${rate(bare)} req/s: ${share(got / bare)}`;
    out.push({
      name: `GET one LB at 10 clients ≥ ${GET_FLOOR_SHARE}× the bare GetItem loop's throughput (${m.size})`,
      ok: got >= GET_FLOOR_SHARE * bare,
      detail,
    });
    out.push({
      name: `GET one LB at 10 clients ≥ ${share(GET_FLOOR_SHARE_RETIRED)} of the bare GetItem loop's throughput (${m.size})`,
      ok: got >= GET_FLOOR_SHARE_RETIRED * bare,
      detail,
      retired: "a new HTTP connection per request sets this floor",
    });
  }
  for (const m of results.filter((m) => m.op === "list page of 100")) {
    const got = runRps(m.latency[10]);
    const bare = runRps(m.floor[10]);
    out.push({
      name: `list page of 100 at 10 clients ≥ ${LIST_RPS} req/s (here ÷ ${scale.toFixed(2)}: ${rate(LIST_RPS / scale)}) (${m.size})`,
      ok: got >= LIST_RPS / scale,
      detail: `${rate(got)} req/s`,
    });
    out.push({
      name: `list page of 100 at 10 clients ≥ ${share(LIST_FLOOR_SHARE)} of the bare loop of its Queries (${m.size})`,
      ok: got >= LIST_FLOOR_SHARE * bare,
      detail: `${rate(got)} vs ${rate(bare)} req/s: ${share(got / bare)}`,
    });
  }
  // The name lookup and the sorted list at the big table, one client.
  for (const l of LOOKUPS) {
    const m = find(l.op, n.bigTable);
    if (!m) continue;
    const p50 = runPct(m.latency[1], 0.5);
    out.push({
      name: `${l.op} p50 at ${n.bigTable}, 1 client ≤ ${LOOKUP_BUDGET_MS} ms (here × ${scale.toFixed(2)}: ${ms(LOOKUP_BUDGET_MS * scale)} ms)`,
      ok: p50 <= LOOKUP_BUDGET_MS * scale,
      detail: `${ms(p50)} ms (${samples(m.latency[1])} samples)`,
    });
  }
  return out;
}

// ---- the run --------------------------------------------------------------------------------

async function main() {
  const n = sizeNames();
  log(
    `bench:api — trees of ${SMALL_MEMBERS} and ${BIG_MEMBERS} members (${POOLS} pools), tables of ${SMALL_TABLE} and ${BIG_TABLE} LBs, ${CLIENTS.join(" and ")} clients${QUICK ? " (--quick)" : ""}`,
  );
  // This machine's speed against the one the time budgets were set on, before the bench's own stack starts.
  const { scale, line } = await machineScale();
  log(line);
  flows = await countFlows();
  const b = await startBench(flows.decorateTask);
  try {
    log(`stack ready at ${elapsed()}; building the trees…`);
    const smallTemplate = await createTemplate(b, SMALL_MEMBERS, 1);
    const bigTemplate = await createTemplate(b, BIG_MEMBERS, POOLS);
    const smallCopy = await templateOf(b, smallTemplate);
    const bigCopy = await templateOf(b, bigTemplate);
    // Creation times, one second apart: the first table's copies in the past, the filling's in the
    // future, so that the oldest 100 (the first page of a list) are the same at both table sizes.
    const now = Date.now();
    const big = [bigTemplate, ...(await copyTree(b, bigCopy, BIG_TREES - 1, now - 3_600_000))];
    const small = [smallTemplate, ...(await copyTree(b, smallCopy, SMALL_TABLE - BIG_TREES - 1, now - 3_600_000 + BIG_TREES * 1000))];
    log(
      `table of ${SMALL_TABLE} LBs ready (${BIG_TREES} of ${BIG_MEMBERS} members, ${small.length} of ${SMALL_MEMBERS}) at ${elapsed()}; measuring…`,
    );

    // Warm-up (Node's and DynamoDB Local's JIT), not measured: the first measurement would pay for it.
    const warm = [
      `/v2/lbaas/loadbalancers/${small[0]!.lbId}`,
      `/v2/lbaas/loadbalancers/${big[0]!.lbId}/status`,
      "/v2/lbaas/loadbalancers?limit=100",
    ];
    for (const path of warm) {
      const m: Measurement = { op: "warm-up", size: path, latency: {}, floor: {}, serverMs: [], failures: [] };
      const total = path.includes("limit") ? 20 : 200;
      await load(m, 10, { ...READ_TIMING, samples: { 1: total, 10: total } }, async () => void (await read(b, path)));
      if (m.failures.length) throw new Error(`warm-up: ${m.failures[0]}`);
    }

    // Reads first, on trees no mutation has touched yet, at both table sizes; then the mutations.
    await reads(b, n.smallTable, small, big, true);
    await creates(b, n.smallTable);
    log(`filling the table to ${BIG_TABLE} LBs…`);
    const t0 = Date.now();
    await copyTree(b, smallCopy, BIG_TABLE - SMALL_TABLE - created, now + 3_600_000);
    log(`table of ${BIG_TABLE} LBs ready in ${((Date.now() - t0) / 1000).toFixed(0)} s; measuring…`);
    await reads(b, n.bigTable, small, big, false);
    await creates(b, n.bigTable);
    await mutations(b, small, big);

    const lines = report();
    lines.push("", ...costReport());
    const checks = budgets(scale);
    const { lines: checked, missed } = checkLines(checks);
    lines.push("", "Budgets:", "", ...checked);
    // Requests that failed while timed make the run itself fail.
    const failures = results.filter((m) => m.failures.length);
    for (const m of failures) lines.push(`ERROR  ${m.op} (${m.size}): ${m.failures.length} requests failed, the first: ${m.failures[0]}`);
    if (b.meter.unreadable) lines.push(`(${b.meter.unreadable} DynamoDB answers could not be read by the meter.)`);
    process.stdout.write(`${lines.join("\n")}\n`);
    if (missed || failures.length) process.exitCode = 1;
  } finally {
    await b.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
