// The member resource (octavia/api/v2/types/member.py, controllers/member.py): the servers of a
// pool, under /v2/lbaas/pools/{pool_id}/members. The batch update is in services/member-batch.ts.
import * as z from "zod";
import {
  ALLOW_MEMBER_SRIOV,
  DEFAULT_WEIGHT,
  LVS_PROTOCOLS,
  MAX_WEIGHT,
  MIN_WEIGHT,
  MUTABLE_STATUSES,
  NAME_MAX,
  NO_MONITOR,
  OFFLINE,
  PENDING_CREATE,
  RESERVED_IPS,
  TAG_MAX,
  VNIC_TYPE_DIRECT,
  VNIC_TYPE_NORMAL,
} from "../constants";
import { Fault, invalidOption, requireStatus } from "../faults";
import type { TreeRecord } from "../ports";
import { body, bool, integer, ipAddress, str, tags, uuid } from "../validation";
import { explodedAddress } from "../compat/ipaddress";
import { pyTruthy } from "../compat/repr";
import type { ChildRef, ChildResource, Tree } from "./child";
import { apiTime, octaviaFilters, type ResourceDescriptor } from "./descriptor";

const MIN_PORT_NUMBER = 1;
const MAX_PORT_NUMBER = 65535;

const port = () => integer(MIN_PORT_NUMBER, MAX_PORT_NUMBER);
const weight = () => integer(MIN_WEIGHT, MAX_WEIGHT);

/** MemberPOST; also the items of the batch update's MembersRootPUT. */
export const MemberPost = body({
  name: str(NAME_MAX).nullish(),
  admin_state_up: bool().default(true),
  address: ipAddress(),
  protocol_port: port(),
  // A null weight or backup falls back to the default, as Octavia's _set_default_on_none.
  weight: weight()
    .nullish()
    .transform((w) => w ?? DEFAULT_WEIGHT),
  backup: bool()
    .nullish()
    .transform((b) => b ?? false),
  subnet_id: uuid().nullish(),
  // Deprecated and ignored: a member belongs to its load balancer's project.
  project_id: str(36).nullish(),
  monitor_port: port().nullish(),
  monitor_address: ipAddress().nullish(),
  tags: z.array(str(TAG_MAX), { error: "Value should be a list" }).nullish(),
  // v2.30: an SR-IOV (VNIC type "direct") member port, if the LB's flavor allows it. wsattr(bool,
  // default=False); a null is Python's None, as falsy as False.
  request_sriov: bool()
    .nullish()
    .transform((r) => r ?? false),
});
export type MemberPost = z.output<typeof MemberPost>;

export const MemberPut = body({
  name: str(NAME_MAX).nullish(),
  admin_state_up: bool().optional(),
  weight: weight().nullish(),
  backup: bool().nullish(),
  monitor_port: port().nullish(),
  monitor_address: ipAddress().nullish(),
  tags: tags().nullish(),
});
export type MemberPut = z.output<typeof MemberPut>;

/** MembersRootPUT's list, for the batch update. */
export const MembersPut = z.array(MemberPost, { error: "Value should be a list" });

/** A member as stored: `pool_id` from the path and `loadbalancer_id` are kept but not answered. */
export type Member = TreeRecord & {
  id: string;
  project_id: string;
  pool_id: string;
  loadbalancer_id: string;
  name: string | null;
  admin_state_up: boolean;
  address: string;
  protocol_port: number;
  weight: number;
  backup: boolean;
  subnet_id: string | null;
  monitor_address: string | null;
  monitor_port: number | null;
  tags: string[];
  /** v2.30: the member port's VNIC type, "direct" when created with request_sriov (absent on older records: normal). */
  vnic_type?: string;
  provisioning_status: string;
  operating_status: string;
  created_at: string;
  updated_at: string | null;
};

