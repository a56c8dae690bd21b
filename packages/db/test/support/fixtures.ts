// The objects tests start from, made one way for every test: an ACTIVE load balancer, through the API
// (the in-process app of @ottava/local/testing) or straight through the store.
import { expect } from "vitest";
import { ACTIVE, PENDING_CREATE, type Amphora, type LoadBalancer } from "@ottava/core";
import { loadBalancerRecord, SUBNET } from "@ottava/core/testing";
import type { DynamoStore } from "../../src";

/**
 * An ACTIVE pool (round robin, of `protocol`, HTTP by default) made through the API on `lbId`, or on a
 * new ACTIVE load balancer.
 */
export async function activePool(on: ThroughApi, { lbId, protocol = "HTTP" }: { lbId?: string; protocol?: string } = {}) {
  const lb = lbId ?? (await activeLb(on)).id;
  const res = await on.call("POST", "/v2/lbaas/pools", { pool: { loadbalancer_id: lb, protocol, lb_algorithm: "ROUND_ROBIN" } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await on.settle();
  return { lbId: lb, poolId: res.body.pool.id as string };
}

/**
 * A fully populated create's HTTP listener on port 80 (with `listener`'s fields), its default pool
 * "web" (HTTP, round robin) with `pool`'s fields: its members, its monitor.
 */
export const webListener = (pool: Record<string, unknown>, listener: Record<string, unknown> = {}): Record<string, any> => ({
  protocol: "HTTP",
  protocol_port: 80,
  ...listener,
  default_pool: { name: "web", protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", ...pool },
});

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
 * it has its VIP and its amphora; through a bare store, a record (project "p1", name "lb" unless
 * `fields` say otherwise) is created and made ACTIVE as the flow would (no amphora, no driver called).
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
  const loadbalancer = loadBalancerRecord({ project_id: "p1", name: "lb", ...fields });
  const owner = `create-${loadbalancer.id}`;
  await on.createLoadBalancer({ ...loadbalancer, provisioning_status: PENDING_CREATE }, owner, "arn:x", undefined, {
    flow: "loadbalancer-create",
    execution: owner,
    executionArn: "arn:x",
    startedAt: loadbalancer.created_at,
    subject: [],
  });
  await on.updateLoadBalancer(loadbalancer.id, owner, { provisioning_status: ACTIVE }, true);
  return { id: loadbalancer.id, loadbalancer: { ...loadbalancer, provisioning_status: ACTIVE }, amphora: undefined };
}
