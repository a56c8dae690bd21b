// The local amphora's heartbeat sender (health_daemon.py, health_sender.py, haproxy_query.py) against a real HAProxy, Ottava's receiver, and Octavia's own daemon code.
//
// One HAProxy (Debian's /usr/sbin/haproxy) runs a configuration laid out as an amphora's
// (<base>/<lb id>/haproxy.cfg, the stats socket <base>/<lb id>.sock, the pid file
// <base>/<lb id>/<lb id>.pid), named as Octavia's templates name things: a frontend per listener,
// a backend "<pool id>:<listener id>" with a server per member: one UP, one DOWN (its port refuses),
// one without checks, one drained (weight 0), one disabled (MAINT); a second listener without a
// pool, and a "prometheus" proxy that must not be reported. The heartbeats go over UDP to Ottava's
// real receiver (an in-memory health store behind it), and the same HAProxy state is read by Octavia's
// build_stats_message (python3-octavia), whose messages ours must equal.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { createServer as createHttpServer, get as httpGet, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyStatsUpdates, unwrapEnvelope, type HealthStore, type HealthView, type HealthWrite } from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { HeartbeatReceiver } from "@ottava/controller";
import { eventually, PythonJsonProcess } from "@ottava/core/testing";
import { noopDrivers } from "../src/noop";
import { buildStatsMessage, startHeartbeats, StatsCounters, type HeartbeatSender, type StatsMessage } from "../src/local/heartbeat";
import { haproxyQuery, parseShowStat, poolStatusOf, showInfo, showStat } from "../src/local/haproxy-query";
import { freePort } from "../src/local/free-port";

const HAPROXY = "/usr/sbin/haproxy";
const KEY = `hb-key-${randomUUID()}`;
const log = createLogger({ service: "test" }, "error");

const lbId = randomUUID();
const amphoraId = randomUUID();
const listenerId = randomUUID();
const bareListenerId = randomUUID();
const poolId = randomUUID();
const m = { up: randomUUID(), down: randomUUID(), noCheck: randomUUID(), drain: randomUUID(), maint: randomUUID() };
const backendName = `${poolId}:${listenerId}`;

let base: string;
let sock: string;
let pidFile: string;
let haproxy: ChildProcess;
let web: Server;
let frontendPort: number;

/** `n` HTTP requests through the listener, each on its own connection (no keep-alive: scur settles at 0). */
async function traffic(n: number) {
  for (let i = 0; i < n; i++) {
    await new Promise<void>((ok, fail) => {
      httpGet({ host: "127.0.0.1", port: frontendPort, path: `/r${i}`, agent: false, headers: { connection: "close" } }, (res) => {
        res.resume();
        res.on("end", () => ok());
      }).on("error", fail);
    });
  }
  // HAProxy counts a session when it closes.
  await eventually(
    () => showStat(sock, -1, 1, -1),
    (rows) => expect(rows.find((r) => r.pxname === listenerId)?.scur).toBe("0"),
  );
}