export const memberDescriptor: ResourceDescriptor<Member> = {
  kind: "member",
  displayName: "Member",
  quotaField: "member",
  root: "member",
  collection: "members",
  attributes: [
    "id",
    "name",
    "operating_status",
    "provisioning_status",
    "admin_state_up",
    "address",
    "protocol_port",
    "weight",
    "backup",
    "subnet_id",
    "project_id",
    "created_at",
    "updated_at",
    "monitor_address",
    "monitor_port",
    "tags",
    "vnic_type",
  ],
  filters: octaviaFilters(
    [
      "backup",
      "created_at",
      "enabled",
      "id",
      "ip_address",
      "monitor_address",
      "monitor_port",
      "name",
      "operating_status",
      "pool_id",
      "project_id",
      "protocol_port",
      "provisioning_status",
      "subnet_id",
      "updated_at",
      "vnic_type",
      "weight",
    ],
    { address: "ip_address", admin_state_up: "enabled" },
  ),
  model: (m) => ({ enabled: m.admin_state_up, ip_address: m.address, pool_id: m.pool_id }),
  // MemberResponse: no pool_id, no tenant_id.
  listReads: { enabled: ["admin_state_up"], ip_address: ["address"] },
  toResponse: (m) => ({
    id: m.id,
    name: m.name ?? "",
    operating_status: m.operating_status,
    provisioning_status: m.provisioning_status,
    admin_state_up: m.admin_state_up,
    address: m.address,
    protocol_port: m.protocol_port,
    weight: m.weight,
    backup: m.backup,
    subnet_id: m.subnet_id,
    project_id: m.project_id,
    created_at: apiTime(m.created_at),
    updated_at: apiTime(m.updated_at),
    monitor_address: m.monitor_address,
    monitor_port: m.monitor_port,
    tags: m.tags,
    vnic_type: m.vnic_type ?? VNIC_TYPE_NORMAL,
  }),
};

/** validate.ip_not_reserved: Octavia compares the exploded, upper-case form. */
export function memberAddressNotReserved(address: string): void {
  // Python's exploded of an address the IP type let through (a scoped one: Octavia's 500).
  const full = explodedAddress(address)?.toUpperCase() ?? address;
  if (RESERVED_IPS.includes(full)) throw invalidOption(full, "member address");
}

export const duplicateMember = (address: string, port: number) =>
  new Fault(409, `Another member on this pool is already using ip ${address} on protocol_port ${port}`);

/** The listeners that use a pool (Octavia's Pool.listeners), as the pool carries them (relations.ts). */
const poolListeners = (pool: TreeRecord): string[] => (pool.listener_ids as string[] | undefined) ?? [];

/** What a member change marks PENDING_UPDATE: its pool and the pool's listeners. */
export const memberParents = (pool: TreeRecord): ChildRef[] => [
  { kind: "pool", id: pool.id },
  ...poolListeners(pool).map((id) => ({ kind: "listener", id })),
];

/**
 * The amphora driver's _validate_members: LVS (UDP, SCTP) pools cannot mix address families
 * between the VIPs and the members; checked only when the pool serves a listener, as there.
 */
export function checkMemberAddressFamilies(tree: Tree, pool: TreeRecord, addresses: string[]): void {
  if (!LVS_PROTOCOLS.includes(String(pool.protocol)) || poolListeners(pool).length === 0) return;
  const vips = [tree.lb.vip_address, ...tree.lb.additional_vips.map((v) => v.ip_address)];
  const hasV6 = vips.some((v) => v.includes(":"));
  const hasV4 = vips.some((v) => !v.includes(":"));
  for (const a of addresses) {
    if (a.includes(":") ? !hasV6 : !hasV4) {
      throw new Fault(
        501,
        `Provider '${tree.lb.provider}' does not support a requested option: This provider doesn't support mixing IPv4 and IPv6 addresses for its VIP and members in ${String(pool.protocol)} load balancers.`,
      );
    }
  }
}

/** MemberSRIOVDisabled (octavia/common/exceptions.py). */
export const memberSriovDisabled = () => new Fault(400, "The load balancer flavor does not allow SR-IOV member ports.");

/**
 * The VNIC type of a new member's port (v2.30; controllers/member.py post and _graph_create):
 * "direct" for request_sriov, refused unless the LB's flavor metadata has allow_member_sriov
 * (`flavor_dict.get(constants.ALLOW_MEMBER_SRIOV, False)`), else "normal".
 */
export function memberVnicType(requestSriov: boolean, flavor: Readonly<Record<string, unknown>>): string {
  if (requestSriov && !pyTruthy(flavor[ALLOW_MEMBER_SRIOV])) throw memberSriovDisabled();
  return requestSriov ? VNIC_TYPE_DIRECT : VNIC_TYPE_NORMAL;
}

/**
 * A new member of `pool` (db_prepare.create_member): NO_MONITOR unless the pool has a health monitor.
 * `vnicType` is memberVnicType's answer for its request_sriov.
 */
