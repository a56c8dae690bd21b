// What a heartbeat changes, computed as Octavia 11's health manager does
// (octavia/amphorae/drivers/health/heartbeat_udp.py: UpdateHealthDb._update_health and
// _process_pool_status, update_stats): pure functions from (message, view) to the operating statuses
// that changed, whether the heartbeat counts, and the listener counters to store. No I/O.
import {
  ACTIVE,
  DEGRADED,
  DRAINING,
  ERROR,
  HB_OPEN,
  HB_FULL,
  HB_UP,
  HB_DOWN,
  HB_DRAIN,
  HB_MAINT,
  HB_NO_CHECK,
  HB_RESTARTING,
  HEARTBEAT_INTERVAL,
  NO_MONITOR,
  OFFLINE,
  ONLINE,
} from "../constants";
import type { HeartbeatMessage, HeartbeatPool } from "./envelope";
import type { HealthView, OperatingStatusChange, StatsUpdate, HealthKind, ListenerStatsRow } from "./ports";

export interface HealthWarning {
  message: string;
  fields: Record<string, unknown>;
}

export type HealthOutcome =
  /** No amphora of that id (never was, or purged): nothing to do but warn, as Octavia. */
  | "unknown-amphora"
  /** The amphora is DELETED or its load balancer is gone: its instance should not exist (Octavia deletes it). */
  | "zombie"
  /** Processed later than heartbeat_interval after it arrived: ignored (Octavia's "THIS IS NOT GOOD"). */
  | "too-slow"
  | "updated";

export interface HealthUpdate {
  outcome: HealthOutcome;
  /** For a zombie: the instance to delete. */
  computeId: string | null;
  /** Does this heartbeat count as the amphora's last one (its listener count is as expected)? */
  recordHeartbeat: boolean;
  /** Only the statuses that changed, the load balancer's last. */
  statuses: OperatingStatusChange[];
  warnings: HealthWarning[];
}

export interface HealthOptions {
  /** Seconds between the heartbeat's arrival and its processing. */
  processingDelay?: number;
  /** [health_manager] heartbeat_interval, seconds. */
  heartbeatInterval?: number;
}

/** Octavia's pool key normalization: "<pool id>:<listener id>" → "<pool id>" (`(k + ' ')[:k.rfind(':')]`). */
export function poolKey(k: string): string {
  const i = k.lastIndexOf(":");
  return i === -1 ? k : k.slice(0, i);
}

const normalize = (raw: Record<string, HeartbeatPool>) => Object.fromEntries(Object.entries(raw).map(([k, v]) => [poolKey(k), v]));

