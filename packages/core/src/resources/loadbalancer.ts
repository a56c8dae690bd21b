// The load balancer resource (octavia/api/v2/types/load_balancer.py).
import * as z from "zod";
import { DESCRIPTION_MAX, NAME_MAX, VNIC_TYPE_NORMAL } from "../constants";
import { body, bool, canonicalUuid, ipAddress, isUuid, str, tags, uuid } from "../validation";
import { wsmeList } from "../compat/wsme";
import { apiTime, octaviaFilters, type ResourceDescriptor } from "./descriptor";

export const AdditionalVipPost = body({ subnet_id: uuid(), ip_address: ipAddress().optional() });

/**
 * v2.29's vip_sg_ids, wsme's [UuidType()]: a list (else "Value not a valid list: <value>") of UUIDs in
 * any spelling, answered canonical. wsme lets a null item through, to fail later in Neutron or the
 * database; Ottava refuses it as a bad UUID.
 */
const sgIds = () =>
  wsmeList<string>((id) => (typeof id === "string" && isUuid(id) ? undefined : "Value should be UUID format")).transform((ids) =>
    ids.map(canonicalUuid),
  );

export const LoadBalancerPost = body({
  name: str(NAME_MAX).nullish(),
  description: str(DESCRIPTION_MAX).nullish(),
  admin_state_up: bool().default(true),
  vip_address: ipAddress().nullish(),
  vip_port_id: uuid().nullish(),
  vip_subnet_id: uuid().nullish(),
  vip_network_id: uuid().nullish(),
  vip_qos_policy_id: uuid().nullish(),
  additional_vips: z.array(AdditionalVipPost, { error: "Value should be a list" }).default([]),
  project_id: str(36).nullish(),
  // The fully populated create (listeners and pools in the POST) belongs to the listener and pool resources.
  listeners: z.array(z.unknown(), { error: "Value should be a list" }).default([]),
  pools: z.array(z.unknown(), { error: "Value should be a list" }).default([]),
  provider: str(64).nullish(),
  tags: tags().nullish(),
  flavor_id: uuid().nullish(),
  availability_zone: str(255).nullish(),
  vip_sg_ids: sgIds().nullish(),
});
export type LoadBalancerPost = z.output<typeof LoadBalancerPost>;

export const LoadBalancerPut = body({
  name: str(NAME_MAX).nullish(),
  description: str(DESCRIPTION_MAX).nullish(),
  vip_qos_policy_id: uuid().nullish(),
  admin_state_up: bool().optional(),
  tags: tags().nullish(),
  /** v2.29: null is [] (no security groups), as Octavia's put has it. */
  vip_sg_ids: sgIds().nullish(),
});
export type LoadBalancerPut = z.output<typeof LoadBalancerPut>;

export interface AdditionalVip {
  subnet_id: string;
  ip_address: string;
  port_id: string;
  network_id: string;
}

/** A load balancer as the domain knows it. */
export interface LoadBalancer {
  id: string;
  /** Carried (relations.ts): its listeners and pools. */
  listener_ids?: string[];
  pool_ids?: string[];
  project_id: string;
  name: string | null;
  description: string | null;
  admin_state_up: boolean;
  provisioning_status: string;
  operating_status: string;
  vip_address: string;
  vip_port_id: string;
  vip_subnet_id: string | null;
  vip_network_id: string;
  vip_qos_policy_id: string | null;
  /** v2.29: the security groups of the VIP port (absent on records older than it: none). */
  vip_sg_ids?: string[];
  /** v2.28: the VIP port's VNIC type, "normal" or "direct" (SR-IOV; absent on older records: normal). */
  vip_vnic_type?: string;
  additional_vips: AdditionalVip[];
  provider: string;
  flavor_id: string | null;
  availability_zone: string | null;
  topology: string;
  /** Octavia's server_group_id: the anti-affinity group of its amphorae ([nova] enable_anti_affinity; absent: none). */
  server_group_id?: string | null;
  tags: string[];
  created_at: string;
  updated_at: string | null;
}