export function newMember(b: MemberPost, tree: Tree, pool: TreeRecord, id: string, now: string, vnicType: string): Member {
  const monitored = Boolean(pool.healthmonitor_id);
  return {
    id,
    project_id: tree.lb.project_id,
    pool_id: pool.id,
    loadbalancer_id: tree.lb.id,
    name: b.name ?? null,
    admin_state_up: b.admin_state_up,
    address: b.address,
    protocol_port: b.protocol_port,
    weight: b.weight,
    backup: b.backup,
    subnet_id: b.subnet_id ?? null,
    monitor_address: b.monitor_address ?? null,
    monitor_port: b.monitor_port ?? null,
    tags: [...new Set(b.tags ?? [])],
    vnic_type: vnicType,
    provisioning_status: PENDING_CREATE,
    operating_status: monitored ? OFFLINE : NO_MONITOR,
    created_at: now,
    updated_at: null,
  };
}

const poolMembers = (tree: Tree, poolId: string) => tree.of<Member>("member").filter((m) => m.pool_id === poolId);

export const memberResource: ChildResource<Member, MemberPost, MemberPut> = {
  descriptor: memberDescriptor,
  argument: "member_",
  post: MemberPost,
  put: MemberPut,
  scope: { param: "pool_id", field: "pool_id", parentKind: "pool", parentName: "Pool" },
  parentOf: (_body, params) => ({ kind: "pool", id: params.pool_id ?? "" }),
  readsFlavor: (b) => b.request_sriov,
  // Its pool (which carries its listeners and monitor), and the live member holding its address and port, if any.
  reads: (op) =>
    op.action === "create"
      ? {
          pools: [op.params.pool_id ?? ""],
          claims: [{ pool_id: op.params.pool_id ?? "", address: op.body.address, protocol_port: op.body.protocol_port }],
        }
      : { pools: [op.record.pool_id], members: [{ pool_id: op.record.pool_id, id: op.record.id }] },
  create({ body: b, tree, id, now, params, flavor }) {
    const poolId = params.pool_id ?? "";
    // In Octavia's order: reserved address, SR-IOV allowed by the flavor, pool then LB mutable,
    // duplicate (the DB's unique key), driver checks.
    memberAddressNotReserved(b.address);
    const vnicType = memberVnicType(b.request_sriov, flavor);
    // MembersController: 404 if the pool is gone (_get_db_pool), 409 unless mutable (_test_lb_and_listener_and_pool_statuses).
    const pool = requireStatus(tree.require("pool", poolId, "Pool"), MUTABLE_STATUSES, "Pool", poolId);
    requireStatus(tree.lb, MUTABLE_STATUSES, "Load Balancer", tree.lb.id);
    if (poolMembers(tree, poolId).some((m) => m.address === b.address && m.protocol_port === b.protocol_port)) {
      throw duplicateMember(b.address, b.protocol_port);
    }
    checkMemberAddressFamilies(tree, pool, [b.address]);
    return newMember(b, tree, pool, id, now, vnicType);
  },
  update({ body: b, record, tree }) {
    requireStatus(tree.require("pool", record.pool_id, "Pool"), MUTABLE_STATUSES, "Pool", record.pool_id);
    const set: Partial<Member> = { updated_at: new Date().toISOString() };
    if (b.name !== undefined) set.name = b.name;
    if (b.admin_state_up !== undefined) set.admin_state_up = b.admin_state_up;
    // Cleared (null) weight and backup go back to their defaults (_set_default_on_none).
    if (b.weight !== undefined) set.weight = b.weight ?? DEFAULT_WEIGHT;
    if (b.backup !== undefined) set.backup = b.backup ?? false;
    if (b.monitor_address !== undefined) set.monitor_address = b.monitor_address;
    if (b.monitor_port !== undefined) set.monitor_port = b.monitor_port;
    // A null tags list leaves the tags as they are (the repository ignores None).
    if (b.tags !== undefined && b.tags !== null) set.tags = b.tags;
    return set;
  },
  parents: (record, tree) => memberParents(tree.get("pool", record.pool_id) ?? { id: record.pool_id }),
  checkDelete: (record, tree) => void requireStatus(tree.require("pool", record.pool_id, "Pool"), MUTABLE_STATUSES, "Pool", record.pool_id),
};
