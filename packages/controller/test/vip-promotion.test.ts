// ACTIVE_STANDBY promotion on a network that ignores gratuitous ARP: the amphora image's ottava-vrrp-master
// (packages/aws/image/, run for real with this host's python3, from the amphora agent's configuration as
// Ottava renders it) reports the promotion over UDP in the heartbeats' envelope; the real heartbeat receiver
// verifies it and starts the amphora-vip-promote flow, run by the real ASL in the local runner against
// DynamoDB Local, whose task calls the network driver's takeVip. The vpc driver is not on this branch: the
// network is the no-op driver with a takeVip that records its calls (the task context's drivers), so this
// shows which amphora the VIP is handed to and when nothing is done, not the EC2 calls.
import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AMPHORA_VIP_PROMOTE_FLOW,
  PROMOTION_MESSAGE_TYPE,
  PROMOTION_WINDOW_MS,
  promotionExecutionName,
  unwrapEnvelope,
  wrapEnvelope,
  type Amphora,
  type LoadBalancer,
  type Logger,
} from "@ottava/core";
import { metrics } from "@ottava/edge";
import { VRRP_NOTIFY_MASTER_SCRIPT, noopDrivers, renderAgentConfig } from "@ottava/amphora";
import { HeartbeatReceiver, createHealthStore } from "@ottava/controller";
import { inProcessApp, SUBNET } from "@ottava/local/testing";

const IMAGE = new URL("../../aws/image/", import.meta.url).pathname;
const SCRIPT = join(IMAGE, "ottava-vrrp-master");
const KEY = `promotion-key-${randomUUID()}`;
const LOOPBACK = "127.0.0.1";

type App = Awaited<ReturnType<typeof inProcessApp>>;

/** A logger that keeps what it is told. */
function recordingLog() {
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (message: string, fields: Record<string, unknown> = {}) =>
      void lines.push({ level, message, fields });
  const log: Logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), child: () => log };
  return { log, lines };
}

let app: App;
let receiver: HeartbeatReceiver;
let port: number;
const receiverLog = recordingLog();
/** takeVip's calls: [lb id, amphora id]. */
const taken: [string, string][] = [];
const dir = mkdtempSync(join(tmpdir(), "ottava-promotion-"));
const sockets: Socket[] = [];

