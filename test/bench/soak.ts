// Soak benchmark (`npm run bench:soak`): a mixed workload held for a set time against the local stack,
// started as `npm start -- --in-memory` starts it (its own process, so that its memory is its own).
//
// 20 clients, each owning a few load balancers (an HTTP listener and a pool each), loop over: create a
// load balancer (fully populated), update one, replace a pool's members with a batch update, delete one
// (cascade), and read: GET a load balancer, list load balancers (limit 100), list a pool's members, GET
// a status tree. A client waits for its load balancer to leave PENDING_* after each change (polling
// GET every 100 ms, as the openstack CLI's --wait does; the polls are counted as GETs), and counts a 409
// as an answer like any other. Meanwhile 200 simulated amphorae send Octavia's heartbeats (wrapped and
// signed with the stack's heartbeat key, one every heartbeat interval each) to the stack's receiver.
//
// It prints requests and answers by status, p50/p99 per operation, the stack process's resident memory
// after the warm-up and at the end, the heartbeats sent, and the objects left in PENDING_* once every
// flow has ended. Budgets (exit 1 when one is missed): no 5xx, nothing left PENDING, resident memory at
// the end within 10% of its value after the warm-up.
//
//   npm run bench:soak                     # 10 minutes
//   npm run bench:soak -- --minutes 2      # a shorter run
import { randomUUID } from "node:crypto";
import { createSocket } from "node:dgram";
import { readFileSync } from "node:fs";
import { wrapEnvelope } from "@ottava/core";
import { startStack, type Stack } from "../support/stack";
import { arg, pct, sleep, SUBNET } from "./common";

const CLIENTS = 20;
const AMPHORAE = 200;
const HEARTBEAT_INTERVAL_S = 10;
const LBS_PER_CLIENT = 3;
const POLL_MS = 100;
/** The share of the run that warms up before the first memory reading. */
const WARM_UP = 0.2;
const MEMORY_BUDGET = 0.1;
const HEARTBEAT_KEY = randomUUID();

const MINUTES = Number(arg("minutes") ?? 10);
if (!(MINUTES > 0)) throw new Error(`--minutes must be a positive number, got ${arg("minutes")}`);
const DURATION_MS = MINUTES * 60_000;

type Op = "create" | "update" | "member batch" | "delete" | "GET" | "list" | "list members" | "status";
interface OpStats {
  times: number[];
  statuses: Map<number, number>;
}
const stats = new Map<Op, OpStats>();

async function timed(stack: Stack, op: Op, method: string, path: string, body?: unknown) {
  const t0 = process.hrtime.bigint();
  const res = await stack.call(method, path, body);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const s: OpStats = stats.get(op) ?? { times: [], statuses: new Map() };
  stats.set(op, s);
  s.times.push(ms);
  s.statuses.set(res.status, (s.statuses.get(res.status) ?? 0) + 1);
  return res;
}

/** Polls until the load balancer leaves PENDING_* (or is gone). */
async function settle(stack: Stack, lbId: string) {
  for (;;) {
    const res = await timed(stack, "GET", "GET", `/v2/lbaas/loadbalancers/${lbId}`);
    if (res.status !== 200 || !String(res.body.loadbalancer.provisioning_status).startsWith("PENDING_")) return;
    await sleep(POLL_MS);
  }
}

const members = (n: number, salt: number) =>
  Array.from({ length: n }, (_, i) => ({ address: `10.${salt % 250}.${i}.1`, protocol_port: 80 }));
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;

interface Owned {
  id: string;
  poolId: string;
}

