// The objects tests start from, made one way for every test: an ACTIVE load balancer, through the API
// (the in-process app of @ottava/local/testing) or straight through the store.
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { ACTIVE, PENDING_CREATE, type Amphora, type LoadBalancer } from "@ottava/core";
import type { DynamoStore } from "../../src";

/** The project the tests act as (X-Project-Id), and the VIP subnet their load balancers use (the noop network driver takes any). */
export const PROJECT = "0a6e2c3c1b5d4e0f9a8b7c6d5e4f3a2b";
export const SUBNET = "5e6b7c5a-0b7e-4a0e-9d36-1f5b2f3a6a11";

/** What makes load balancers through Ottava's API and runs their flows to the end: the in-process app, or one like it. */
export interface ThroughApi {
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  settle(): Promise<unknown>;
  store: Pick<DynamoStore, "amphoraeOf">;
}

export interface ActiveLbOptions {
  /** The load balancer's fields: added to the POST body (through the API), or over a default record (through the store). */
  fields?: Partial<LoadBalancer> & Record<string, unknown>;
}

export interface ActiveLb {
  id: string;
  /** As the API answered it, or as written to the store. */
  loadbalancer: LoadBalancer;
  /** Its amphora (through the API; a create through the store makes none). */
  amphora: Amphora | undefined;
}

/**
 * An ACTIVE load balancer. Through the API it is POSTed on SUBNET and its create flow run to the end, so
 * it has its VIP and its amphora; through a bare store, the create is written and ended as the flow
 * would (no amphora, no driver called).
 */
export async function activeLb(on: ThroughApi, options?: ActiveLbOptions): Promise<ActiveLb & { amphora: Amphora }>;
export async function activeLb(on: DynamoStore, options?: ActiveLbOptions): Promise<ActiveLb>;
export async function activeLb(on: ThroughApi | DynamoStore, { fields = {} }: ActiveLbOptions = {}): Promise<ActiveLb> {
  if ("call" in on) {
    const res = await on.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET, ...fields } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    await on.settle();
    const loadbalancer = res.body.loadbalancer as LoadBalancer;
    const amphora = (await on.store.amphoraeOf(loadbalancer.id)).find((a) => a.status === "ALLOCATED")!;
    return { id: loadbalancer.id, loadbalancer, amphora };
  }
  const loadbalancer = loadBalancerRecord(fields);
  const owner = `create-${loadbalancer.id}`;
  await on.createLoadBalancer(loadbalancer, owner, "arn:x", undefined, {
    flow: "loadbalancer-create",
    execution: owner,
    executionArn: "arn:x",
    startedAt: new Date().toISOString(),
    subject: [],
  });
  await on.updateLoadBalancer(loadbalancer.id, owner, { provisioning_status: ACTIVE }, true);
  return { id: loadbalancer.id, loadbalancer, amphora: undefined };
}

/** A load balancer's record as a create writes it (PENDING_CREATE), `over` replacing its fields. */
export const loadBalancerRecord = (over: Partial<LoadBalancer> = {}): LoadBalancer => ({
  id: randomUUID(),
  project_id: "p1",
  name: "lb",
  description: null,
  admin_state_up: true,
  provisioning_status: PENDING_CREATE,
  operating_status: "OFFLINE",
  vip_address: "198.51.100.1",
  vip_port_id: randomUUID(),
  vip_subnet_id: null,
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
