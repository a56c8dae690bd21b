// The ports the domain talks through. Adapters live beside them: DynamoDB in @ottava/db,
// Step Functions (AWS) and the in-process runner in @ottava/controller and @ottava/local.
import type { StatusSet } from "./constants";
import type { ItemSource } from "./query";
import type { LoadBalancer } from "./resources/loadbalancer";
import type { Amphora } from "./resources/amphora";
import type { QuotaField } from "./resources/quota";

/** A record as read, with the version the lock protocol conditions on. */
export interface Versioned<T> {
  record: T;
  version: number;
  lockOwner: string | undefined;
  executionArn: string | undefined;
}

export interface LockRequest {
  /** Statuses the LB may be in to take the lock: a named set of constants.ts (MUTABLE_STATUSES, DELETABLE_STATUSES, ...). */
  from: StatusSet;
  /** The PENDING_* status it moves to. */
  to: string;
  /** The name of the execution about to start: only that execution may write under this lock. */
  owner: string;
  executionArn: string;
  /** The version the API read and validated against; the lock is refused if it changed. */
  expectVersion?: number;
  /** Fields written together with the lock (an update's new values). */
  set?: Partial<LoadBalancer>;
  /** The quota usage this change adds (creates) or gives back (deletes), written in the same transaction. */
  usage?: QuotaCharge;
  /** The flow trail's start entry of the execution, written in the same transaction. */
  trail?: FlowStart;
}

/**
 * A change of a project's quota usage. With `limits`, the write is refused (QuotaExceeded, nothing
 * written) if any kind it adds to would end above its limit; -1 (or null) is unlimited.
 */
export interface QuotaCharge {
  project: string;
  delta: QuotaDelta;
  limits?: Partial<Record<QuotaField, number | null>>;
  /** What the limits are checked against, when it is not `delta`: a batch's net increase, whose deletes are given back when its flow ends. */
  check?: QuotaDelta;
}

export type QuotaDelta = Partial<Record<QuotaField, number>>;

/** A quota charge was refused: `fields` would have gone above their limits. Nothing was written. */
export class QuotaExceeded extends Error {
  constructor(readonly fields: QuotaField[]) {
    super(`quota exceeded: ${fields.join(", ")}`);
    this.name = "QuotaExceeded";
  }
}

/** Why a lock was refused: the LB as it is now (undefined when it does not exist). */
export class LockConflict extends Error {
  constructor(readonly current: Versioned<LoadBalancer> | undefined) {
    super("lock refused");
    this.name = "LockConflict";
  }
}

/** A flow wrote under a lock it no longer holds: a stale or duplicate execution. Nothing was written. */
export class LockLost extends Error {
  constructor(what: string) {
    super(`lock not held: ${what}`);
    this.name = "LockLost";
  }
}

/** A record of any kind in a load balancer's tree, as stored. */
export type TreeRecord = Record<string, unknown> & { id: string; provisioning_status?: string };

export interface TreeItem {
  kind: string;
  record: TreeRecord;
}

/**
 * One change to an object of an LB's tree: a new object (`put`) or fields of an existing one (`set`;
 * a member's names its `pool_id`: members are stored under their pool).
 */
export type ChildWrite =
  | { kind: string; put: TreeRecord & { project_id: string; created_at: string } }
  | { kind: string; id: string; set: Record<string, unknown>; pool_id?: string };

/** A member's (address, protocol_port) in its pool: unique there, as Octavia's database key. */
export interface MemberClaim {
  pool_id: string;
  address: string;
  protocol_port: number;
}

/**
 * The parts of an LB's tree a change's rules read, besides the LB: `structure` is every object but
 * members and amphorae (small and bounded: what listener, pool, monitor and L7 rules look at);
 * `pools` are pool items by id, with all their members if `poolMembers`; `members` single members;
 * `claims` the live members holding an (address, port) of a pool, if any.
 */
export interface TreeParts {
  structure?: boolean;
  pools?: readonly string[];
  poolMembers?: boolean;
  members?: readonly { pool_id: string; id: string }[];
  claims?: readonly MemberClaim[];
}