/** UpdateHealthDb._update_health for one heartbeat against the amphora's view of the database. */
export function updateHealth(health: HeartbeatMessage, view: HealthView, opts: HealthOptions = {}): HealthUpdate {
  const warnings: HealthWarning[] = [];
  const statuses: OperatingStatusChange[] = [];
  const result = (outcome: HealthOutcome, recordHeartbeat = false): HealthUpdate => ({
    outcome,
    computeId: outcome === "zombie" ? (view.amphora?.compute_id ?? null) : null,
    recordHeartbeat,
    statuses,
    warnings,
  });
  const lb = view.lb;
  if (!lb) {
    if (!view.amphora) {
      warnings.push({
        message:
          "The amphora is missing from the DB, so it cannot be automatically deleted (the compute_id is unknown). An operator must manually delete it from the compute service.",
        fields: { amphoraId: health.id },
      });
      return result("unknown-amphora");
    }
    // Octavia deletes the instance right there and stops.
    return result("zombie");
  }

  // We need to see if all of the listeners are reporting in.
  let ignoreListenerCount = false;
  let expected = 0;
  if (lb.provisioning_status.includes("PENDING") || !lb.enabled) {
    ignoreListenerCount = true;
  } else {
    for (const l of view.listeners) if (l.enabled) expected++; // disabled listeners don't report from the amphora
    // A heartbeat older than versioning: UDP listeners without enabled members send nothing.
    if (health.ver === undefined) {
      for (const l of view.listeners) {
        if (l.protocol !== "UDP") continue;
        const members = l.default_pool_id ? view.members.filter((m) => m.pool_id === l.default_pool_id) : [];
        if (!l.default_pool_id || members.length === 0 || !members.some((m) => m.enabled)) expected--;
      }
    }
  }

  const listeners = health.listeners;
  const reported = Object.keys(listeners).length;
  let recordHeartbeat = false;
  if (reported === expected || ignoreListenerCount) {
    const delay = opts.processingDelay ?? 0;
    const interval = opts.heartbeatInterval ?? HEARTBEAT_INTERVAL;
    if (delay >= interval) {
      warnings.push({
        message:
          "Amphora health message was processed too slowly! The system may be overloaded or otherwise malfunctioning. This heartbeat has been ignored and no update was made to the amphora health entry.",
        fields: { amphoraId: health.id, delay },
      });
      return result("too-slow");
    }
    recordHeartbeat = true;
  } else {
    warnings.push({
      message: "Amphora health message reports an unexpected number of listeners",
      fields: { amphoraId: health.id, found: reported, expected },
    });
  }

  const change = (kind: HealthKind, id: string, from: string, to: string | undefined, pool?: string) => {
    // _update_status: compared without case.
    if (to !== undefined && to !== from && to.toLowerCase() !== String(from).toLowerCase())
      statuses.push({ kind, id, from, to, ...(pool ? { pool_id: pool } : {}) });
  };

  // We got a heartbeat so lb is healthy until proven otherwise.
  let lbStatus = lb.enabled ? ONLINE : OFFLINE;
  const version = health.ver ?? 0;
  const processedPools = new Set<string>();
  const potentialOfflinePools = new Map<string, string>();
  const membersOf = (poolId: string) => view.members.filter((m) => m.pool_id === poolId);

  const processPool = (poolId: string, dbStatus: string, pools: Record<string, HeartbeatPool>) => {
    const pool = pools[poolId];
    if (!pool) {
      // No status for this pool (yet): maybe offline, decided after every listener is processed.
      potentialOfflinePools.set(poolId, dbStatus);
      return;
    }
    processedPools.add(poolId);
    let poolStatus: string | undefined;
    if (pool.status === HB_UP)
      poolStatus = ONLINE; // UP = HAProxy backend has working or no servers
    else if (pool.status === HB_DOWN) {
      poolStatus = ERROR; // DOWN = HAProxy backend has no working servers
      lbStatus = ERROR;
    } else warnings.push({ message: "Pool reported an unknown status", fields: { poolId, status: pool.status } });

    for (const m of membersOf(poolId)) {
      let memberStatus: string | undefined;
      const status = pool.members[m.id];
      if (status === undefined) {
        if (m.operating_status !== NO_MONITOR) memberStatus = OFFLINE;
      } else if (status.startsWith(HB_UP)) {
        memberStatus = ONLINE; // "UP" or "UP #/#" (transitional)
      } else if (status.startsWith(HB_DOWN)) {
        memberStatus = ERROR; // "DOWN" or "DOWN #/#" (transitional)
        if (poolStatus === ONLINE) {
          poolStatus = DEGRADED;
          if (lbStatus === ONLINE) lbStatus = DEGRADED;
        }
      } else if (status === HB_DRAIN) memberStatus = DRAINING;
      else if (status === HB_MAINT) memberStatus = OFFLINE;
      else if (status === HB_NO_CHECK) memberStatus = NO_MONITOR;
      else if (status === HB_RESTARTING) {
        // keepalived is restarting: keep the previous status until a non-transitional one.
      } else warnings.push({ message: "Member reported an unknown status", fields: { memberId: m.id, status } });
      change("member", m.id, m.operating_status, memberStatus, m.pool_id);
    }
    change("pool", poolId, dbStatus, poolStatus);
  };

  for (const l of view.listeners) {
    let listenerStatus: string | undefined;
    const listener = listeners[l.id];
    if (!listener) {
      listenerStatus = l.enabled && lb.provisioning_status === ACTIVE ? ERROR : OFFLINE;
    } else if (listener.status === HB_OPEN) {
      listenerStatus = ONLINE; // OPEN = HAProxy listener status nbconn < maxconn
    } else if (listener.status === HB_FULL) {
      listenerStatus = DEGRADED; // FULL = HAProxy listener status not nbconn < maxconn
      if (lbStatus === ONLINE) lbStatus = DEGRADED;
    } else {
      warnings.push({ message: "Listener reported an unknown status", fields: { listenerId: l.id, status: listener.status } });
    }
    change("listener", l.id, l.operating_status, listenerStatus);
    if (!listener) continue;
    if (version < 2) {
      const pools = normalize(listener.pools ?? {});
      for (const p of view.pools) if (!processedPools.has(p.id)) processPool(p.id, p.operating_status, pools);
    }
  }

  if (version >= 2) {
    const pools = normalize(health.pools);
    for (const p of view.pools) if (!processedPools.has(p.id)) processPool(p.id, p.operating_status, pools);
  }

  for (const [poolId, dbStatus] of potentialOfflinePools) {
    if (processedPools.has(poolId)) continue; // found a status for it eventually
    if (dbStatus !== OFFLINE) change("pool", poolId, dbStatus, OFFLINE);
  }

  // The load balancer's status last.
  change("loadbalancer", lb.id, lb.operating_status, lbStatus);
  return result("updated", recordHeartbeat);
}

