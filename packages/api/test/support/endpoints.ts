// The endpoints that take a body, with a body each accepts, and the objects their paths name: shared by
// the bad-input tests (malformed.test.ts, property.test.ts).
import { expect } from "vitest";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import type * as z from "zod";
import * as core from "@ottava/core";
import { createClients } from "@ottava/db";
import { SUBNET, type inProcessApp } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;

/** The ids of the fixtures (createFixtures): lb, listener, pool, pool2, member, hm, l7policy, l7rule, flavorprofile, flavor, azprofile. */
export const ids: Record<string, string> = {};

export interface Endpoint {
  name: string;
  method: "POST" | "PUT";
  path: () => string;
  root: string;
  schema: z.ZodObject;
  /** A body the endpoint accepts (the probes replace one field at a time). */
  valid: () => Record<string, unknown>;
  /** The root holds a list of such objects (member batch update). */
  list?: boolean;
}

/** A body schema's object (some resources wrap theirs in a pre-processing pipe). */
function schema(name: string): z.ZodObject {
  let s = (core as unknown as Record<string, z.ZodType>)[name]!;
  while (!("shape" in s)) s = (s as unknown as { def: { out: z.ZodType } }).def.out;
  return s as z.ZodObject;
}

export const ENDPOINTS: Endpoint[] = [
  {
    name: "loadbalancer create",
    method: "POST",
    path: () => "/v2/lbaas/loadbalancers",
    root: "loadbalancer",
    schema: schema("LoadBalancerPost"),
    valid: () => ({ vip_subnet_id: SUBNET }),
  },
  {
    name: "loadbalancer update",
    method: "PUT",
    path: () => `/v2/lbaas/loadbalancers/${ids.lb}`,
    root: "loadbalancer",
    schema: schema("LoadBalancerPut"),
    valid: () => ({}),
  },
  {
    name: "listener create",
    method: "POST",
    path: () => "/v2/lbaas/listeners",
    root: "listener",
    schema: schema("ListenerPost"),
    valid: () => ({ loadbalancer_id: ids.lb, protocol: "HTTP", protocol_port: 8080 }),
  },
  {
    name: "listener update",
    method: "PUT",
    path: () => `/v2/lbaas/listeners/${ids.listener}`,
    root: "listener",
    schema: schema("ListenerPut"),
    valid: () => ({ name: "x" }),
  },
  {
    name: "pool create",
    method: "POST",
    path: () => "/v2/lbaas/pools",
    root: "pool",
    schema: schema("PoolPost"),
    valid: () => ({ loadbalancer_id: ids.lb, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" }),
  },
  {
    name: "pool update",
    method: "PUT",
    path: () => `/v2/lbaas/pools/${ids.pool}`,
    root: "pool",
    schema: schema("PoolPut"),
    valid: () => ({ name: "x" }),
  },
  {
    name: "member create",
    method: "POST",
    path: () => `/v2/lbaas/pools/${ids.pool}/members`,
    root: "member",
    schema: schema("MemberPost"),
    valid: () => ({ address: "192.0.2.77", protocol_port: 80 }),
  },
  {
    name: "member update",
    method: "PUT",
    path: () => `/v2/lbaas/pools/${ids.pool}/members/${ids.member}`,
    root: "member",
    schema: schema("MemberPut"),
    valid: () => ({ name: "x" }),
  },
  {
    name: "member batch update",
    method: "PUT",
    path: () => `/v2/lbaas/pools/${ids.pool}/members`,
    root: "members",
    list: true,
    schema: schema("MemberPost"),
    valid: () => ({ address: "192.0.2.78", protocol_port: 80 }),
  },
  {
    name: "cross-pool member update",
    method: "PUT",
    path: () => "/v2/lbaas/pools/members",
    root: "members",
    list: true,
    schema: schema("CrossPoolMember"),
    valid: () => ({ pool_id: ids.pool, address: "192.0.2.79", protocol_port: 80 }),
  },
  {
    name: "health monitor create",
    method: "POST",
    path: () => "/v2/lbaas/healthmonitors",
    root: "healthmonitor",
    schema: schema("HealthMonitorPost"),
    valid: () => ({ pool_id: ids.pool2, type: "HTTP", delay: 5, timeout: 3, max_retries: 3 }),
  },
  {
    name: "health monitor update",
    method: "PUT",
    path: () => `/v2/lbaas/healthmonitors/${ids.hm}`,
    root: "healthmonitor",
    schema: schema("HealthMonitorPut"),
    valid: () => ({ name: "x" }),
  },
  {
    name: "l7policy create",
    method: "POST",
    path: () => "/v2/lbaas/l7policies",
    root: "l7policy",
    schema: schema("L7PolicyPost"),
    valid: () => ({ listener_id: ids.listener, action: "REJECT" }),
  },
  {
    name: "l7policy update",
    method: "PUT",
    path: () => `/v2/lbaas/l7policies/${ids.l7policy}`,
    root: "l7policy",
    schema: schema("L7PolicyPut"),
    valid: () => ({ name: "x" }),
  },
  {
    name: "l7rule create",
    method: "POST",
    path: () => `/v2/lbaas/l7policies/${ids.l7policy}/rules`,
    root: "rule",
    schema: schema("L7RulePost"),
    valid: () => ({ type: "PATH", compare_type: "STARTS_WITH", value: "/x" }),
  },
  {
    name: "l7rule update",
    method: "PUT",
    path: () => `/v2/lbaas/l7policies/${ids.l7policy}/rules/${ids.l7rule}`,
    root: "rule",
    schema: schema("L7RulePut"),
    valid: () => ({ value: "/y" }),
  },
  {
    name: "flavor profile create",
    method: "POST",
    path: () => "/v2/lbaas/flavorprofiles",
    root: "flavorprofile",
    schema: schema("FlavorProfilePost"),
    valid: () => ({ name: "fp", provider_name: "amphora", flavor_data: "{}" }),
  },
  {
    name: "flavor profile update",
    method: "PUT",
    path: () => `/v2/lbaas/flavorprofiles/${ids.flavorprofile}`,
    root: "flavorprofile",
    schema: schema("FlavorProfilePut"),
    valid: () => ({}),
  },
  {
    name: "flavor create",
    method: "POST",
    path: () => "/v2/lbaas/flavors",
    root: "flavor",
    schema: schema("FlavorPost"),
    valid: () => ({ name: "f2", flavor_profile_id: ids.flavorprofile }),
  },
  {
    name: "flavor update",
    method: "PUT",
    path: () => `/v2/lbaas/flavors/${ids.flavor}`,
    root: "flavor",
    schema: schema("FlavorPut"),
    valid: () => ({}),
  },
  {
    name: "availability zone profile create",
    method: "POST",
    path: () => "/v2/lbaas/availabilityzoneprofiles",
    root: "availability_zone_profile",
    schema: schema("AvailabilityZoneProfilePost"),
    valid: () => ({ name: "azp", provider_name: "amphora", availability_zone_data: "{}" }),
  },
  {
    name: "availability zone create",
    method: "POST",
    path: () => "/v2/lbaas/availabilityzones",
    root: "availability_zone",
    schema: schema("AvailabilityZonePost"),
    valid: () => ({ name: "az2", availability_zone_profile_id: ids.azprofile }),
  },
  {
    name: "availability zone update",
    method: "PUT",
    path: () => "/v2/lbaas/availabilityzones/az1",
    root: "availability_zone",
    schema: schema("AvailabilityZonePut"),
    valid: () => ({}),
  },
];

export async function tableSnapshot(t: App): Promise<string[]> {
  const { doc } = createClients(t.config.dynamodbEndpoint);
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await doc.send(new ScanCommand({ TableName: t.config.tableName, ExclusiveStartKey: start, ConsistentRead: true }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items.map((i) => JSON.stringify(i)).sort();
}

async function created(t: App, path: string, root: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.call("POST", path, { [root]: body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await t.settle();
  return res.body[root].id;
}

/** The objects the endpoints' paths and valid bodies name, created through the API (ids in `ids`). */
export async function createFixtures(t: App): Promise<void> {
  ids.lb = await created(t, "/v2/lbaas/loadbalancers", "loadbalancer", { vip_subnet_id: SUBNET });
  ids.listener = await created(t, "/v2/lbaas/listeners", "listener", { loadbalancer_id: ids.lb, protocol: "HTTP", protocol_port: 80 });
  ids.pool = await created(t, "/v2/lbaas/pools", "pool", { loadbalancer_id: ids.lb, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" });
  ids.pool2 = await created(t, "/v2/lbaas/pools", "pool", { loadbalancer_id: ids.lb, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" });
  ids.member = await created(t, `/v2/lbaas/pools/${ids.pool}/members`, "member", { address: "192.0.2.10", protocol_port: 80 });
  ids.hm = await created(t, "/v2/lbaas/healthmonitors", "healthmonitor", {
    pool_id: ids.pool,
    type: "HTTP",
    delay: 5,
    timeout: 3,
    max_retries: 3,
  });
  ids.l7policy = await created(t, "/v2/lbaas/l7policies", "l7policy", { listener_id: ids.listener, action: "REJECT" });
  ids.l7rule = await created(t, `/v2/lbaas/l7policies/${ids.l7policy}/rules`, "rule", {
    type: "PATH",
    compare_type: "STARTS_WITH",
    value: "/a",
  });
  ids.flavorprofile = await created(t, "/v2/lbaas/flavorprofiles", "flavorprofile", {
    name: "fp",
    provider_name: "amphora",
    flavor_data: "{}",
  });
  ids.flavor = await created(t, "/v2/lbaas/flavors", "flavor", { name: "f1", flavor_profile_id: ids.flavorprofile });
  ids.azprofile = await created(t, "/v2/lbaas/availabilityzoneprofiles", "availability_zone_profile", {
    name: "azp",
    provider_name: "amphora",
    availability_zone_data: "{}",
  });
  await created(t, "/v2/lbaas/availabilityzones", "availability_zone", { name: "az1", availability_zone_profile_id: ids.azprofile });
}
