// The heartbeat receiver's persistence port: what it reads for one heartbeat (the amphora and its load
// balancer's tree, as Octavia's AmphoraRepository.get_lb_for_health_update) and the one batch of
// writes it makes from it. The DynamoDB adapter is @ottava/db's DynamoHealthStore.

/** The counters of one listener on one amphora (Octavia's listener_statistics row). */
export interface ListenerStatsRow {
  bytes_in: number;
  bytes_out: number;
  active_connections: number;
  total_connections: number;
  request_errors: number;
}

export const STATS_FIELDS = ["bytes_in", "bytes_out", "active_connections", "total_connections", "request_errors"] as const;

export interface HealthAmphora {
  id: string;
  loadbalancer_id: string;
  status: string;
  compute_id: string | null;
  /** listener id → the counters this amphora reported for it (amphora item attribute `listener_stats`). */
  listener_stats: Record<string, ListenerStatsRow>;
  /** How many times `listener_stats` was written (`listener_stats_rev`): its writes are conditioned on it. */
  listener_stats_rev: number;
}

export interface HealthLoadBalancer {
  id: string;
  /** admin_state_up */
  enabled: boolean;
  provisioning_status: string;
  operating_status: string;
}

export interface HealthListener {
  id: string;
  enabled: boolean;
  protocol: string;
  operating_status: string;
  default_pool_id: string | null;
}

export interface HealthPool {
  id: string;
  operating_status: string;
}

export interface HealthMember {
  id: string;
  pool_id: string;
  enabled: boolean;
  operating_status: string;
}

/**
 * What one heartbeat is judged against. `amphora` is the amphora item whatever its status (undefined
 * if there is none); `lb` is its load balancer only if neither is DELETED (Octavia's query), with the
 * tree's listeners, pools and members that are not DELETED.
 */
export interface HealthView {
  amphora: HealthAmphora | undefined;
  lb: HealthLoadBalancer | undefined;
  listeners: HealthListener[];
  pools: HealthPool[];
  members: HealthMember[];
}

export type HealthKind = "loadbalancer" | "listener" | "pool" | "member";

/** One operating_status to write, conditioned on the value it was computed from (`from`). */
export interface OperatingStatusChange {
  kind: HealthKind;
  id: string;
  /** A member's pool (members are stored under it). */
  pool_id?: string;
  from: string;
  to: string;
}

/**
 * One listener's counters on the heartbeat's amphora: added to the stored row (`increment`, version 3
 * deltas; active_connections replaces) or replacing it (`replace`, older absolute reports).
 */
export interface StatsUpdate extends ListenerStatsRow {
  listener_id: string;
  mode: "increment" | "replace";
}

/** Everything one heartbeat changes, written as one batch (no lock; provisioning_status, version and lock_owner untouched). */
export interface HealthWrite {
  lbId: string;
  amphoraId: string;
  /** The amphora's new last_heartbeat (ISO), when this heartbeat counts as one (Octavia's amphora_health.replace). */
  lastHeartbeat: string | undefined;
  statuses: OperatingStatusChange[];
  stats: StatsUpdate[];
  /** The amphora's rows and revision `stats` apply to (as read); the store reads them again if they moved. */
  statsBase: { rows: Record<string, ListenerStatsRow>; revision: number };
}

export interface HealthWriteResult {
  /** Items written. */
  written: number;
  /** Writes given up because their item changed meanwhile (deleted, or its status moved): the next heartbeat decides again. */
  skipped: number;
}

export interface HealthStore {
  /** The view of the amphora `amphoraId` and its tree (consistent reads). */
  healthView(amphoraId: string): Promise<HealthView>;
  /** Writes the changes (only changed items, in transactions of at most 100); never resurrects a DELETED item. */
  applyHealth(write: HealthWrite): Promise<HealthWriteResult>;
}