/** Persistence of the load-balancer tree and its amphorae. The lock is the LB item's provisioning_status + lock_owner. */
export interface LoadBalancerStore {
  getLoadBalancer(id: string): Promise<Versioned<LoadBalancer> | undefined>;
  /** Every project's LBs (project undefined) or one project's, in storage order; DELETED ones are not listed. */
  loadBalancers(project: string | undefined): ItemSource;
  /** Writes a new LB in PENDING_CREATE, already locked by the create flow's execution, charging `usage` and starting its flow trail (`trail`) in the same transaction. */
  createLoadBalancer(
    lb: LoadBalancer,
    owner: string,
    executionArn: string,
    usage: QuotaCharge | undefined,
    trail: FlowStart,
  ): Promise<void>;
  /** One conditional write: moves the LB to `to` under `owner`, or throws LockConflict. */
  lock(id: string, req: LockRequest): Promise<Versioned<LoadBalancer>>;
  /** Undoes a lock whose execution could not be started, restoring the fields it changed (and giving back `usage`). */
  abandonLock(id: string, owner: string, restore: Partial<LoadBalancer>, usage?: QuotaCharge): Promise<void>;
  /** Writes fields of the LB as the lock owner; `release` ends the lock (ACTIVE, ERROR or DELETED); `usage` is applied in the same transaction (never checked against limits). */
  updateLoadBalancer(id: string, owner: string, set: Partial<LoadBalancer>, release?: boolean, usage?: QuotaCharge): Promise<void>;
  /** A project's quota usage as counted (objects not DELETED nor being deleted). */
  quotaUsage(project: string): Promise<QuotaDelta>;

  /** The LB and every object of its tree (one consistent Query); DELETED objects included. */
  tree(lbId: string): Promise<{ lb: Versioned<LoadBalancer> | undefined; items: TreeItem[] }>;
  /**
   * The LB and the parts of its tree a change reads (consistent). The LB is read first: anything
   * that changes after it takes the lock, which moves the version the change is conditioned on.
   */
  readParts(lbId: string, parts: TreeParts): Promise<{ lb: Versioned<LoadBalancer> | undefined; items: TreeItem[] }>;
  /** The ids of a pool's members (not DELETED), by their key range. */
  memberIds(lbId: string, poolId: string): Promise<string[]>;
  /** An object of a tree by its id alone, with its LB's id. */
  getChild(kind: string, id: string): Promise<{ record: TreeRecord; lbId: string } | undefined>;
  /** Every project's (project undefined) or one project's objects of a kind, in storage order. */
  children(kind: string, project: string | undefined): ItemSource;
  /** One transaction: takes the LB's lock as `lock` does and applies the writes (more than fit go in further writes under the lock). */
  lockWith(id: string, req: LockRequest, writes: ChildWrite[]): Promise<void>;
  /** As the LB's lock owner: applies writes to its tree (in transactions of at most 100 items). */
  applyAsOwner(lbId: string, owner: string, writes: ChildWrite[]): Promise<void>;

  getAmphora(id: string): Promise<Amphora | undefined>;
  amphorae(project: string | undefined): ItemSource;
  amphoraeOf(lbId: string): Promise<Amphora[]>;
  /** Creates an amphora of the LB, as the LB's lock owner. */
  createAmphora(amphora: Amphora, owner: string): Promise<void>;
  updateAmphora(lbId: string, id: string, owner: string, set: Partial<Amphora>): Promise<void>;
  /**
   * Changes an amphora without the LB's lock, on the condition that its status is one of `from` (a rule's
   * named set, e.g. AMPHORA_DELETABLE_STATUSES, or the one status it must still have); false if it was not.
   */
  updateAmphoraIf(lbId: string, id: string, from: readonly string[], set: Partial<Amphora>): Promise<boolean>;

  /**
   * As the LB's lock owner: writes `set` on the LB item in one conditional update, unless one of the
   * attributes in `unless` already has the value given there; false if the condition failed (the
   * lock is not held by `owner`, or an `unless` attribute matched). Nothing is written then.
   */
  markLoadBalancerUnless(id: string, owner: string, set: Record<string, unknown>, unless: Record<string, string>): Promise<boolean>;
}

/** The flow trail (an Ottava extension): every flow run on a load balancer, with how it ended. */
export interface FlowTrailStore {
  /**
   * Records that an execution started on the LB, as an item of the LB's partition (in no index,
   * purged with the LB); only the newest entries are kept.
   */
  recordFlowStart(lbId: string, start: FlowStart): Promise<void>;
  /**
   * Records how an execution ended, once: only a RUNNING entry takes an end (a FAILED end may also
   * replace a SUCCEEDED one, when the release after it failed); answers the entry that took the end
   * (its flow and start), undefined if nothing was written (no such entry, or it had ended).
   * `lbDeleted`: the LB is going DELETED, its whole trail expires with it.
   */
  recordFlowEnd(lbId: string, execution: string, end: FlowEnd): Promise<FlowEnded | undefined>;
  /** The LB's trail, newest first, at most `limit` entries. */
  flowTrail(lbId: string, limit?: number): Promise<FlowTrailEntry[]>;
}

