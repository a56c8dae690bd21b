// Amphora tasks, as Octavia's (controller/worker/v2/tasks: database, compute, network, amphora driver tasks).
import {
  AMPHORA_ALLOCATED,
  AMPHORA_BOOT_FAILED_ALERT,
  AMPHORA_BOOTING,
  DELETED,
  ERROR,
  PENDING_CREATE,
  PENDING_DELETE,
  ROLE_BACKUP,
  ROLE_MASTER,
  ROLE_STANDALONE,
  TOPOLOGY_ACTIVE_STANDBY,
  currentHealthManagerConfig,
  ComputeBuildError,
  ComputeWaitTimeout,
  DriverError,
  buildProfile,
  type Amphora,
} from "@ottava/core";
import { hasAgent } from "@ottava/amphora";
import {
  activeWait,
  activeWaitAttempt,
  certsOf,
  deterministicId,
  ignoreLockLost,
  loadBalancer,
  servedTree,
  type PlannedAmphora,
  type TaskContext,
  type TaskHandler,
} from "./context";
import { renderAmphoraAgentConfig } from "./healthmanager";
import { unplugMemberPorts } from "./networks";

const MASTER_PRIORITY = 100;
const BACKUP_PRIORITY = 90;

const planOf = (input: Record<string, unknown>) => (input.plan ?? []) as PlannedAmphora[];

async function planned(ctx: TaskContext, input: Record<string, unknown>): Promise<Amphora[]> {
  const out: Amphora[] = [];
  for (const p of planOf(input)) {
    const a = await ctx.store.getAmphora(p.id);
    if (a && a.status !== DELETED) out.push(a);
  }
  return out;
}

/** The amphorae a new LB needs: one STANDALONE, or a MASTER and a BACKUP for ACTIVE_STANDBY. */
export const planAmphorae: TaskHandler = async ({ lbId, owner }, ctx) => {
  const lb = await loadBalancer(ctx, lbId);
  const roles: [string, number | null][] =
    lb.topology === TOPOLOGY_ACTIVE_STANDBY
      ? [
          [ROLE_MASTER, MASTER_PRIORITY],
          [ROLE_BACKUP, BACKUP_PRIORITY],
        ]
      : [[ROLE_STANDALONE, null]];
  return roles.map(([role, vrrp_priority], slot): PlannedAmphora => ({ id: deterministicId(owner, String(slot)), role, vrrp_priority }));
};

/** The replacement of one failed-over amphora: same role and priority. */
export const planReplacement: TaskHandler = async ({ owner, old }) => {
  const a = old as Amphora;
  return [{ id: deterministicId(owner, a.id), role: a.role, vrrp_priority: a.vrrp_priority }] satisfies PlannedAmphora[];
};

export const createAmphoraeInDB: TaskHandler = async (input, ctx) => {
  const lb = await loadBalancer(ctx, input.lbId);
  const now = new Date().toISOString();
  for (const p of planOf(input)) {
    if (await ctx.store.getAmphora(p.id)) continue; // a retry: already created
    await ctx.store.createAmphora(
      {
        id: p.id,
        loadbalancer_id: lb.id,
        project_id: lb.project_id,
        compute_id: null,
        lb_network_ip: null,
        vrrp_ip: null,
        ha_ip: null,
        vrrp_port_id: null,
        ha_port_id: null,
        cert_expiration: null,
        cert_busy: false,
        role: p.role,
        status: PENDING_CREATE,
        vrrp_interface: null,
        vrrp_id: p.role === ROLE_STANDALONE ? null : 1,
        vrrp_priority: p.vrrp_priority,
        cached_zone: null,
        image_id: null,
        compute_flavor: typeof input.computeFlavor === "string" ? input.computeFlavor : null,
        created_at: now,
        updated_at: null,
      },
      input.owner,
    );
  }
  return null;
};

/** Revert of createAmphoraeInDB: the planned amphorae that exist are marked DELETED. */
export const markAmphoraeDeleted: TaskHandler = async (input, ctx) => {
  for (const a of await planned(ctx, input)) {
    await ignoreLockLost(ctx, `amphora ${a.id}`, () => ctx.store.updateAmphora(input.lbId, a.id, input.owner, { status: DELETED }));
  }
  return null;
};

