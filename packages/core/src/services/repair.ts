// Stuck-state repair (housekeeping; beyond Octavia, whose users know load balancers stuck in
// PENDING_UPDATE for hours): a load balancer in PENDING_* whose recorded execution is no longer
// running (failed, aborted, timed out, or lost with a local process that stopped) goes to ERROR with
// the objects its flow had moved to PENDING_*, and the flow trail says why. Every write is the lock
// owner's, so a flow that ends meanwhile wins and nothing is repaired.
import { ERROR, PENDING_STATUSES } from "../constants";
import { LockLost, type ChildWrite } from "../ports";
import type { LockDeps } from "./lock";
import { recordFlowEnd } from "./flow-trail";
import { memberPool } from "./children";

export interface RepairStore {
  /** Ids of the load balancers the pending index holds (in PENDING_*). */
  pendingLoadBalancerIds(): Promise<string[]>;
}

/** How long a lock may exist before its execution must be visible (the lock is written before the start). */
export const REPAIR_GRACE_SECONDS = 60;

export async function repairStuck(deps: LockDeps & { pending: RepairStore }, now: Date): Promise<{ checked: number; repaired: string[] }> {
  const repaired: string[] = [];
  const ids = await deps.pending.pendingLoadBalancerIds();
  for (const id of ids) {
    const lb = await deps.store.getLoadBalancer(id);
    if (!lb || !PENDING_STATUSES.includes(lb.record.provisioning_status) || !lb.lockOwner) continue;
    const since = Date.parse(lb.record.updated_at ?? lb.record.created_at);
    if (now.getTime() - since < REPAIR_GRACE_SECONDS * 1000) continue;
    const execution = lb.executionArn ? await deps.engine.describe(lb.executionArn) : undefined;
    if (execution?.status === "RUNNING") continue;
    const why = execution
      ? `execution ${execution.status}${execution.error ? ` (${execution.error})` : ""}; repaired by housekeeping`
      : "execution not found (lost with the process that ran it); repaired by housekeeping";
    const owner = lb.lockOwner;
    const { items } = await deps.store.tree(id);
    const writes: ChildWrite[] = [];
    for (const { kind, record } of items) {
      const field = kind === "amphora" ? "status" : "provisioning_status";
      if (PENDING_STATUSES.includes(String(record[field])))
        writes.push({ kind, id: record.id, set: { [field]: ERROR }, ...memberPool(kind, record) });
    }
    try {
      await deps.store.applyAsOwner(id, owner, writes);
      await deps.store.updateLoadBalancer(id, owner, { provisioning_status: ERROR }, true);
    } catch (e) {
      if (e instanceof LockLost) continue; // the flow ended (or another repair ran) meanwhile
      throw e;
    }
    await recordFlowEnd(deps, id, owner, { outcome: "REPAIRED", endedAt: now.toISOString(), reason: why });
    deps.log.warn("stuck load balancer repaired", {
      lbId: id,
      execution: owner,
      was: lb.record.provisioning_status,
      objects: writes.length,
      reason: why,
    });
    repaired.push(id);
  }
  return { checked: ids.length, repaired };
}
