// The API's check of member subnets against the network driver (checkMemberSubnets: the vpc driver's
// zones, tenancy and interface count), before anything is written: a 400 with the driver's message.
import { DELETED, PENDING_DELETE } from "../constants";
import { NetworkRefused, type NetworkDriver } from "../drivers";
import { Fault } from "../faults";
import type { LoadBalancer } from "../resources/loadbalancer";
import type { LoadBalancerStore } from "../ports";

/**
 * Checks that `lb`'s amphorae can be plugged into `subnets` (the request's member subnets) with those of
 * the members it has (`existing`; read from the store when not given, and only when a subnet other than
 * the VIP's is asked for). The count is conservative: members a batch update replaces count until it ends.
 */
export async function checkMemberNetworks(
  network: Pick<NetworkDriver, "checkMemberSubnets"> | undefined,
  store: Pick<LoadBalancerStore, "tree">,
  lb: LoadBalancer,
  subnets: readonly (string | null | undefined)[],
  existing?: readonly { subnet_id?: unknown; provisioning_status?: unknown }[],
): Promise<void> {
  if (!network?.checkMemberSubnets) return;
  const asked = subnets.filter((s): s is string => !!s && s !== lb.vip_subnet_id);
  if (asked.length === 0) return;
  const members = existing ?? (await store.tree(lb.id)).items.filter((i) => i.kind === "member").map((i) => i.record);
  const all = new Set(asked);
  for (const m of members) {
    const s = m.subnet_id;
    if (typeof s === "string" && s !== lb.vip_subnet_id && m.provisioning_status !== DELETED && m.provisioning_status !== PENDING_DELETE)
      all.add(s);
  }
  try {
    await network.checkMemberSubnets(lb, [...all]);
  } catch (e) {
    if (e instanceof NetworkRefused || (e as Error)?.name === "NetworkRefused") throw new Fault(400, (e as Error).message);
    throw e;
  }
}