/** An ACTIVE_STANDBY (or SINGLE) LB through the API, built by the no-op drivers; its amphorae's management address made loopback's. */
async function loadBalancer(topology: "ACTIVE_STANDBY" | "SINGLE" = "ACTIVE_STANDBY") {
  const res = await app.call("POST", "/v2/lbaas/loadbalancers", {
    loadbalancer: {
      name: `promote-${topology}`,
      vip_subnet_id: SUBNET,
      ...(topology === "SINGLE" ? { flavor_id: await singleFlavor() } : {}),
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const lbId = res.body.loadbalancer.id as string;
  await app.settle();
  const amphorae: Amphora[] = [];
  for (const a of await app.store.amphoraeOf(lbId)) {
    expect(await app.store.updateAmphoraIf(lbId, a.id, ["ALLOCATED"], { lb_network_ip: LOOPBACK })).toBe(true);
    amphorae.push((await app.store.getAmphora(a.id))!);
  }
  const byRole = (role: string) => amphorae.find((a) => a.role === role)!;
  return { lbId, amphorae, master: byRole("MASTER"), backup: byRole("BACKUP") };
}

let single: Promise<string> | undefined;
/** A flavor whose topology is SINGLE (the settings' default is ACTIVE_STANDBY here). */
function singleFlavor(): Promise<string> {
  return (single ??= (async () => {
    const fp = await app.call("POST", "/v2/lbaas/flavorprofiles", {
      flavorprofile: { name: "single", provider_name: "amphora", flavor_data: JSON.stringify({ loadbalancer_topology: "SINGLE" }) },
    });
    const f = await app.call("POST", "/v2/lbaas/flavors", {
      flavor: { name: "single", flavor_profile_id: fp.body.flavorprofile.id, enabled: true },
    });
    return f.body.flavor.id as string;
  })());
}

/** A UDP socket on loopback standing for another health manager: what it receives. */
async function listener(): Promise<{ port: number; got: Buffer[] }> {
  const s = createSocket("udp4");
  sockets.push(s);
  const got: Buffer[] = [];
  s.on("message", (m) => got.push(m));
  await new Promise<void>((ok) => s.bind(0, LOOPBACK, () => ok()));
  return { port: s.address().port, got };
}

/** The amphora agent's configuration as Ottava renders it for `amphora`, in a file of its own. */
function agentConf(amphora: Amphora, controllers: string[], key = KEY): string {
  const path = join(dir, `${amphora.id}-${randomUUID()}.conf`);
  writeFileSync(
    path,
    renderAgentConfig({ amphora, topology: "ACTIVE_STANDBY", controllerIpPortList: controllers, heartbeatKey: key }, { bindPort: 9443 }),
    { mode: 0o600 },
  );
  return path;
}

/** Runs the image's script as keepalived would (as root, no arguments but where its files are), `wrap` around it. */
function runScript(config: string, wrap: string[] = []): Promise<{ status: number | null; stderr: string }> {
  // This process's network namespace stands for the amphora's default one (/proc/1/ns/net on an amphora).
  const args = [SCRIPT, "--config", config, "--netns", `/proc/${process.pid}/ns/net`];
  const child = spawn(wrap[0] ?? "/usr/bin/python3", wrap.length ? [...wrap.slice(1), "/usr/bin/python3", ...args] : args, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", LANG: "C.UTF-8" },
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  child.stdout.on("data", (d) => (stderr += d));
  return new Promise((ok) => child.once("exit", (status) => ok({ status, stderr })));
}

/** Sends a promotion report (or anything) in the heartbeats' envelope, from `source`. */
async function send(obj: unknown, opts: { key?: string; source?: string } = {}) {
  const s = createSocket("udp4");
  sockets.push(s);
  await new Promise<void>((ok) => s.bind(0, opts.source ?? LOOPBACK, () => ok()));
  await new Promise<void>((ok, fail) => s.send(wrapEnvelope(obj, opts.key ?? KEY), port, LOOPBACK, (e) => (e ? fail(e) : ok())));
}

const report = (id: string, ts = Date.now()) => ({ type: PROMOTION_MESSAGE_TYPE, id, ts, ver: 1 });

/** Waits until the receiver has taken `n` more datagrams and acted on them, and the flows they started ended. */
async function processed(before: number, n: number) {
  for (let i = 0; receiver.counters.received < before + n; i++) {
    if (i > 500) throw new Error(`the receiver got ${receiver.counters.received - before} datagrams, not ${n}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  await receiver.idle();
  await app.settle();
}

const refusals = () => receiverLog.lines.filter((l) => l.message === "VRRP promotion report refused").map((l) => l.fields.reason as string);

beforeAll(async () => {
  app = await inProcessApp({ OTTAVA_LOADBALANCER_TOPOLOGY: "ACTIVE_STANDBY" });
  app.tasks.log = recordingLog().log;
  // The seam: the no-op network, with a takeVip (the vpc driver's port) that records where the VIP goes.
  const network = app.tasks.drivers.network;
  app.tasks.drivers.network = {
    ...network,
    takeVip: async (lb: LoadBalancer, a: Amphora) => {
      const moved = taken.at(-1)?.[1] !== a.id;
      taken.push([lb.id, a.id]);
      return moved;
    },
  };
  receiver = new HeartbeatReceiver({
    key: KEY,
    host: LOOPBACK,
    port: 0,
    store: createHealthStore(app.config),
    compute: noopDrivers().compute,
    log: receiverLog.log,
    metrics,
    logIntervalMs: 3_600_000,
    promotions: { engine: app.engine, store: app.store },
  });
  port = await receiver.start();
}, 60_000);

afterAll(async () => {
  await receiver?.stop();
  for (const s of sockets) s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("ottava-vrrp-master → the heartbeat receiver → amphora-vip-promote → takeVip", () => {
  it("is installed where the REST driver's keepalived.conf names it", () => {
    expect(readFileSync(join(IMAGE, "install.sh"), "utf8")).toContain(
      `install -m 0755 "$here/ottava-vrrp-master" ${VRRP_NOTIFY_MASTER_SCRIPT}\n`,
    );
  });

  it("the script, run for real, reports the promotion to every health manager; the VIP goes to the promoted amphora", async () => {
    const { lbId, backup } = await loadBalancer();
    const other = await listener();
    const before = receiver.counters.received;
    const run = await runScript(agentConf(backup, [`${LOOPBACK}:${port}`, `${LOOPBACK}:${other.port}`]));
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      new RegExp(
        `promotion of amphora ${backup.id} \\(ts \\d+\\) sent to ${LOOPBACK}:${port}, ${LOOPBACK}:${other.port} \\(6 datagrams\\)`,
      ),
    );
    expect(run.stderr).not.toContain(KEY);
    await processed(before, 3);
    // The other health manager got the same three copies, in the heartbeats' envelope, signed with the key.
    expect(other.got).toHaveLength(3);
    const msg = unwrapEnvelope(other.got[0]!, KEY) as { type: string; id: string; ts: number; ver: number };
    expect(msg).toEqual({ type: PROMOTION_MESSAGE_TYPE, id: backup.id, ts: expect.any(Number), ver: 1 });
    expect(Math.abs(Date.now() - msg.ts)).toBeLessThan(10_000);
    for (const copy of other.got) expect(copy.equals(other.got[0]!)).toBe(true);
    // Octavia's own unwrap_envelope (python3-octavia) reads it as a heartbeat's.
    const octavia = spawnSync(
      "/usr/bin/python3",
      [
        "-c",
        "import json, sys\nfrom octavia.amphorae.backends.health_daemon import status_message\nprint(json.dumps(status_message.unwrap_envelope(sys.stdin.buffer.read(), sys.argv[1])))",
        KEY,
      ],
      { input: other.got[0]!, encoding: "utf8" },
    );
    expect(octavia.status, octavia.stderr).toBe(0);
    expect(JSON.parse(octavia.stdout)).toEqual(msg);
    // The receiver took the first copy and refused the other two; the flow ran and handed the VIP to the BACKUP.
    expect(receiver.counters.promotions).toBe(1);
    expect(taken).toEqual([[lbId, backup.id]]);
    const d = await app.engine.describe(app.engine.executionArn(AMPHORA_VIP_PROMOTE_FLOW, promotionExecutionName(msg)));
    expect(d?.status).toBe("SUCCEEDED");
    expect(refusals().filter((r) => r === "a copy of a report already taken")).toHaveLength(2);
  }, 30_000);

  it("reaches the health managers from inside another network namespace (keepalived's amphora-haproxy) through nsenter", async () => {
    const { lbId, master } = await loadBalancer();
    taken.length = 0;
    const before = receiver.counters.received;
    // A fresh network namespace has only a loopback that is down: without the hop nothing could be sent.
    const run = await runScript(agentConf(master, [`${LOOPBACK}:${port}`]), ["/usr/bin/unshare", "--net", "--"]);
    expect(run.status, run.stderr).toBe(0);
    await processed(before, 3);
    expect(taken).toEqual([[lbId, master.id]]);
    // The control: told that its own namespace is the default one, it stays there and reaches nothing.
    const stuck = spawn(
      "/usr/bin/unshare",
      ["--net", "--", "/usr/bin/python3", SCRIPT, "--config", agentConf(master, [`${LOOPBACK}:${port}`]), "--netns", "/proc/self/ns/net"],
      {
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let said = "";
    stuck.stderr.on("data", (d) => (said += d));
    expect(await new Promise((ok) => stuck.once("exit", ok))).toBe(1);
    expect(said).toMatch(/sending to 127\.0\.0\.1:\d+ failed: .*unreachable/);
    expect(said).toMatch(/could not be sent/);
  }, 30_000);

  it("fails, saying why, without its configuration's key or health managers", async () => {
    const { backup } = await loadBalancer();
    const noKey = await runScript(agentConf(backup, [`${LOOPBACK}:${port}`], ""));
    expect(noKey.status).toBe(1);
    expect(noKey.stderr).toMatch(/has no \[health_manager\] heartbeat_key/);
    const missing = await runScript(join(dir, "absent.conf"));
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/cannot read .*absent\.conf/);
  });
});

describe("the receiver refuses what must not move a VIP", () => {
  it("a report signed with another key is dropped as any bad packet", async () => {
    const { backup } = await loadBalancer();
    const [before, rejected] = [receiver.counters.received, receiver.counters.rejected];
    taken.length = 0;
    await send(report(backup.id), { key: "not-the-key" });
    await processed(before, 1);
    expect(receiver.counters.rejected).toBe(rejected + 1);
    expect(taken).toEqual([]);
  });

  it("stale or future reports (outside the window), a replay of one already taken, an older report after a newer one", async () => {
    const { lbId, master, backup } = await loadBalancer();
    taken.length = 0;
    const before = receiver.counters.received;
    const started = receiver.counters.promotions;
    const now = Date.now();
    await send(report(backup.id, now - PROMOTION_WINDOW_MS - 5_000));
    await send(report(backup.id, now + PROMOTION_WINDOW_MS + 5_000));
    await processed(before, 2);
    expect(refusals().slice(-2)).toEqual([
      expect.stringMatching(/^stale: its time is 3\d s from/),
      expect.stringMatching(/^stale: its time is -3\d s/),
    ]);
    // A fresh one is taken; the same datagram again (a replay) is refused.
    const fresh = report(backup.id, now - 2_000);
    await send(fresh);
    await processed(before + 2, 1);
    await send(fresh);
    await processed(before + 3, 1);
    expect(refusals().at(-1)).toBe("a copy of a report already taken");
    expect(taken).toEqual([[lbId, backup.id]]);
    // The MASTER's report of a promotion before the BACKUP's, arriving late: superseded. A newer one is taken.
    await send(report(master.id, now - 3_000));
    await processed(before + 4, 1);
    expect(refusals().at(-1)).toBe(`superseded by a newer promotion in load balancer ${lbId}`);
    await send(report(master.id, now - 1_000));
    await processed(before + 5, 1);
    expect(taken).toEqual([
      [lbId, backup.id],
      [lbId, master.id],
    ]);
    expect(receiver.counters.promotions).toBe(started + 2);
  });

  it("an unknown amphora, one not sending from its management address, one not ALLOCATED, a SINGLE load balancer's", async () => {
    const { lbId, master, backup } = await loadBalancer();
    taken.length = 0;
    const before = receiver.counters.received;
    await send(report(randomUUID()));
    // A datagram from another address than the amphora's lb_network_ip (127.0.0.1).
    await send(report(backup.id), { source: "127.0.0.2" });
    expect(await app.store.updateAmphoraIf(lbId, master.id, ["ALLOCATED"], { status: "ERROR" })).toBe(true);
    await send(report(master.id));
    await processed(before, 3);
    expect(refusals().slice(-3).sort()).toEqual(
      ["amphora is ERROR, not ALLOCATED", "not sent from the amphora's management address", "unknown amphora"].sort(),
    );
    // A SINGLE load balancer's amphora.
    const standalone = (await loadBalancer("SINGLE")).amphorae[0]!;
    expect(standalone.role).toBe("STANDALONE");
    await send(report(standalone.id));
    await processed(before + 3, 1);
    expect(refusals().at(-1)).toBe("load balancer is SINGLE, not ACTIVE_STANDBY");
    expect(taken).toEqual([]);
  });
});

describe("the flow's task, started directly: what it leaves alone", () => {
  const start = async (lbId: string, amphoraId: string) => {
    const ts = Date.now() + Math.floor(Math.random() * 1000);
    const name = promotionExecutionName({ id: amphoraId, ts });
    await app.engine.start(AMPHORA_VIP_PROMOTE_FLOW, name, { lbId, amphoraId, promotedAt: ts });
    await app.settle();
    return (await app.engine.describe(app.engine.executionArn(AMPHORA_VIP_PROMOTE_FLOW, name)))?.status;
  };

  it("moves nothing for a DELETED amphora, a deleted load balancer, or a network without takeVip; succeeds each time", async () => {
    const { lbId, master, backup } = await loadBalancer();
    taken.length = 0;
    expect(await app.store.updateAmphoraIf(lbId, backup.id, ["ALLOCATED"], { status: "DELETED" })).toBe(true);
    expect(await start(lbId, backup.id)).toBe("SUCCEEDED");
    expect(await start(lbId, randomUUID())).toBe("SUCCEEDED");
    const withTake = app.tasks.drivers.network;
    const { takeVip: _, ...without } = withTake;
    app.tasks.drivers.network = without;
    try {
      expect(await start(lbId, master.id)).toBe("SUCCEEDED");
    } finally {
      app.tasks.drivers.network = withTake;
    }
    expect(taken).toEqual([]);
    expect((await app.call("DELETE", `/v2/lbaas/loadbalancers/${lbId}`)).status).toBe(204);
    await app.settle();
    expect(await start(lbId, master.id)).toBe("SUCCEEDED");
    expect(taken).toEqual([]);
  });
});