/**
 * Builds the planned amphorae (Octavia: GenerateServerPEMTask, UpdateAmphoraDBCertExpiration and
 * CertComputeCreate in one task): each gets a new server certificate (CN = its id) signed by the CA,
 * handed to the compute driver with its key and its amphora-agent.conf (rendered as
 * updateAmphoraAgentConfig renders it: the current health-manager addresses, the heartbeat key) for the
 * instance's config drive, and its expiry recorded, with the generation of the health-manager
 * configuration it carries (postVipPlug pushes a newer one). The key and the configuration exist only
 * here: never in the flow's state (this task returns nothing) nor in a log line.
 */
export const computeCreate: TaskHandler = async (input, ctx) => {
  const lb = await loadBalancer(ctx, input.lbId);
  const todo = (await planned(ctx, input)).filter((a) => !a.compute_id);
  if (todo.length === 0) return null;
  // As Octavia's flows store them: the flavor's and the zone's profile values; a resize builds with its new flavor.
  const flavorId = typeof input.newFlavorId === "string" ? input.newFlavorId : lb.flavor_id;
  const profile = await buildProfile(ctx.catalog, flavorId, lb.availability_zone);
  // A network whose VIP ports attach only within a zone (vpc): the amphorae boot in the VIP subnet's
  // (the API refused a compute_zone that differs from it).
  const vipZone = (await ctx.drivers.network.vipZone?.(lb)) ?? null;
  if (vipZone) profile.availabilityZone = vipZone;
  const agent = await currentHealthManagerConfig(ctx);
  const topologies = new Map([[lb.id, Promise.resolve(lb.topology)]]);
  for (const a of todo) {
    const cert = await certsOf(ctx).generateServerPem(a.id, ctx.config.certValidityTime);
    const computeId = await ctx.drivers.compute.build({
      amphoraId: a.id,
      loadBalancerId: lb.id,
      ...profile,
      // The LB's anti-affinity group (createServerGroup), for the create's pair and every replacement.
      serverGroupId: lb.server_group_id ?? null,
      serverPem: cert.pem,
      agentConfig: await renderAmphoraAgentConfig(ctx, a, agent.controller_ip_port_list, topologies),
    });
    // Before the compute id: a retry that finds the id set builds nothing and records nothing.
    await ctx.healthManagerConfig.recordAmphoraAgentGeneration(lb.id, a.id, agent.generation, new Date().toISOString());
    await ctx.store.updateAmphora(lb.id, a.id, input.owner, {
      compute_id: computeId,
      status: AMPHORA_BOOTING,
      cert_expiration: cert.expiration,
    });
  }
  return null;
};

/** Revert of computeCreate: deletes the instances built for the planned amphorae. */
export const computeDelete: TaskHandler = async (input, ctx) => {
  for (const a of await planned(ctx, input)) {
    await unplugMemberPorts(ctx, a);
    if (a.compute_id) await ctx.drivers.compute.delete(a.compute_id, a.id);
    await ignoreLockLost(ctx, `amphora ${a.id}`, () => ctx.store.updateAmphora(input.lbId, a.id, input.owner, { status: ERROR }));
  }
  return null;
};

/**
 * Octavia's ComputeWait under its ComputeRetry, one attempt per run: each planned amphora's instance is
 * read once (getInstance), and what the amphora record keeps of it written. While one is not running
 * yet (the driver's ComputeWaitTimeout) the flow waits amp_active_wait_sec and runs this again, for at
 * most amp_active_retries runs; then the step fails with ComputeWaitTimeout, and its reverts delete the
 * instances. An instance that will never run (ComputeBuildError) fails the step at once. Drivers whose
 * instances are there at once (noop, local) answer on the first run.
 */
export const computeWait: TaskHandler = async (input, ctx) => {
  const attempts = activeWaitAttempt(input, "computeWait");
  const pending: Amphora[] = [];
  for (const a of await planned(ctx, input)) {
    let vm;
    try {
      vm = await ctx.drivers.compute.getInstance(a.compute_id!);
    } catch (e) {
      if (e instanceof ComputeBuildError || (e as Error)?.name === "ComputeBuildError")
        bootFailed(ctx, [a], `its instance will never run: ${(e as Error).message}`);
      if (!(e instanceof ComputeWaitTimeout || (e as Error)?.name === "ComputeWaitTimeout")) throw e;
      pending.push(a);
      continue;
    }
    await ctx.store.updateAmphora(input.lbId, a.id, input.owner, {
      lb_network_ip: vm.lb_network_ip,
      image_id: vm.image_id,
      compute_flavor: vm.compute_flavor ?? a.compute_flavor,
      cached_zone: vm.cached_zone,
    });
  }
  const state = activeWait(ctx, attempts, pending.length === 0, () => {
    bootFailed(ctx, pending, `its instance is not running after ${attempts} looks`);
    return new ComputeWaitTimeout(pending.map((a) => a.compute_id).join(", "));
  });
  if (state.waiting) ctx.log.info("amphora instance not running yet", { amphorae: pending.map((a) => a.id), attempts });
  return state;
};