/** The FRONTEND row of the listener, as HAProxy reports it now. */
const frontendRow = async (id = listenerId) => (await showStat(sock)).find((r) => r.pxname === id && r.svname === "FRONTEND")!;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "ottava-hb-"));
  mkdirSync(join(base, lbId));
  sock = join(base, `${lbId}.sock`);
  pidFile = join(base, lbId, `${lbId}.pid`);
  web = createHttpServer((_req, res) => res.end("member says hello\n"));
  await new Promise<void>((ok) => web.listen(0, "127.0.0.1", ok));
  const upPort = (web.address() as { port: number }).port;
  const downPort = await freePort(); // nothing listens: checks fail with "Connection refused"
  frontendPort = await freePort();
  const barePort = await freePort();
  const promPort = await freePort();
  const check = "check inter 100ms rise 1 fall 1";
  writeFileSync(
    join(base, lbId, "haproxy.cfg"),
    [
      `# Configuration for loadbalancer ${lbId}`,
      "global",
      `    stats socket ${sock} mode 0666 level user`,
      "defaults",
      "    mode http",
      "    timeout connect 1s",
      "    timeout client 5s",
      "    timeout server 5s",
      "frontend prometheus-exporter-internal-endpoint",
      `    bind 127.0.0.1:${promPort}`,
      "    default_backend prometheus-exporter-internal",
      "backend prometheus-exporter-internal",
      `    server prometheus-internal 127.0.0.1:${upPort}`,
      `frontend ${listenerId}`,
      `    bind 127.0.0.1:${frontendPort}`,
      "    maxconn 50000",
      `    default_backend ${backendName}`,
      `frontend ${bareListenerId}`,
      `    bind 127.0.0.1:${barePort}`,
      `backend ${backendName}`,
      "    balance roundrobin",
      `    server ${m.up} 127.0.0.1:${upPort} weight 1 ${check}`,
      `    server ${m.down} 127.0.0.1:${downPort} weight 1 ${check}`,
      `    server ${m.noCheck} 127.0.0.1:${upPort} weight 1`,
      `    server ${m.drain} 127.0.0.1:${upPort} weight 0 ${check}`,
      `    server ${m.maint} 127.0.0.1:${upPort} weight 1 disabled ${check}`,
      "",
    ].join("\n"),
  );
  haproxy = spawn(HAPROXY, ["-f", join(base, lbId, "haproxy.cfg"), "-db"], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  haproxy.stderr!.on("data", (d) => (stderr += d));
  writeFileSync(pidFile, `${haproxy.pid}\n`);
  // Up, and its checks settled: the down member DOWN, the others as they stay.
  await eventually(
    () => showStat(sock, -1, 6, -1),
    (rows) => {
      const status = Object.fromEntries(rows.map((r) => [r.svname, r.status]));
      expect(status, stderr).toMatchObject({
        [m.up]: "UP",
        [m.down]: "DOWN",
        [m.noCheck]: "no check",
        [m.drain]: "UP",
        [m.maint]: "MAINT",
      });
    },
  );
});

afterAll(async () => {
  haproxy?.kill();
  await new Promise<void>((ok) => (web ? web.close(() => ok()) : ok()));
  if (base) rmSync(base, { recursive: true, force: true });
});

describe("HAProxy's stats socket, read as Octavia's HAProxyQuery", () => {
  it("show info answers HAProxy's fields; show stat its CSV rows, the prometheus proxies left out", async () => {
    const info = await showInfo(sock);
    expect(info.Name).toBe("HAProxy");
    expect(info.Pid).toBe(String(haproxy.pid));
    const rows = await showStat(sock);
    expect(rows.map((r) => `${r.pxname}/${r.svname}`)).toEqual([
      `${listenerId}/FRONTEND`,
      `${bareListenerId}/FRONTEND`,
      ...[m.up, m.down, m.noCheck, m.drain, m.maint, "BACKEND"].map((s) => `${backendName}/${s}`),
    ]);
    expect(rows[0]).toMatchObject({ status: "OPEN", slim: "50000" });
  });

  it("get_pool_status: the backend's status, each server's by name (UP with weight 0 is DRAIN)", async () => {
    expect(poolStatusOf(await showStat(sock, -1, 6, -1))).toEqual({
      [backendName]: {
        pool_uuid: poolId,
        listener_uuid: listenerId,
        status: "UP",
        members: { [m.up]: "UP", [m.down]: "DOWN", [m.noCheck]: "no check", [m.drain]: "DRAIN", [m.maint]: "MAINT" },
      },
    });
  });

  it("reads CSV as Python's csv module (quoted fields, doubled quotes) and refuses a backend not named <pool>:<listener>", () => {
    const rows = parseShowStat('# pxname,svname,status,weight,\np:l,"a,b","say ""hi""",0,\n\np:l,BACKEND,UP,1,');
    expect(rows).toEqual([
      { pxname: "p:l", svname: "a,b", status: 'say "hi"', weight: "0", "": "" },
      { pxname: "p:l", svname: "BACKEND", status: "UP", weight: "1", "": "" },
    ]);
    expect(() => poolStatusOf(parseShowStat("# pxname,svname,status,weight\nweb,BACKEND,UP,1"))).toThrow(
      "not named <pool id>:<listener id>",
    );
  });
});

