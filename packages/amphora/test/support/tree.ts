// Test scaffolding for the REST amphora driver's tests: load-balancer trees and amphora records as the store keeps them (the records of Octavia's data model the drivers read).
import { randomUUID } from "node:crypto";
import { Tree, type Amphora, type LoadBalancer, type TreeItem } from "@ottava/core";
import { loadBalancerRecord, memberFields } from "@ottava/core/testing";

const NOW = "2026-01-01T00:00:00.000000";

/** A load balancer's record as the drivers read it. */
export const loadBalancer = (over: Partial<LoadBalancer> = {}): LoadBalancer =>
  loadBalancerRecord({
    project_id: "project-rest",
    name: "lb",
    vip_address: "198.51.100.10",
    vip_subnet_id: randomUUID(),
    vip_sg_ids: [],
    vip_vnic_type: "normal",
    created_at: NOW,
    ...over,
  });

export function amphora(lb: LoadBalancer, over: Partial<Amphora> = {}): Amphora {
  return {
    id: randomUUID(),
    loadbalancer_id: lb.id,
    project_id: lb.project_id,
    compute_id: randomUUID(),
    lb_network_ip: "127.0.0.1",
    vrrp_ip: "198.51.100.11",
    ha_ip: lb.vip_address,
    vrrp_port_id: randomUUID(),
    ha_port_id: randomUUID(),
    cert_expiration: null,
    cert_busy: false,
    role: "STANDALONE",
    status: "ALLOCATED",
    vrrp_interface: null,
    vrrp_id: null,
    vrrp_priority: null,
    cached_zone: null,
    image_id: null,
    compute_flavor: null,
    created_at: NOW,
    updated_at: null,
    ...over,
  };
}

/** An ACTIVE/ONLINE object of `lb`'s tree, named null and admin up, with `fields`. */
const treeItem = (kind: string, lb: LoadBalancer, fields: Record<string, unknown>): TreeItem => ({
  kind,
  record: {
    id: randomUUID(),
    project_id: lb.project_id,
    loadbalancer_id: lb.id,
    provisioning_status: "ACTIVE",
    operating_status: "ONLINE",
    tags: [],
    created_at: NOW,
    updated_at: null,
    name: null,
    admin_state_up: true,
    ...fields,
  },
});

export function listener(lb: LoadBalancer, over: Record<string, unknown> = {}): TreeItem {
  return treeItem("listener", lb, {
    description: null,
    protocol: "HTTP",
    protocol_port: 80,
    connection_limit: -1,
    default_tls_container_ref: null,
    sni_container_refs: [],
    default_pool_id: null,
    insert_headers: {},
    timeout_client_data: 50000,
    timeout_member_connect: 5000,
    timeout_member_data: 50000,
    timeout_tcp_inspect: 0,
    client_ca_tls_container_ref: null,
    client_authentication: "NONE",
    client_crl_container_ref: null,
    allowed_cidrs: [],
    tls_ciphers: null,
    tls_versions: null,
    alpn_protocols: null,
    hsts_max_age: null,
    hsts_include_subdomains: null,
    hsts_preload: null,
    peer_port: 1025,
    ...over,
  });
}

export function pool(lb: LoadBalancer, over: Record<string, unknown> = {}): TreeItem {
  return treeItem("pool", lb, {
    description: null,
    protocol: "HTTP",
    lb_algorithm: "ROUND_ROBIN",
    session_persistence: null,
    tls_enabled: false,
    tls_container_ref: null,
    ca_tls_container_ref: null,
    crl_container_ref: null,
    tls_ciphers: null,
    tls_versions: null,
    alpn_protocols: null,
    create_listener_id: null,
    ...over,
  });
}

export function member(lb: LoadBalancer, poolId: string, address: string, port: number, over: Record<string, unknown> = {}): TreeItem {
  return treeItem("member", lb, { ...memberFields(poolId, address, port), vnic_type: "normal", ...over });
}

export const tree = (lb: LoadBalancer, items: TreeItem[]) => new Tree(lb, items);
