// The load balancer's API operations (octavia/api/v2/controllers/load_balancer.py), over the ports.
import { randomUUID } from "node:crypto";
import {
  DEFAULT_PROVIDER,
  DELETABLE_STATUSES,
  DELETED,
  ENABLED_PROVIDERS,
  ERROR,
  FAILOVERABLE_STATUSES,
  MUTABLE_STATUSES,
  OFFLINE,
  PENDING_CREATE,
  PENDING_DELETE,
  PENDING_UPDATE,
  SRIOV_VIP,
  TOPOLOGIES,
  VNIC_TYPE_DIRECT,
  VNIC_TYPE_NORMAL,
  type Topology,
} from "../constants";
import type { NetworkDriver } from "../drivers";
import { Fault, requireFound, validation } from "../faults";
import { authorize, listScope, type RequestContext } from "../policy";
import type { ItemSource } from "../query";
import type { Config } from "../config";
import type { LoadBalancer, LoadBalancerPost, LoadBalancerPut } from "../resources/loadbalancer";
import { executionName, giveBackIfTaken, lockAndStart, startOrGiveBack, type LockDeps } from "./lock";
import { memberPool, readTree } from "./children";
import { WHOLE_TREE } from "./change-set";
import { withRelations } from "../resources/relations";
import { buildGraph } from "./graph";
import { graphTlsRefs, resolveTlsRefs } from "../resources/tls-refs";
import type { ChildWrite, TreeItem, TreeRecord } from "../ports";
import { addTo, charge, createdBy, quotaFault } from "./quota";
import { Tree } from "../resources/child";
import { loadBalancerDescriptor } from "../resources/loadbalancer";
import { listItem } from "../resources/descriptor";
import { checkProfileData, profileData } from "./profiles";
import { loadBalancerStatistics, providerStats, type StatsAmphora } from "../health/stats";
import { checkGroupQuota, checkRuleQuota } from "./security-group-rules";
import { checkMemberNetworks } from "./member-networks";
import type { Listener } from "../resources/listener";

export interface LoadBalancerDeps extends LockDeps {
  network: NetworkDriver;
  config: Config;
}

const MISSING_PROJECT =
  "Missing project ID in request where one is required. An administrator should check the keystone settings in the Octavia configuration.";

