// The load balancer resource (octavia/api/v2/types/load_balancer.py).
import { z } from "zod";
import { DESCRIPTION_MAX, NAME_MAX } from "../constants";
import { body, bool, ipAddress, str, tags, uuid } from "../validation";
import { apiTime, type ResourceDescriptor } from "./descriptor";

export const AdditionalVipPost = body({ subnet_id: uuid(), ip_address: ipAddress().optional() });

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
});
export type LoadBalancerPost = z.output<typeof LoadBalancerPost>;

export const LoadBalancerPut = body({
  name: str(NAME_MAX).nullish(),
  description: str(DESCRIPTION_MAX).nullish(),
  vip_qos_policy_id: uuid().nullish(),
  admin_state_up: bool().optional(),
  tags: tags().nullish(),
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
  additional_vips: AdditionalVip[];
  provider: string;
  flavor_id: string | null;
  availability_zone: string | null;
  topology: string;
  tags: string[];
  created_at: string;
  updated_at: string | null;
}

export const loadBalancerResource: ResourceDescriptor<LoadBalancer> = {
  kind: "loadbalancer",
  displayName: "Load Balancer",
  root: "loadbalancer",
  collection: "loadbalancers",
  attributes: [
    "id", "name", "description", "provisioning_status", "operating_status", "admin_state_up", "project_id", "tenant_id",
    "created_at", "updated_at", "vip_address", "vip_port_id", "vip_subnet_id", "vip_network_id", "vip_qos_policy_id",
    "additional_vips", "listeners", "pools", "provider", "flavor_id", "tags", "availability_zone",
  ],
  toResponse: (lb, tree) => ({
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
    vip_qos_policy_id: lb.vip_qos_policy_id,
    additional_vips: lb.additional_vips.map((v) => ({ subnet_id: v.subnet_id, ip_address: v.ip_address })),
    listeners: (tree?.of("listener") ?? []).map((l) => ({ id: l.id })),
    pools: (tree?.of("pool") ?? []).map((p) => ({ id: p.id })),
    provider: lb.provider,
    flavor_id: lb.flavor_id,
    tags: lb.tags,
    availability_zone: lb.availability_zone,
  }),
};