async function client(stack: Stack, n: number, until: number) {
  const mine: Owned[] = [];
  let round = 0;
  while (Date.now() < until) {
    round++;
    const r = Math.random();
    if (mine.length < LBS_PER_CLIENT && (mine.length === 0 || r < 0.15)) {
      const res = await timed(stack, "create", "POST", "/v2/lbaas/loadbalancers", {
        loadbalancer: {
          name: `soak-${n}-${round}`,
          vip_subnet_id: SUBNET,
          listeners: [
            {
              name: "http",
              protocol: "HTTP",
              protocol_port: 80,
              default_pool: { name: "web", protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", members: members(2, n) },
            },
          ],
        },
      });
      if (res.status !== 201) continue;
      const id = res.body.loadbalancer.id as string;
      await settle(stack, id);
      const pools = await timed(stack, "list", "GET", `/v2/lbaas/pools?loadbalancer_id=${id}`);
      if (pools.status === 200 && pools.body.pools[0]) mine.push({ id, poolId: pools.body.pools[0].id });
    } else if (mine.length >= LBS_PER_CLIENT && r < 0.1) {
      const lb = mine.shift()!;
      const res = await timed(stack, "delete", "DELETE", `/v2/lbaas/loadbalancers/${lb.id}?cascade=true`);
      if (res.status === 204) await settle(stack, lb.id);
      else mine.push(lb);
    } else if (r < 0.3 && mine.length > 0) {
      const lb = pick(mine);
      if (
        (await timed(stack, "update", "PUT", `/v2/lbaas/loadbalancers/${lb.id}`, { loadbalancer: { description: `round ${round}` } }))
          .status === 200
      )
        await settle(stack, lb.id);
    } else if (r < 0.45 && mine.length > 0) {
      const lb = pick(mine);
      const res = await timed(stack, "member batch", "PUT", `/v2/lbaas/pools/${lb.poolId}/members`, {
        members: members(2 + (round % 9), n * 7 + round),
      });
      if (res.status === 202) await settle(stack, lb.id);
    } else if (r < 0.65 && mine.length > 0) {
      await timed(stack, "GET", "GET", `/v2/lbaas/loadbalancers/${pick(mine).id}`);
    } else if (r < 0.8) {
      await timed(stack, "list", "GET", "/v2/lbaas/loadbalancers?limit=100");
    } else if (r < 0.9 && mine.length > 0) {
      await timed(stack, "list members", "GET", `/v2/lbaas/pools/${pick(mine).poolId}/members`);
    } else if (mine.length > 0) {
      await timed(stack, "status", "GET", `/v2/lbaas/loadbalancers/${pick(mine).id}/status`);
    }
  }
}

/** 200 amphorae's heartbeats, each every HEARTBEAT_INTERVAL_S, spread over the interval. */
function heartbeats(port: number, until: number): Promise<number> {
  const socket = createSocket("udp4");
  const ids = Array.from({ length: AMPHORAE }, () => randomUUID());
  const seq = new Map<string, number>();
  let sent = 0;
  const gap = (HEARTBEAT_INTERVAL_S * 1000) / AMPHORAE;
  return new Promise((done) => {
    let i = 0;
    const timer = setInterval(() => {
      if (Date.now() >= until) {
        clearInterval(timer);
        socket.close(() => done(sent));
        return;
      }
      const id = ids[i++ % AMPHORAE]!;
      const n = (seq.get(id) ?? 0) + 1;
      seq.set(id, n);
      socket.send(wrapEnvelope({ id, seq: n, ver: 3, listeners: {}, pools: {}, recv_time: 0 }, HEARTBEAT_KEY), port, "127.0.0.1");
      sent++;
    }, gap);
  });
}

/** Resident memory of a process, in MiB (VmRSS). */
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Objects of every kind in PENDING_*, read through the API's lists (the admin's view under noauth). */
async function pending(stack: Stack): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [path, key] of [
    ["loadbalancers", "loadbalancers"],
    ["listeners", "listeners"],
    ["pools", "pools"],
    ["healthmonitors", "healthmonitors"],
    ["l7policies", "l7policies"],
  ] as const) {
    let url: string | undefined = `/v2/lbaas/${path}?limit=1000`;
    let n = 0;
    const pools: string[] = [];
    while (url) {
      const res = await stack.call("GET", url);
      for (const o of res.body[key]) {
        if (String(o.provisioning_status).startsWith("PENDING_")) n++;
        if (key === "pools") pools.push(o.id);
      }
      const next = (res.body[`${key}_links`] ?? []).find((l: { rel: string }) => l.rel === "next");
      url = next ? new URL(next.href).pathname + new URL(next.href).search : undefined;
    }
    out[key] = n;
    if (key === "pools") {
      let m = 0;
      for (const p of pools)
        for (const o of (await stack.call("GET", `/v2/lbaas/pools/${p}/members?limit=1000`)).body.members ?? [])
          if (String(o.provisioning_status).startsWith("PENDING_")) m++;
      out.members = m;
    }
  }
  return out;
}

