// Load-balancer tasks: pushing configuration to the amphorae, releasing the VIP.
import { AMPHORA_ALLOCATED } from "@ottava/core";
import { loadBalancer, servedTree, type TaskHandler } from "./context";

/** Pushes the LB's configuration (admin state and the rest) to its amphorae. */
export const updateAmphoraeConfig: TaskHandler = async ({ lbId }, ctx) => {
  const tree = await servedTree(ctx, lbId);
  const live = (await ctx.store.amphoraeOf(lbId)).filter((a) => a.status === AMPHORA_ALLOCATED);
  await ctx.drivers.amphora.update(tree, live);
  return null;
};

/** Octavia's UpdateVIPSecurityGroup: the VIP port's security groups as the LB now has them (vip_sg_ids, v2.29). */
export const updateVipSecurityGroups: TaskHandler = async ({ lbId }, ctx) => {
  await ctx.drivers.network.updateVipSecurityGroups(await loadBalancer(ctx, lbId));
  return null;
};

/**
 * Octavia's UpdateVIP (update_vip: _update_security_group_rules): the rules of the LB's security group
 * follow its listeners as they are served; a network driver without groups does nothing.
 */
export const updateVip: TaskHandler = async ({ lbId }, ctx) => {
  await ctx.drivers.network.updateVip(await servedTree(ctx, lbId));
  return null;
};

export const deallocateVip: TaskHandler = async ({ lbId }, ctx) => {
  await ctx.drivers.network.deallocateVip(await loadBalancer(ctx, lbId));
  return null;
};
