// Member networks (Octavia's network tasks: CalculateDelta, HandleNetworkDeltas, GetAmphoraeNetworkConfigs,
// and the amphora driver's AmphoraePostNetworkPlug): each live amphora is plugged into the networks of
// its load balancer's members, and unplugged from those no member is on any more. The ports the flows
// plug are kept on the amphora's record (`member_ports`, Octavia's amphora_member_port table), written
// under the LB's lock right after each change, so a retried task finds them (and the drivers answer the
// same port when asked again), a revert knows what its execution plugged, and what goes with an
// amphora is unplugged.
import {
  AMPHORA_ALLOCATED,
  calculateAmphoraDelta,
  deltaIsEmpty,
  desiredSubnets,
  memberSubnets,
  type Amphora,
  type DeltaMember,
  type LoadBalancer,
  type MemberPortRecord,
  type NetworkDelta,
  type NetworkPort,
  type Tree,
} from "@ottava/core";
import { ignoreLockLost, servedTree, type TaskContext, type TaskHandler } from "./context";

/** The amphora's member ports other than its VRRP port (the flows may have added fixed IPs to that one): those it is unplugged from when it goes. */
const memberPortsOf = (a: Amphora) => (a.member_ports ?? []).filter((p) => p.id !== a.vrrp_port_id);

/**
 * Octavia's CalculateDelta and HandleNetworkDeltas, then GetAmphoraeNetworkConfigs and
 * AmphoraePostNetworkPlug for the ports that changed, over the LB's live amphorae as `tree` serves its
 * members (those being deleted are left out). When no member is on a subnet other than the VIP's and
 * no amphora has a member port, nothing is asked of the drivers and nothing written.
 */
export async function applyNetworkDeltas(ctx: TaskContext, tree: Tree, amphorae: Amphora[], owner: string): Promise<void> {
  const lb = tree.lb;
  // The members of pools being deleted are not served (their pool's delete removes them with it).
  const pools = new Set(tree.of("pool").map((p) => p.id));
  const members = tree.of<DeltaMember & { pool_id: string }>("member").filter((m) => pools.has(m.pool_id));
  const subnets = memberSubnets(lb, members);
  const live = amphorae.filter((a) => a.status === AMPHORA_ALLOCATED);
  if (subnets.length === 0 && !live.some((a) => (a.member_ports ?? []).length > 0)) return;
  const network = ctx.drivers.network;
  const networkOf = new Map<string, string>();
  for (const s of subnets) networkOf.set(s, (await network.getSubnet(s)).network_id);
  const desired = desiredSubnets(lb, members, networkOf);
  for (const a of live) {
    const plugged = await network.getPluggedNetworks(lb, a);
    const delta = calculateAmphoraDelta(a.id, desired, plugged, network.subnetsRouted);
    if (deltaIsEmpty(delta)) continue;
    ctx.log.info("network delta", { lbId: lb.id, amphora: a.id, execution: owner, delta });
    await new AmphoraPorts(ctx, lb, a, owner, plugged).apply(delta);
  }
}

/** One amphora's ports while its delta is applied: each change is recorded at once. */
class AmphoraPorts {
  /** The ports changed, by network (Octavia's updated_ports): post_network_plug is sent for these. */
  private readonly updated = new Map<string, NetworkPort>();
  private readonly byNetwork: Map<string, NetworkPort>;
  private recorded: MemberPortRecord[];

  constructor(
    private readonly ctx: TaskContext,
    private readonly lb: LoadBalancer,
    private readonly amphora: Amphora,
    private readonly owner: string,
    plugged: NetworkPort[],
  ) {
    this.byNetwork = new Map(plugged.map((p) => [p.network_id, p]));
    this.recorded = [...(amphora.member_ports ?? [])];
  }