async function main() {
  console.log(`bench:soak — ${CLIENTS} clients and ${AMPHORAE} simulated amphorae for ${MINUTES} min against \`npm start -- --in-memory\``);
  const stack = await startStack(["--in-memory", "--heartbeat-port", "0"], {
    OTTAVA_HEARTBEAT_KEY: HEARTBEAT_KEY,
    OTTAVA_LOG_LEVEL: "warn",
  });
  try {
    const port = Number(/Receiving amphora heartbeats on udp [\d.]+:(\d+)/.exec(stack.output())?.[1]);
    const pid = stack.proc.pid!;
    const start = Date.now();
    const until = start + DURATION_MS;
    const rssStart = rssMiB(pid);
    let rssWarm = NaN;
    const warm = setTimeout(() => (rssWarm = rssMiB(pid)), DURATION_MS * WARM_UP);
    let peak = rssStart;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 5_000);
    const progress = setInterval(() => {
      const total = [...stats.values()].reduce((n, s) => n + s.times.length, 0);
      console.log(`  ${Math.round((Date.now() - start) / 1000)} s: ${total} requests, ${rssMiB(pid).toFixed(0)} MiB resident`);
    }, 60_000);
    const [sent] = await Promise.all([heartbeats(port, until), ...Array.from({ length: CLIENTS }, (_, n) => client(stack, n, until))]);
    clearTimeout(warm);
    clearInterval(sampler);
    clearInterval(progress);
    // Every flow ends before the counts are taken.
    await sleep(3_000);
    const left = await pending(stack);
    const rssEnd = rssMiB(pid);
    const wallS = (Date.now() - start) / 1000;

    const all = [...stats.values()];
    const total = all.reduce((n, s) => n + s.times.length, 0);
    const byStatus = new Map<number, number>();
    for (const s of all) for (const [k, v] of s.statuses) byStatus.set(k, (byStatus.get(k) ?? 0) + v);
    console.log(`\nRequests: ${total} in ${wallS.toFixed(0)} s (${(total / wallS).toFixed(1)}/s); heartbeats sent: ${sent}`);
    console.log(
      `Answers by status: ${[...byStatus]
        .sort(([a], [b]) => a - b)
        .map(([k, v]) => `${k}: ${v}`)
        .join(", ")}\n`,
    );
    console.log("| operation | requests | p50 (ms) | p99 (ms) | answers |");
    console.log("|---|---:|---:|---:|---|");
    for (const [op, s] of [...stats].sort(([a], [b]) => a.localeCompare(b))) {
      const answers = [...s.statuses]
        .sort(([a], [b]) => a - b)
        .map(([k, v]) => `${k}: ${v}`)
        .join(", ");
      console.log(`| ${op} | ${s.times.length} | ${pct(s.times, 0.5).toFixed(1)} | ${pct(s.times, 0.99).toFixed(1)} | ${answers} |`);
    }
    const growth = (rssEnd - rssWarm) / rssWarm;
    console.log(
      `\nResident memory of the stack's process: ${rssStart.toFixed(0)} MiB at start, ${rssWarm.toFixed(0)} MiB after the warm-up (${Math.round(WARM_UP * 100)}% of the run), ${rssEnd.toFixed(0)} MiB at the end (${(growth * 100).toFixed(1)}%), ${peak.toFixed(0)} MiB at most`,
    );
    console.log(
      `Left in PENDING_*: ${Object.entries(left)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}`,
    );

    const fiveHundreds = [...byStatus].filter(([k]) => k >= 500).reduce((n, [, v]) => n + v, 0);
    const pendingLeft = Object.values(left).reduce((a, b) => a + b, 0);
    const budgets = [
      { name: "no 5xx", ok: fiveHundreds === 0, detail: `${fiveHundreds}` },
      { name: "nothing left PENDING", ok: pendingLeft === 0, detail: `${pendingLeft}` },
      {
        name: `memory growth after the warm-up under ${MEMORY_BUDGET * 100}%`,
        ok: growth < MEMORY_BUDGET,
        detail: `${(growth * 100).toFixed(1)}%`,
      },
    ];
    console.log("\nBudgets:");
    for (const b of budgets) console.log(`  ${b.ok ? "PASS" : "FAIL"}  ${b.name}: ${b.detail}`);
    if (budgets.some((b) => !b.ok)) process.exitCode = 1;
  } finally {
    await stack.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
