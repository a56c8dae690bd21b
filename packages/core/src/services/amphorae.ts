// Amphora actions (octavia/api/v2/controllers/amphora.py): show, failover (locks the LB), agent
// configuration refresh (no lock), delete (only READY or ERROR amphorae), stats.
import { randomUUID } from "node:crypto";
import { AMPHORA_DELETABLE_STATUSES, DELETED, MUTABLE_STATUSES, PENDING_DELETE, PENDING_UPDATE } from "../constants";
import { Fault, immutable, notFound } from "../faults";
import { authorize, type RequestContext } from "../policy";
import type { Amphora } from "../resources/amphora";
import { lockAndStart, type LockDeps } from "./lock";

async function amphora(deps: LockDeps, id: string): Promise<Amphora> {
  const a = await deps.store.getAmphora(id);
  if (!a || a.status === DELETED) throw notFound("Amphora", id);
  return a;
}

/** GET /v2/octavia/amphorae/{id}. */
export async function getAmphora(deps: LockDeps, ctx: RequestContext, id: string): Promise<Amphora> {
  const a = await amphora(deps, id);
  authorize(ctx, "os_load-balancer_api:amphora:get_one", a.project_id);
  return a;
}

/** PUT /v2/octavia/amphorae/{id}/failover: 202; the LB must be ACTIVE (it goes PENDING_UPDATE). */
export async function failoverAmphora(deps: LockDeps, ctx: RequestContext, id: string): Promise<void> {
  const a = await amphora(deps, id);
  authorize(ctx, "os_load-balancer_api:amphora:put_failover", a.project_id);
  await lockAndStart(deps, {
    lbId: a.loadbalancer_id,
    flow: "amphora-failover",
    verb: "amphora-failover",
    from: MUTABLE_STATUSES,
    to: PENDING_UPDATE,
    input: { failover: [a] },
  });
}

/** PUT /v2/octavia/amphorae/{id}/config: 202; pushes the agent configuration, without the LB's lock. */
export async function configureAmphora(deps: LockDeps, ctx: RequestContext, id: string): Promise<void> {
  const a = await amphora(deps, id);
  authorize(ctx, "os_load-balancer_api:amphora:put_config", a.project_id);
  const name = `amphora-config-${id}-${randomUUID().slice(0, 8)}`;
  try {
    await deps.engine.start("amphora-config", name, { lbId: a.loadbalancer_id, amphoraId: id });
  } catch (e) {
    deps.log.error("amphora config flow could not start", { amphoraId: id, error: String(e) });
    throw new Fault(500, "Unable to send amphora agent update request.");
  }
  deps.log.info("flow started", { lbId: a.loadbalancer_id, amphoraId: id, flow: "amphora-config", execution: name });
}

/** DELETE /v2/octavia/amphorae/{id}: 204; only READY or ERROR amphorae (Octavia 11). */
export async function deleteAmphora(deps: LockDeps, ctx: RequestContext, id: string): Promise<void> {
  const a = await amphora(deps, id);
  authorize(ctx, "os_load-balancer_api:amphora:delete", a.project_id);
  if (!(await deps.store.updateAmphoraIf(a.loadbalancer_id, id, AMPHORA_DELETABLE_STATUSES, { status: PENDING_DELETE }))) {
    throw immutable("Amphora", id);
  }
  const name = `amphora-delete-${id}`;
  try {
    await deps.engine.start("amphora-delete", name, { lbId: a.loadbalancer_id, amphoraId: id });
  } catch (e) {
    await deps.store.updateAmphoraIf(a.loadbalancer_id, id, [PENDING_DELETE], { status: a.status });
    throw new Fault(500, "Unable to send the amphora delete request.");
  }
}

/** GET /v2/octavia/amphorae/{id}/stats: per-listener counters the amphora reported (404 until it has). */
export async function amphoraStats(deps: LockDeps, ctx: RequestContext, id: string) {
  const a = await amphora(deps, id);
  authorize(ctx, "os_load-balancer_api:amphora:get_stats", a.project_id);
  const stats = (a as Amphora & { listener_stats?: Record<string, Record<string, number>> }).listener_stats;
  if (!stats || Object.keys(stats).length === 0) throw notFound("Amphora stats for", id);
  return {
    amphora_stats: Object.entries(stats).map(([listener_id, s]) => ({
      active_connections: s.active_connections ?? 0,
      bytes_in: s.bytes_in ?? 0,
      bytes_out: s.bytes_out ?? 0,
      id,
      listener_id,
      loadbalancer_id: a.loadbalancer_id,
      request_errors: s.request_errors ?? 0,
      total_connections: s.total_connections ?? 0,
    })),
  };
}
