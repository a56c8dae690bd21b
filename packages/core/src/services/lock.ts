// The lock protocol, once for every resource: one conditional write takes the LB's lock for the
// execution about to start (named after the version it was read at, so the name is unique and the
// start idempotent); if the start fails, or a write after the lock's fails, the lock is given back.
// See packages/db/README.md.
import { DELETED } from "../constants";
import { Fault, immutable, notFound } from "../faults";
import type { Logger } from "../log";
import {
  LockConflict,
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
import type { CertManager } from "../drivers";
import type { LoadBalancer } from "../resources/loadbalancer";
import type { QuotaLimits } from "./quota";
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
  /** The project's quota limits where they are enforced (keystone); absent under noauth. */
  quotaLimits?: QuotaLimits;
  /** [certificates] cert_manager: listeners' and pools' TLS references are read through it; absent, any non-empty one is accepted. */
  certificates?: CertManager;
}

export interface LockedAction {
  lbId: string;
  /** The flow to start, e.g. "loadbalancer-update". */
  flow: string;
  /** Short verb for the execution name: update, delete, failover. */
  verb: string;
  from: readonly string[];
  to: string;
  /** Checks made on the LB as read, and the fields to write with the lock; re-run if the LB changed meanwhile. */
  prepare?: (lb: Versioned<LoadBalancer>) => Partial<LoadBalancer> | undefined;
  /** Extra flow input. */
  input?: Record<string, unknown>;
  /** The flow finishes the LB's whole tree (a delete); otherwise the LB alone. */
  wholeTree?: boolean;
}

const ATTEMPTS = 5;

export const executionName = (verb: string, lbId: string, version: number) => `${verb}-${lbId}-v${version}`;

/** Reads the LB (404 if absent or DELETED), takes its lock, starts the flow; answers the locked LB. */
export async function lockAndStart(deps: LockDeps, action: LockedAction, read?: Versioned<LoadBalancer>): Promise<Versioned<LoadBalancer>> {
  let current = read ?? (await deps.store.getLoadBalancer(action.lbId));
  for (let attempt = 1; ; attempt++) {
    if (!current || current.record.provisioning_status === DELETED) throw notFound("Load Balancer", action.lbId);
    if (!action.from.includes(current.record.provisioning_status)) throw immutable("Load Balancer", action.lbId);
    const set = action.prepare?.(current);
    const owner = executionName(action.verb, action.lbId, current.version + 1);
    const executionArn = deps.engine.executionArn(action.flow, owner);
    const subject = [{ kind: "loadbalancer", id: action.lbId }];
    const started: FlowStart = { flow: action.flow, execution: owner, executionArn, startedAt: new Date().toISOString(), subject };
    const restore: Partial<LoadBalancer> = { provisioning_status: current.record.provisioning_status };
    for (const k of Object.keys(set ?? {}) as (keyof LoadBalancer)[]) (restore as Record<string, unknown>)[k] = current.record[k];
    let locked: Versioned<LoadBalancer>;
    try {
      locked = await deps.store.lock(action.lbId, {
        from: action.from,
        to: action.to,
        owner,
        executionArn,
        expectVersion: current.version,
        set,
        trail: started,
      });
    } catch (e) {
      if (!(e instanceof LockConflict)) {
        // (lock() reads the LB after taking it: that read, or a lost answer, may fail with the lock taken.)
        await giveBackIfTaken(deps, action.lbId, owner, e, restore);
        throw e;
      }
      // Someone else wrote between our read and our write: decide again on what is there now.
      if (attempt >= ATTEMPTS) throw immutable("Load Balancer", action.lbId);
      current = e.current;
      continue;
    }
    const changes: FlowChanges = action.wholeTree ? WHOLE_TREE : LB_ONLY;
    await startOrGiveBack(deps, started, { lbId: action.lbId, owner, subject, changes, ...action.input }, restore);
    deps.log.info("flow started", { lbId: action.lbId, flow: action.flow, execution: owner, executionArn });
    return locked;
  }
}

/**
 * Starts the execution that owns a lock; if it cannot start, releases the lock, restoring `restore`
 * and giving back the quota `charged` with it. Every locked flow starts here. The LB's flow trail
 * has the start already (`started`, written in the lock's transaction: a quick flow's end must find it).
 */
export async function startOrGiveBack(
  deps: LockDeps,
  started: FlowStart,
  input: Record<string, unknown> & { lbId: string },
  restore: Partial<LoadBalancer>,
  undo?: () => Promise<void>,
  charged?: QuotaCharge,
): Promise<void> {
  const { flow, execution: owner } = started;
  flowStarted(started);
  try {
    await deps.engine.start(flow, owner, input);
  } catch (e) {
    deps.log.error("flow could not start; lock given back", { lbId: input.lbId, flow, execution: owner, error: String(e) });
    await giveBack(deps, input.lbId, owner, e, "the execution could not be started", restore, undo, charged);
    // DynamoDB or Step Functions unavailable (a start that writes, as the cross-pool change set's) is the API's 503.
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
