// The /stats answers from the counters amphorae reported (octavia/common/stats.py StatsMixin): a
// listener's are the sum of its rows over every amphora that reported it, active connections counted
// only from ALLOCATED amphorae (a standby's are not real); a load balancer's are the sum over its
// listeners. The rows live on the amphora items (`listener_stats`), so a failed-over amphora's counters
// still count until its DELETED item is purged.
import { AMPHORA_ALLOCATED } from "../constants";
import type { ListenerStatsRow } from "./ports";
import { statsRow } from "./status";

/** An amphora as the stats read it: its status and its `listener_stats` attribute. */
export interface StatsAmphora {
  id: string;
  status: string;
  listener_stats?: unknown;
}

const zero = (): ListenerStatsRow => ({ bytes_in: 0, bytes_out: 0, active_connections: 0, total_connections: 0, request_errors: 0 });

/** The amphora's rows, listener id → counters. */
export function amphoraListenerStats(a: { listener_stats?: unknown }): Record<string, ListenerStatsRow> {
  const raw = a.listener_stats;
  if (typeof raw !== "object" || raw === null) return {};
  return Object.fromEntries(Object.entries(raw as Record<string, unknown>).map(([id, row]) => [id, statsRow(row)]));
}

/**
 * Counters stored on a listener record itself (`stats`: what a provider other than the amphora driver
 * reports), as Octavia's rows whose amphora_id is the listener's id: summed, active connections included.
 */
export function providerStats(listeners: readonly { id: string; stats?: unknown }[]): StatsAmphora[] {
  return listeners
    .filter((l) => typeof l.stats === "object" && l.stats !== null)
    .map((l) => ({ id: l.id, status: "", listener_stats: { [l.id]: l.stats } }));
}

/** get_listener_stats */
export function listenerStatistics(listenerId: string, amphorae: readonly StatsAmphora[]): ListenerStatsRow {
  const s = zero();
  for (const a of amphorae) {
    const row = amphoraListenerStats(a)[listenerId];
    if (!row) continue;
    s.bytes_in += row.bytes_in;
    s.bytes_out += row.bytes_out;
    s.total_connections += row.total_connections;
    s.request_errors += row.request_errors;
    if (a.status === AMPHORA_ALLOCATED || a.id === listenerId) s.active_connections += row.active_connections;
  }
  return s;
}

/** get_loadbalancer_stats: the sum over the load balancer's listeners. */
export function loadBalancerStatistics(listenerIds: readonly string[], amphorae: readonly StatsAmphora[]): ListenerStatsRow {
  const s = zero();
  for (const id of listenerIds) {
    const l = listenerStatistics(id, amphorae);
    for (const k of Object.keys(s) as (keyof ListenerStatsRow)[]) s[k] += l[k];
  }
  return s;
}