/** The line an operator is alerted by (AMPHORA_BOOT_FAILED_ALERT; stacks/alarms.ts counts it): these amphorae failed to boot. */
function bootFailed(ctx: TaskContext, amphorae: Amphora[], why: string): void {
  ctx.log.error("amphora failed to boot", {
    alert: AMPHORA_BOOT_FAILED_ALERT,
    amphorae: amphorae.map((a) => a.id),
    computeIds: amphorae.map((a) => a.compute_id),
    why,
  });
}

/** Where the agent wait stands, kept by the flow at $.agentWait between runs. */
interface AgentWait {
  waiting: boolean;
  attempts: number;
  since: string;
  retryIn: number;
}

/**
 * Octavia's AmphoraComputeConnectivityWait under its AmpRetry, one attempt per run: each planned
 * amphora's agent is asked once (GET info, rest_request_conn_timeout / rest_request_read_timeout).
 * While one cannot be reached yet the flow waits `retryIn` seconds (1, 2, 4, ... up to
 * connection_retry_interval) and runs it again, for at most connection_max_retries runs and
 * connection_max_retries x connection_retry_interval seconds; then the amphorae not reached are
 * marked ERROR and the step fails (its reverts delete them). Drivers without an agent (noop) answer at once.
 */
export const amphoraeConnectivityWait: TaskHandler = async (input, ctx) => {
  const prev = input.agentWait as AgentWait | undefined;
  const attempts = (prev?.attempts ?? 0) + 1;
  const since = prev?.since ?? new Date().toISOString();
  const driver = ctx.drivers.amphora;
  if (!hasAgent(driver)) return { waiting: false, attempts, since, retryIn: 0 } satisfies AgentWait;
  const amphorae = await planned(ctx, input);
  const reached = await Promise.all(amphorae.map((a) => driver.agentReachable(a)));
  const pending = amphorae.filter((_, i) => !reached[i]);
  if (pending.length === 0) return { waiting: false, attempts, since, retryIn: 0 } satisfies AgentWait;
  const { connectionMaxRetries: max, connectionRetryInterval: interval } = ctx.config;
  const retryIn = Math.min(interval, 2 ** (attempts - 1));
  const elapsed = (Date.now() - Date.parse(since)) / 1000;
  if (attempts >= max || elapsed + retryIn > max * interval) {
    bootFailed(ctx, pending, `its agent was not reached in ${attempts} attempts in ${Math.round(elapsed)} s`);
    for (const a of pending) await ctx.store.updateAmphora(input.lbId, a.id, input.owner, { status: ERROR });
    throw new DriverError(
      `Amphora compute instance failed to become reachable (${pending.map((a) => a.id).join(", ")}, ${attempts} attempts in ${Math.round(elapsed)} s). ` +
        "This either means the compute driver failed to fully boot the instance inside the timeout interval or the instance is not reachable via the lb-mgmt-net.",
    );
  }
  ctx.log.info("amphora agent not reachable yet", { amphorae: pending.map((a) => a.id), attempts, retryIn });
  return { waiting: true, attempts, since, retryIn } satisfies AgentWait;
};

/**
 * Plugs the VIP into each new amphora. The VIP goes to the port of the amphora that serves it now: a
 * STANDALONE amphora (a failover's too: the new one takes it before the old one goes), or the MASTER
 * of a new ACTIVE_STANDBY pair. A failover's new ACTIVE_STANDBY amphora does not take it: the VIP
 * follows keepalived's MASTER (removeOldAmphora hands it to the survivor).
 */
export const plugVip: TaskHandler = async (input, ctx) => {
  const lb = await loadBalancer(ctx, input.lbId);
  for (const a of await planned(ctx, input)) {
    const holdVip = a.role === ROLE_STANDALONE || (a.role === ROLE_MASTER && !input.old);
    const ports = await ctx.drivers.network.plugVip(lb, a, holdVip);
    await ctx.store.updateAmphora(lb.id, a.id, input.owner, {
      ...ports,
      vrrp_interface: a.role === ROLE_STANDALONE ? null : "eth1",
    });
  }
  return null;
};

