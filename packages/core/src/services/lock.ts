// The lock protocol, once for every resource: one loop (lockedStart) in which one conditional write
// takes the LB's lock for the execution about to start (named after the version it was read at, so
// the name is unique and the start idempotent), decided again if the LB changed meanwhile; if the
// start fails, or a write after the lock's fails, the lock is given back. LB-level changes
// (lockAndStart) and changes of its tree (children.ts lockedChange) both go through it.
// See packages/db/README.md.
import type { StatusSet } from "../constants";
import { Fault, immutable, requireFound, requireStatus } from "../faults";
import type { Logger } from "../log";
import type { Metrics } from "../metrics";
import {
  LockConflict,
  QuotaExceeded,
  type ChildWrite,
  type FlowStart,
  type FlowTrailStore,
  type LoadBalancerStore,
  type QuotaCharge,
  type TreeItem,
  type Versioned,
  type WorkflowEngine,
} from "../ports";
import { isUnavailable } from "../unavailable";
import type { CatalogStore } from "../catalog";
import type { CertManager, NetworkDriver, ProfileValidator } from "../drivers";
import type { LoadBalancer } from "../resources/loadbalancer";
import type { ChildRef } from "../resources/child";
import { quotaFault, type QuotaLimits } from "./quota";
import { flowStarted, recordFlowEnd, sanitizeCause } from "./flow-trail";
import { LB_ONLY, WHOLE_TREE, type FlowChanges } from "./change-set";

export interface LockDeps {
  store: LoadBalancerStore;
  /** The LB's flow trail: a flow that cannot start records its end there (startOrGiveBack). */
  trail: FlowTrailStore;
  /** Flavors, availability zones, their profiles and quotas: the objects outside any load balancer's tree. */
  catalog: CatalogStore;
  engine: WorkflowEngine;
  log: Logger;
  /** Where the flows' starts and ends are counted (flow-trail.ts). */
  metrics: Metrics;
  /** The project's quota limits where they are enforced (keystone); absent under noauth. */
  quotaLimits?: QuotaLimits;
  /** [certificates] cert_manager: listeners' and pools' TLS references are read through it; absent, any non-empty one is accepted. */
  certificates?: CertManager;
  /** Checks what a flavor's or zone's profile names against the cloud (the EC2 compute driver's); absent, nothing is checked. */
  profiles?: ProfileValidator | undefined;
  /** The network driver, for its quotas (a listener's rules) and its check of member subnets; absent, none are checked. */
  network?: Pick<NetworkDriver, "limits" | "checkMemberSubnets"> | undefined;
  /** The API request that starts the flow: its input carries it (`requestId`), for the flow's event notifications. */
  requestId?: string | undefined;
}

/** The flow input's request id (the events a flow sends name the request that started it). */
export const requestInput = (deps: Pick<LockDeps, "requestId">) => (deps.requestId ? { requestId: deps.requestId } : {});

/**
 * What one attempt at a locked change decided, on the LB as it read it: the one lock loop
 * (`lockedStart`) takes the lock with it and starts its flow.
 */
export interface LockPlan {
  /** The LB as read: the lock is conditioned on its version (and on `from`). */
  read: Versioned<LoadBalancer>;
  /** The flow to start, e.g. "loadbalancer-update". */
  flow: string;
  /** The execution name's verb (`<verb>-<lb id>-v<version>`); the flow's name when absent. */
  verb?: string;
  /** The statuses the lock may be taken from (constants.ts). */
  from: StatusSet;
  to: string;
  /** The object the flow works on (its input's and trail's `subject`). */
  subject: ChildRef;
  /** Fields of the LB written with the lock. */
  set?: Partial<LoadBalancer>;
  /** Objects of its tree written with the lock (in the lock's transaction; what does not fit, right after it). */
  writes?: ChildWrite[];
  /** The quota charged in the lock's transaction. */
  usage?: QuotaCharge;
  /** What a give-back restores on the LB: its status, and the fields the lock changed. */
  restore: Partial<LoadBalancer>;
  /**
   * The writes that take back `writes` on a give-back: of those the tree `items` shows written (a
   * write after the lock's failed), or of all of them (the flow could not start). Only with `writes`.
   */
  undo?: (items?: TreeItem[]) => ChildWrite[];
  /** Read the LB again once locked (what an LB-level change answers). */
  readLocked?: boolean;
  /** The flow's input besides lbId, owner and subject. */
  input: Record<string, unknown>;
  /**
   * Work that must be done under the lock before the flow starts (the cross-pool change set, which
   * is stored under the execution's name); answers more input for the flow. If it fails, the flow
   * never starts: the lock is given back as when the start fails.
   */
  beforeStart?: (execution: string) => Promise<Record<string, unknown>>;
}

/** Lock conflicts (someone else wrote between read and write) decided again before the answer is 409. */
const ATTEMPTS = 5;