export const loadBalancerDescriptor: ResourceDescriptor<LoadBalancer> = {
  kind: "loadbalancer",
  displayName: "Load Balancer",
  quotaField: "load_balancer",
  root: "loadbalancer",
  collection: "loadbalancers",
  attributes: [
    "id",
    "name",
    "description",
    "provisioning_status",
    "operating_status",
    "admin_state_up",
    "project_id",
    "tenant_id",
    "created_at",
    "updated_at",
    "vip_address",
    "vip_port_id",
    "vip_subnet_id",
    "vip_network_id",
    "vip_qos_policy_id",
    "vip_sg_ids",
    "additional_vips",
    "listeners",
    "pools",
    "provider",
    "flavor_id",
    "tags",
    "availability_zone",
    "vip_vnic_type",
  ],
  filters: octaviaFilters(
    [
      "availability_zone",
      "created_at",
      "description",
      "enabled",
      "flavor_id",
      "id",
      "name",
      "operating_status",
      "project_id",
      "provider",
      "provisioning_status",
      "server_group_id",
      "topology",
      "updated_at",
    ],
    {
      admin_state_up: "enabled",
      vip_address: "vip.ip_address",
      vip_network_id: "vip.network_id",
      vip_port_id: "vip.port_id",
      vip_qos_policy_id: "vip.qos_policy_id",
      vip_sg_ids: "vip.sg_ids",
      vip_subnet_id: "vip.subnet_id",
      vip_vnic_type: "vip.vnic_type",
    },
  ),
  model: (lb, r) => ({
    enabled: lb.admin_state_up,
    topology: lb.topology,
    // Octavia's anti-affinity server group (nova.enable_anti_affinity, off by default): EC2's placement group.
    server_group_id: lb.server_group_id ?? null,
    "vip.ip_address": r.vip_address,
    "vip.network_id": r.vip_network_id,
    "vip.port_id": r.vip_port_id,
    "vip.qos_policy_id": r.vip_qos_policy_id,
    "vip.sg_ids": r.vip_sg_ids,
    "vip.subnet_id": r.vip_subnet_id,
    "vip.vnic_type": r.vip_vnic_type,
  }),
  listReads: {
    tenant_id: ["project_id"],
    listeners: ["listener_ids"],
    pools: ["pool_ids"],
    enabled: ["admin_state_up"],
    server_group_id: ["server_group_id"],
    "vip.ip_address": ["vip_address"],
    "vip.network_id": ["vip_network_id"],
    "vip.port_id": ["vip_port_id"],
    "vip.qos_policy_id": ["vip_qos_policy_id"],
    "vip.sg_ids": ["vip_sg_ids"],
    "vip.subnet_id": ["vip_subnet_id"],
    "vip.vnic_type": ["vip_vnic_type"],
  },
  toResponse: (lb) => ({
    id: lb.id,
    name: lb.name ?? "",
    description: lb.description ?? "",
    provisioning_status: lb.provisioning_status,
    operating_status: lb.operating_status,
    admin_state_up: lb.admin_state_up,
    project_id: lb.project_id,
    tenant_id: lb.project_id,
    created_at: apiTime(lb.created_at),
    updated_at: apiTime(lb.updated_at),
    vip_address: lb.vip_address,
    vip_port_id: lb.vip_port_id,
    vip_subnet_id: lb.vip_subnet_id,
    vip_network_id: lb.vip_network_id,
    vip_sg_ids: lb.vip_sg_ids ?? [],
    vip_qos_policy_id: lb.vip_qos_policy_id,
    additional_vips: lb.additional_vips.map((v) => ({ subnet_id: v.subnet_id, ip_address: v.ip_address, port_id: v.port_id })),
    listeners: (lb.listener_ids ?? []).map((id) => ({ id })),
    pools: (lb.pool_ids ?? []).map((id) => ({ id })),
    provider: lb.provider,
    flavor_id: lb.flavor_id,
    tags: lb.tags,
    availability_zone: lb.availability_zone,
    vip_vnic_type: lb.vip_vnic_type ?? VNIC_TYPE_NORMAL,
  }),
};
