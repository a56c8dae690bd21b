// Load-balancer tasks: pushing configuration to the amphorae, releasing the VIP.
import { AMPHORA_ALLOCATED, type Amphora, type Tree } from "@ottava/core";
import { applyNetworkDeltas } from "./networks";
import { loadBalancer, servedTree, type TaskContext, type TaskHandler } from "./context";

/** Pushes the LB's configuration (admin state and the rest) to its amphorae. */
export const updateAmphoraeConfig: TaskHandler = async ({ lbId }, ctx) => {
  await pushConfig(ctx, await servedTree(ctx, lbId));
  return null;
};

/**
 * Octavia's ListenersUpdate of the flows that build amphorae (create: create_all_listeners_flow; failover
 * and resize: AmphoraIndexListenerUpdate): the LB's configuration pushed to its live amphorae, the new
 * ones among them, when it has listeners, after the network deltas (the new amphorae plugged into its
 * members' networks); with none there is nothing to serve yet (Octavia's
 * update_amphora_listeners returns at once).
 */
export const updateListeners: TaskHandler = async ({ lbId, owner }, ctx) => {
  const tree = await servedTree(ctx, lbId);
  const amphorae = await ctx.store.amphoraeOf(lbId);
  // Octavia's CalculateAmphoraDelta and HandleNetworkDelta of the new amphorae (failover: every network the old one was on).
  await applyNetworkDeltas(ctx, tree, amphorae, owner);
  if (tree.of("listener").length > 0) await pushConfig(ctx, tree, amphorae);
  return null;
};

async function pushConfig(ctx: TaskContext, tree: Tree, amphorae?: Amphora[]): Promise<void> {
  const live = (amphorae ?? (await ctx.store.amphoraeOf(tree.lb.id))).filter((a) => a.status === AMPHORA_ALLOCATED);
  await ctx.drivers.amphora.update(tree, live);
}

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
  const network = ctx.drivers.network;
  if (network.updateVip) await network.updateVip(await servedTree(ctx, lbId));
  return null;
};

export const deallocateVip: TaskHandler = async ({ lbId }, ctx) => {
  await ctx.drivers.network.deallocateVip(await loadBalancer(ctx, lbId));
  return null;
};