export async function createLoadBalancer(
  deps: LoadBalancerDeps,
  ctx: RequestContext,
  body: LoadBalancerPost,
): Promise<{ lb: LoadBalancer; graph: TreeItem[] }> {
  const projectId = body.project_id ?? ctx.projectId;
  if (!projectId) throw validation(MISSING_PROJECT);
  authorize(ctx, "os_load-balancer_api:loadbalancer:post", projectId);
  // v2.29: giving vip_sg_ids at all (even null or []) takes its own rule (load_balancer.py post).
  if (body.vip_sg_ids !== undefined) authorize(ctx, "os_load-balancer_api:loadbalancer:post:vip_sg_ids", projectId);

  if (!(body.vip_port_id || body.vip_network_id || body.vip_subnet_id)) {
    throw new Fault(400, "Validation failure: VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.");
  }
  const subnets = new Set([body.vip_subnet_id ?? null]);
  for (const v of body.additional_vips) {
    if (subnets.has(v.subnet_id)) throw validation("Duplicate VIP subnet(s) specified. Only one IP can be bound per subnet.");
    subnets.add(v.subnet_id);
  }
  // The last of _validate_vip_request_object's checks: each security group exists.
  const sgIds = unique(body.vip_sg_ids ?? []);
  await checkSecurityGroups(deps.network, sgIds, projectId);

  let topology: Topology = deps.config.loadbalancerTopology;
  let flavor: Record<string, unknown> = {};
  let provider = body.provider ?? undefined;
  if (body.flavor_id) {
    const found = await deps.catalog.getFlavor(body.flavor_id);
    if (!found) throw validation("Invalid flavor_id.");
    if (!found.flavor.enabled) throw new Fault(400, `The selected flavor is not allowed in this deployment: ${body.flavor_id}`);
    if (provider !== undefined && provider !== found.profile.provider_name) {
      throw new Fault(400, `Flavor '${body.flavor_id}' is not compatible with provider '${provider}'`);
    }
    provider = found.profile.provider_name;
    const data = profileData(found.profile.flavor_data);
    flavor = data;
    const t = data.loadbalancer_topology;
    if (typeof t === "string" && (TOPOLOGIES as readonly string[]).includes(t)) topology = t as Topology;
  }
  provider ??= DEFAULT_PROVIDER;
  if (!(provider in ENABLED_PROVIDERS)) throw new Fault(400, `Provider '${provider}' is not enabled.`);
  let zone: Record<string, unknown> = {};
  if (body.availability_zone) {
    const az = await deps.catalog.getAvailabilityZone(body.availability_zone);
    if (!az) throw validation("Invalid availability zone.");
    if (!az.zone.enabled)
      throw new Fault(400, `The selected availability_zone is not allowed in this deployment: ${body.availability_zone}`);
    zone = profileData(az.profile.availability_zone_data);
  }
  // As Octavia's _apply_flavor_to_lb_dict and _validate_and_return_az_dict: the driver must still accept both.
  if (Object.keys(flavor).length > 0) await checkProfileData(deps.profiles, provider, "flavor", flavor);
  if (Object.keys(zone).length > 0) await checkProfileData(deps.profiles, provider, "availability_zone", zone);
  // validate.network_denylist_by_config, and network_allowed_by_config with the zone's valid_vip_networks
  // (Octavia checks it once it has read the zone), on the VIP network the request names.
  if (body.vip_network_id) checkVipNetwork(deps.config, zone, body.vip_network_id);
  // v2.28: the anticipated vNIC type, so the create answers the right vip_vnic_type (the flavor's
  // sriov_vip, a boolean by the flavor schema); v2.29: no security groups on an SR-IOV VIP.
  const vnicType = flavor[SRIOV_VIP] === true ? VNIC_TYPE_DIRECT : VNIC_TYPE_NORMAL;
  checkVnicType(vnicType, sgIds);

  const id = randomUUID();
  // As Octavia's API: the VIP is allocated before answering, so the 201 carries it.
  const vip = await deps.network.allocateVip({
    lbId: id,
    projectId,
    vip_qos_policy_id: body.vip_qos_policy_id ?? null,
    zone,
    vip_address: body.vip_address ?? null,
    vip_port_id: body.vip_port_id ?? null,
    vip_subnet_id: body.vip_subnet_id ?? null,
    vip_network_id: body.vip_network_id ?? null,
    additional_vips: body.additional_vips,
    vip_sg_ids: sgIds,
    vip_vnic_type: vnicType,
  });
  const lb: LoadBalancer = {
    id,
    project_id: projectId,
    name: body.name ?? null,
    description: body.description ?? null,
    admin_state_up: body.admin_state_up,
    provisioning_status: PENDING_CREATE,
    operating_status: OFFLINE,
    vip_address: vip.vip_address,
    vip_port_id: vip.vip_port_id,
    vip_subnet_id: vip.vip_subnet_id,
    vip_network_id: vip.vip_network_id,
    vip_qos_policy_id: body.vip_qos_policy_id ?? null,
    vip_sg_ids: sgIds,
    vip_vnic_type: vnicType,
    additional_vips: vip.additional_vips,
    provider,
    flavor_id: body.flavor_id ?? null,
    availability_zone: body.availability_zone ?? null,
    topology,
    tags: body.tags ?? [],
    created_at: new Date().toISOString(),
    updated_at: null,
  };
  // The fully populated create: every nested object validated against the tree before anything is written.
  let graph: TreeItem[];
  try {
    // Octavia resolves the VIP network from the port or subnet before these checks; here the network
    // driver resolves it as it allocates the VIP, so the network it chose is checked too.
    if (lb.vip_network_id !== body.vip_network_id) checkVipNetwork(deps.config, zone, lb.vip_network_id);
    const certs = await resolveTlsRefs(deps.certificates, projectId, graphTlsRefs(body.listeners, body.pools));
    graph = buildGraph(lb, ctx, body.listeners, body.pools, flavor, certs);
    const members = graph.filter((i) => i.kind === "member").map((i) => i.record);
    await checkMemberNetworks(
      deps.network,
      deps.store,
      lb,
      members.map((m) => m.subnet_id as string | null | undefined),
      [],
    );
    checkRuleQuota(
      deps.network.limits,
      lb,
      graph.filter((i) => i.kind === "listener").map((i) => i.record as unknown as Listener),
    );
  } catch (e) {
    await deps.network.deallocateVip(lb);
    throw e;
  }
  // What the LB and its objects show of their children is carried on them (relations.ts).
  const carried = withRelations(new Tree(lb, graph));
  const stored = carried.lb as unknown as LoadBalancer;
  graph = carried.items;
  const owner = executionName("create", id);
  const flow = "loadbalancer-create";
  const started = {
    flow,
    execution: owner,
    executionArn: deps.engine.executionArn(flow, owner),
    startedAt: new Date().toISOString(),
    subject: [{ kind: "loadbalancer", id }],
  };
  // The LB and everything in its graph are charged in the LB's own write (checked under keystone).
  const puts: ChildWrite[] = graph.map((i) => ({ kind: i.kind, put: i.record as TreeRecord & { project_id: string; created_at: string } }));
  try {
    // The quota's read may fail too (throttling): the VIP is given back whatever stops the write.
    const usage = await charge(deps.quotaLimits, projectId, addTo(createdBy(puts), "loadbalancer", 1));
    await deps.store.createLoadBalancer(stored, owner, started.executionArn, usage, started);
  } catch (e) {
    await deps.network.deallocateVip(lb);
    throw quotaFault(e);
  }
  const restoreError = { provisioning_status: ERROR };
  try {
    await deps.store.applyAsOwner(id, owner, puts);
  } catch (e) {
    // The graph's objects that were written go to ERROR with the LB (a create that fails leaves ERROR, never PENDING_*).
    const failed = (items: TreeItem[]): ChildWrite[] =>
      items
        .filter((i) => i.kind !== "amphora" && i.record.provisioning_status === PENDING_CREATE)
        .map((i) => ({ kind: i.kind, id: i.record.id, set: { provisioning_status: ERROR }, ...memberPool(i.kind, i.record) }));
    await giveBackIfTaken(deps, id, owner, e, restoreError, { undo: failed });
    throw e;
  }
  await startOrGiveBack(
    deps,
    started,
    { lbId: id, owner, subject: started.subject, changes: WHOLE_TREE, requestId: ctx.requestId },
    restoreError,
  );
  deps.log.info("load balancer create accepted", { lbId: id, projectId, topology, execution: owner, objects: graph.length });
  return { lb: stored, graph };
}