/** A health store in memory: one amphora of one load balancer, its writes applied as DynamoHealthStore would. */
class MemoryHealthStore implements HealthStore {
  readonly writes: HealthWrite[] = [];
  constructor(private view: HealthView) {}
  async healthView(id: string): Promise<HealthView> {
    return id === this.view.amphora?.id
      ? structuredClone(this.view)
      : { amphora: undefined, lb: undefined, listeners: [], pools: [], members: [] };
  }
  async applyHealth(write: HealthWrite) {
    this.writes.push(write);
    for (const c of write.statuses) {
      const target =
        c.kind === "loadbalancer"
          ? this.view.lb
          : [...this.view.listeners, ...this.view.pools, ...this.view.members].find((o) => o.id === c.id);
      if (target) target.operating_status = c.to;
    }
    const a = this.view.amphora!;
    if (write.stats.length > 0) {
      a.listener_stats = applyStatsUpdates(a.listener_stats, write.stats);
      a.listener_stats_rev++;
    }
    return { written: write.statuses.length + write.stats.length, skipped: 0 };
  }
  get current() {
    return this.view;
  }
}

describe("heartbeats to Ottava's receiver over UDP", () => {
  let store: MemoryHealthStore;
  let receiver: HeartbeatReceiver;
  let sender: HeartbeatSender;
  const sent: StatsMessage[] = [];

  beforeAll(async () => {
    store = new MemoryHealthStore({
      amphora: {
        id: amphoraId,
        loadbalancer_id: lbId,
        status: "ALLOCATED",
        compute_id: randomUUID(),
        listener_stats: {},
        listener_stats_rev: 0,
      },
      lb: { id: lbId, enabled: true, provisioning_status: "ACTIVE", operating_status: "OFFLINE" },
      listeners: [
        { id: listenerId, enabled: true, protocol: "HTTP", operating_status: "OFFLINE", default_pool_id: poolId },
        { id: bareListenerId, enabled: true, protocol: "HTTP", operating_status: "OFFLINE", default_pool_id: null },
      ],
      pools: [{ id: poolId, operating_status: "OFFLINE" }],
      members: Object.values(m).map((id) => ({ id, pool_id: poolId, enabled: true, operating_status: "OFFLINE" })),
    });
    receiver = new HeartbeatReceiver({
      key: KEY,
      host: "127.0.0.1",
      port: 0,
      store,
      compute: noopDrivers().compute,
      log,
      metrics,
      logIntervalMs: 3_600_000,
    });
    const port = await receiver.start();
    await traffic(3);
    sender = startHeartbeats({
      amphoraId,
      statsSocket: sock,
      pidFile,
      targets: [{ host: "127.0.0.1", port }],
      key: KEY,
      intervalSeconds: 0.2,
      log,
      onSent: (msg) => sent.push(msg),
    });
  });
  afterAll(async () => {
    await sender?.stop();
    await receiver?.stop();
  });

  it("every interval; the statuses Octavia's health manager computes from HAProxy's state", async () => {
    await eventually(
      async () => receiver.counters.accepted,
      (n) => expect(n).toBeGreaterThanOrEqual(2),
    );
    await receiver.idle();
    const v = store.current;
    const status = (id: string) => [...v.listeners, ...v.pools, ...v.members].find((o) => o.id === id)?.operating_status;
    expect({ lb: v.lb!.operating_status, listener: status(listenerId), bare: status(bareListenerId), pool: status(poolId) }).toEqual({
      lb: "DEGRADED", // a member DOWN in an UP backend
      listener: "ONLINE", // OPEN
      bare: "ONLINE",
      pool: "DEGRADED",
    });
    expect(Object.fromEntries(Object.entries(m).map(([k, id]) => [k, status(id)]))).toEqual({
      up: "ONLINE",
      down: "ERROR",
      noCheck: "NO_MONITOR",
      drain: "DRAINING",
      maint: "OFFLINE",
    });
    // Both listeners reported, as expected: each heartbeat counts as one.
    expect(store.writes.some((w) => w.lastHeartbeat !== undefined)).toBe(true);
    // One beat at a time, seq counting from 0, version 3, no listener or pool but HAProxy's.
    expect(sent.slice(0, 2).map((s) => [s.seq, s.ver, s.id])).toEqual([
      [0, 3, amphoraId],
      [1, 3, amphoraId],
    ]);
    expect(Object.keys(sent[0]!.listeners).sort()).toEqual([listenerId, bareListenerId].sort());
    expect(Object.keys(sent[0]!.pools)).toEqual([backendName]);
  });

  it("counters as deltas: what the receiver adds up is HAProxy's absolute counters, before and after more traffic", async () => {
    const stored = () => store.current.amphora!.listener_stats[listenerId];
    const expectTotals = async () => {
      const row = await frontendRow();
      await eventually(
        async () => {
          await receiver.idle();
          return stored();
        },
        (s) =>
          expect(s).toEqual({
            bytes_in: Number(row.bin),
            bytes_out: Number(row.bout),
            active_connections: 0,
            total_connections: Number(row.stot),
            request_errors: Number(row.ereq),
          }),
      );
      return row;
    };
    const before = await expectTotals();
    expect(Number(before.stot)).toBeGreaterThanOrEqual(3);
    const seen = sent.length;
    await traffic(4);
    const after = await expectTotals();
    expect(Number(after.stot) - Number(before.stot)).toBe(4);
    // The beats in between carried only the new traffic: their totconns add up to 4.
    const later = sent.slice(seen).map((s) => s.listeners[listenerId]!.stats.totconns);
    expect(later.reduce((a, b) => a + b, 0)).toBe(4);
  });

  it("the key is looked up for each beat: a beat under another key is dropped by the receiver", async () => {
    const rejected = receiver.counters.rejected;
    sender.update({ key: `${KEY}-other` });
    await sender.beat();
    await eventually(
      async () => receiver.counters.rejected,
      (n) => expect(n).toBeGreaterThan(rejected),
    );
    sender.update({ key: KEY });
    const accepted = receiver.counters.accepted;
    await sender.beat();
    await eventually(
      async () => receiver.counters.accepted,
      (n) => expect(n).toBeGreaterThan(accepted),
    );
  });
});

