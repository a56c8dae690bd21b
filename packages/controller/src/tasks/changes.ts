// How every flow ends: the objects it changed leave PENDING_* together and the LB's lock is released.
import {
  ACTIVE,
  DELETED,
  ERROR,
  OFFLINE,
  ONLINE,
  PENDING_CREATE,
  PENDING_DELETE,
  PENDING_UPDATE,
  failedFlowEnd,
  recordFlowEnd,
  releasedAtEnd,
  type ChildWrite,
} from "@ottava/core";
import { ignoreLockLost, type TaskHandler } from "./context";

type Ref = { kind: string; id: string };
/** Kinds whose operating status the controller sets itself (the others wait for health data). */
const SELF_REPORTING = new Set(["healthmonitor", "l7policy", "l7rule"]);
const same = (a: Ref, b: Ref) => a.kind === b.kind && a.id === b.id;

/**
 * Success: PENDING_CREATE/UPDATE → ACTIVE and PENDING_DELETE → DELETED across the tree; an LB in
 * PENDING_DELETE takes its whole tree with it (cascade). Then the flow trail records the end (while
 * the lock is still held, so a retry of this task writes it once), then the LB itself, releasing the lock.
 */
export const finishChange: TaskHandler = async (input, ctx) => {
  const { lbId, owner } = input;
  const { lb, items } = await ctx.store.tree(lbId);
  const deleting = lb?.record.provisioning_status === PENDING_DELETE;
  const writes: ChildWrite[] = [];
  for (const { kind, record } of items) {
    if (kind === "amphora") continue;
    const s = record.provisioning_status;
    const to = deleting || s === PENDING_DELETE ? DELETED : s === PENDING_CREATE || s === PENDING_UPDATE ? ACTIVE : undefined;
    if (!to || s === DELETED || to === s) continue;
    // As Octavia's Mark{HealthMonitor,L7Policy,L7Rule}ActiveInDB: once configured they report ONLINE, or OFFLINE when admin-down.
    const online = SELF_REPORTING.has(kind) && to === ACTIVE ? { operating_status: record.admin_state_up === false ? OFFLINE : ONLINE } : {};
    const by = to === DELETED ? { deleted_by: owner } : {};
    writes.push({ kind, id: record.id, set: { provisioning_status: to, ...online, ...by } });
  }
  // What the deleted objects gave back to the quota, counted before the writes (and, on a retry,
  // from the objects this execution already marked), applied with the write that ends the lock.
  const released = { project: String(lb?.record.project_id), delta: releasedAtEnd(items, owner, deleting) };
  await ctx.store.applyAsOwner(lbId, owner, writes);
  const cancelled = (input.commit as { cancelled?: boolean } | undefined)?.cancelled === true;
  await recordFlowEnd(ctx, lbId, owner, {
    outcome: "SUCCEEDED",
    endedAt: new Date().toISOString(),
    reason: cancelled ? "resize cancelled" : null,
    lbDeleted: deleting,
  });
  const status = deleting ? DELETED : ACTIVE;
  await ctx.store.updateLoadBalancer(lbId, owner, { provisioning_status: status }, true, released);
  ctx.log.info(`load balancer ${status}`, { lbId, execution: owner, objects: writes.length });
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
  const { items } = await ctx.store.tree(lbId);
  const writes: ChildWrite[] = [];
  for (const { kind, record } of items) {
    if (kind === "amphora") continue;
    const s = String(record.provisioning_status);
    const mine = subject.some((r) => same(r, { kind, id: record.id }));
    if (mine) writes.push({ kind, id: record.id, set: { provisioning_status: ERROR } });
    else if (s.startsWith("PENDING_")) writes.push({ kind, id: record.id, set: { provisioning_status: ACTIVE } });
  }
  const lbFailed = subject.some((r) => r.kind === "loadbalancer");
  await recordFlowEnd(ctx, lbId, owner, failedFlowEnd(input));
  await ignoreLockLost(ctx, `load balancer ${lbId}`, async () => {
    await ctx.store.applyAsOwner(lbId, owner, writes);
    await ctx.store.updateLoadBalancer(lbId, owner, { provisioning_status: lbFailed ? ERROR : ACTIVE }, true);
  });
  ctx.log.error("flow failed", { lbId, execution: owner, subject, error: error?.Error, cause: error?.Cause });
  return null;
};
