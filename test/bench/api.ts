// API benchmark (`npm run bench:api`): latency and DynamoDB use of each Octavia API operation and its flow, on small and big trees and tables, checked against the performance budgets.
//
// The local stack runs in this process (DynamoDB Local in memory, startRuntime with metering, the
// no-op data plane), so that the DynamoDB meter of @ottava/db can be read: every request of a flow
// is counted under the scope "flow" (its execution is started inside that scope), every other one
// under the API request that caused it. The health check and housekeeping run on hour-long timers,
// so that nothing else touches DynamoDB while an operation is measured. HTTP goes through node:http
// on loopback without keep-alive (a new connection per request), as the Octavia comparison was
// measured. A mutation's latency runs from sending it until its flow has ended (the load balancer
// ACTIVE again), seen in process rather than by polling.
//
// Sizes: a tree of 10 members (1 listener, 1 pool) and one of 1000 (20 listeners, 20 pools of 50),
// a table of 100 load balancers and one of 10,000. One tree of each size is created through the API;
// the others are copies of it written straight into the table (BatchWriteItem, in the table's
// layout: items.ts's keys and index attributes, id pointers, quota usage). The reads and the LB
// creates are measured first, at 100 and then at 10,000 load balancers (the same first page of the
// list at both sizes); the mutations last, taking the trees in turn (each adds to the tree it uses:
// a listener, a pool, a member; a small tree's cross-pool update, 30 members, so each is used once).
//
//   npm run bench:api              # the issue's sizes (about 5 minutes on 2 cores)
//   npm run bench:api -- --quick   # 200-member trees, a table of 1,000, fewer samples
//
// The exit code is 1 when a budget is missed (after everything is printed).
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { ExecutionDescription } from "@ottava/core";
import type { DynamoMeter, MeterCounts, MeterRow } from "@ottava/db";
import type { Runtime } from "@ottava/local";

// Before the app's modules load: no metric lines on stdout.
process.env.POWERTOOLS_METRICS_DISABLED ??= "true";

const QUICK = process.argv.includes("--quick");
const SUBNET = "5e6b7c5a-0b7e-4a0e-9d36-1f5b2f3a6a11";
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
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

