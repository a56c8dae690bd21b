// Octavia's network deltas (controller/worker/v2/tasks/network_tasks.py: CalculateAmphoraDelta): which
// networks and subnets an amphora must be plugged into for its load balancer's members, against those
// it is plugged into. Pure: the flows' tasks read the members and ask the network driver.
import { PENDING_DELETE, VNIC_TYPE_NORMAL } from "../constants";
import type { NetworkPort } from "../drivers";
import type { LoadBalancer } from "../resources/loadbalancer";

/** What one amphora's plugging must change (Octavia's network Delta). */
export interface NetworkDelta {
  amphora_id: string;
  /** Networks to plug: a new port with a fixed IP on each subnet (Octavia's add_nics). */
  add_nics: { network_id: string; subnet_ids: string[]; vnic_type: string }[];
  /** Ports to unplug and delete (delete_nics). */
  delete_nics: { network_id: string; port_id: string }[];
  /** Fixed IPs to add to a port of the network: the port plugged now (port_id null: add_nics makes it) or one the amphora has (add_subnets). */
  add_subnets: { subnet_id: string; network_id: string; port_id: string | null }[];
  /** Fixed IPs to remove (delete_subnets). */
  delete_subnets: { subnet_id: string; network_id: string; port_id: string }[];
}

/** A member as the deltas read it. */
export interface DeltaMember {
  subnet_id?: string | null;
  provisioning_status: string;
  vnic_type?: string | undefined;
}

/** Where the amphorae must be: each subnet with its network and the VNIC type its members ask for. */
export type DesiredSubnets = Map<string, { network_id: string; vnic_type: string }>;

/** The member subnets the deltas must look up (those other than the VIP's, of members not being deleted). */
export function memberSubnets(lb: LoadBalancer, members: DeltaMember[]): string[] {
  const out = new Set<string>();
  for (const m of members)
    if (m.subnet_id && m.provisioning_status !== PENDING_DELETE && m.subnet_id !== lb.vip_subnet_id) out.add(m.subnet_id);
  return [...out];
}

/**
 * Octavia's desired_subnet_to_net_map: the VIP's subnet and network, then each member's subnet (not of a
 * member being deleted) with the network `networkOf` answers for it. As Octavia's, a network's VNIC
 * type is its last member's.
 */
export function desiredSubnets(lb: LoadBalancer, members: DeltaMember[], networkOf: Map<string, string>): DesiredSubnets {
  const out: DesiredSubnets = new Map();
  if (lb.vip_subnet_id) out.set(lb.vip_subnet_id, { network_id: lb.vip_network_id, vnic_type: VNIC_TYPE_NORMAL });
  const vnic = new Map<string, string>();
  for (const m of members) {
    if (!m.subnet_id || m.provisioning_status === PENDING_DELETE) continue;
    const network_id = m.subnet_id === lb.vip_subnet_id ? lb.vip_network_id : networkOf.get(m.subnet_id);
    if (!network_id) throw new Error(`no network for subnet ${m.subnet_id}`);
    vnic.set(network_id, m.vnic_type ?? VNIC_TYPE_NORMAL);
    out.set(m.subnet_id, { network_id, vnic_type: VNIC_TYPE_NORMAL });
  }
  for (const v of out.values()) v.vnic_type = vnic.get(v.network_id) ?? VNIC_TYPE_NORMAL;
  return out;
}

/**
 * Octavia's CalculateAmphoraDelta for one amphora, from the subnets it must be on and the ports it has
 * (get_plugged_networks, without the management one). `subnetsRouted` (the network driver's): a port
 * reaches every subnet of its network, so only networks are compared (a new port is still given every
 * subnet of its network that members are on: the driver picks the one it makes the port on).
 */
export function calculateAmphoraDelta(
  amphoraId: string,
  desired: DesiredSubnets,
  plugged: NetworkPort[],
  subnetsRouted = false,
): NetworkDelta {
  const byNetwork = new Map(plugged.map((p) => [p.network_id, p]));
  const desiredNetworks = new Set([...desired.values()].map((d) => d.network_id));
  const delete_nics = [...byNetwork.values()]
    .filter((p) => !desiredNetworks.has(p.network_id))
    .map((p) => ({ network_id: p.network_id, port_id: p.id }));
  const add_nics = [...desiredNetworks]
    .filter((n) => !byNetwork.has(n))
    .map((network_id) => {
      const subnets = [...desired].filter(([, d]) => d.network_id === network_id).sort(([x], [y]) => x.localeCompare(y));
      return { network_id, subnet_ids: subnets.map(([s]) => s), vnic_type: subnets[0]![1].vnic_type };
    });
  const delta: NetworkDelta = { amphora_id: amphoraId, add_nics, delete_nics, add_subnets: [], delete_subnets: [] };
  if (subnetsRouted) return delta;
  const pluggedSubnets = new Map<string, NetworkPort>();
  for (const p of byNetwork.values()) for (const ip of p.fixed_ips) pluggedSubnets.set(ip.subnet_id, p);
  for (const [subnet_id, d] of desired) {
    if (pluggedSubnets.has(subnet_id)) continue;
    delta.add_subnets.push({ subnet_id, network_id: d.network_id, port_id: byNetwork.get(d.network_id)?.id ?? null });
  }
  // A port that goes (delete_nics) takes its fixed IPs with it: Octavia removes them one by one first.
  for (const [subnet_id, p] of pluggedSubnets) {
    if (!desired.has(subnet_id) && desiredNetworks.has(p.network_id))
      delta.delete_subnets.push({ subnet_id, network_id: p.network_id, port_id: p.id });
  }
  return delta;
}

/** True when the delta changes nothing. */
export const deltaIsEmpty = (d: NetworkDelta) =>
  d.add_nics.length + d.delete_nics.length + d.add_subnets.length + d.delete_subnets.length === 0;