/** Revert of plugVip. */
export const unplugVip: TaskHandler = async (input, ctx) => {
  const lb = await loadBalancer(ctx, input.lbId);
  for (const a of await planned(ctx, input)) if (a.vrrp_port_id) await ctx.drivers.network.unplugVip(lb, a);
  return null;
};

/**
 * post_vip_plug of each new amphora. Its build carried the health-manager configuration of the
 * generation computeCreate recorded; if an admin changed it since (a refresh may have skipped or
 * failed on an amphora still booting), the current one is pushed here, as the refresh pushes it.
 */
export const postVipPlug: TaskHandler = async (input, ctx) => {
  const lb = await loadBalancer(ctx, input.lbId);
  const agent = await currentHealthManagerConfig(ctx);
  const topologies = new Map([[lb.id, Promise.resolve(lb.topology)]]);
  for (const a of (await planned(ctx, input)) as (Amphora & { agent_generation?: number })[]) {
    await ctx.drivers.amphora.postVipPlug(lb, a);
    if (a.agent_generation === agent.generation) continue;
    await ctx.drivers.amphora.updateAgentConfig(a, await renderAmphoraAgentConfig(ctx, a, agent.controller_ip_port_list, topologies));
    await ctx.healthManagerConfig.recordAmphoraAgentGeneration(lb.id, a.id, agent.generation, new Date().toISOString());
  }
  return null;
};

export const markAmphoraeAllocated: TaskHandler = async (input, ctx) => {
  for (const a of await planned(ctx, input)) {
    await ctx.store.updateAmphora(input.lbId, a.id, input.owner, { status: AMPHORA_ALLOCATED });
  }
  return null;
};

/** ACTIVE_STANDBY: (re)writes and starts keepalived on the LB's live amphorae. */
export const startVrrp: TaskHandler = async ({ lbId }, ctx) => {
  const tree = await servedTree(ctx, lbId);
  if (tree.lb.topology !== TOPOLOGY_ACTIVE_STANDBY) return null;
  const live = (await ctx.store.amphoraeOf(lbId)).filter((a) => a.status === AMPHORA_ALLOCATED);
  await ctx.drivers.amphora.startVrrp(tree, live);
  return null;
};

/** The LB's live amphorae, in failover order (BACKUP first, so the MASTER keeps serving the longest). */
export const planFailover: TaskHandler = async ({ lbId }, ctx) => {
  const order = (a: Amphora) => (a.role === ROLE_BACKUP ? 0 : a.role === ROLE_MASTER ? 2 : 1);
  return (await ctx.store.amphoraeOf(lbId)).filter((a) => a.status !== DELETED).sort((a, b) => order(a) - order(b));
};

/**
 * Removes the amphora a failover replaced: unplugs it, deletes its instance, marks it DELETED. In an
 * ACTIVE_STANDBY pair the VIP first goes to the surviving amphora, which keepalived makes MASTER once
 * the old one is gone (a network that ignores gratuitous ARP: the driver's takeVip), so it is never
 * left on a port about to go.
 */
export const removeOldAmphora: TaskHandler = async (input, ctx) => {
  const lb = await loadBalancer(ctx, input.lbId);
  const old = await ctx.store.getAmphora((input.old as Amphora).id);
  if (!old || old.status === DELETED) return null;
  const network = ctx.drivers.network;
  if (network.takeVip && old.role !== ROLE_STANDALONE) {
    const survivor = (await ctx.store.amphoraeOf(lb.id)).find(
      (a) => a.id !== old.id && a.status === AMPHORA_ALLOCATED && a.vrrp_port_id && a.role !== null && a.role !== old.role,
    );
    if (survivor && (await network.takeVip(lb, survivor))) ctx.log.info("VIP handed to the surviving amphora", { amphora: survivor.id });
  }
  await network.unplugVip(lb, old).catch((e) => ctx.log.warn("unplug of a failed amphora failed", { amphora: old.id, error: String(e) }));
  await unplugMemberPorts(ctx, old);
  if (old.compute_id) await ctx.drivers.compute.delete(old.compute_id, old.id);
  await ctx.store.updateAmphora(lb.id, old.id, input.owner, { status: DELETED });
  return null;
};