async function startBench(): Promise<Bench> {
  const { loadConfig } = await import("@ottava/core");
  const { startDynamoDbLocal, startRuntime } = await import("@ottava/local");
  const { createClients } = await import("@ottava/db");
  const dataDir = mkdtempSync(join(tmpdir(), "ottava-bench-"));
  const dynamo = await startDynamoDbLocal({ inMemory: true, dataDir });
  try {
    // `npm start --in-memory`'s settings but for the background jobs' timers (and a free port).
    const config = loadConfig({
      OTTAVA_DYNAMODB_ENDPOINT: dynamo.endpoint,
      OTTAVA_TABLE_NAME: TABLE,
      OTTAVA_BIND_PORT: "0",
      OTTAVA_HEARTBEAT_PORT: "0",
      OTTAVA_LOG_LEVEL: "error",
      OTTAVA_HEALTH_CHECK_INTERVAL: "3600",
      OTTAVA_CLEANUP_INTERVAL: "3600",
      OTTAVA_CERT_INTERVAL: "86400",
    });
    const runtime = await startRuntime({ config, inMemory: true, dataDir, metering: true });
    const meter = runtime.meter!;
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
    const { client, doc } = createClients(dynamo.endpoint);
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
  const listeners = Array.from({ length: pools }, (_, p) => ({
    name: `listener-${p}`,
    protocol: "HTTP",
    protocol_port: 8000 + p,
    default_pool: {
      name: `pool-${p}`,
      protocol: "HTTP",
      lb_algorithm: "ROUND_ROBIN",
      members: Array.from({ length: per }, (_, k) => ({ address: address(p, k), protocol_port: 80 })),
    },
  }));
  const made = await mutate(b, undefined, "POST", "/v2/lbaas/loadbalancers", { loadbalancer: { name: `bench-${members}`, vip_subnet_id: SUBNET, listeners } });
  return treeOf(b, made.loadbalancer.id);
}

async function treeOf(b: Bench, lbId: string): Promise<Tree> {
  const lb = (await read(b, `/v2/lbaas/loadbalancers/${lbId}`)).loadbalancer;
  const pools = await Promise.all(
    lb.pools.map(async (p: { id: string }) => ({
      id: p.id,
      members: (await read(b, `/v2/lbaas/pools/${p.id}/members?limit=1000`)).members.map((m: any) => ({ address: m.address, port: m.protocol_port })),
    })),
  );
  const ports = new Set<number>();
  for (const l of lb.listeners) ports.add((await read(b, `/v2/lbaas/listeners/${l.id}`)).listener.protocol_port);
  return { lbId, pools, ports, crossPooled: false, uses: 0, busy: false };
}

/** The template's tree items (not its flow trail), as stored. */
async function templateItems(b: Bench, lbId: string): Promise<Record<string, unknown>[]> {
  const { queryAll } = await import("@ottava/db");
  return queryAll(b.doc, {
    TableName: TABLE,
    KeyConditionExpression: "pk = :pk AND sk < :trail",
    ExpressionAttributeValues: { ":pk": `LB#${lbId}`, ":trail": "~" },
    ConsistentRead: true,
  });
}

/**
 * Writes `count` copies of a template tree: new ids for the load balancer, its children and the ports
 * and server it owns, `created_at` spread over the past (so that lists are ordered as if created one
 * by one), index attributes recomputed by the layout's own functions, an id pointer per child, and
 * the quota usage raised by what was added. Answers the copies' trees.
 */
async function copyTree(b: Bench, template: Tree, items: Record<string, unknown>[], count: number, since: number): Promise<Tree[]> {
  const db = await import("@ottava/db");
  const { usageUpdate } = await import("../../packages/db/src/usage");
  const { BatchWriteCommand, UpdateCommand } = await import("@aws-sdk/lib-dynamodb");
  const owned = new Set<string>([template.lbId]);
  for (const item of items) {
    owned.add(String(item.id));
    for (const [k, v] of Object.entries(item)) if ((k.endsWith("_port_id") || k === "compute_id") && typeof v === "string" && UUID.test(v)) owned.add(v);
  }
  const pattern = new RegExp([...owned].join("|"), "g");
  const json = items.map((i) => JSON.stringify(i));
  const puts: Record<string, unknown>[] = [];
  const trees: Tree[] = [];
  for (let n = 0; n < count; n++) {
    const ids = new Map([...owned].map((id) => [id, randomUUID()]));
    const createdAt = new Date(since + n * 1000).toISOString();
    for (const text of json) {
      const item = JSON.parse(text.replace(pattern, (id) => ids.get(id)!)) as Record<string, unknown>;
      for (const k of db.KEY_ATTRIBUTES) if (k !== "pk" && k !== "sk") delete item[k];
      item.created_at = createdAt;
      const kind = item.sk === db.LB_SK ? db.LOADBALANCER : db.TREE_KINDS[String(item.kind)]!;
      const rec = item as { id: string; project_id: string; created_at: string };
      Object.assign(item, db.indexAttributes(kind, rec, String(item[kind.statusField])));
      if (kind === db.AMPHORA) {
        if (typeof item.cert_expiration === "string") Object.assign(item, db.certAttributes(rec.id, item.cert_expiration));
        if (typeof item.last_heartbeat === "string") Object.assign(item, db.heartbeatAttributes(rec.id, item.last_heartbeat));
      }
      puts.push(item);
      if (kind !== db.LOADBALANCER) puts.push({ ...db.pointerKey(rec.id), kind: kind.kind, ref_pk: item.pk, ref_sk: item.sk });
    }
    trees.push({
      lbId: ids.get(template.lbId)!,
      pools: template.pools.map((p) => ({ id: ids.get(p.id)!, members: p.members.map((m) => ({ ...m })) })),
      ports: new Set(template.ports),
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
  const of = (kind: string) => items.filter((i) => i.kind === kind).length * count;
  const usage = usageUpdate(TABLE, { project: PROJECT, delta: { load_balancer: count, listener: of("listener"), pool: of("pool"), member: of("member") } });
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

interface Measurement {
  op: string;
  size: string;
  latency: Partial<Record<Clients, number[]>>;
  floor: Partial<Record<Clients, number[]>>;
  api?: Use;
  flow?: Use;
  /** Requests (or their flows) that failed while timed. */
  failures: string[];
}

const results: Measurement[] = [];

function useOf(rows: MeterRow[], scope: string, runs: number): Use {
  const u: Use = { requests: 0, items: 0, reportedRead: 0, reportedWrite: 0, computedRead: 0, computedWrite: 0, computedIndexWrite: 0, estimated: 0, errors: 0, treeReads: 0, perObjectReads: 0 };
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
    if (partitionQuery && !r.target.includes("begins_with") && !r.target.endsWith("(next page)")) u.treeReads += c.requests / runs;
    if (r.op === "GetItem" || r.op === "BatchGetItem" || (partitionQuery && !r.target.endsWith("(next page)"))) u.perObjectReads += c.requests / runs;
  }
  return u;
}

/**
 * Counts one operation: `runs` requests, one at a time, with the meter on; each run's API and flow
 * requests kept apart. Answers the requests of the last run as sent (for floors).
 */
async function count(b: Bench, m: Measurement, runs: number, once: (run: number) => Promise<void>): Promise<Record<string, unknown>[][]> {
  const sent: Record<string, unknown>[][] = [];
  b.meter.reset();
  b.meter.active = true;
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
  }
  const rows = b.meter.rows();
  m.api = useOf(rows, "", runs);
  const flow = useOf(rows, "flow", runs);
  if (flow.requests > 0) m.flow = flow;
  return sent;
}

/**
 * Latency of `total` requests from `clients` concurrent clients (each its own sequence), fewer when
 * TIME_CAP has passed (but at least MIN_SAMPLES, or `total` if smaller): milliseconds each.
 */
async function load(m: Measurement, clients: Clients, total: number, once: (client: number, i: number) => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  const per = Math.ceil(total / clients);
  const least = Math.min(per, Math.ceil(MIN_SAMPLES[clients] / clients));
  const until = Date.now() + TIME_CAP;
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
  return times;
}

const pct = (xs: number[] | undefined, q: number) => {
  if (!xs?.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
};

function measurement(op: string, size: string): Measurement {
  const m: Measurement = { op, size, latency: {}, floor: {}, failures: [] };
  results.push(m);
  return m;
}

async function measureRead(b: Bench, op: string, size: string, path: string, floor?: (sent: Record<string, unknown>[]) => Promise<() => Promise<void>>) {
  const m = measurement(op, size);
  log(`  ${op} (${size}) at ${elapsed()}`);
  const sent = await count(b, m, COUNT_RUNS.read, async () => void (await read(b, path)));
  for (const c of CLIENTS) m.latency[c] = await load(m, c, READ_SAMPLES[c], async () => void (await read(b, path)));
  if (floor) {
    const bare = await floor(sent[sent.length - 1]!);
    for (const c of CLIENTS) m.floor[c] = await load(m, c, READ_SAMPLES[c], bare);
  }
  return m;
}

/**
 * A mutation, each request on a target `take` hands out (a tree no other client is working on, the
 * least used one): counted, then timed at 1 and 10 clients.
 */
async function measureMutation<T>(b: Bench, op: string, size: string, take: () => { target: T; release(): void }, once: (target: T, n: number) => Promise<void>) {
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
  await count(b, m, COUNT_RUNS.mutation, run);
  for (const c of CLIENTS) m.latency[c] = await load(m, c, MUTATION_SAMPLES[c], run);
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
async function queriesFloor(b: Bench, sent: Record<string, unknown>[], which: (input: Record<string, unknown>) => boolean): Promise<() => Promise<void>> {
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
    return async () => void (await b.doc.send(new GetCommand({ TableName: TABLE, Key: { pk: `LB#${t.lbId}`, sk: "LB" }, ConsistentRead: true })));
  };
  await measureRead(b, "GET one LB", `${n.smallTree}, ${table}`, `/v2/lbaas/loadbalancers/${small[0]!.lbId}`, get(small[0]!));
  await measureRead(b, "GET one LB", `${n.bigTree}, ${table}`, `/v2/lbaas/loadbalancers/${big[0]!.lbId}`, get(big[0]!));
  // The list's floor: its index Queries (the page itself), not what it reads per listed object.
  await measureRead(b, "list page of 100", table, "/v2/lbaas/loadbalancers?limit=100", (sent) => queriesFloor(b, sent, (q) => q.IndexName !== undefined));
  if (withStatus) {
    for (const [t, size] of [[small[0]!, n.smallTree], [big[0]!, n.bigTree]] as const) {
      await measureRead(b, "GET status tree", size, `/v2/lbaas/loadbalancers/${t.lbId}/status`, (sent) => queriesFloor(b, sent, () => true));
    }
  }
}

async function mutations(b: Bench, small: Tree[], big: Tree[]) {
  for (const [trees, members] of [[small, SMALL_MEMBERS], [big, BIG_MEMBERS]] as const) {
    const size = `${members} members`;
    await measureMutation(b, "listener create → ACTIVE", size, treesOf(trees), async (t) => {
      let port = 9000;
      while (t.ports.has(port)) port++;
      t.ports.add(port);
      await mutate(b, t.lbId, "POST", "/v2/lbaas/listeners", { listener: { loadbalancer_id: t.lbId, protocol: "HTTP", protocol_port: port } });
    });
    await measureMutation(b, "pool create → ACTIVE", size, treesOf(trees), async (t, n) => {
      await mutate(b, t.lbId, "POST", "/v2/lbaas/pools", { pool: { loadbalancer_id: t.lbId, name: `bench-${n}`, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" } });
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
        for (const p of t.pools) for (const m of p.members.slice(0, perPool)) if (named.length < CROSS_POOL_MEMBERS) named.push({ pool_id: p.id, address: m.address, protocol_port: m.port, weight: 2 + (n % 50) });
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
/** DynamoDB's figure, and AWS's where it differs. */
const units = (reported: number, computed: number) => (Math.abs(reported - computed) < 0.05 ? num(reported) : `${num(reported)} (AWS ${num(computed)})`);
const both = (api: number | undefined, flow: number | undefined, f: (x: number) => string = num) => `${api === undefined ? "–" : f(api)} / ${flow === undefined ? "–" : f(flow)}`;

function report(): string[] {
  const out: string[] = [];
  const p = (s = "") => out.push(s);
  p(`Octavia API on the local stack (in process, DynamoDB Local in memory, no-op data plane), HTTP without keep-alive; ${QUICK ? "--quick sizes" : "the issue's sizes"}; run of ${((Date.now() - began) / 60000).toFixed(1)} min.`);
  p(`Latency in ms; a mutation's runs until its flow has ended (ACTIVE). Floors: the same DynamoDB reads alone, at the same concurrency (GET: GetItem of the LB by key; list: the index Queries of the page; status: the Queries the request made; each floor's Queries sent at once).`);
  p();
  p("| Operation | Size | n (1 / 10 clients) | p50, 1 client | p99, 1 client | p50, 10 clients | p99, 10 clients | floor p50 (1 / 10) | vs floor (1 / 10) |");
  p("|---|---|---:|---:|---:|---:|---:|---:|---:|");
  for (const m of results) {
    const f1 = pct(m.floor[1], 0.5);
    const f10 = pct(m.floor[10], 0.5);
    p(
      `| ${m.op} | ${m.size} | ${m.latency[1]?.length ?? 0} / ${m.latency[10]?.length ?? 0} | ${ms(pct(m.latency[1], 0.5))} | ${ms(pct(m.latency[1], 0.99))} | ${ms(pct(m.latency[10], 0.5))} | ${ms(pct(m.latency[10], 0.99))} | ` +
        `${m.floor[1] ? `${ms(f1)} / ${ms(f10)}` : "–"} | ${m.floor[1] ? `${ratio(pct(m.latency[1], 0.5), f1)} / ${ratio(pct(m.latency[10], 0.5), f10)}` : "–"} |`,
    );
  }
  p();
  p(`DynamoDB per request, API request / its flow (mean of ${COUNT_RUNS.read} runs for reads, ${COUNT_RUNS.mutation} for mutations). Capacity units as DynamoDB Local reports them, with AWS's (computed from item sizes) where they differ; WCU by AWS includes the index writes shown.`);
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
  p(`Big / small (the same operation on a table of ${n.bigTable} vs ${n.smallTable}, or a tree of ${n.bigTree} vs ${n.smallTree}; DynamoDB figures of the request and its flow together):`);
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
        `| ${op} | ${bigSize} / ${smallSize} | ${ratio(pct(g.latency[1], 0.5), pct(s.latency[1], 0.5))} | ${ratio(pct(g.latency[10], 0.5), pct(s.latency[10], 0.5))} | ` +
          `${ratio(total(g, "requests"), total(s, "requests"))} | ${ratio(total(g, "items"), total(s, "items"))} | ${ratio(total(g, "computedRead"), total(s, "computedRead"))} | ${ratio(total(g, "computedWrite"), total(s, "computedWrite"))} |`,
      );
    }
  }
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

interface Budget {
  name: string;
  ok: boolean;
  detail: string;
}

function budgets(): Budget[] {
  const n = sizeNames();
  const out: Budget[] = [];
  const find = (op: string, size: string) => results.find((m) => m.op === op && m.size === size);
  for (const m of results.filter((m) => m.op === "GET one LB")) {
    // One read: one request that reads one item (the load balancer's), not its tree.
    out.push({ name: `GET one LB = 1 DynamoDB read (${m.size})`, ok: m.api!.requests === 1 && m.api!.items <= 1, detail: `${counted(m.api!.requests, "request")} reading ${counted(m.api!.items, "item")}` });
  }
  for (const m of results.filter((m) => m.op === "list page of 100")) {
    out.push({
      name: `list page reads no item per listed object (${m.size})`,
      ok: m.api!.perObjectReads === 0,
      detail: `${counted(m.api!.perObjectReads, "per-object read")} among ${counted(m.api!.requests, "request")}, ${counted(m.api!.items, "item")}`,
    });
  }
  for (const m of results.filter((m) => m.op === "member create → ACTIVE")) {
    out.push({ name: `member create's API request ≤ 6 DynamoDB requests (${m.size})`, ok: m.api!.requests <= 6, detail: counted(m.api!.requests, "request") });
    out.push({ name: `member flow reads the tree at most once (${m.size})`, ok: (m.flow?.treeReads ?? 0) <= 1, detail: counted(m.flow?.treeReads ?? 0, "whole-tree read") });
  }
  const within = (name: string, small: Measurement | undefined, big: Measurement | undefined) => {
    if (!small || !big) return;
    for (const c of CLIENTS) {
      const r = pct(big.latency[c], 0.5) / pct(small.latency[c], 0.5);
      out.push({ name: `${name}, ${c} client${c > 1 ? "s" : ""}`, ok: r <= LATENCY_BUDGET, detail: `${r.toFixed(2)}× (${ms(pct(big.latency[c], 0.5))} vs ${ms(pct(small.latency[c], 0.5))} ms)` });
    }
  };
  for (const tree of [n.smallTree, n.bigTree]) {
    within(`GET p50 (${tree}) at ${n.bigTable} within ${LATENCY_BUDGET}× of ${n.smallTable}`, find("GET one LB", `${tree}, ${n.smallTable}`), find("GET one LB", `${tree}, ${n.bigTable}`));
  }
  within(`list p50 at ${n.bigTable} within ${LATENCY_BUDGET}× of ${n.smallTable}`, find("list page of 100", n.smallTable), find("list page of 100", n.bigTable));
  within(`GET p50 of an LB of ${BIG_MEMBERS} members within ${LATENCY_BUDGET}× of one of ${SMALL_MEMBERS}`, find("GET one LB", `${n.smallTree}, ${n.smallTable}`), find("GET one LB", `${n.bigTree}, ${n.smallTable}`));
  return out;
}

// ---- the run --------------------------------------------------------------------------------

async function main() {
  const n = sizeNames();
  log(`bench:api — trees of ${SMALL_MEMBERS} and ${BIG_MEMBERS} members (${POOLS} pools), tables of ${SMALL_TABLE} and ${BIG_TABLE} LBs, ${CLIENTS.join(" and ")} clients${QUICK ? " (--quick)" : ""}`);
  const b = await startBench();
  try {
    log(`stack ready at ${elapsed()}; building the trees…`);
    const smallTemplate = await createTemplate(b, SMALL_MEMBERS, 1);
    const bigTemplate = await createTemplate(b, BIG_MEMBERS, POOLS);
    const smallItems = await templateItems(b, smallTemplate.lbId);
    const bigItems = await templateItems(b, bigTemplate.lbId);
    // Creation times, one second apart: the first table's copies in the past, the filling's in the
    // future, so that the oldest 100 (the first page of a list) are the same at both table sizes.
    const now = Date.now();
    const big = [bigTemplate, ...(await copyTree(b, bigTemplate, bigItems, BIG_TREES - 1, now - 3_600_000))];
    const small = [smallTemplate, ...(await copyTree(b, smallTemplate, smallItems, SMALL_TABLE - BIG_TREES - 1, now - 3_600_000 + BIG_TREES * 1000))];
    log(`table of ${SMALL_TABLE} LBs ready (${BIG_TREES} of ${BIG_MEMBERS} members, ${small.length} of ${SMALL_MEMBERS}) at ${elapsed()}; measuring…`);

    // Warm-up (Node's and DynamoDB Local's JIT), not measured: the first measurement would pay for it.
    const warm = [`/v2/lbaas/loadbalancers/${small[0]!.lbId}`, `/v2/lbaas/loadbalancers/${big[0]!.lbId}/status`, "/v2/lbaas/loadbalancers?limit=100"];
    for (const path of warm) {
      const m: Measurement = { op: "warm-up", size: path, latency: {}, floor: {}, failures: [] };
      await load(m, 10, path.includes("limit") ? 20 : 200, async () => void (await read(b, path)));
      if (m.failures.length) throw new Error(`warm-up: ${m.failures[0]}`);
    }

    // Reads first, on trees no mutation has touched yet, at both table sizes; then the mutations.
    await reads(b, n.smallTable, small, big, true);
    await creates(b, n.smallTable);
    log(`filling the table to ${BIG_TABLE} LBs…`);
    const t0 = Date.now();
    await copyTree(b, smallTemplate, smallItems, BIG_TABLE - SMALL_TABLE - created, now + 3_600_000);
    log(`table of ${BIG_TABLE} LBs ready in ${((Date.now() - t0) / 1000).toFixed(0)} s; measuring…`);
    await reads(b, n.bigTable, small, big, false);
    await creates(b, n.bigTable);
    await mutations(b, small, big);

    const lines = report();
    const checks = budgets();
    lines.push("", "Budgets:", "");
    for (const c of checks) lines.push(`  ${c.ok ? "PASS" : "FAIL"}  ${c.name}: ${c.detail}`);
    const missed = checks.filter((c) => !c.ok).length;
    lines.push("", missed ? `${missed} of ${checks.length} budgets missed.` : `All ${checks.length} budgets met.`);
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