describe("the sender's loop, as Octavia's run_sender and UDPStatusSender", () => {
  const listen = async () => {
    const s = createSocket("udp4");
    const got: Buffer[] = [];
    s.on("message", (d) => got.push(d));
    await new Promise<void>((ok) => s.bind(0, "127.0.0.1", ok));
    return { s, got, port: s.address().port };
  };
  const closeAll = (sockets: Socket[]) => Promise.all(sockets.map((s) => new Promise<void>((ok) => s.close(() => ok()))));

  it("sends each heartbeat to one controller address, the next one each time", async () => {
    const a = await listen();
    const b = await listen();
    const sender = startHeartbeats({
      amphoraId,
      statsSocket: sock,
      targets: [
        { host: "127.0.0.1", port: a.port },
        { host: "localhost", port: b.port },
      ],
      key: KEY,
      intervalSeconds: 3600,
    });
    for (let i = 0; i < 3; i++) await sender.beat(); // with the first one, four beats
    await sender.stop();
    await eventually(
      async () => a.got.length + b.got.length,
      (n) => expect(n).toBe(4),
    );
    const seqs = (got: Buffer[]) => got.map((d) => (unwrapEnvelope(d, KEY) as StatsMessage).seq);
    expect({ a: seqs(a.got), b: seqs(b.got) }).toEqual({ a: [0, 2], b: [1, 3] });
    await closeAll([a.s, b.s]);
  });

  it("a HAProxy that is not running (its pid file names no process) adds nothing, and the heartbeat still goes", async () => {
    const a = await listen();
    const exited = spawn("true");
    await new Promise((ok) => exited.on("exit", ok));
    const stalePid = join(base, "stale.pid");
    writeFileSync(stalePid, `${exited.pid}\n`);
    const sender = startHeartbeats({
      amphoraId,
      statsSocket: sock,
      pidFile: stalePid,
      targets: [{ host: "127.0.0.1", port: a.port }],
      key: KEY,
      intervalSeconds: 3600,
    });
    const msg = await sender.beat();
    await sender.stop();
    expect(msg).toEqual({ id: amphoraId, seq: 1, listeners: {}, pools: {}, ver: 3 });
    await eventually(
      async () => a.got.length,
      (n) => expect(n).toBe(2),
    );
    await closeAll([a.s]);
  });

  it("no stats socket yet reports no listeners; a socket that does not answer skips the heartbeat (seq still counts)", async () => {
    const a = await listen();
    const sender = startHeartbeats({
      amphoraId,
      statsSocket: null,
      targets: [{ host: "127.0.0.1", port: a.port }],
      key: KEY,
      intervalSeconds: 3600,
    });
    expect(await sender.beat()).toEqual({ id: amphoraId, seq: 1, listeners: {}, pools: {}, ver: 3 });
    sender.update({ statsSocket: join(base, "nothing.sock") });
    expect(await sender.beat()).toBeUndefined();
    sender.update({ statsSocket: sock, pidFile });
    const msg = await sender.beat();
    await sender.stop();
    expect(msg?.seq).toBe(3);
    expect(Object.keys(msg!.listeners)).toHaveLength(2);
    await eventually(
      async () => a.got.length,
      (n) => expect(n).toBe(3),
    );
    await closeAll([a.s]);
  });

  it("keeps the counters in countersFile: a restarted sender does not report the same traffic again", async () => {
    const a = await listen();
    const countersFile = join(base, "stats_counters.ottava.json");
    const row = await frontendRow();
    const firstMessages: StatsMessage[] = [];
    const first = startHeartbeats({
      amphoraId,
      statsSocket: sock,
      targets: [{ host: "127.0.0.1", port: a.port }],
      key: KEY,
      intervalSeconds: 3600,
      countersFile,
      onSent: (msg) => firstMessages.push(msg),
    });
    await first.beat();
    await first.stop();
    // The first message of a fresh sender reports HAProxy's absolute counters, the next one what changed since.
    expect(firstMessages.map((msg) => msg.listeners[listenerId]!.stats)).toEqual([
      { tx: Number(row.bout), rx: Number(row.bin), conns: 0, totconns: Number(row.stot), ereq: Number(row.ereq) },
      { tx: 0, rx: 0, conns: 0, totconns: 0, ereq: 0 },
    ]);
    expect(JSON.parse(readFileSync(countersFile, "utf8"))[listenerId]).toEqual({
      bin: Number(row.bin),
      bout: Number(row.bout),
      ereq: Number(row.ereq),
      stot: Number(row.stot),
    });
    const again = startHeartbeats({
      amphoraId,
      statsSocket: sock,
      targets: [{ host: "127.0.0.1", port: a.port }],
      key: KEY,
      intervalSeconds: 3600,
      countersFile,
    });
    const m2 = await again.beat();
    await again.stop();
    expect(m2!.listeners[listenerId]!.stats).toEqual({ tx: 0, rx: 0, conns: 0, totconns: 0, ereq: 0 });
    await closeAll([a.s]);
  });

  it("counters that went down (HAProxy restarted) count from zero, as calculate_stats_deltas", async () => {
    const counters = new StatsCounters();
    const row = (n: number) => ({ bin: String(n), bout: String(n), ereq: "0", stot: String(n) });
    expect(await counters.deltas("l", row(100))).toEqual({ bin: 100, bout: 100, ereq: 0, stot: 100 });
    expect(await counters.deltas("l", row(130))).toEqual({ bin: 30, bout: 30, ereq: 0, stot: 30 });
    expect(await counters.deltas("l", row(7))).toEqual({ bin: 7, bout: 7, ereq: 0, stot: 7 });
  });
});