/**
 * The amphora-vip-promote flow (the health manager took an amphora's VRRP promotion report): the LB's VIP
 * moves to the amphora's VRRP port (the network driver's takeVip). No lock: a promotion must not wait for a
 * change of the LB, and takeVip touches no record. Nothing is done when the network follows gratuitous ARP
 * (no takeVip), when the amphora is no longer ALLOCATED with a VRRP port (failed over, deleted), or when its
 * load balancer is gone, being deleted, or not ACTIVE_STANDBY.
 */
export const promoteAmphoraVip: TaskHandler = async (input, ctx) => {
  const network = ctx.drivers.network;
  const amphoraId = String(input.amphoraId);
  const skip = (reason: string) => {
    ctx.log.info("VRRP promotion: VIP not moved", { amphoraId, promotedAt: input.promotedAt, reason });
    return null;
  };
  if (!network.takeVip) return skip("the network driver follows gratuitous ARP: nothing to move");
  const a = await ctx.store.getAmphora(amphoraId);
  if (!a || a.status !== AMPHORA_ALLOCATED || !a.vrrp_port_id)
    return skip(`amphora is ${a ? `${a.status}${a.vrrp_port_id ? "" : " without a VRRP port"}` : "gone"}`);
  const lb = (await ctx.store.getLoadBalancer(a.loadbalancer_id))?.record;
  if (!lb || lb.provisioning_status === DELETED || lb.provisioning_status === PENDING_DELETE) return skip("load balancer is gone");
  if (lb.topology !== TOPOLOGY_ACTIVE_STANDBY) return skip(`load balancer is ${lb.topology}`);
  const moved = await network.takeVip(lb, a);
  ctx.log.info(moved ? "VRRP promotion: VIP moved to the amphora" : "VRRP promotion: the amphora held the VIP already", {
    amphoraId,
    lbId: lb.id,
    promotedAt: input.promotedAt,
  });
  return null;
};

/** Amphora config flow: pushes the agent configuration (no lock: only the amphora is touched). */
export const updateAmphoraAgentConfig: TaskHandler = async (input, ctx) => {
  const a = await ctx.store.getAmphora(String(input.amphoraId));
  if (!a || a.status === DELETED) return null;
  const cfg = await currentHealthManagerConfig(ctx);
  await ctx.drivers.amphora.updateAgentConfig(a, await renderAmphoraAgentConfig(ctx, a, cfg.controller_ip_port_list));
  await ctx.healthManagerConfig.recordAmphoraAgentGeneration(a.loadbalancer_id, a.id, cfg.generation, new Date().toISOString());
  ctx.log.info("amphora agent configuration updated", { amphoraId: a.id, generation: cfg.generation });
  return null;
};

export const logAmphoraFlowFailure: TaskHandler = async (input, ctx) => {
  ctx.log.error("amphora flow failed", { amphoraId: input.amphoraId, error: input.error });
  return null;
};

/** Amphora delete flow: the instance goes, the record is DELETED (only from PENDING_DELETE). */
export const deleteAmphora: TaskHandler = async (input, ctx) => {
  const a = await ctx.store.getAmphora(String(input.amphoraId));
  if (!a || a.status !== PENDING_DELETE) return null;
  await unplugMemberPorts(ctx, a);
  if (a.compute_id) await ctx.drivers.compute.delete(a.compute_id, a.id);
  await ctx.store.updateAmphoraIf(a.loadbalancer_id, a.id, [PENDING_DELETE], { status: DELETED });
  return null;
};

export const markAmphoraError: TaskHandler = async (input, ctx) => {
  const a = await ctx.store.getAmphora(String(input.amphoraId));
  if (a) await ctx.store.updateAmphoraIf(a.loadbalancer_id, a.id, [PENDING_DELETE], { status: ERROR });
  ctx.log.error("amphora delete failed", { amphoraId: input.amphoraId, error: input.error });
  return null;
};

/** Delete flow: every amphora of the LB goes. */
export const deleteAmphorae: TaskHandler = async ({ lbId, owner }, ctx) => {
  const lb = await loadBalancer(ctx, lbId);
  for (const a of await ctx.store.amphoraeOf(lbId)) {
    if (a.status === DELETED) continue;
    await unplugMemberPorts(ctx, a);
    if (a.vrrp_port_id) await ctx.drivers.network.unplugVip(lb, a);
    if (a.compute_id) await ctx.drivers.compute.delete(a.compute_id, a.id);
    await ctx.store.updateAmphora(lbId, a.id, owner, { status: DELETED });
  }
  return null;
};
