// The health manager's health check (octavia/controller/healthmanager/health_manager.py and
// AmphoraHealthRepository.get_stale_amphora): amphorae whose last heartbeat is older than
// heartbeat_timeout are failed over, at most one flow per load balancer (the LB's lock sees to that);
// when as many as failover_threshold are stale at once, none is: they go FAILOVER_STOPPED and an
// alert is logged (a network outage, not a thousand broken amphorae). Only amphorae that have sent a
// heartbeat are watched. With failover_on_error (an Ottava extension) amphorae in ERROR are failed
// over too.
import {
  AMPHORA_ALLOCATED,
  AMPHORA_FAILOVER_STOPPED,
  AMPHORA_FAILOVERABLE_STATUSES,
  AMPHORA_STOPPABLE_STATUSES,
  DELETED,
  ERROR,
  FAILOVER_THRESHOLD_ALERT,
  FAILOVERABLE_STATUSES,
  PENDING_DELETE,
  PENDING_UPDATE,
} from "../constants";
import { Fault } from "../faults";
import type { Amphora } from "../resources/amphora";
import { lockAndStart, type LockDeps } from "./lock";

/** What the health check reads: the amphorae it watches, and its lease. */
export interface HealthCheckStore {
  /** Amphorae that have sent a heartbeat and whose last one is older than `before` (ISO), not DELETED. */
  staleAmphorae(before: string): Promise<Amphora[]>;
  /** Amphorae (not DELETED) in one of `statuses`. */
  amphoraeInStatus(statuses: readonly string[]): Promise<Amphora[]>;
  /** The amphora's last heartbeat (ISO), if it ever sent one. */
  lastHeartbeat(amphora: Amphora): string | undefined;
  /**
   * Takes or renews the lease `name` for `holder` until `until` (ms since the epoch), if it is free,
   * expired at `now`, or already `holder`'s; false if another holder has it.
   */
  acquireLease(name: string, holder: string, now: number, until: number): Promise<boolean>;
}

export interface HealthCheckSettings {
  /** [health_manager] heartbeat_timeout, seconds. */
  heartbeatTimeout: number;
  /** [health_manager] failover_threshold: undefined is no limit. */
  failoverThreshold: number | undefined;
  /** Fail over amphorae in ERROR too (Ottava extension). */
  failoverOnError: boolean;
}

export type HealthCheckDeps = LockDeps & { checks: HealthCheckStore };

export interface HealthCheckResult {
  stale: number;
  /** Amphorae whose failover flow was started. */
  failedOver: string[];
  /** Amphorae set FAILOVER_STOPPED by the storm protection. */
  stopped: string[];
  /** FAILOVER_STOPPED amphorae that are heard again, back to ALLOCATED. */
  recovered: string[];
  /** Amphorae skipped because their LB is busy (its lock is held). */
  skipped: string[];
}

/**
 * One pass of the health check at `now`. `scanStatuses`: also look for FAILOVER_STOPPED amphorae heard
 * again and (with failover_on_error) ERROR ones; that reads every amphora, so the caller does it less
 * often than the stale check, which reads only the stale end of the heartbeat index.
 */
export async function healthCheck(
  deps: HealthCheckDeps,
  settings: HealthCheckSettings,
  now: Date,
  scanStatuses = true,
): Promise<HealthCheckResult> {
  const before = new Date(now.getTime() - settings.heartbeatTimeout * 1000).toISOString();
  const result: HealthCheckResult = { stale: 0, failedOver: [], stopped: [], recovered: [], skipped: [] };

  // update_failover_stopped: heard again since the storm, back in service.
  for (const a of scanStatuses ? await deps.checks.amphoraeInStatus([AMPHORA_FAILOVER_STOPPED]) : []) {
    const last = deps.checks.lastHeartbeat(a);
    if (
      last !== undefined &&
      last >= before &&
      (await deps.store.updateAmphoraIf(a.loadbalancer_id, a.id, [AMPHORA_FAILOVER_STOPPED], { status: AMPHORA_ALLOCATED }))
    ) {
      result.recovered.push(a.id);
    }
  }

  const stale = (await deps.checks.staleAmphorae(before)).filter((a) => a.status !== DELETED && a.status !== PENDING_DELETE);
  result.stale = stale.length;
  if (settings.failoverThreshold !== undefined && stale.length >= settings.failoverThreshold) {
    for (const a of stale) {
      if (await deps.store.updateAmphoraIf(a.loadbalancer_id, a.id, AMPHORA_STOPPABLE_STATUSES, { status: AMPHORA_FAILOVER_STOPPED }))
        result.stopped.push(a.id);
    }
    deps.log.error("ALERT: stale amphora count reached the failover threshold; no amphora is failed over", {
      alert: FAILOVER_THRESHOLD_ALERT,
      threshold: settings.failoverThreshold,
      stale: stale.length,
      stopped: result.stopped,
    });
    return result;
  }

  const candidates = stale.filter((a) => AMPHORA_FAILOVERABLE_STATUSES.includes(a.status));
  if (settings.failoverOnError && scanStatuses)
    candidates.push(...(await deps.checks.amphoraeInStatus([ERROR])).filter((a) => !candidates.some((c) => c.id === a.id)));
  const perLb = new Map<string, Amphora>();
  for (const a of candidates) if (!perLb.has(a.loadbalancer_id)) perLb.set(a.loadbalancer_id, a);
  for (const a of perLb.values()) {
    try {
      await lockAndStart(deps, {
        lbId: a.loadbalancer_id,
        flow: "amphora-failover",
        verb: "amphora-failover",
        from: FAILOVERABLE_STATUSES,
        to: PENDING_UPDATE,
        input: { failover: [a] },
      });
      result.failedOver.push(a.id);
      deps.log.warn("stale amphora failed over", {
        amphoraId: a.id,
        lbId: a.loadbalancer_id,
        status: a.status,
        lastHeartbeat: deps.checks.lastHeartbeat(a),
      });
    } catch (e) {
      // An LB that is busy (or gone) is skipped this round, as Octavia's _test_and_set_failover_prov_status.
      if (!(e instanceof Fault) || (e.status !== 409 && e.status !== 404)) throw e;
      result.skipped.push(a.id);
    }
  }
  return result;
}