/** Octavia's health daemon in a Python process, its base_path the amphora's directory: answers build_stats_message and unwrap_envelope. */
const OCTAVIA_DAEMON = `
import base64, json, sys
from oslo_config import cfg
from octavia.common import config  # noqa: F401
from octavia.amphorae.backends.health_daemon import health_daemon, status_message
cfg.CONF.set_override('amphora_id', sys.argv[1], group='amphora_agent')
cfg.CONF.set_override('base_path', sys.argv[2], group='haproxy_amphora')
for line in sys.stdin:
    cmd = json.loads(line)
    try:
        if cmd['op'] == 'build':
            out = health_daemon.build_stats_message()
        else:
            out = status_message.unwrap_envelope(base64.b64decode(cmd['envelope']), cmd['key'])
    except Exception as e:
        out = {'error': repr(e)}
    print(json.dumps(out), flush=True)
`;

/** Octavia's health daemon code for one amphora, its counters under `basePath`. */
class OctaviaDaemon extends PythonJsonProcess {
  constructor(amphora: string, basePath: string) {
    super(OCTAVIA_DAEMON, [amphora, basePath]);
  }
  override async ask(cmd: Record<string, unknown>): Promise<any> {
    const out = await super.ask(cmd);
    if (out && typeof out === "object" && "error" in out) throw new Error(`Octavia's daemon failed: ${out.error}`);
    return out;
  }
}

