// The orphan sweep (housekeeping, beyond Octavia, whose Nova VMs an operator finds by hand): a cloud
// resource that a driver made for an amphora or a load balancer outlives its owner only when a crash
// stopped the flow that would have removed it (between RunInstances and the write of its compute id,
// say). The sweep lists what the drivers made, as their tags name the owner, and removes what no live
// owner claims. It takes no lock: a resource is removed only when its owner's record says that no
// flow will use it again, and removing twice is harmless (every driver's remove answers a resource
// already gone as removed).
import { DELETED, ERROR, ORPHAN_SWEPT_ALERT } from "../constants";
import type { CloudResource, OrphanSweeper } from "../drivers";
import type { Logger } from "../log";
import type { LoadBalancerStore } from "../ports";
import type { Amphora } from "../resources/amphora";

export interface SweepDeps {
  store: Pick<LoadBalancerStore, "getAmphora" | "getLoadBalancer">;
  sweeper: OrphanSweeper;
  log: Logger;
  /**
   * OTTAVA_ORPHAN_GRACE_SEC: how long a resource made before its owner's record (CloudResource.createdAt)
   * may wait for that record; longer than any API request that allocates a VIP then writes the load balancer.
   */
  graceSec: number;
}

export interface SweepResult {
  checked: number;
  removed: CloudResource[];
}

/**
 * Why an amphora's resource has no owner, or undefined while it has one. Its amphora is gone
 * (purged) or DELETED; or, for an instance, its amphora records another instance, or none while in
 * ERROR (its build's flow ended without recording it). An amphora still being built (no compute id
 * yet, not in ERROR) owns what carries its id: its flow may still record it.
 */
export function amphoraOrphanReason(r: CloudResource, a: Amphora | undefined): string | undefined {
  if (!a) return "its amphora no longer exists";
  if (a.status === DELETED) return "its amphora is DELETED";
  if (r.kind !== "instance") return undefined;
  if (a.compute_id !== null && a.compute_id !== r.id) return `its amphora runs on ${a.compute_id}`;
  if (a.compute_id === null && a.status === ERROR) return "its amphora is in ERROR without it";
  return undefined;
}

/** One pass: every resource the sweeper lists is checked against its owner, and removed if it has none. */
export async function sweepOrphans(deps: SweepDeps): Promise<SweepResult> {
  const removed: CloudResource[] = [];
  let checked = 0;
  for await (const r of deps.sweeper.resources()) {
    checked++;
    let why: string | undefined;
    if (r.amphoraId) {
      why = amphoraOrphanReason(r, await deps.store.getAmphora(r.amphoraId));
    } else if (r.loadBalancerId) {
      const lb = await deps.store.getLoadBalancer(r.loadBalancerId);
      const young = r.createdAt !== undefined && Date.now() - Date.parse(r.createdAt) < deps.graceSec * 1000;
      if (!lb) why = young ? undefined : "its load balancer no longer exists";
      else if (lb.record.provisioning_status === DELETED) why = "its load balancer is DELETED";
    }
    if (!why) continue;
    await deps.sweeper.remove(r);
    deps.log.warn("orphaned cloud resource removed", {
      alert: ORPHAN_SWEPT_ALERT,
      kind: r.kind,
      id: r.id,
      amphoraId: r.amphoraId,
      loadBalancerId: r.loadBalancerId,
      why,
    });
    removed.push(r);
  }
  return { checked, removed };
}