/** One LB: its item alone (its listeners and pools are carried on it). */
export async function getLoadBalancer(deps: LockDeps, ctx: RequestContext, id: string): Promise<LoadBalancer> {
  const read = requireFound(await deps.store.getLoadBalancer(id), "Load Balancer", id);
  authorize(ctx, "os_load-balancer_api:loadbalancer:get_one", read.record.project_id);
  return read.record;
}

/** Lists LBs as responses: the index items alone, no read per LB listed. */
export function listLoadBalancerResponses(deps: LockDeps, ctx: RequestContext, projectFilter: string | undefined): ItemSource {
  const source = deps.store.loadBalancers(listScope(ctx, "loadbalancer", projectFilter));
  return async function* (order, after, query) {
    for await (const lb of source(order, after, query)) yield listItem(loadBalancerDescriptor, lb as unknown as LoadBalancer);
  };
}

export async function updateLoadBalancer(
  deps: LoadBalancerDeps,
  ctx: RequestContext,
  id: string,
  body: LoadBalancerPut,
): Promise<LoadBalancer> {
  const read = await deps.store.getLoadBalancer(id);
  // v2.29: null is [] (the VIP's security groups removed), as Octavia's put has it.
  const sgIds = body.vip_sg_ids === undefined ? undefined : unique(body.vip_sg_ids ?? []);
  if (read && read.record.provisioning_status !== DELETED) {
    authorize(ctx, "os_load-balancer_api:loadbalancer:put", read.record.project_id);
    if (sgIds !== undefined) {
      authorize(ctx, "os_load-balancer_api:loadbalancer:put:vip_sg_ids", read.record.project_id);
      await checkSecurityGroups(deps.network, sgIds, read.record.project_id);
      checkVnicType(read.record.vip_vnic_type ?? VNIC_TYPE_NORMAL, sgIds);
      // Without vip_sg_ids the listeners' ports get rules again: they must fit in the LB's group.
      if (sgIds.length === 0 && deps.network.limits) {
        const { lb, items } = await deps.store.readParts(id, { structure: true });
        if (lb) checkRuleQuota(deps.network.limits, { ...lb.record, vip_sg_ids: [] }, new Tree(lb.record, items).of<Listener>("listener"));
      }
    }
  }
  const set: Partial<LoadBalancer> = {};
  if (body.name !== undefined) set.name = body.name;
  if (body.description !== undefined) set.description = body.description;
  if (body.admin_state_up !== undefined) set.admin_state_up = body.admin_state_up;
  if (body.vip_qos_policy_id !== undefined) set.vip_qos_policy_id = body.vip_qos_policy_id;
  if (body.tags !== undefined) set.tags = body.tags ?? [];
  if (sgIds !== undefined) set.vip_sg_ids = sgIds;
  const locked = await lockAndStart(
    { ...deps, requestId: ctx.requestId },
    { lbId: id, flow: "loadbalancer-update", verb: "update", from: MUTABLE_STATUSES, to: PENDING_UPDATE, prepare: () => set },
    read,
  );
  return locked.record;
}

