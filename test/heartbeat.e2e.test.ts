// The heartbeat receiver end to end. Heartbeats are built by Octavia's own code (python3-octavia):
// the amphora's health daemon (build_stats_message, fed HAProxy-like absolute counters, so the daemon
// itself computes the version-3 deltas and the sequence numbers) and status_message.wrap_envelope with
// the key. They go over UDP to the receiver of a stack started as `npm start` starts it, and the
// effects are read through the HTTP API (statuses, /stats) and the table (last_heartbeat). A second
// part runs a receiver in process over the shared DynamoDB Local: zombies, unknown amphorae, and a
// status write that must not resurrect a DELETED member.
import { randomUUID } from "node:crypto";
import { createSocket } from "node:dgram";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { wrapEnvelope, type ComputeDriver } from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { DynamoHealthStore, DynamoStore, createClients } from "@ottava/db";
import { HeartbeatReceiver } from "@ottava/controller";
import { eventually, PythonJsonProcess } from "@ottava/core/testing";
import { startStack, waitSettled, type Stack } from "./support/stack";
import { inProcessApp, SUBNET, webListener } from "@ottava/local/testing";

/** Reads specs (JSON lines) and answers, per spec, a JSON line of [base64 envelope, message] per beat. */
const OCTAVIA_AGENT = `
import base64, json, sys
from unittest import mock
from oslo_config import cfg
from octavia.common import config  # noqa: F401
from octavia.amphorae.backends.health_daemon import health_daemon, status_message
for line in sys.stdin:
    spec = json.loads(line)
    cfg.CONF.set_override('amphora_id', spec['amphora_id'], group='amphora_agent')
    cfg.CONF.set_override('base_path', spec['base_path'], group='haproxy_amphora')
    out = []
    for beat in spec['beats']:
        with mock.patch.object(health_daemon.util, 'get_loadbalancers', return_value=[spec['lb_id']]), \\
             mock.patch.object(health_daemon.util, 'is_lb_running', return_value=True), \\
             mock.patch.object(health_daemon.util, 'get_lvs_listeners', return_value=[]), \\
             mock.patch.object(health_daemon, 'get_stats', return_value=(beat['rows'], beat['pools'])):
            msg = health_daemon.build_stats_message()
        env = status_message.wrap_envelope(msg, beat.get('key', spec['key']), hex=beat.get('hex', True))
        out.append([base64.b64encode(env).decode(), msg])
    print(json.dumps(out), flush=True)
`;

interface Beat {
  /** HAProxy "show stat" FRONTEND rows: absolute counters. */
  rows: Record<string, string>[];
  /** get_pool_status(): "<pool>:<listener>" → status and members. */
  pools: Record<string, { status: string; members: Record<string, string> }>;
  hex?: boolean;
  key?: string;
}

/** One amphora agent (Octavia's health daemon code in a Python process), its counters kept in a directory. */
class OctaviaAgent extends PythonJsonProcess {
  private readonly dir = mkdtempSync(join(tmpdir(), "ottava-agent-"));

  constructor(
    readonly amphoraId: string,
    readonly lbId: string,
    readonly key: string,
  ) {
    super(OCTAVIA_AGENT);
  }

  /** The envelopes of these beats, in order (seq counting on from the last). */
  async beats(beats: Beat[]): Promise<{ envelope: Buffer; message: any }[]> {
    const out = await this.ask({ amphora_id: this.amphoraId, lb_id: this.lbId, key: this.key, base_path: this.dir, beats });
    if (!Array.isArray(out)) throw new Error(`the Octavia agent failed: ${out.error}`);
    return out.map(([b64, message]: [string, unknown]) => ({ envelope: Buffer.from(b64, "base64"), message }));
  }

