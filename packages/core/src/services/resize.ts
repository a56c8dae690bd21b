// Load-balancer resize (specs/loadbalancer-resize.rst): PUT .../resize starts a failover onto a new
// flavor; DELETE .../resize asks the running resize to roll back (until it has committed).
import * as z from "zod";
import { PENDING_UPDATE, RESIZABLE_STATUSES, RESIZE_CANCEL, RESIZE_COMMITTED, TOPOLOGIES } from "../constants";
import { Fault, requireFound, requireStatus, validation } from "../faults";
import { authorize, type RequestContext } from "../policy";
import { parseRoot, uuid } from "../validation";
import { lockAndStart, type LockDeps } from "./lock";
import { checkProfileData, profileData } from "./profiles";

export const ResizeBody = z.strictObject({ new_flavor_id: uuid() });
export type ResizeBody = z.output<typeof ResizeBody>;

/** The (unwrapped) resize body, answered as wsme answers a bad one. */
export function parseResizeBody(raw: unknown): ResizeBody {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new Fault(400, `Invalid input for field/attribute resize. Value: '${JSON.stringify(raw)}'. Value should be an object`);
  }
  return parseRoot("resize", "resize", ResizeBody, { resize: raw });
}

/** Validates the new flavor against the LB as read and starts the loadbalancer-resize flow. */
export async function resizeLoadBalancer(deps: LockDeps, ctx: RequestContext, id: string, body: ResizeBody): Promise<void> {
  const read = requireFound(await deps.store.getLoadBalancer(id), "Load Balancer", id);
  authorize(ctx, "os_load-balancer_api:loadbalancer:put_resize", read.record.project_id);
  const flavorId = body.new_flavor_id;
  const found = await deps.catalog.getFlavor(flavorId);
  if (!found) throw validation("Invalid new_flavor_id.");
  if (!found.flavor.enabled) throw new Fault(400, `The selected flavor is not allowed in this deployment: ${flavorId}`);
  const data = profileData(found.profile.flavor_data);
  const computeFlavor = typeof data.compute_flavor === "string" ? data.compute_flavor : null;
  const check = (lb: typeof read) => {
    const current = lb.record;
    if (current.flavor_id === flavorId) throw validation(`Load Balancer ${id} already has flavor ${flavorId}.`);
    if (found.profile.provider_name !== current.provider) {
      throw new Fault(400, `Flavor '${flavorId}' is not compatible with provider '${current.provider}'`);
    }
    const t = data.loadbalancer_topology;
    const topology = typeof t === "string" && (TOPOLOGIES as readonly string[]).includes(t) ? t : current.topology;
    if (topology !== current.topology) {
      throw validation(
        `Flavor ${flavorId} has topology ${topology}; a resize cannot change the topology of Load Balancer ${id} (${current.topology}).`,
      );
    }
    return undefined;
  };
  // Answer 409 before any 400 about the flavor when the LB cannot be resized now.
  requireStatus(read.record, RESIZABLE_STATUSES, "Load Balancer", id);
  check(read);
  // As a create applies its flavor: the driver must still accept the new one (the EC2 checks).
  await checkProfileData(deps.profiles, read.record.provider, "flavor", data);
  const locked = await lockAndStart(
    { ...deps, requestId: ctx.requestId },
    {
      lbId: id,
      flow: "loadbalancer-resize",
      verb: "resize",
      from: RESIZABLE_STATUSES,
      to: PENDING_UPDATE,
      prepare: check,
      input: { newFlavorId: flavorId, computeFlavor },
    },
    read,
  );
  deps.log.info("load balancer resize accepted", { lbId: id, oldFlavorId: locked.record.flavor_id, newFlavorId: flavorId });
}

/**
 * Marks the running resize to be cancelled: one conditional write, only while a resize execution
 * holds the lock and has not committed yet. The flow rolls back at its next check.
 */
export async function cancelResize(deps: LockDeps, ctx: RequestContext, id: string): Promise<void> {
  const read = requireFound(await deps.store.getLoadBalancer(id), "Load Balancer", id);
  authorize(ctx, "os_load-balancer_api:loadbalancer:delete_resize", read.record.project_id);
  const owner = read.lockOwner;
  if (!owner?.startsWith("resize-")) throw new Fault(409, `Load Balancer ${id} has no resize in progress.`);
  if (!(await deps.store.markLoadBalancerUnless(id, owner, { [RESIZE_CANCEL]: owner }, { [RESIZE_COMMITTED]: owner }))) {
    const now = await deps.store.getLoadBalancer(id);
    if (now?.lockOwner !== owner) throw new Fault(409, `Load Balancer ${id} has no resize in progress.`);
    throw new Fault(409, `The resize of Load Balancer ${id} is committed and can no longer be cancelled.`);
  }
  deps.log.info("load balancer resize cancel requested", { lbId: id, execution: owner });
}