export async function deleteLoadBalancer(deps: LockDeps, ctx: RequestContext, id: string, cascade: boolean): Promise<void> {
  const read = requireFound(await deps.store.getLoadBalancer(id), "Load Balancer", id);
  authorize(ctx, "os_load-balancer_api:loadbalancer:delete", read.record.project_id);
  if (!cascade && ((read.record.listener_ids?.length ?? 0) > 0 || (read.record.pool_ids?.length ?? 0) > 0))
    throw validation(`Cannot delete Load Balancer ${id} - it has children`);
  await lockAndStart(
    { ...deps, requestId: ctx.requestId },
    {
      lbId: id,
      flow: "loadbalancer-delete",
      verb: "delete",
      from: DELETABLE_STATUSES,
      to: PENDING_DELETE,
      input: { cascade },
      wholeTree: true,
    },
    read,
  );
}

export async function failoverLoadBalancer(deps: LockDeps, ctx: RequestContext, id: string): Promise<void> {
  const read = await deps.store.getLoadBalancer(id);
  if (read && read.record.provisioning_status !== DELETED)
    authorize(ctx, "os_load-balancer_api:loadbalancer:put_failover", read.record.project_id);
  await lockAndStart(
    deps,
    { lbId: id, flow: "loadbalancer-failover", verb: "failover", from: FAILOVERABLE_STATUSES, to: PENDING_UPDATE },
    read,
  );
}

