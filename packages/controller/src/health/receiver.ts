// The health manager's heartbeat receiver (octavia/amphorae/drivers/health/heartbeat_udp.py
// UDPStatusGetter): a UDP socket on [health_manager] bind_port. Each datagram is verified
// (HMAC-SHA256 with the heartbeat key, hex or legacy binary digest) and decoded; a packet that is not,
// or that repeats an (amphora id, seq) pair seen within the recent window, is dropped and counted.
// Each accepted heartbeat is judged against its amphora's tree as Octavia's UpdateHealthDb does, and
// its changes are written in one batch: operating statuses, the amphora's last_heartbeat and its
// listener counters. Heartbeats of one amphora are processed in order, several amphorae at once.
// Its counters are logged every logIntervalMs (and at stop), their increase emitted as metrics then.
// It also takes Ottava's VRRP promotion reports (ottava-vrrp-master, in the same envelope with the same
// key): a verified, fresh, first report of an ALLOCATED amphora of an ACTIVE_STANDBY load balancer, sent from
// the amphora's management address, starts the amphora-vip-promote flow, which moves the VIP to it.
import { createSocket, type Socket } from "node:dgram";
import {
  AMPHORA_VIP_PROMOTE_FLOW,
  HEARTBEAT_INTERVAL,
  PROMOTION_WINDOW_MS,
  HeartbeatRejected,
  RecentPairs,
  isPromotionMessage,
  promotionExecutionName,
  promotionRefusal,
  readHeartbeat,
  readPromotion,
  unwrapEnvelope,
  updateHealth,
  updateStats,
  type ComputeDriver,
  type Config,
  type HealthStore,
  type HeartbeatMessage,
  type LoadBalancerStore,
  type Logger,
  type Metrics,
  type PromotionMessage,
  type WorkflowEngine,
} from "@ottava/core";
import { DynamoHealthStore, createClients, type ClientDecorator } from "@ottava/db";
import { asWorkload } from "@ottava/edge";

/** The health manager's workload name (its AWS calls' User-Agent: ottava/health-manager). */
export const HEALTH_MANAGER_WORKLOAD = "health-manager";

/** UDP_MAX_SIZE */
const UDP_MAX_SIZE = 64 * 1024;

export interface HeartbeatCounters {
  /** Datagrams received. */
  received: number;
  /** Verified, readable, not duplicate heartbeats. */
  accepted: number;
  /** Dropped: bad or missing HMAC, not zlib/JSON, not a heartbeat. */
  rejected: number;
  /** Dropped: an (amphora id, seq) pair already seen within the window. */
  duplicates: number;
  /** Dropped: too many heartbeats waiting to be processed. */
  overloaded: number;
  /** Heartbeats whose processing failed (a DynamoDB error): logged, nothing or part written. */
  failed: number;
  /** Heartbeats from amphorae that are DELETED or whose load balancer is (their instance is deleted). */
  zombies: number;
  /** Heartbeats from amphorae Ottava does not know. */
  unknown: number;
  /** VRRP promotion reports that started (or found already started) their amphora-vip-promote flow. */
  promotions: number;
  /** Verified promotion reports refused: stale, a copy already taken, superseded, or not of an amphora that may take its VIP. */
  promotionsRefused: number;
}

/** What the receiver needs to act on VRRP promotion reports. */
export interface PromotionDeps {
  /** Starts the amphora-vip-promote flows. */
  engine: Pick<WorkflowEngine, "start">;
  /** Reads the reporting amphora and its load balancer. */
  store: Pick<LoadBalancerStore, "getAmphora" | "getLoadBalancer">;
}

export interface HeartbeatReceiverOptions {
  /** [health_manager] heartbeat_key; never logged. */
  key: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  store: HealthStore;
  /** Deletes zombie amphorae's instances. */
  compute: ComputeDriver;
  log: Logger;
  /** Where the counters' increases go (emitMetrics). */
  metrics: Metrics;
  /** Acts on VRRP promotion reports; without it they are refused (logged and counted). */
  promotions?: PromotionDeps;
  /** A promotion report further than this from the receiver's clock is stale (default PROMOTION_WINDOW_MS, 30 s). */
  promotionWindowMs?: number;
  /** How long an (amphora id, seq) pair is remembered (default 30 s: three heartbeat intervals). */
  dedupWindowMs?: number;
  /** At most this many pairs are remembered (default 100,000). */
  dedupMax?: number;
  /** How often the counters are logged, when they moved, and their increase emitted as metrics (default 60 s). */
  logIntervalMs?: number;
  /** [health_manager] heartbeat_interval, seconds: a heartbeat processed this late only updates counters. */
  heartbeatInterval?: number;
  /** Heartbeats processed at once, over all amphorae (default 32). */
  concurrency?: number;
  /** Heartbeats waiting at most; more are dropped (default 10,000). */
  maxPending?: number;
  now?: () => number;
}