  override close() {
    super.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function sendUdp(port: number, packets: Buffer[]) {
  const socket = createSocket("udp4");
  for (const p of packets) await new Promise<void>((ok, fail) => socket.send(p, port, "127.0.0.1", (e) => (e ? fail(e) : ok())));
  socket.close();
}

const logLines = (out: string) =>
  out
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => {
      try {
        return JSON.parse(l) as Record<string, any>;
      } catch {
        return {};
      }
    });

const frontend = (listenerId: string, c: { bin: number; bout: number; ereq: number; stot: number; scur: number }, status = "OPEN") => ({
  svname: "FRONTEND",
  pxname: listenerId,
  status,
  bin: String(c.bin),
  bout: String(c.bout),
  ereq: String(c.ereq),
  stot: String(c.stot),
  scur: String(c.scur),
});

describe("heartbeats from Octavia's amphora agent code to the stack `npm start` runs", () => {
  const KEY = `e2e-heartbeat-key-${randomUUID()}`;
  let stack: Stack;
  let port: number;
  let store: DynamoStore;
  let agent: OctaviaAgent;
  let lbId: string;
  let listenerId: string;
  let poolId: string;
  let members: { id: string; operating_status: string }[];
  let amphoraId: string;

  beforeAll(async () => {
    stack = await startStack(["--in-memory"], {
      OTTAVA_HEARTBEAT_KEY: KEY,
      OTTAVA_HEARTBEAT_PORT: "0",
      OTTAVA_LOG_LEVEL: "info",
      POWERTOOLS_METRICS_DISABLED: "false",
    });
    const lines = logLines(stack.output());
    port = lines.find((l) => l.message === "heartbeat receiver listening")!.heartbeatPort;
    const endpoint = lines.find((l) => l.message === "DynamoDB Local started")!.endpoint;
    store = new DynamoStore(createClients(endpoint).doc, { tableName: "ottava", expiryAge: 604800 });

    const created = await stack.call("POST", "/v2/lbaas/loadbalancers", {
      loadbalancer: {
        name: "hb",
        vip_subnet_id: SUBNET,
        listeners: [
          webListener({ members: ["192.0.2.10", "192.0.2.11", "192.0.2.12"].map((address) => ({ address, protocol_port: 80 })) }),
        ],
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    lbId = created.body.loadbalancer.id;
    expect((await waitSettled(stack, lbId)).body.loadbalancer.provisioning_status).toBe("ACTIVE");
    const tree = (await stack.call("GET", `/v2/lbaas/loadbalancers/${lbId}/status`)).body.statuses.loadbalancer;
    listenerId = tree.listeners[0].id;
    poolId = tree.listeners[0].pools[0].id;
    members = tree.listeners[0].pools[0].members;
    amphoraId = (await stack.call("GET", `/v2/octavia/amphorae?loadbalancer_id=${lbId}`)).body.amphorae[0].id;
    agent = new OctaviaAgent(amphoraId, lbId, KEY);
  });
  afterAll(async () => {
    agent?.close();
    await stack?.stop();
  });

  const statusTree = async () => (await stack.call("GET", `/v2/lbaas/loadbalancers/${lbId}/status`)).body.statuses.loadbalancer;
  const flat = (t: any) => ({
    lb: t.operating_status,
    listener: t.listeners[0].operating_status,
    pool: t.listeners[0].pools[0].operating_status,
    members: Object.fromEntries(t.listeners[0].pools[0].members.map((m: any) => [m.id, m.operating_status])),
  });
  const allStats = async () => ({
    lb: (await stack.call("GET", `/v2/lbaas/loadbalancers/${lbId}/stats`)).body.stats,
    listener: (await stack.call("GET", `/v2/lbaas/listeners/${listenerId}/stats`)).body.stats,
    amphora: (await stack.call("GET", `/v2/octavia/amphorae/${amphoraId}/stats`)).body,
  });
  const counters = (s: {
    bytes_in: number;
    bytes_out: number;
    active_connections: number;
    total_connections: number;
    request_errors: number;
  }) => s;

  it("turns heartbeats into statuses, counters and last_heartbeat; drops tampered, foreign-key and duplicate packets and counts them", async () => {
    const [m1, m2, m3] = members.map((m) => m.id) as [string, string, string];
    const m3Initial = members[2]!.operating_status;
    expect(m3Initial).toBe("NO_MONITOR"); // no health monitor: a member not reported keeps NO_MONITOR
    const before = await store.getLoadBalancer(lbId);
    expect(await allStats()).toMatchObject({
      lb: counters({ bytes_in: 0, bytes_out: 0, active_connections: 0, total_connections: 0, request_errors: 0 }),
      amphora: { faultstring: `Amphora stats for ${amphoraId} not found.` },
    });

    // 1. HAProxy has counted 100 bytes in, 200 out, 5 connections (3 open), 1 bad request; m2 is DOWN, m3 unreported.
    const pool = `${poolId}:${listenerId}`;
    const [first, foreign] = await agent.beats([
      {
        rows: [frontend(listenerId, { bin: 100, bout: 200, ereq: 1, stot: 5, scur: 3 })],
        pools: { [pool]: { status: "UP", members: { [m1]: "UP", [m2]: "DOWN" } } },
      },
      {
        rows: [frontend(listenerId, { bin: 100, bout: 200, ereq: 1, stot: 5, scur: 3 })],
        pools: { [pool]: { status: "UP", members: {} } },
        key: "not-the-key",
      },
    ]);
    expect(first!.message).toMatchObject({
      id: amphoraId,
      ver: 3,
      listeners: { [listenerId]: { status: "OPEN", stats: { rx: 100, tx: 200, conns: 3, totconns: 5, ereq: 1 } } },
    });
    const tampered = Buffer.from(first!.envelope);
    tampered[3] = tampered[3]! ^ 0xff;
    await sendUdp(port, [first!.envelope, first!.envelope, tampered, foreign!.envelope, Buffer.from("not a heartbeat")]);

    await eventually(statusTree, (t) =>
      expect(flat(t)).toEqual({
        lb: "DEGRADED",
        listener: "ONLINE",
        pool: "DEGRADED",
        members: { [m1]: "ONLINE", [m2]: "ERROR", [m3]: "NO_MONITOR" },
      }),
    );
    const one = counters({ bytes_in: 100, bytes_out: 200, active_connections: 3, total_connections: 5, request_errors: 1 });
    expect(await allStats()).toEqual({
      lb: one,
      listener: one,
      amphora: { amphora_stats: [{ ...one, id: amphoraId, listener_id: listenerId, loadbalancer_id: lbId }] }, // the duplicate was not counted twice
    });
    const amp = (await store.getAmphora(amphoraId)) as unknown as Record<string, unknown>;
    const heard = Date.parse(String(amp.last_heartbeat));
    expect(Date.now() - heard).toBeLessThan(30_000);

    // 2. Later (binary digest, as older agents sign): 150/225 bytes, 7 connections (1 open); every member UP.
    const [second] = await agent.beats([
      {
        rows: [frontend(listenerId, { bin: 150, bout: 225, ereq: 1, stot: 7, scur: 1 })],
        pools: { [pool]: { status: "UP", members: { [m1]: "UP", [m2]: "UP 1/2", [m3]: "UP" } } },
        hex: false,
      },
    ]);
    expect(second!.message).toMatchObject({
      seq: first!.message.seq + 2,
      listeners: { [listenerId]: { stats: { rx: 50, tx: 25, conns: 1, totconns: 2, ereq: 0 } } },
    });
    await sendUdp(port, [second!.envelope]);
    await eventually(statusTree, (t) =>
      expect(flat(t)).toEqual({
        lb: "ONLINE",
        listener: "ONLINE",
        pool: "ONLINE",
        members: { [m1]: "ONLINE", [m2]: "ONLINE", [m3]: "ONLINE" },
      }),
    );
    const two = counters({ bytes_in: 150, bytes_out: 225, active_connections: 1, total_connections: 7, request_errors: 1 });
    await eventually(allStats, (s) =>
      expect([s.lb, s.listener, s.amphora.amphora_stats[0]]).toEqual([two, two, expect.objectContaining(two)]),
    );
    expect(
      Date.parse(String(((await store.getAmphora(amphoraId)) as unknown as Record<string, unknown>).last_heartbeat)),
    ).toBeGreaterThanOrEqual(heard);

    // The health writes took no lock: the LB item's version and provisioning status are as they were, and it is still updatable.
    const after = await store.getLoadBalancer(lbId);
    expect({ version: after!.version, lockOwner: after!.lockOwner, provisioning: after!.record.provisioning_status }).toEqual({
      version: before!.version,
      lockOwner: undefined,
      provisioning: "ACTIVE",
    });
    expect((await stack.call("PUT", `/v2/lbaas/loadbalancers/${lbId}`, { loadbalancer: { description: "still mine" } })).status).toBe(200);
    expect((await waitSettled(stack, lbId)).body.loadbalancer).toMatchObject({ provisioning_status: "ACTIVE", operating_status: "ONLINE" });

    // The counters, as the receiver logs them when it stops; the key is never logged.
    expect(await stack.stop()).toBe(0);
    const logged = logLines(stack.output())
      .filter((l) => l.message === "heartbeat receiver counters")
      .at(-1);
    expect(logged).toMatchObject({ received: 6, accepted: 2, rejected: 3, duplicates: 1, failed: 0 });
    // And as metrics (EMF lines): the counters' increases, summed, are the counters.
    const sum = (name: string) =>
      logLines(stack.output())
        .filter((l) => l._aws?.CloudWatchMetrics?.[0]?.Namespace === "Ottava" && typeof l[name] === "number")
        .reduce((n, l) => n + l[name], 0);
    expect(["HeartbeatsReceived", "HeartbeatsAccepted", "HeartbeatsRejected", "HeartbeatsDuplicate", "ZombieAmphorae"].map(sum)).toEqual([
      6, 2, 3, 1, 0,
    ]);
    expect(sum("FlowsStarted")).toBeGreaterThan(0);
    expect(stack.output()).not.toContain(KEY);
  });
});

describe("an in-process receiver over DynamoDB Local", () => {
  const KEY = "in-process-key";
  let app: Awaited<ReturnType<typeof inProcessApp>>;
  let receiver: HeartbeatReceiver;
  let health: DynamoHealthStore;
  const deleted: string[] = [];
  const compute: ComputeDriver = {
    build: async () => "x",
    getInstance: async () => {
      throw new Error("unused");
    },
    delete: async (id) => {
      deleted.push(id);
    },
  };

  beforeAll(async () => {
    app = await inProcessApp();
    health = new DynamoHealthStore(createClients(app.config.dynamodbEndpoint).doc, { tableName: app.config.tableName });
    receiver = new HeartbeatReceiver({
      key: KEY,
      host: "127.0.0.1",
      port: 0,
      store: health,
      compute,
      log: createLogger({}, "error"),
      metrics,
    });
    await receiver.start();
  });
  afterAll(async () => {
    await receiver?.stop();
  });

  const heartbeat = (id: string, seq: number, listeners: Record<string, unknown> = {}, pools: Record<string, unknown> = {}) =>
    wrapEnvelope({ id, seq, ver: 3, listeners, pools }, KEY);

  it("never resurrects a DELETED member; the rest of the batch is written", async () => {
    const created = await app.call("POST", "/v2/lbaas/loadbalancers", {
      loadbalancer: {
        vip_subnet_id: SUBNET,
        listeners: [
          {
            protocol: "TCP",
            protocol_port: 22,
            default_pool: {
              name: "ssh",
              protocol: "TCP",
              lb_algorithm: "ROUND_ROBIN",
              members: [{ address: "192.0.2.20", protocol_port: 22 }],
            },
          },
        ],
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const lbId = created.body.loadbalancer.id;
    await app.settle();
    const view = await health.healthView((await app.store.amphoraeOf(lbId))[0]!.id);
    const member = view.members[0]!;
    const pool = view.pools[0]!;
    expect((await app.call("DELETE", `/v2/lbaas/pools/${pool.id}/members/${member.id}`)).status).toBe(204);
    await app.settle();
    // A heartbeat judged on the view read before the delete: the member's write must not land.
    const res = await health.applyHealth({
      lbId,
      amphoraId: view.amphora!.id,
      lastHeartbeat: new Date().toISOString(),
      statuses: [
        { kind: "member", id: member.id, pool_id: member.pool_id, from: member.operating_status, to: "ERROR" },
        { kind: "pool", id: pool.id, from: pool.operating_status, to: "ERROR" },
      ],
      stats: [],
      statsBase: { rows: {}, revision: 0 },
    });
    expect(res).toEqual({ written: 2, skipped: 1 });
    const gone = await app.store.getChild("member", member.id);
    expect(gone!.record).toMatchObject({ provisioning_status: "DELETED", operating_status: member.operating_status });
    expect((await app.store.getChild("pool", pool.id))!.record.operating_status).toBe("ERROR");
  });

  it("adds up the counters of two writers of the same amphora: the one whose revision moved reads again", async () => {
    const created = await app.call("POST", "/v2/lbaas/loadbalancers", {
      loadbalancer: { vip_subnet_id: SUBNET, listeners: [{ protocol: "TCP", protocol_port: 23 }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const lbId = created.body.loadbalancer.id;
    await app.settle();
    const view = await health.healthView((await app.store.amphoraeOf(lbId))[0]!.id);
    const listenerId = view.listeners[0]!.id;
    const write = {
      lbId,
      amphoraId: view.amphora!.id,
      lastHeartbeat: new Date().toISOString(),
      statuses: [],
      stats: [
        {
          listener_id: listenerId,
          mode: "increment" as const,
          bytes_in: 10,
          bytes_out: 1,
          active_connections: 2,
          total_connections: 3,
          request_errors: 0,
        },
      ],
      statsBase: { rows: view.amphora!.listener_stats, revision: view.amphora!.listener_stats_rev },
    };
    // Both computed on the same read: the second finds the revision moved, reads again and adds.
    expect(await health.applyHealth(write)).toEqual({ written: 1, skipped: 0 });
    expect(await health.applyHealth(write)).toEqual({ written: 1, skipped: 0 });
    expect((await app.call("GET", `/v2/lbaas/listeners/${listenerId}/stats`)).body.stats).toEqual({
      bytes_in: 20,
      bytes_out: 2,
      active_connections: 2,
      total_connections: 6,
      request_errors: 0,
    });
    expect((await health.healthView(view.amphora!.id)).amphora!.listener_stats_rev).toBe(2);
  });

  it("deletes a zombie amphora's instance, ignores unknown amphorae and counts both", async () => {
    const created = await app.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET } });
    const lbId = created.body.loadbalancer.id;
    await app.settle();
    const amp = (await app.store.amphoraeOf(lbId))[0]!;
    expect((await app.call("DELETE", `/v2/lbaas/loadbalancers/${lbId}`)).status).toBe(204);
    await app.settle();
    await sendUdp(receiver.port!, [heartbeat(amp.id, 1), heartbeat(randomUUID(), 1)]);
    await eventually(
      async () => {
        await receiver.idle();
        return receiver.counters;
      },
      (c) => expect(c).toMatchObject({ received: 2, accepted: 2, zombies: 1, unknown: 1, failed: 0 }),
    );
    expect(deleted).toEqual([amp.compute_id]);
    // Nothing was written to the DELETED amphora.
    expect(((await app.store.getChild("amphora", amp.id)) as { record: Record<string, unknown> }).record.last_heartbeat).toBeUndefined();
  });
});