  async apply(delta: NetworkDelta): Promise<void> {
    const { ctx, lb, amphora: a } = this;
    const network = ctx.drivers.network;
    for (const nic of delta.add_nics) {
      const port = await network.plugNetwork(lb, a, nic.network_id, nic.subnet_ids, nic.vnic_type);
      await this.record(port, this.owner);
    }
    for (const s of delta.add_subnets) {
      const port = this.updated.get(s.network_id) ?? this.byNetwork.get(s.network_id);
      if (!port) throw new Error(`no port of amphora ${a.id} on network ${s.network_id}`);
      if (port.fixed_ips.some((ip) => ip.subnet_id === s.subnet_id)) continue;
      await this.record(await network.plugFixedIp(lb, a, port, s.subnet_id));
    }
    for (const s of delta.delete_subnets) {
      const port = this.updated.get(s.network_id) ?? this.byNetwork.get(s.network_id);
      if (port) await this.record(await network.unplugFixedIp(lb, a, port, s.subnet_id));
    }
    for (const nic of delta.delete_nics) {
      // As Octavia's HandleNetworkDelta: a port that cannot be unplugged is logged, the delta goes on.
      await network
        .unplugNetwork(a, { id: nic.port_id, network_id: nic.network_id })
        .catch((e) => ctx.log.warn("unplug of a member network failed", { amphora: a.id, port: nic.port_id, error: String(e) }));
      this.updated.delete(nic.network_id);
      await this.write(this.recorded.filter((p) => p.id !== nic.port_id));
    }
    if (this.updated.size === 0) return;
    const config = await network.getNetworkConfigs(lb, a);
    for (const port of this.updated.values()) await ctx.drivers.amphora.postNetworkPlug(lb, a, port, config);
  }

  /** The port as the driver now answers it, kept on the record (with who plugged it: `by`, or as recorded before). */
  private async record(port: NetworkPort, by?: string): Promise<void> {
    this.updated.set(port.network_id, port);
    const before = this.recorded.find((p) => p.id === port.id);
    const entry: MemberPortRecord = { ...port, plugged_by: by ?? before?.plugged_by ?? "" };
    await this.write([...this.recorded.filter((p) => p.id !== port.id), entry]);
  }

  /** Kept in the order of their networks' ids: the record does not depend on the order the members were read in. */
  private async write(ports: MemberPortRecord[]): Promise<void> {
    this.recorded = ports.sort((x, y) => x.network_id.localeCompare(y.network_id));
    await this.ctx.store.updateAmphora(this.lb.id, this.amphora.id, this.owner, { member_ports: ports });
  }
}

/**
 * The member flows' configuration push (member create and delete, the batch updates, pool delete):
 * the network deltas, then the configuration, from one read of the tree and the amphorae, so a change
 * that moves no network costs what the push alone did.
 */
export const handleNetworkDeltas: TaskHandler = async ({ lbId, owner }, ctx) => {
  const tree = await servedTree(ctx, lbId);
  const amphorae = await ctx.store.amphoraeOf(lbId);
  await applyNetworkDeltas(ctx, tree, amphorae, owner);
  const live = amphorae.filter((a) => a.status === AMPHORA_ALLOCATED);
  // The records as they are now (their member ports may have changed): the push reads only the amphorae's addresses.
  await ctx.drivers.amphora.update(tree, live);
  return null;
};

/**
 * Revert of handleNetworkDeltas (Octavia's HandleNetworkDeltas.revert): the ports this execution
 * plugged are unplugged (a port that cannot be is logged) and leave the amphorae's records.
 */
export const revertNetworkDeltas: TaskHandler = async ({ lbId, owner }, ctx) => {
  for (const a of await ctx.store.amphoraeOf(lbId)) {
    const mine = memberPortsOf(a).filter((p) => p.plugged_by === owner);
    if (mine.length === 0) continue;
    for (const p of mine) {
      await ctx.drivers.network
        .unplugNetwork(a, p)
        .catch((e) => ctx.log.warn("unplug of a member network failed", { amphora: a.id, port: p.id, error: String(e) }));
    }
    const kept = (a.member_ports ?? []).filter((p) => !mine.includes(p));
    await ignoreLockLost(ctx, `amphora ${a.id}`, () => ctx.store.updateAmphora(lbId, a.id, owner, { member_ports: kept }));
  }
  return null;
};

/**
 * Octavia's DeleteAmphoraMemberPorts: an amphora about to go is unplugged from its member networks
 * (before its instance is deleted, so a cloud port is never left on a terminated instance). Its record
 * keeps them: it is marked DELETED next.
 */
export async function unplugMemberPorts(ctx: TaskContext, a: Amphora): Promise<void> {
  for (const p of memberPortsOf(a)) {
    await ctx.drivers.network
      .unplugNetwork(a, p)
      .catch((e) => ctx.log.warn("unplug of a member network failed", { amphora: a.id, port: p.id, error: String(e) }));
  }
}