export class HeartbeatReceiver {
  readonly counters: HeartbeatCounters = {
    received: 0,
    accepted: 0,
    rejected: 0,
    duplicates: 0,
    overloaded: 0,
    failed: 0,
    zombies: 0,
    unknown: 0,
    promotions: 0,
    promotionsRefused: 0,
  };
  private socket: Socket | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly recent: RecentPairs;
  /** (amphora id, ts) of the promotion reports taken, for twice the window: a copy or replay within it is refused. */
  private readonly recentPromotions: RecentPairs;
  /** Per load balancer, the newest promotion taken (its ts) and when: an older report of the pair, arriving late, is refused. */
  private readonly newestPromotion = new Map<string, { ts: number; at: number }>();
  private readonly promotionWindowMs: number;
  private readonly now: () => number;
  /** The last heartbeat of each amphora in processing: the next one waits for it. */
  private readonly chains = new Map<string, Promise<void>>();
  private pending = 0;
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private lastRejectLog = -Infinity;
  private lastLogged = "";
  private readonly lastEmitted: HeartbeatCounters = { ...this.counters };
  private boundPort: number | undefined;

  constructor(private readonly opts: HeartbeatReceiverOptions) {
    if (!opts.key) throw new Error("the heartbeat receiver needs a heartbeat key");
    this.recent = new RecentPairs(opts.dedupWindowMs ?? 30_000, opts.dedupMax ?? 100_000);
    this.promotionWindowMs = opts.promotionWindowMs ?? PROMOTION_WINDOW_MS;
    this.recentPromotions = new RecentPairs(2 * this.promotionWindowMs, opts.dedupMax ?? 100_000);
    this.now = opts.now ?? Date.now;
  }

  /** The port it listens on, once started. */
  get port(): number | undefined {
    return this.boundPort;
  }

  /** Binds the socket; answers the port. */
  async start(): Promise<number> {
    const socket = createSocket({ type: this.opts.host.includes(":") ? "udp6" : "udp4" });
    socket.on("message", (data, rinfo) => this.receive(data, rinfo.address));
    socket.on("error", (e) => this.opts.log.error("heartbeat socket error", { error: String(e) }));
    await new Promise<void>((ok, fail) => {
      socket.once("error", fail);
      socket.bind(this.opts.port, this.opts.host, () => {
        socket.off("error", fail);
        ok();
      });
    });
    this.socket = socket;
    this.boundPort = socket.address().port;
    this.timer = setInterval(() => this.logCounters(), this.opts.logIntervalMs ?? 60_000);
    this.timer.unref();
    return this.boundPort;
  }

  /** Closes the socket and waits (a few seconds at most) for heartbeats in processing. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const socket = this.socket;
    this.socket = undefined;
    if (socket) await new Promise<void>((ok) => socket.close(() => ok()));
    await Promise.race([this.idle(), new Promise((ok) => setTimeout(ok, 5000).unref())]);
    this.logCounters();
  }

  /** Resolves when every heartbeat accepted so far has been processed. */
  async idle(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
  }

  /** One datagram (what the socket calls; tests may call it directly). */
  receive(data: Buffer, from: string): void {
    this.counters.received++;
    const recvTime = this.now();
    let msg: HeartbeatMessage | undefined;
    let promotion: PromotionMessage | undefined;
    try {
      if (data.length > UDP_MAX_SIZE) throw new HeartbeatRejected("malformed", "datagram too large");
      const obj = unwrapEnvelope(data, this.opts.key);
      if (isPromotionMessage(obj)) promotion = readPromotion(obj);
      else msg = readHeartbeat(obj);
    } catch (e) {
      this.counters.rejected++;
      const fields = { from, reason: e instanceof HeartbeatRejected ? e.reason : "error", error: (e as Error).message };
      // Octavia logs every dropped packet; a flood of them is logged once an interval (the counters tell the rest).
      if (recvTime - this.lastRejectLog >= (this.opts.logIntervalMs ?? 60_000)) {
        this.lastRejectLog = recvTime;
        this.opts.log.warn("Health Manager experienced an exception processing a heartbeat message. Ignoring this packet.", fields);
      } else this.opts.log.debug("heartbeat packet dropped", fields);
      return;
    }
    if (promotion) return this.receivePromotion(promotion, recvTime, from);
    if (!msg) return;
    if (msg.seq !== undefined && this.recent.check(msg.id, msg.seq, recvTime)) {
      this.counters.duplicates++;
      this.opts.log.debug("duplicate heartbeat dropped", { from, amphoraId: msg.id, seq: msg.seq });
      return;
    }
    if (this.pending >= (this.opts.maxPending ?? 10_000)) {
      this.counters.overloaded++;
      return;
    }
    this.counters.accepted++;
    this.pending++;
    const prev = this.chains.get(msg.id) ?? Promise.resolve();
    const next = prev.then(() => this.limited(() => this.process(msg, recvTime, from)));
    this.chains.set(msg.id, next);
    void next.finally(() => {
      this.pending--;
      if (this.chains.get(msg.id) === next) this.chains.delete(msg.id);
    });
  }