/** A flow's data too big for its input (a cross-pool member update's change set). */
export interface ChangeSetStore {
  /**
   * A flow's change set, too big for its input: numbered JSON chunks in the LB's partition (out of
   * every index, purged by TTL), written as the holder of the LB's lock `owner`.
   */
  putChangeSetChunks(lbId: string, owner: string, chunks: unknown[]): Promise<void>;
  /** One chunk of `owner`'s change set (undefined if absent or purged). */
  getChangeSetChunk(lbId: string, owner: string, n: number): Promise<unknown | undefined>;
  /** Removes `owner`'s change set (every chunk). */
  deleteChangeSet(lbId: string, owner: string): Promise<void>;
}

/** The health-manager addresses admins set ([health_manager] controller_ip_port_list), and which generation each amphora's agent has. */
export interface HealthManagerConfigStore {
  /** The health-manager configuration item; undefined until an admin first changed it. */
  getHealthManagerConfig(): Promise<HealthManagerConfig | undefined>;
  /**
   * Stores a new health-manager address list with generation `expect + 1` and zeroed refresh
   * counters, on the condition that the stored generation is still `expect` (0: never written);
   * false if it moved.
   */
  putHealthManagerConfig(list: string[], expect: number): Promise<boolean>;
  /**
   * Atomically adds to the refresh counters, if the stored generation is still `generation`; false if
   * it is not. With `page` (the key of the page of amphorae counted), a page is counted once: adding
   * a page already counted in this generation changes nothing and answers true.
   */
  addHealthManagerRefresh(generation: number, add: Partial<HealthManagerRefresh>, page?: string): Promise<boolean>;
  /**
   * Records that an amphora's agent has generation `generation` (no lock: a plain conditional update
   * of the amphora item, only if it is not DELETED and has no newer generation); false if not.
   */
  recordAmphoraAgentGeneration(lbId: string, id: string, generation: number, at: string): Promise<boolean>;
}

/** How a flow run ended: REPAIRED is written by housekeeping for an execution that died holding the lock. */
export type FlowOutcome = "RUNNING" | "SUCCEEDED" | "FAILED" | "REPAIRED";

export interface FlowStart {
  flow: string;
  /** The execution's name (the lock owner). */
  execution: string;
  executionArn: string;
  /** ISO 8601. */
  startedAt: string;
  /** The objects the flow works on (the flow input's `subject`). */
  subject: { kind: string; id: string }[];
}

export interface FlowEnd {
  outcome: Exclude<FlowOutcome, "RUNNING">;
  /** ISO 8601. */
  endedAt: string;
  /** The ASL state that failed. */
  failedStep?: string | null;
  /** Its error, Cause already shortened and redacted. */
  error?: { error: string | null; cause: string | null } | null;
  /** Why it ended so, when the outcome does not say it all (a cancelled resize, a repair). */
  reason?: string | null;
  /** The flow deleted the LB: the trail expires (TTL) with it. */
  lbDeleted?: boolean;
}

/** The trail entry a flow's end was written to. */
export interface FlowEnded {
  flow: string;
  /** ISO 8601. */
  startedAt: string;
}

/** One entry of a load balancer's flow trail. */
export interface FlowTrailEntry {
  flow: string;
  execution: string;
  execution_arn: string;
  started_at: string;
  ended_at: string | null;
  outcome: FlowOutcome;
  reason: string | null;
  failed_step: string | null;
  error: { error: string | null; cause: string | null } | null;
  subject: { kind: string; id: string }[];
}

export interface HealthManagerRefresh {
  total: number;
  done: number;
  failed: number;
}

/** [health_manager] controller_ip_port_list as admins set it, its generation and its refresh's progress. */
export interface HealthManagerConfig {
  controller_ip_port_list: string[];
  generation: number;
  refresh: HealthManagerRefresh;
}

export type ExecutionStatus = "RUNNING" | "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "ABORTED" | "PENDING_REDRIVE";

