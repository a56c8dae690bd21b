// How every flow ends: the objects it changed leave PENDING_* together and the LB's lock is released.
// A flow knows them from its input (`changes`, the change set its lock was taken with: change-set.ts
// in @ottava/core), so it finishes and fails without reading the tree; only the LB create and delete
// flows, whose change set is the whole tree, read it.
import {
  ACTIVE,
  DELETED,
  ERROR,
  PENDING_CREATE,
  PENDING_DELETE,
  PENDING_UPDATE,
  WHOLE_TREE,
  addTo,
  changeRefs,
  memberPool,
  mergeWrites,
  failedFlowEnd,
  recordFlowEnd,
  releasedAtEnd,
  selfReported,
  type ChangeSet,
  type ChildWrite,
  type FlowChanges,
  type QuotaDelta,
} from "@ottava/core";
import { ignoreLockLost, type TaskContext, type TaskHandler } from "./context";

type Ref = { kind: string; id: string };
const same = (a: Ref, b: Ref) => a.kind === b.kind && a.id === b.id;
const changesOf = (input: Record<string, unknown>) => (input.changes ?? WHOLE_TREE) as FlowChanges;

/** The members of the pools a change deleted with all their members (by their key range): DELETED on success. */
async function emptiedMembers(ctx: TaskContext, lbId: string, owner: string, set: ChangeSet): Promise<ChildWrite[]> {
  if (set.emptied.length === 0) return [];
  const { items } = await ctx.store.readParts(lbId, { pools: set.emptied, poolMembers: true });
  // A retry also counts the members it already deleted (deleted_by), so the quota comes back once.
  return items
    .filter((i) => i.kind === "member" && (i.record.provisioning_status !== DELETED || i.record.deleted_by === owner))
    .map((i) => ({
      kind: "member",
      id: i.record.id,
      pool_id: String(i.record.pool_id),
      set: { provisioning_status: DELETED, deleted_by: owner },
    }));
}

/**
 * What success writes and gives back to the quota: the change set's objects as `done` says (ACTIVE,
 * or DELETED with deleted_by), the carried fields the DELETED ones change; for the whole tree,
 * PENDING_CREATE/UPDATE → ACTIVE and PENDING_DELETE → DELETED (everything, for an LB being deleted).
 */
async function successWrites(ctx: TaskContext, lbId: string, owner: string, changes: FlowChanges, deletingLb: boolean) {
  if (changes === WHOLE_TREE) {
    const { lb, items } = await ctx.store.tree(lbId);
    const writes: ChildWrite[] = [];
    for (const { kind, record } of items) {
      if (kind === "amphora") continue;
      const s = record.provisioning_status;
      const to = deletingLb || s === PENDING_DELETE ? DELETED : s === PENDING_CREATE || s === PENDING_UPDATE ? ACTIVE : undefined;
      if (!to || s === DELETED || to === s) continue;
      const by = to === DELETED ? { deleted_by: owner } : {};
      const online = to === ACTIVE ? selfReported(kind, record) : {};
      writes.push({ kind, id: record.id, set: { provisioning_status: to, ...online, ...by }, ...memberPool(kind, record) });
    }
    // What the deleted objects gave back, counted before the writes (and, on a retry, from the
    // objects this execution already marked), applied with the write that ends the lock.
    return { writes, lbSet: {}, project: String(lb?.record.project_id), released: releasedAtEnd(items, owner, deletingLb) };
  }
  const members = await emptiedMembers(ctx, lbId, owner, changes);
  const writes: ChildWrite[] = [
    ...changeRefs(changes).map((r): ChildWrite => ({
      kind: r.kind,
      id: r.id,
      ...(r.pool_id ? { pool_id: r.pool_id } : {}),
      set: { ...r.done, ...(r.done.provisioning_status === DELETED ? { deleted_by: owner } : {}) },
    })),
    ...members,
    ...changes.relations,
  ];
  const released: QuotaDelta = {};
  for (const r of changeRefs(changes)) if (r.done.provisioning_status === DELETED) addTo(released, r.kind, -1);
  addTo(released, "member", -members.length);
  // One write per object: a surviving object's carried fields join its own write.
  return { writes: mergeWrites(writes), lbSet: changes.lb, project: undefined, released };
}