/** The execution that holds a lock: `<verb>-<lb id>-v<version>`, unique per lock, so starting it is idempotent; `create-<lb id>` for a create. */
export const executionName = (verb: string, lbId: string, version?: number) =>
  version === undefined ? `${verb}-${lbId}` : `${verb}-${lbId}-v${version}`;

/**
 * The lock loop, once for every locked change: `attempt` reads and decides (`conflicted`: the LB as
 * a refused lock found it, after the first attempt), then one transaction takes the lock with the
 * plan's writes, the trail's start entry and the quota charge, and the flow starts. If the LB changed
 * between read and write, it decides again (ATTEMPTS times); if a write after the lock's fails, or
 * the start, the lock is given back. Answers the plan started and, with `readLocked`, the locked LB.
 */
export async function lockedStart<P extends LockPlan>(
  deps: LockDeps,
  lbId: string,
  attempt: (conflicted: Versioned<LoadBalancer> | undefined) => Promise<P>,
): Promise<{ plan: P; locked: Versioned<LoadBalancer> | undefined }> {
  let conflicted: Versioned<LoadBalancer> | undefined;
  for (let n = 1; ; n++) {
    const plan = await attempt(conflicted);
    const owner = executionName(plan.verb ?? plan.flow, lbId, plan.read.version + 1);
    const executionArn = deps.engine.executionArn(plan.flow, owner);
    const started: FlowStart = {
      flow: plan.flow,
      execution: owner,
      executionArn,
      startedAt: new Date().toISOString(),
      subject: [plan.subject],
    };
    let locked: Versioned<LoadBalancer> | undefined;
    try {
      const req = {
        from: plan.from,
        to: plan.to,
        owner,
        executionArn,
        expectVersion: plan.read.version,
        usage: plan.usage,
        set: plan.set,
        trail: started,
      };
      await deps.store.lockWith(lbId, req, plan.writes ?? []);
      if (plan.readLocked) locked = await deps.store.getLoadBalancer(lbId);
    } catch (e) {
      if (e instanceof QuotaExceeded) throw quotaFault(e);
      if (!(e instanceof LockConflict)) {
        // A change too big for one transaction writes the rest after the lock's, and an LB-level
        // change reads the LB after it: when one of those failed (or the answer was lost), the lock is
        // held and part of the change written. Undo what went through, give it back.
        await giveBackIfTaken(deps, lbId, owner, e, plan.restore, { charged: plan.usage, undo: plan.undo });
        throw e;
      }
      // A refused lock as Octavia answers it: 404 if the LB is gone, else 409.
      conflicted = requireFound(e.current, "Load Balancer", lbId);
      if (n >= ATTEMPTS) throw immutable("Load Balancer", lbId);
      requireStatus(conflicted.record, plan.from, "Load Balancer", lbId);
      continue;
    }
    const undo = plan.undo && (() => deps.store.applyAsOwner(lbId, owner, plan.undo!()));
    const input = { lbId, owner, subject: [plan.subject], ...requestInput(deps), ...plan.input };
    await startOrGiveBack(deps, started, input, plan.restore, { undo, charged: plan.usage, beforeStart: plan.beforeStart });
    deps.log.info("flow started", { lbId, flow: plan.flow, execution: owner, executionArn, subject: plan.subject });
    return { plan, locked };
  }
}

export interface LockedAction {
  lbId: string;
  /** The flow to start, e.g. "loadbalancer-update". */
  flow: string;
  /** Short verb for the execution name: update, delete, failover. */
  verb: string;
  /** The statuses the lock may be taken from (constants.ts). */
  from: StatusSet;
  to: string;
  /** Checks made on the LB as read, and the fields to write with the lock; re-run if the LB changed meanwhile. */
  prepare?: (lb: Versioned<LoadBalancer>) => Partial<LoadBalancer> | undefined;
  /** Extra flow input. */
  input?: Record<string, unknown>;
  /** The flow finishes the LB's whole tree (a delete); otherwise the LB alone. */
  wholeTree?: boolean;
}

/** A change of the LB itself: reads it (404 if absent or DELETED), takes its lock, starts the flow; answers the locked LB. */
export async function lockAndStart(deps: LockDeps, action: LockedAction, read?: Versioned<LoadBalancer>): Promise<Versioned<LoadBalancer>> {
  const { locked } = await lockedStart(deps, action.lbId, async (conflicted) => {
    const current = requireFound(conflicted ?? read ?? (await deps.store.getLoadBalancer(action.lbId)), "Load Balancer", action.lbId);
    requireStatus(current.record, action.from, "Load Balancer", action.lbId);
    const set = action.prepare?.(current);
    const restore: Partial<LoadBalancer> = { provisioning_status: current.record.provisioning_status };
    for (const k of Object.keys(set ?? {}) as (keyof LoadBalancer)[]) (restore as Record<string, unknown>)[k] = current.record[k];
    const changes: FlowChanges = action.wholeTree ? WHOLE_TREE : LB_ONLY;
    return {
      read: current,
      flow: action.flow,
      verb: action.verb,
      from: action.from,
      to: action.to,
      subject: { kind: "loadbalancer", id: action.lbId },
      set,
      restore,
      readLocked: true,
      input: { changes, ...action.input },
    };
  });
  return locked!;
}