/** GET .../status: the status tree, as Octavia's StatusResponse (pools under the listeners that use them). */
export async function loadBalancerStatus(deps: LockDeps, ctx: RequestContext, id: string) {
  const { tree } = await readTree(deps, id);
  authorize(ctx, "os_load-balancer_api:loadbalancer:get_one", tree.lb.project_id);
  const lb = tree.lb;
  type R = Record<string, unknown> & { id: string };
  const name = (r: R) => (r.name as string | null) ?? "";
  const status = (r: R) => ({ id: r.id, name: name(r), operating_status: r.operating_status, provisioning_status: r.provisioning_status });
  const pool = (p: R) => {
    const hm = tree.of<R>("healthmonitor").find((h) => h.pool_id === p.id);
    return {
      id: p.id,
      name: name(p),
      provisioning_status: p.provisioning_status,
      operating_status: p.operating_status,
      ...(hm
        ? {
            health_monitor: {
              id: hm.id,
              name: name(hm),
              type: hm.type,
              provisioning_status: hm.provisioning_status,
              operating_status: hm.operating_status,
            },
          }
        : {}),
      members: tree
        .of<R>("member")
        .filter((m) => m.pool_id === p.id)
        .map((m) => ({ ...status(m), address: m.address, protocol_port: m.protocol_port })),
    };
  };
  const poolsOf = (l: R) => {
    const ids = new Set<string>();
    if (l.default_pool_id) ids.add(String(l.default_pool_id));
    for (const p of tree.of<R>("l7policy")) if (p.listener_id === l.id && p.redirect_pool_id) ids.add(String(p.redirect_pool_id));
    return tree.of<R>("pool").filter((p) => ids.has(p.id));
  };
  return {
    statuses: {
      loadbalancer: {
        ...status(lb as unknown as R),
        listeners: tree.of<R>("listener").map((l) => ({ ...status(l), pools: poolsOf(l).map(pool) })),
      },
    },
  };
}

/** GET .../stats: the counters amphorae reported (health/stats.ts), summed over the LB's listeners; zeros until heartbeats arrive. */
export async function loadBalancerStats(deps: LockDeps, ctx: RequestContext, id: string) {
  await getLoadBalancer(deps, ctx, id);
  const { items } = await deps.store.tree(id);
  const listeners = items.filter((i) => i.kind === "listener" && i.record.provisioning_status !== DELETED).map((i) => i.record);
  const amphorae = items.filter((i) => i.kind === "amphora").map((i) => i.record as unknown as StatsAmphora);
  return {
    stats: loadBalancerStatistics(
      listeners.map((l) => l.id),
      [...amphorae, ...providerStats(listeners)],
    ),
  };
}

/**
 * validate.security_group_exists, with the caller's project (Octavia's context): any failure of the
 * network driver's lookup is Octavia's InvalidSubresource.
 */
async function checkSecurityGroups(network: NetworkDriver, sgIds: readonly string[], projectId: string): Promise<void> {
  checkGroupQuota(network.limits, sgIds);
  for (const sgId of sgIds) {
    try {
      await network.getSecurityGroup(sgId, projectId);
    } catch {
      throw new Fault(400, `Security Group ${sgId} not found.`);
    }
  }
}

/** LoadBalancersController._validate_vnic_type: no VIP security groups on an SR-IOV (direct) VIP. */
function checkVnicType(vnicType: string, sgIds: readonly string[]): void {
  if (vnicType === VNIC_TYPE_DIRECT && sgIds.length > 0) throw validation("VIP Security Groups are not allowed with VNIC direct type");
}

/**
 * validate.network_denylist_by_config ([networking] denylist_vip_networks), then
 * validate.network_allowed_by_config with the availability zone profile's valid_vip_networks (when it
 * lists any, the VIP's network must be one of them), both case-insensitively.
 */
function checkVipNetwork(config: Config, zone: Record<string, unknown>, networkId: string): void {
  const id = networkId.toLowerCase();
  const denied = config.denylistVipNetworks.map((n) => n.toLowerCase());
  const valid = Array.isArray(zone.valid_vip_networks) ? zone.valid_vip_networks.map((n) => String(n).toLowerCase()) : [];
  if (denied.includes(id) || (valid.length > 0 && !valid.includes(id))) {
    throw validation("Supplied VIP network_id is not allowed by the configuration of this deployment.");
  }
}

/**
 * Each security group once, in the order given (Octavia's vip_security_group table has one row per
 * LB and group: a repeated id is a duplicate-key failure there).
 */
const unique = (ids: readonly string[]) => [...new Set(ids)];