export interface ExecutionDescription {
  executionArn: string;
  name: string;
  status: ExecutionStatus;
  input: unknown;
  output?: unknown;
  error?: string;
  cause?: string;
  startDate: Date;
  stopDate?: Date;
}

/**
 * What the local workflow runner keeps of an execution so that it outlives the process that runs it
 * (Step Functions keeps its own on AWS): the execution (flow, name, input, status) and the outcome of
 * every task invocation it completed, by (state, input, occurrence). See packages/local (runner.ts).
 */
export interface JournaledExecution {
  flow: string;
  name: string;
  /** The execution's input, as JSON text (compared as text: the same name with another input is refused). */
  input: string;
  status: ExecutionStatus;
  /** ISO 8601. */
  startDate: string;
  stopDate?: string;
  /** JSON text of the output of a SUCCEEDED execution. */
  output?: string;
  error?: string;
  cause?: string;
}

/** How one task invocation ended: its output (JSON text), or the error it threw (name and message). */
export type JournaledTask = { output: string } | { error: { name: string; message: string } };

export interface ExecutionJournal {
  /**
   * Records a new execution (RUNNING). If one of that flow and name is already recorded (and not
   * expired), nothing is written and that one is answered instead.
   */
  begin(execution: JournaledExecution): Promise<JournaledExecution | undefined>;
  /** The execution, if recorded and not expired. */
  get(flow: string, name: string): Promise<JournaledExecution | undefined>;
  /** Every execution recorded as RUNNING (what a restarted runner continues). */
  running(): Promise<JournaledExecution[]>;
  /** The task invocations an execution completed, by key. */
  tasks(flow: string, name: string): Promise<Map<string, JournaledTask>>;
  /** Records one completed task invocation under `key` (written once; a second write of a key keeps the first). */
  recordTask(flow: string, name: string, key: string, outcome: JournaledTask): Promise<void>;
  /**
   * Records the end (status, output or error): the execution expires after `retainSeconds`; its task
   * records (`taskKeys`: those the runner wrote and read) go.
   */
  end(
    flow: string,
    name: string,
    end: Pick<JournaledExecution, "status" | "stopDate" | "output" | "error" | "cause">,
    retainSeconds: number,
    taskKeys: string[],
  ): Promise<void>;
}

/** The controller's workflow engine: AWS Step Functions, or the same ASL run in process. */
export interface WorkflowEngine {
  /** ARN an execution of `flow` named `name` has (known before it starts: the lock records it). */
  executionArn(flow: string, name: string): string;
  /**
   * Starts an execution; idempotent by name as Step Functions Standard workflows are: the same name
   * and input return the running or finished execution, the same name with another input throws.
   */
  start(flow: string, name: string, input: Record<string, unknown>): Promise<{ executionArn: string }>;
  describe(executionArn: string): Promise<ExecutionDescription | undefined>;
}

/**
 * The UUIDs a cloud's resources are known by in Octavia's API (a subnet's, network's, port's or security
 * group's id must be a UUID there): each one derived from the resource's cloud id (AWS: uuidOf the
 * Region and the id), kept here so the cloud id can be found from the UUID again.
 */
export interface CloudIdStore {
  /** Remembers that `uuid` names the cloud resource `cloudId` (idempotent: the same pair again changes nothing). */
  remember(uuid: string, cloudId: string): Promise<void>;
  /** The cloud id `uuid` names, if it was remembered. */
  cloudId(uuid: string): Promise<string | undefined>;
}

/**
 * One event notification, as Octavia's notifier sends it (`rpc.get_notifier().info(ctx, event_type,
 * payload)`): its type (`octavia.loadbalancer.create.end`), its payload, and where it came from. The
 * message id is stable (the execution and the type, services/events.ts), so an event sent again by a
 * replayed task is a duplicate a consumer can recognise, never a new event.
 */
export interface EventNotification {
  eventType: string;
  messageId: string;
  project: string;
  /** The API request that started the flow (its x-openstack-request-id), when the flow's input carries it. */
  requestId: string | null;
  /** The execution (flow) that sent it: the LB's lock owner while it ran. */
  execution: string;
  payload: Record<string, unknown>;
}

/**
 * Where a process sends its event notifications (EventBridge on AWS: @ottava/aws/events; JSON lines in
 * the data directory locally). It never throws: an event it could not deliver after its retries is
 * logged and counted (EventNotificationsFailed), and never fails the change it reports.
 */
export interface Notifier {
  notify(events: EventNotification[]): Promise<void>;
}