/**
 * Starts the execution that owns a lock, after the work it needs done first (`beforeStart`); if it
 * cannot start, releases the lock, restoring `restore`, running `undo` and giving back the quota
 * `charged` with it. Every locked flow starts here. The LB's flow trail has the start already
 * (`started`, written in the lock's transaction: a quick flow's end must find it).
 */
export async function startOrGiveBack(
  deps: LockDeps,
  started: FlowStart,
  input: Record<string, unknown> & { lbId: string },
  restore: Partial<LoadBalancer>,
  opts: { undo?: () => Promise<void>; charged?: QuotaCharge; beforeStart?: (execution: string) => Promise<Record<string, unknown>> } = {},
): Promise<void> {
  const { flow, execution: owner } = started;
  flowStarted(deps, started);
  try {
    const more = await opts.beforeStart?.(owner);
    await deps.engine.start(flow, owner, { ...input, ...more });
  } catch (e) {
    deps.log.error("flow could not start; lock given back", { lbId: input.lbId, flow, execution: owner, error: String(e) });
    await giveBack(deps, input.lbId, owner, e, "the execution could not be started", restore, opts.undo, opts.charged);
    // DynamoDB or Step Functions unavailable (a write before the start, as the cross-pool change set's) is the API's 503.
    if (isUnavailable(e)) throw e;
    throw new Fault(500, "Provider 'amphora' reports error: the controller could not start the flow.");
  }
}

/**
 * Gives back a lock whose flow never ran: the trail's entry (written with the lock) ends FAILED with
 * `reason`, `undo` takes back what the change wrote besides the LB, and the LB gets `restore` and
 * loses the lock, the quota `charged` given back with it.
 */
async function giveBack(
  deps: LockDeps,
  lbId: string,
  owner: string,
  error: unknown,
  reason: string,
  restore: Partial<LoadBalancer>,
  undo?: () => Promise<void>,
  charged?: QuotaCharge,
): Promise<void> {
  const err = error as Error | undefined;
  await recordFlowEnd(deps, lbId, owner, {
    outcome: "FAILED",
    endedAt: new Date().toISOString(),
    failedStep: null,
    error: { error: err?.name ?? "Error", cause: sanitizeCause(err?.message ?? String(error)) },
    reason,
  });
  await undo?.();
  const released = charged && {
    project: charged.project,
    delta: Object.fromEntries(Object.entries(charged.delta).map(([k, n]) => [k, -(n ?? 0)])),
  };
  await deps.store.abandonLock(lbId, owner, restore, released);
}

/**
 * After a write of a locked change failed (DynamoDB unavailable once the SDK's retries were spent, or
 * its answer lost): if the lock was taken all the same — a later write of the change failed, or the
 * read after it — gives it back, with what `undo` answers from the LB's tree as it is now (the
 * change's writes that went through, undone). Never throws: the caller rethrows the first error. If
 * DynamoDB still fails here, the LB stays locked by an execution that never started, and
 * housekeeping's stuck-state repair (services/repair.ts) moves it and whatever is PENDING_* in its tree
 * to ERROR a minute later.
 */
export async function giveBackIfTaken(
  deps: LockDeps,
  lbId: string,
  owner: string,
  error: unknown,
  restore: Partial<LoadBalancer>,
  opts: { undo?: (items: TreeItem[]) => ChildWrite[]; charged?: QuotaCharge } = {},
): Promise<void> {
  try {
    const { lb, items } = opts.undo ? await deps.store.tree(lbId) : { lb: await deps.store.getLoadBalancer(lbId), items: [] };
    if (lb?.lockOwner !== owner) return;
    const writes = opts.undo?.(items) ?? [];
    const undo = writes.length ? () => deps.store.applyAsOwner(lbId, owner, writes) : undefined;
    await giveBack(deps, lbId, owner, error, "the change could not be written", restore, undo, opts.charged);
    deps.log.warn("a write after the lock failed; lock given back", {
      lbId,
      execution: owner,
      undone: writes.length,
      error: String(error),
    });
  } catch (e) {
    deps.log.error(
      "a write after the lock failed, and the lock could not be given back: housekeeping's repair will move the load balancer to ERROR",
      {
        lbId,
        execution: owner,
        error: String(error),
        giveBackError: String(e),
      },
    );
  }
}
