// The anti-affinity group of an ACTIVE_STANDBY load balancer's amphorae ([nova] enable_anti_affinity), as
// Octavia's compute tasks NovaServerGroupCreate / NovaServerGroupDelete and database task
// UpdateLBServerGroupInDB. On EC2 the group is a spread placement group, which EC2 refuses to delete
// while an instance in it is still terminating (Nova does not): the delete flow asks again, bounded.
import { DriverError, TOPOLOGY_ACTIVE_STANDBY } from "@ottava/core";
import { activeWait, activeWaitAttempt, ignoreLockLost, loadBalancer, type ActiveWait, type TaskHandler } from "./context";

/**
 * Octavia's NovaServerGroupCreate and UpdateLBServerGroupInDB: with anti-affinity on, an ACTIVE_STANDBY
 * load balancer's group is made (a retry answers the same) and its id kept as the LB's server_group_id,
 * which every build of its amphorae (create, failover, resize) boots into. Otherwise nothing.
 */
export const createServerGroup: TaskHandler = async ({ lbId, owner }, ctx) => {
  const compute = ctx.drivers.compute;
  if (!ctx.config.enableAntiAffinity || !compute.createServerGroup) return null;
  const lb = await loadBalancer(ctx, lbId);
  if (lb.topology !== TOPOLOGY_ACTIVE_STANDBY) return null;
  const id = await compute.createServerGroup(lb.id);
  if (lb.server_group_id !== id) await ctx.store.updateLoadBalancer(lb.id, owner, { server_group_id: id });
  ctx.log.info("server group created", { loadBalancerId: lb.id, serverGroupId: id });
  return null;
};

/**
 * Revert of createServerGroup (Octavia's NovaServerGroupCreate.revert, run after the amphorae's
 * instances were deleted): the group goes, once asked. If the cloud still refuses (instances
 * terminating), the LB keeps its server_group_id and its delete removes the group later.
 */
export const revertServerGroup: TaskHandler = async ({ lbId, owner }, ctx) => {
  if (!ctx.drivers.compute.deleteServerGroup) return null; // a driver without groups made none
  const lb = await ctx.store.getLoadBalancer(lbId);
  const id = lb?.record.server_group_id;
  if (!id) return null;
  if (await ctx.drivers.compute.deleteServerGroup(id))
    await ignoreLockLost(ctx, `load balancer ${lbId}`, () => ctx.store.updateLoadBalancer(lbId, owner, { server_group_id: null }));
  else ctx.log.warn("server group still in use; the load balancer's delete removes it", { loadBalancerId: lbId, serverGroupId: id });
  return null;
};

/**
 * Octavia's NovaServerGroupDelete, after the amphorae's instances were deleted: while the cloud refuses
 * (an instance in the group is still terminating) the flow waits amp_active_wait_sec and runs this
 * again, at most amp_active_retries times; then the step fails (the LB ends in ERROR, and its delete
 * can be asked again). The flow keeps the wait at $.serverGroupWait.
 */
export const deleteServerGroup: TaskHandler = async (input, ctx) => {
  const attempts = activeWaitAttempt(input, "serverGroupWait");
  const compute = ctx.drivers.compute;
  const done: ActiveWait = { waiting: false, attempts, retryIn: 0 };
  if (!compute.deleteServerGroup) return done; // a driver without groups made none
  const lb = await loadBalancer(ctx, input.lbId);
  const id = lb.server_group_id;
  if (!id) return done;
  const deleted = await compute.deleteServerGroup(id);
  const state = activeWait(
    ctx,
    attempts,
    deleted,
    () => new DriverError(`server group ${id} still in use after ${attempts} attempts to delete it`),
  );
  if (state.waiting) ctx.log.info("server group still in use", { loadBalancerId: lb.id, serverGroupId: id, attempts });
  return state;
};
