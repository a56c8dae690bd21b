// The heartbeat sender of a local amphora, as Octavia's amphora health daemon (octavia/amphorae/backends/health_daemon/health_daemon.py run_sender and build_stats_message, health_sender.py UDPStatusSender, amphorae/backends/utils/haproxy_query.py HAProxyQuery, in haproxy-query.ts).
//
// Every heartbeat_interval it reads HAProxy's stats socket (`show stat`, then `show stat -1 6 -1` for
// the pools), builds the version-3 message (each FRONTEND a listener with its status and counters as
// deltas since the last message, each BACKEND "<pool id>:<listener id>" a pool with its status and its
// servers' statuses by member id, `seq`, `ver`, the amphora id), wraps it in Octavia's envelope (zlib,
// HMAC-SHA256 of the heartbeat key, hex digest) and sends it over UDP to one controller address, the
// next one each time (Octavia's round robin). What Octavia's daemon does and this one does too:
//  - the pid file check (is_lb_running): with `pidFile`, a HAProxy that is not running adds nothing
//    to the message, which is still sent; a stats socket that does not answer skips the heartbeat;
//  - the counters' last absolute values, kept per listener (in `countersFile` when given, as
//    stats_counters.json) so that a restarted sender does not count traffic twice; HAProxy counters
//    that went down (a restart) count from zero;
//  - proxies whose name holds "prometheus" are left out; a server UP with weight 0 is DRAIN;
//  - a BACKEND not named "<pool id>:<listener id>" fails the heartbeat (Octavia's split(':')).
// What it does not do: keepalived's pid check (there is no VRRP on a local amphora) and the LVS (UDP,
// SCTP) listeners' part (keepalived's IPVS, not HAProxy). The receiver, not the sender, stamps
// recv_time. The heartbeat key is never logged.
import { lookup } from "node:dns/promises";
import { createSocket, type Socket } from "node:dgram";
import { isIP } from "node:net";
import { readFile, writeFile } from "node:fs/promises";
import { HEARTBEAT_INTERVAL, intFromText, wrapEnvelope, type Logger } from "@ottava/core";
import { poolStatusOf, showStat, type PoolStatus, type StatRow } from "./haproxy-query";

/** build_stats_message's MSG_VER: 3, counters as deltas. */
export const MSG_VER = 3;
/** DELTA_METRICS: the counters reported as deltas (scur is absolute). */
export const DELTA_METRICS = ["bin", "bout", "ereq", "stot"] as const;
type DeltaMetric = (typeof DELTA_METRICS)[number];

/** A version-3 heartbeat, key for key what build_stats_message answers. */
export interface StatsMessage {
  id: string;
  seq: number;
  listeners: Record<string, { status: string; stats: { tx: number; rx: number; conns: number; totconns: number; ereq: number } }>;
  pools: Record<string, { status: string; members: Record<string, string> }>;
  ver: number;
}

export interface HeartbeatTarget {
  /** An IPv4 or IPv6 address, or a name (resolved on each send, the first address as Octavia's getaddrinfo). */
  host: string;
  port: number;
}

// ---- the counters (calculate_stats_deltas) ----------------------------------------------------------

/** Python's int() of a decimal string (intFromText), throwing its error where Python raises. */
function pyInt(value: string | undefined, what: string): number {
  const n = value === undefined ? undefined : intFromText(value);
  if (n === undefined) throw new Error(`invalid literal for int() with base 10: '${value ?? "None"}' (${what})`);
  return n;
}

/**
 * The last absolute counters per listener (health_daemon's COUNTERS): in memory, and in `file` when
 * given (read once, rewritten after each message, mode 0640 as Octavia's stats_counters.json).
 */
export class StatsCounters {
  private counters: Record<string, Partial<Record<DeltaMetric, number>>> | undefined;

  constructor(private readonly file?: string) {}

  private async load(): Promise<Record<string, Partial<Record<DeltaMetric, number>>>> {
    if (this.counters) return this.counters;
    let loaded: unknown = {};
    if (this.file) {
      try {
        loaded = JSON.parse(await readFile(this.file, "utf8")) || {};
      } catch {
        loaded = {}; // missing or unreadable: start over, as Octavia's get_counters
      }
    }
    this.counters =
      typeof loaded === "object" && loaded !== null && !Array.isArray(loaded)
        ? (loaded as Record<string, Partial<Record<DeltaMetric, number>>>)
        : {};
    return this.counters;
  }

