// The amphora resource (octavia/api/v2/types/amphora.py), read-only through the API.
import type { NetworkPort } from "../drivers";
import { apiTime, octaviaFilters, type ResourceDescriptor } from "./descriptor";

/** A member port as the amphora's record keeps it. */
export interface MemberPortRecord extends NetworkPort {
  /** The execution that plugged it (its revert unplugs what it plugged). */
  plugged_by: string;
}

export interface Amphora {
  id: string;
  loadbalancer_id: string;
  /** The load balancer's project: amphorae are listed by the admin, but kept with their LB's project. */
  project_id: string;
  compute_id: string | null;
  lb_network_ip: string | null;
  vrrp_ip: string | null;
  ha_ip: string | null;
  vrrp_port_id: string | null;
  ha_port_id: string | null;
  cert_expiration: string | null;
  cert_busy: boolean;
  role: string | null;
  status: string;
  vrrp_interface: string | null;
  vrrp_id: number | null;
  vrrp_priority: number | null;
  cached_zone: string | null;
  image_id: string | null;
  compute_flavor: string | null;
  /**
   * The ports the flows plugged into the amphora for its members' networks (Octavia's
   * amphora_member_port table), each with the execution that plugged it: written under the LB's lock
   * right after the plug, read by the deltas, unplugged when the amphora goes. Not shown by the API.
   */
  member_ports?: MemberPortRecord[];
  created_at: string;
  updated_at: string | null;
}

export const amphoraDescriptor: ResourceDescriptor<Amphora> = {
  kind: "amphora",
  displayName: "Amphora",
  root: "amphora",
  collection: "amphorae",
  attributes: [
    "id",
    "loadbalancer_id",
    "compute_id",
    "lb_network_ip",
    "vrrp_ip",
    "ha_ip",
    "vrrp_port_id",
    "ha_port_id",
    "cert_expiration",
    "cert_busy",
    "role",
    "status",
    "vrrp_interface",
    "vrrp_id",
    "vrrp_priority",
    "cached_zone",
    "created_at",
    "updated_at",
    "image_id",
    "compute_flavor",
  ],
  filters: octaviaFilters(
    [
      "cached_zone",
      "cert_busy",
      "cert_expiration",
      "compute_flavor",
      "compute_id",
      "created_at",
      "ha_ip",
      "ha_port_id",
      "id",
      "image_id",
      "lb_network_ip",
      "load_balancer_id",
      "role",
      "status",
      "updated_at",
      "vrrp_id",
      "vrrp_interface",
      "vrrp_ip",
      "vrrp_port_id",
      "vrrp_priority",
    ],
    // project_id: Octavia's secondary filter, on the amphora's load balancer's project.
    { loadbalancer_id: "load_balancer_id", project_id: "load_balancer.project_id" },
  ),
  model: (a) => ({ load_balancer_id: a.loadbalancer_id, "load_balancer.project_id": a.project_id }),
  listReads: { load_balancer_id: ["loadbalancer_id"], "load_balancer.project_id": ["project_id"] },
  toResponse: (a) => ({
    id: a.id,
    loadbalancer_id: a.loadbalancer_id,
    compute_id: a.compute_id,
    lb_network_ip: a.lb_network_ip,
    vrrp_ip: a.vrrp_ip,
    ha_ip: a.ha_ip,
    vrrp_port_id: a.vrrp_port_id,
    ha_port_id: a.ha_port_id,
    cert_expiration: apiTime(a.cert_expiration),
    cert_busy: a.cert_busy,
    role: a.role,
    status: a.status,
    vrrp_interface: a.vrrp_interface,
    vrrp_id: a.vrrp_id,
    vrrp_priority: a.vrrp_priority,
    cached_zone: a.cached_zone,
    created_at: apiTime(a.created_at),
    updated_at: apiTime(a.updated_at),
    image_id: a.image_id,
    compute_flavor: a.compute_flavor,
  }),
};