  /**
   * A verified promotion report: refused when stale (further than the window from this clock), when its
   * (amphora, ts) was taken already within twice the window (the script's copies, or a replay), or when too
   * many messages wait; else checked against the amphora and its load balancer, then its flow started.
   */
  private receivePromotion(m: PromotionMessage, recvTime: number, from: string): void {
    const refuse = (reason: string, level: "warn" | "debug" = "warn") => {
      this.counters.promotionsRefused++;
      this.opts.log[level]("VRRP promotion report refused", { from, amphoraId: m.id, ts: m.ts, reason });
    };
    if (Math.abs(recvTime - m.ts) > this.promotionWindowMs)
      return refuse(
        `stale: its time is ${Math.round((recvTime - m.ts) / 1000)} s from the health manager's (window ${this.promotionWindowMs / 1000} s)`,
      );
    if (this.recentPromotions.check(m.id, m.ts, recvTime)) return refuse("a copy of a report already taken", "debug");
    if (this.pending >= (this.opts.maxPending ?? 10_000)) {
      this.counters.overloaded++;
      return;
    }
    this.pending++;
    const key = `promotion/${m.id}`;
    const prev = this.chains.get(key) ?? Promise.resolve();
    const next = prev.then(() => this.limited(() => this.promote(m, from, refuse)));
    this.chains.set(key, next);
    void next.finally(() => {
      this.pending--;
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
  }

  /** Starts the promotion's flow if its amphora may take its VIP now; never throws. */
  private async promote(m: PromotionMessage, from: string, refuse: (reason: string) => void): Promise<void> {
    const deps = this.opts.promotions;
    if (!deps) return refuse("this receiver starts no flows");
    try {
      const amphora = await deps.store.getAmphora(m.id);
      const lb = amphora ? (await deps.store.getLoadBalancer(amphora.loadbalancer_id))?.record : undefined;
      const why = promotionRefusal(amphora, lb, from);
      if (why) return refuse(why);
      const lbId = amphora!.loadbalancer_id;
      // Reports of one pair may arrive out of order (UDP, two flaps in a row): the newest wins.
      const now = this.now();
      for (const [id, p] of this.newestPromotion) {
        if (p.at > now - 2 * this.promotionWindowMs) break;
        this.newestPromotion.delete(id); // oldest first: entries are re-inserted when they change
      }
      const newest = this.newestPromotion.get(lbId);
      if (newest && newest.ts > m.ts) return refuse(`superseded by a newer promotion in load balancer ${lbId}`);
      this.newestPromotion.delete(lbId);
      this.newestPromotion.set(lbId, { ts: m.ts, at: now });
      const name = promotionExecutionName(m);
      await deps.engine.start(AMPHORA_VIP_PROMOTE_FLOW, name, { lbId, amphoraId: m.id, promotedAt: m.ts });
      this.counters.promotions++;
      this.opts.log.info("VRRP promotion: flow started", {
        from,
        amphoraId: m.id,
        lbId,
        ts: m.ts,
        flow: AMPHORA_VIP_PROMOTE_FLOW,
        execution: name,
      });
    } catch (e) {
      this.counters.failed++;
      this.opts.log.error("VRRP promotion report could not be acted on", { from, amphoraId: m.id, ts: m.ts, error: String(e) });
    }
  }

  private async limited(fn: () => Promise<void>): Promise<void> {
    if (this.running >= (this.opts.concurrency ?? 32)) await new Promise<void>((ok) => this.waiting.push(ok));
    this.running++;
    try {
      await fn();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  /** update_health and update_stats for one heartbeat; never throws. */
  private async process(msg: HeartbeatMessage, recvTime: number, from: string): Promise<void> {
    const log = this.opts.log;
    try {
      const view = await this.opts.store.healthView(msg.id);
      const update = updateHealth(msg, view, {
        processingDelay: (this.now() - recvTime) / 1000,
        heartbeatInterval: this.opts.heartbeatInterval ?? HEARTBEAT_INTERVAL,
      });
      for (const w of update.warnings) log.warn(w.message, { from, ...w.fields });
      if (update.outcome === "unknown-amphora") {
        this.counters.unknown++;
        return;
      }
      if (update.outcome === "zombie") {
        this.counters.zombies++;
        log.info("Received a health heartbeat from an amphora that should not exist; deleting its instance", {
          from,
          amphoraId: msg.id,
          computeId: update.computeId,
        });
        if (update.computeId) {
          // As the health manager (@ottava/edge asWorkload: its User-Agent), also inside npm start's one process.
          await asWorkload(HEALTH_MANAGER_WORKLOAD, () => this.opts.compute.delete(update.computeId!, msg.id)).catch((e) =>
            log.info("Error deleting amphora instance", { amphoraId: msg.id, error: String(e) }),
          );
        }
        return;
      }
      const lb = view.lb!;
      const amphora = view.amphora!;
      const stats = updateStats(msg, view);
      if (!update.recordHeartbeat && update.statuses.length === 0 && stats.length === 0) return;
      const res = await this.opts.store.applyHealth({
        lbId: lb.id,
        amphoraId: msg.id,
        lastHeartbeat: update.recordHeartbeat ? new Date(this.now()).toISOString() : undefined,
        statuses: update.statuses,
        stats,
        statsBase: { rows: amphora.listener_stats, revision: amphora.listener_stats_rev },
      });
      if (update.statuses.length > 0) {
        log.info("operating status changed", {
          lbId: lb.id,
          amphoraId: msg.id,
          changes: update.statuses.map((c) => `${c.kind} ${c.id}: ${c.from} -> ${c.to}`),
          skipped: res.skipped,
        });
      }
    } catch (e) {
      this.counters.failed++;
      log.error("Health update for amphora encountered an error. Skipping health update.", { amphoraId: msg.id, error: String(e) });
    }
  }

  private logCounters(): void {
    this.emitMetrics();
    const snapshot = JSON.stringify(this.counters);
    if (snapshot === this.lastLogged) return;
    this.lastLogged = snapshot;
    this.opts.log.info("heartbeat receiver counters", { ...this.counters, port: this.boundPort });
  }

  /** The counters' increase since the last time, as metrics (zeros too: a receiver that hears nothing says so). */
  private emitMetrics(): void {
    const names: [keyof HeartbeatCounters, string][] = [
      ["received", "HeartbeatsReceived"],
      ["accepted", "HeartbeatsAccepted"],
      ["rejected", "HeartbeatsRejected"],
      ["duplicates", "HeartbeatsDuplicate"],
      ["zombies", "ZombieAmphorae"],
      ["promotions", "VrrpPromotions"],
      ["promotionsRefused", "VrrpPromotionsRefused"],
    ];
    for (const [counter, metric] of names) {
      this.opts.metrics.count(metric, this.counters[counter] - this.lastEmitted[counter]);
      this.lastEmitted[counter] = this.counters[counter];
    }
  }
}

/** The DynamoDB health store of a process (its client `decorate`d: the API benchmark's meter). */
export function createHealthStore(config: Config, decorate?: ClientDecorator): DynamoHealthStore {
  return new DynamoHealthStore(createClients(config.dynamodbEndpoint, decorate).doc, { tableName: config.tableName });
}

/**
 * Starts the receiver on config.bindHost:config.heartbeatPort, if a heartbeat key is configured
 * (undefined otherwise: without the key no heartbeat could be accepted).
 */
export async function startHeartbeatReceiver(
  config: Config,
  deps: { compute: ComputeDriver; log: Logger; metrics: Metrics; store?: HealthStore; promotions?: PromotionDeps },
  options: Partial<HeartbeatReceiverOptions> = {},
): Promise<HeartbeatReceiver | undefined> {
  if (!config.heartbeatKey) {
    deps.log.info("heartbeat receiver not started: OTTAVA_HEARTBEAT_KEY is not set");
    return undefined;
  }
  const receiver = new HeartbeatReceiver({
    key: config.heartbeatKey,
    host: config.bindHost,
    port: config.heartbeatPort,
    store: deps.store ?? createHealthStore(config),
    compute: deps.compute,
    log: deps.log,
    metrics: deps.metrics,
    ...(deps.promotions ? { promotions: deps.promotions } : {}),
    ...options,
  });
  const port = await receiver.start();
  deps.log.info("heartbeat receiver listening", { host: config.bindHost, heartbeatPort: port });
  return receiver;
}