  /** calculate_stats_deltas: each DELTA_METRICS counter less its last value (the value itself if HAProxy's went down); remembers the new values. */
  async deltas(listenerId: string, row: StatRow): Promise<Record<DeltaMetric, number>> {
    const counters = await this.load();
    const last = (counters[listenerId] ??= {});
    const out = {} as Record<DeltaMetric, number>;
    for (const metric of DELTA_METRICS) {
      const current = pyInt(row[metric], metric);
      const delta = current - (last[metric] ?? 0);
      last[metric] = current;
      out[metric] = delta < 0 ? current : delta;
    }
    return out;
  }

  /** persist_counters: writes the counters to the file, if any (a failure is only logged by the caller). */
  async persist(): Promise<void> {
    if (!this.file || !this.counters) return;
    await writeFile(this.file, JSON.stringify(this.counters), { mode: 0o640 });
  }
}

// ---- build_stats_message ----------------------------------------------------------------------------

/**
 * build_stats_message for one HAProxy: `stats` are the `show stat` rows (FRONTEND rows become
 * listeners), `pools` get_pool_status's answer; `null` for both when HAProxy is not running (the
 * message then has no listeners and no pools). Updates `counters`; does not persist them.
 */
export async function buildStatsMessage(
  amphoraId: string,
  seq: number,
  haproxy: { stats: readonly StatRow[]; pools: Record<string, PoolStatus> } | null,
  counters: StatsCounters,
): Promise<StatsMessage> {
  const msg: StatsMessage = { id: amphoraId, seq, listeners: {}, pools: {}, ver: MSG_VER };
  if (!haproxy) return msg;
  for (const row of haproxy.stats) {
    if (row.svname !== "FRONTEND") continue;
    const listenerId = row.pxname ?? "";
    const d = await counters.deltas(listenerId, row);
    msg.listeners[listenerId] = {
      status: row.status ?? "",
      stats: { tx: d.bout, rx: d.bin, conns: pyInt(row.scur, "scur"), totconns: d.stot, ereq: d.ereq },
    };
  }
  for (const [poolId, pool] of Object.entries(haproxy.pools)) msg.pools[poolId] = { status: pool.status, members: pool.members };
  return msg;
}

