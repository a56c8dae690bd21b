// Load-balancer tasks: pushing configuration, releasing the lock in ACTIVE, ERROR or DELETED.
import { ACTIVE, AMPHORA_ALLOCATED, DELETED, ERROR } from "@ottava/core";
import { ignoreLockLost, loadBalancer, type TaskHandler } from "./context";

/** Pushes the LB's configuration (admin state and the rest) to its amphorae. */
export const updateAmphoraeConfig: TaskHandler = async ({ lbId }, ctx) => {
  const lb = await loadBalancer(ctx, lbId);
  const live = (await ctx.store.amphoraeOf(lbId)).filter((a) => a.status === AMPHORA_ALLOCATED);
  await ctx.drivers.amphora.update(lb, live);
  return null;
};

export const deallocateVip: TaskHandler = async ({ lbId }, ctx) => {
  await ctx.drivers.network.deallocateVip(await loadBalancer(ctx, lbId));
  return null;
};

export const markLoadBalancerActive: TaskHandler = async ({ lbId, owner }, ctx) => {
  await ctx.store.updateLoadBalancer(lbId, owner, { provisioning_status: ACTIVE }, true);
  ctx.log.info("load balancer ACTIVE", { lbId, execution: owner });
  return null;
};

export const markLoadBalancerDeleted: TaskHandler = async ({ lbId, owner }, ctx) => {
  await ctx.store.updateLoadBalancer(lbId, owner, { provisioning_status: DELETED }, true);
  ctx.log.info("load balancer DELETED", { lbId, execution: owner });
  return null;
};

/** Every LB flow's failure handler: the LB leaves PENDING_* for ERROR, never stays stuck. */
export const markLoadBalancerError: TaskHandler = async (input, ctx) => {
  const { lbId, owner } = input;
  const error = input.error as { Error?: string; Cause?: string } | undefined;
  await ignoreLockLost(ctx, `load balancer ${lbId}`, () => ctx.store.updateLoadBalancer(lbId, owner, { provisioning_status: ERROR }, true));
  ctx.log.error("flow failed; load balancer ERROR", { lbId, execution: owner, error: error?.Error, cause: error?.Cause });
  return null;
};