/**
 * Success: the change set's objects leave PENDING_*. Then the flow trail records the end (while the
 * lock is still held, so a retry of this task writes it once), then the LB itself, releasing the lock.
 */
export const finishChange: TaskHandler = async (input, ctx) => {
  const { lbId, owner } = input;
  const lb = await ctx.store.getLoadBalancer(lbId);
  const deleting = lb?.record.provisioning_status === PENDING_DELETE;
  const done = await successWrites(ctx, lbId, owner, changesOf(input), deleting);
  await ctx.store.applyAsOwner(lbId, owner, done.writes);
  const cancelled = (input.commit as { cancelled?: boolean } | undefined)?.cancelled === true;
  await recordFlowEnd(ctx, lbId, owner, {
    outcome: "SUCCEEDED",
    endedAt: new Date().toISOString(),
    reason: cancelled ? "resize cancelled" : null,
    lbDeleted: deleting,
  });
  const status = deleting ? DELETED : ACTIVE;
  const project = done.project ?? String(lb?.record.project_id);
  await ctx.store.updateLoadBalancer(lbId, owner, { ...done.lbSet, provisioning_status: status }, true, { project, delta: done.released });
  ctx.log.info(`load balancer ${status}`, { lbId, execution: owner, objects: done.writes.length });
  return null;
};

/**
 * Every flow's failure handler: the flow's subject goes to ERROR (the LB itself for LB flows) and
 * everything else it had moved to PENDING_* goes back to ACTIVE, as Octavia's reverts do; the lock
 * is released. Never leaves anything in PENDING_*. The flow trail records the failed state
 * ($.failedStep, set by the builder's Catch path) and its error first.
 */
export const failChange: TaskHandler = async (input, ctx) => {
  const { lbId, owner } = input;
  const subject = (input.subject ?? [{ kind: "loadbalancer", id: lbId }]) as Ref[];
  const error = input.error as { Error?: string; Cause?: string } | undefined;
  const writes = await failureWrites(ctx, lbId, changesOf(input), subject);
  const lbFailed = subject.some((r) => r.kind === "loadbalancer");
  await recordFlowEnd(ctx, lbId, owner, failedFlowEnd(input));
  await ignoreLockLost(ctx, `load balancer ${lbId}`, async () => {
    await ctx.store.applyAsOwner(lbId, owner, writes);
    await ctx.store.updateLoadBalancer(lbId, owner, { provisioning_status: lbFailed ? ERROR : ACTIVE }, true);
  });
  ctx.log.error("flow failed", { lbId, execution: owner, subject, error: error?.Error, cause: error?.Cause });
  return null;
};

/** The subject to ERROR, the rest of what the change moved to PENDING_* back to ACTIVE. */
export async function failureWrites(ctx: TaskContext, lbId: string, changes: FlowChanges, subject: Ref[]): Promise<ChildWrite[]> {
  if (changes === WHOLE_TREE) {
    const { items } = await ctx.store.tree(lbId);
    const writes: ChildWrite[] = [];
    for (const { kind, record } of items) {
      if (kind === "amphora") continue;
      const s = String(record.provisioning_status);
      if (subject.some((r) => same(r, { kind, id: record.id })))
        writes.push({ kind, id: record.id, set: { provisioning_status: ERROR }, ...memberPool(kind, record) });
      else if (s.startsWith("PENDING_"))
        writes.push({ kind, id: record.id, set: { provisioning_status: ACTIVE }, ...memberPool(kind, record) });
    }
    return writes;
  }
  return changeRefs(changes).map((r) => ({
    kind: r.kind,
    id: r.id,
    ...(r.pool_id ? { pool_id: r.pool_id } : {}),
    set: { provisioning_status: subject.some((s) => same(s, r)) ? ERROR : ACTIVE },
  }));
}