/**
 * update_stats: the listener counters to store for the heartbeat's amphora. Version 3 reports deltas
 * (added; active_connections replaces), older versions absolutes (replace). Only the load balancer's
 * own (not DELETED) listeners are kept, and only rows that change (a row never stored is written even
 * with zeros, as Octavia creates it).
 */
export function updateStats(health: HeartbeatMessage, view: HealthView): StatsUpdate[] {
  if (!view.lb || !view.amphora) return [];
  const deltas = (health.ver ?? 2) >= 3;
  const known = new Set(view.listeners.map((l) => l.id));
  const stored = view.amphora.listener_stats;
  const out: StatsUpdate[] = [];
  for (const [listenerId, l] of Object.entries(health.listeners)) {
    if (!known.has(listenerId)) continue;
    const row: ListenerStatsRow = {
      bytes_in: l.stats.rx,
      bytes_out: l.stats.tx,
      active_connections: l.stats.conns,
      total_connections: l.stats.totconns,
      request_errors: l.stats.ereq,
    };
    const old = stored[listenerId];
    if (old) {
      const same = deltas
        ? row.bytes_in === 0 &&
          row.bytes_out === 0 &&
          row.total_connections === 0 &&
          row.request_errors === 0 &&
          row.active_connections === old.active_connections
        : row.bytes_in === old.bytes_in &&
          row.bytes_out === old.bytes_out &&
          row.total_connections === old.total_connections &&
          row.request_errors === old.request_errors &&
          row.active_connections === old.active_connections;
      if (same) continue;
    }
    out.push({ listener_id: listenerId, mode: deltas ? "increment" : "replace", ...row });
  }
  return out;
}

/** The amphora's rows after `updates` (ListenerStatisticsRepository.increment / replace). */
export function applyStatsUpdates(
  rows: Record<string, ListenerStatsRow>,
  updates: readonly StatsUpdate[],
): Record<string, ListenerStatsRow> {
  const out: Record<string, ListenerStatsRow> = Object.fromEntries(Object.entries(rows).map(([id, r]) => [id, { ...r }]));
  for (const u of updates) {
    const { listener_id, mode, ...row } = u;
    const old = out[listener_id];
    out[listener_id] =
      mode === "increment" && old
        ? {
            bytes_in: old.bytes_in + row.bytes_in,
            bytes_out: old.bytes_out + row.bytes_out,
            active_connections: row.active_connections,
            total_connections: old.total_connections + row.total_connections,
            request_errors: old.request_errors + row.request_errors,
          }
        : { ...row };
  }
  return out;
}

/** A row with every counter present (absent counters read as 0). */
export function statsRow(raw: unknown): ListenerStatsRow {
  const r = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  return {
    bytes_in: n(r.bytes_in),
    bytes_out: n(r.bytes_out),
    active_connections: n(r.active_connections),
    total_connections: n(r.total_connections),
    request_errors: n(r.request_errors),
  };
}
