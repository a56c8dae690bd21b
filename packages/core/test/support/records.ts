// The records tests start from, as the store keeps them.
import { randomUUID } from "node:crypto";
import type { LoadBalancer } from "../../src";

/** The project the tests act as (X-Project-Id), and the VIP subnet their load balancers use (the noop network driver takes any). */
export const PROJECT = "0a6e2c3c1b5d4e0f9a8b7c6d5e4f3a2b";
export const SUBNET = "5e6b7c5a-0b7e-4a0e-9d36-1f5b2f3a6a11";

/** A member's own fields with Octavia's defaults (named null, admin up, weight 1, no backup, no subnet or monitor address). */
export const memberFields = (poolId: string, address: string, port: number) => ({
  pool_id: poolId,
  name: null,
  admin_state_up: true,
  address,
  protocol_port: port,
  weight: 1,
  backup: false,
  subnet_id: null,
  monitor_address: null,
  monitor_port: null,
});

/** A load balancer's record, ACTIVE/ONLINE with Octavia's defaults, `over` replacing its fields. */
export const loadBalancerRecord = (over: Partial<LoadBalancer> = {}): LoadBalancer => ({
  id: randomUUID(),
  project_id: PROJECT,
  name: null,
  description: null,
  admin_state_up: true,
  provisioning_status: "ACTIVE",
  operating_status: "ONLINE",
  vip_address: "198.51.100.1",
  vip_port_id: randomUUID(),
  vip_subnet_id: SUBNET,
  vip_network_id: randomUUID(),
  vip_qos_policy_id: null,
  additional_vips: [],
  provider: "amphora",
  flavor_id: null,
  availability_zone: null,
  topology: "SINGLE",
  tags: [],
  created_at: new Date().toISOString(),
  updated_at: null,
  ...over,
});