/** util.is_lb_running: the pid file names a live process. */
async function isRunning(pidFile: string): Promise<boolean> {
  let pid: number;
  try {
    pid = Number((await readFile(pidFile, "utf8")).split("\n")[0]!.trim());
  } catch {
    return false;
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

// ---- the sender (run_sender, UDPStatusSender) -------------------------------------------------------

export interface HeartbeatOptions {
  /** The amphora's id ([amphora_agent] amphora_id): the message's `id`. */
  amphoraId: string;
  /**
   * HAProxy's stats socket (its configuration's `stats socket` path); null while the amphora has no
   * load balancer yet: the heartbeats then report no listeners, as Octavia's daemon with no haproxy.cfg.
   */
  statsSocket: string | null;
  /** HAProxy's pid file (`-p`): when given, HAProxy counts as running only while it names a live process (is_lb_running). */
  pidFile?: string | undefined;
  /** [health_manager] controller_ip_port_list: each heartbeat goes to one of them, the next one each time. Empty: nothing is sent (logged). */
  targets: readonly HeartbeatTarget[];
  /** [health_manager] heartbeat_key. Secret: never logged. */
  key: string;
  /** [health_manager] heartbeat_interval: seconds between heartbeats (default HEARTBEAT_INTERVAL, 10). */
  intervalSeconds?: number | undefined;
  /** Where the counters' last values are kept across restarts (Octavia's <base_path>/stats_counters.json); in memory only without it. */
  countersFile?: string | undefined;
  log?: Logger | undefined;
  /** Called with each message after it is sent (inspection, tests); messages hold no secret. */
  onSent?: ((message: StatsMessage, target: HeartbeatTarget) => void) | undefined;
}

/** What may change while the sender runs (Octavia's mutable options and a load balancer appearing). */
export interface HeartbeatChange {
  targets?: readonly HeartbeatTarget[];
  key?: string;
  intervalSeconds?: number;
  statsSocket?: string | null;
  pidFile?: string | undefined;
}

export interface HeartbeatSender {
  /**
   * Builds and sends one heartbeat now (what each interval does); answers the message sent, or
   * undefined when none was (the stats socket did not answer, no target). Beats never overlap.
   */
  beat(): Promise<StatsMessage | undefined>;
  /** Applies changes from the next heartbeat on (an updated controller_ip_port_list, a new key, HAProxy configured). */
  update(change: HeartbeatChange): void;
  /** Stops the timer, waits for a heartbeat in progress, keeps the counters, closes the sockets. */
  stop(): Promise<void>;
}

/**
 * Starts sending heartbeats for one amphora: the first at once, then one every interval after the
 * previous one ends (Octavia's loop sleeps heartbeat_interval between messages). The timer does not
 * keep the process alive.
 */
export function startHeartbeats(options: HeartbeatOptions): HeartbeatSender {
  if (!options.key) throw new Error("heartbeats need a heartbeat key");
  const state = {
    targets: [...options.targets],
    key: options.key,
    intervalSeconds: options.intervalSeconds ?? HEARTBEAT_INTERVAL,
    statsSocket: options.statsSocket,
    pidFile: options.pidFile,
  };
  const log = options.log;
  const counters = new StatsCounters(options.countersFile);
  const sockets: Partial<Record<4 | 6, Socket>> = {};
  let seq = 0;
  let next = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<StatsMessage | undefined> = Promise.resolve(undefined);

  const socketFor = (family: 4 | 6) => {
    let s = sockets[family];
    if (!s) {
      s = sockets[family] = createSocket(family === 6 ? "udp6" : "udp4");
      s.on("error", (e) => log?.debug("heartbeat socket error", { error: String(e) }));
      s.unref();
    }
    return s;
  };

  const send = async (packet: Buffer, target: HeartbeatTarget) => {
    let address = target.host;
    let family = isIP(address) as 0 | 4 | 6;
    if (family === 0) ({ address, family } = (await lookup(target.host)) as { address: string; family: 4 | 6 });
    await new Promise<void>((ok) =>
      socketFor(family as 4 | 6).send(packet, target.port, address, (e) => {
        // As Octavia's _send_msg: a send error (a network still coming up) is not fatal.
        if (e) log?.debug("heartbeat not sent", { host: target.host, port: target.port, error: String(e) });
        ok();
      }),
    );
  };

  const once = async (): Promise<StatsMessage | undefined> => {
    const mySeq = seq++; // as Octavia's SEQ, counted even when the message is not sent
    let message: StatsMessage;
    try {
      let haproxy: { stats: StatRow[]; pools: Record<string, PoolStatus> } | null = null;
      const socket = state.statsSocket;
      if (socket && (!state.pidFile || (await isRunning(state.pidFile)))) {
        const stats = await showStat(socket);
        const pools = poolStatusOf(await showStat(socket, -1, 6, -1));
        haproxy = { stats, pools };
      }
      message = await buildStatsMessage(options.amphoraId, mySeq, haproxy, counters);
      await counters.persist().catch((e) => log?.warn("Couldn't persist statistics counter file!", { error: String(e) }));
    } catch (e) {
      log?.error("Failed to check haproxy status, skipping health heartbeat.", {
        amphoraId: options.amphoraId,
        error: e instanceof Error ? `${e.message}${e.cause ? `: ${String(e.cause)}` : ""}` : String(e),
      });
      return undefined;
    }
    if (state.targets.length === 0) {
      log?.error("No controller address found. Unable to send heartbeat.", { amphoraId: options.amphoraId });
      return undefined;
    }
    const target = state.targets[next++ % state.targets.length]!;
    try {
      await send(wrapEnvelope(message, state.key), target);
    } catch (e) {
      log?.warn("heartbeat not sent: the controller address does not resolve", { host: target.host, error: String(e) });
      return undefined;
    }
    options.onSent?.(message, target);
    return message;
  };

  const beat = () => (running = running.then(once, once));

  const loop = () => {
    if (stopped) return;
    void beat().finally(() => {
      if (stopped) return;
      timer = setTimeout(loop, state.intervalSeconds * 1000);
      timer.unref();
    });
  };
  loop();

  return {
    beat,
    update(change) {
      if (change.targets) {
        state.targets = [...change.targets];
        next = 0;
      }
      if (change.key !== undefined) {
        if (!change.key) throw new Error("heartbeats need a heartbeat key");
        state.key = change.key;
      }
      if (change.intervalSeconds !== undefined) state.intervalSeconds = change.intervalSeconds;
      if (change.statsSocket !== undefined) state.statsSocket = change.statsSocket;
      if ("pidFile" in change) state.pidFile = change.pidFile;
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await counters.persist().catch((e) => log?.warn("Couldn't persist statistics counter file!", { error: String(e) }));
      for (const s of Object.values(sockets)) await new Promise<void>((ok) => s!.close(() => ok()));
    },
  };
}
