// Load-balancer resize tasks: a failover onto a new flavor that builds every new amphora first and
// removes the old ones only once the resize is committed, so a cancel simply removes the new ones.
import { DELETED, LockLost, RESIZE_CANCEL, RESIZE_COMMITTED, ROLE_BACKUP, ROLE_MASTER, type Amphora } from "@ottava/core";
import { failChange } from "./changes";
import { deterministicId, ignoreLockLost, loadBalancer, type PlannedAmphora, type TaskContext, type TaskHandler } from "./context";
import { unplugMemberPorts } from "./networks";

interface ResizeState {
  oldFlavorId: string | null;
  old: Amphora[];
}

const stateOf = (input: Record<string, unknown>) => input.resize as ResizeState | undefined;
const newIdOf = (owner: string, old: Amphora) => deterministicId(owner, old.id);
const cancelled = (input: Record<string, unknown>) => (input.commit as { cancelled?: boolean } | undefined)?.cancelled === true;

async function mark(ctx: TaskContext, lbId: string, attr: string): Promise<unknown> {
  const lb = await ctx.store.getLoadBalancer(lbId);
  return (lb?.record as Record<string, unknown> | undefined)?.[attr];
}

/** Unplugs, deletes and marks DELETED the amphorae this execution built (those that exist). */
async function removeNewAmphorae(input: Record<string, unknown> & { lbId: string; owner: string }, ctx: TaskContext): Promise<number> {
  const state = stateOf(input);
  if (!state) return 0;
  const lb = await loadBalancer(ctx, input.lbId);
  let removed = 0;
  for (const old of state.old) {
    const a = await ctx.store.getAmphora(newIdOf(input.owner, old));
    if (!a || a.status === DELETED) continue;
    if (a.vrrp_port_id)
      await ctx.drivers.network
        .unplugVip(lb, a)
        .catch((e) => ctx.log.warn("unplug of a new amphora failed", { amphora: a.id, error: String(e) }));
    await unplugMemberPorts(ctx, a);
    if (a.compute_id) await ctx.drivers.compute.delete(a.compute_id, a.id);
    await ctx.store.updateAmphora(input.lbId, a.id, input.owner, { status: DELETED });
    removed++;
  }
  return removed;
}

/** First step: notifies the start; answers the old flavor and the amphorae to replace (BACKUP first). */
export const resizeStart: TaskHandler = async (input, ctx) => {
  const lb = await loadBalancer(ctx, input.lbId);
  const order = (a: Amphora) => (a.role === ROLE_BACKUP ? 0 : a.role === ROLE_MASTER ? 2 : 1);
  const old = (await ctx.store.amphoraeOf(input.lbId)).filter((a) => a.status !== DELETED).sort((a, b) => order(a) - order(b));
  ctx.log.info("loadbalancer.resize.start", {
    lbId: input.lbId,
    oldFlavorId: lb.flavor_id,
    newFlavorId: input.newFlavorId,
    amphorae: old.length,
  });
  return { oldFlavorId: lb.flavor_id, old } satisfies ResizeState;
};

/** Revert of resizeStart (a failure before the commit): the new amphorae built so far go; the old ones stay. */
export const resizeRemoveNewAmphorae: TaskHandler = async (input, ctx) => {
  if ((await mark(ctx, input.lbId, RESIZE_COMMITTED)) === input.owner) return null; // the old ones may be gone already
  await ignoreLockLost(ctx, `new amphorae of ${input.lbId}`, () => removeNewAmphorae(input, ctx));
  return null;
};

/**
 * The replacement of one old amphora (same role and priority), checked against the cancel mark
 * before each one: once a cancel is requested nothing more is built (an empty plan).
 */
export const resizePlanReplacement: TaskHandler = async ({ lbId, owner, old }, ctx) => {
  if ((await mark(ctx, lbId, RESIZE_CANCEL)) === owner) return [];
  const a = old as Amphora;
  return [{ id: newIdOf(owner, a), role: a.role, vrrp_priority: a.vrrp_priority }] satisfies PlannedAmphora[];
};

/**
 * The point of no return for a cancel: one conditional write records the commit unless a cancel was
 * requested. If it was, the rollback happens here: the new amphorae go, the old ones stay.
 */
export const resizeCommit: TaskHandler = async (input, ctx) => {
  const { lbId, owner } = input;
  if (await ctx.store.markLoadBalancerUnless(lbId, owner, { [RESIZE_COMMITTED]: owner }, { [RESIZE_CANCEL]: owner }))
    return { cancelled: false };
  const lb = await ctx.store.getLoadBalancer(lbId);
  if (lb?.lockOwner !== owner) throw new LockLost(`load balancer ${lbId}`);
  const removed = await removeNewAmphorae(input, ctx);
  ctx.log.info("loadbalancer.resize.cancel", {
    lbId,
    oldFlavorId: stateOf(input)?.oldFlavorId ?? null,
    newFlavorId: input.newFlavorId,
    removed,
  });
  return { cancelled: true };
};

/** After the commit: the old amphorae are removed (unplugged, instance deleted, DELETED). */
export const resizeRemoveOldAmphorae: TaskHandler = async (input, ctx) => {
  if (cancelled(input)) return null;
  const lb = await loadBalancer(ctx, input.lbId);
  for (const o of stateOf(input)?.old ?? []) {
    const a = await ctx.store.getAmphora(o.id);
    if (!a || a.status === DELETED) continue;
    await ctx.drivers.network
      .unplugVip(lb, a)
      .catch((e) => ctx.log.warn("unplug of an old amphora failed", { amphora: a.id, error: String(e) }));
    await unplugMemberPorts(ctx, a);
    if (a.compute_id) await ctx.drivers.compute.delete(a.compute_id, a.id);
    await ctx.store.updateAmphora(lb.id, a.id, input.owner, { status: DELETED });
  }
  return null;
};

/** Last step before finishChange: the LB takes its new flavor (under the lock). */
export const resizeSetFlavor: TaskHandler = async (input, ctx) => {
  if (cancelled(input)) return null;
  await ctx.store.updateLoadBalancer(input.lbId, input.owner, { flavor_id: String(input.newFlavorId) });
  ctx.log.info("loadbalancer.resize.end", {
    lbId: input.lbId,
    oldFlavorId: stateOf(input)?.oldFlavorId ?? null,
    newFlavorId: input.newFlavorId,
  });
  return null;
};

/** The resize's failure handler: notifies, then the LB goes to ERROR with its old flavor (failChange). */
export const resizeFail: TaskHandler = async (input, ctx) => {
  const error = input.error as { Error?: string; Cause?: string } | undefined;
  ctx.log.error("loadbalancer.resize.error", {
    lbId: input.lbId,
    oldFlavorId: stateOf(input)?.oldFlavorId ?? null,
    newFlavorId: input.newFlavorId,
    error: error?.Error,
    cause: error?.Cause,
  });
  return failChange(input, ctx);
};