describe("cross-check with Octavia's own health daemon (python3-octavia) on the same HAProxy", () => {
  it("build_stats_message answers our message for the same state, beat after beat; unwrap_envelope reads our datagrams", async () => {
    expect(existsSync(join(base, lbId, "haproxy.cfg"))).toBe(true);
    const octavia = new OctaviaDaemon(amphoraId, base);
    const receiver = createSocket("udp4");
    const datagrams: Buffer[] = [];
    receiver.on("message", (d) => datagrams.push(d));
    await new Promise<void>((ok) => receiver.bind(0, "127.0.0.1", ok));
    try {
      // Both start with no counters (Octavia's in <base>/stats_counters.json, ours in memory): both report absolutes first.
      let first!: (msg: StatsMessage) => void;
      const firstSent = new Promise<StatsMessage>((ok) => (first = ok));
      const sender = startHeartbeats({
        amphoraId,
        statsSocket: sock,
        pidFile,
        targets: [{ host: "127.0.0.1", port: receiver.address().port }],
        key: KEY,
        intervalSeconds: 3600,
        onSent: (msg) => first(msg),
      });
      const ours0 = await firstSent;
      const theirs0 = await octavia.ask({ op: "build" });
      expect(ours0).toEqual(theirs0);
      expect(ours0.listeners[listenerId]!.stats.totconns).toBeGreaterThan(0);

      await traffic(5);
      const ours1 = await sender.beat();
      const theirs1 = await octavia.ask({ op: "build" });
      expect(ours1).toEqual(theirs1);
      expect(ours1!.seq).toBe(1);
      expect(ours1!.listeners[listenerId]!.stats.totconns).toBe(5);
      await sender.stop();

      // Octavia's health manager would take our datagrams: its unwrap_envelope gives back our messages.
      await eventually(
        async () => datagrams.length,
        (n) => expect(n).toBe(2),
      );
      const unwrapped = await Promise.all(datagrams.map((d) => octavia.ask({ op: "unwrap", envelope: d.toString("base64"), key: KEY })));
      expect(unwrapped).toEqual([ours0, ours1]);
    } finally {
      octavia.close();
      await new Promise<void>((ok) => receiver.close(() => ok()));
    }
  });

  it("from the same captured `show stat` output, our parsing and message equal HAProxyQuery's and build_stats_message's", async () => {
    const all = await haproxyQuery(sock, "show stat -1 -1 -1");
    const backends = await haproxyQuery(sock, "show stat -1 6 -1");
    const ours = await buildStatsMessage(
      amphoraId,
      7,
      { stats: parseShowStat(all), pools: poolStatusOf(parseShowStat(backends)) },
      new StatsCounters(),
    );
    // Octavia's own HAProxyQuery parses the same text (its socket read replaced by the captured output).
    const script = `
import json, sys
from unittest import mock
from oslo_config import cfg
from octavia.common import config  # noqa: F401
from octavia.amphorae.backends.health_daemon import health_daemon
from octavia.amphorae.backends.utils import haproxy_query
spec = json.loads(sys.stdin.read())
cfg.CONF.set_override('amphora_id', spec['amphora_id'], group='amphora_agent')
cfg.CONF.set_override('base_path', spec['base_path'], group='haproxy_amphora')
health_daemon.SEQ = 7
with mock.patch.object(haproxy_query.HAProxyQuery, '_query', lambda self, q: spec['answers'][q]), \\
     mock.patch.object(health_daemon.util, 'get_loadbalancers', return_value=['lb']), \\
     mock.patch.object(health_daemon.util, 'is_lb_running', return_value=True), \\
     mock.patch.object(health_daemon.util, 'get_lvs_listeners', return_value=[]):
    print(json.dumps(health_daemon.build_stats_message()))
`;
    const scratch = mkdtempSync(join(tmpdir(), "ottava-hb-octavia-"));
    try {
      const py = spawn("/usr/bin/python3", ["-c", script], { stdio: ["pipe", "pipe", "pipe"] });
      let out = "";
      let err = "";
      py.stdout.on("data", (d) => (out += d));
      py.stderr.on("data", (d) => (err += d));
      py.stdin.end(
        JSON.stringify({
          amphora_id: amphoraId,
          base_path: scratch,
          answers: { "show stat -1 -1 -1": all, "show stat -1 6 -1": backends },
        }),
      );
      const code = await new Promise((ok) => py.on("exit", ok));
      expect(code, err).toBe(0);
      expect(ours).toEqual(JSON.parse(out));
      expect(Object.keys(ours.listeners)).toHaveLength(2);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
