// Bad input on every endpoint that takes a body: malformed JSON, unknown fields, and for every field
// of the schema an oversized string (5000 characters: longer than any field allows, not an enum value, not a
// number, UUID, list or object) and a nested object (a wrong type for every scalar field).
// Each must answer 400 with Octavia's fault body and leave the table exactly as it was.
import { beforeAll, describe, expect, it } from "vitest";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import type { z } from "zod";
import * as core from "@ottava/core";
import { createClients } from "@ottava/db";
import { SUBNET, inProcessApp } from "../../../test/support/app";

let t: Awaited<ReturnType<typeof inProcessApp>>;
const ids: Record<string, string> = {};

interface Endpoint {
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

const schema = (name: string) => (core as unknown as Record<string, z.ZodObject>)[name]!;

const ENDPOINTS: Endpoint[] = [
  { name: "loadbalancer create", method: "POST", path: () => "/v2/lbaas/loadbalancers", root: "loadbalancer", schema: schema("LoadBalancerPost"), valid: () => ({ vip_subnet_id: SUBNET }) },
  { name: "loadbalancer update", method: "PUT", path: () => `/v2/lbaas/loadbalancers/${ids.lb}`, root: "loadbalancer", schema: schema("LoadBalancerPut"), valid: () => ({}) },
  {
    name: "listener create",
    method: "POST",
    path: () => "/v2/lbaas/listeners",
    root: "listener",
    schema: schema("ListenerPost"),
    valid: () => ({ loadbalancer_id: ids.lb, protocol: "HTTP", protocol_port: 8080 }),
  },
  { name: "listener update", method: "PUT", path: () => `/v2/lbaas/listeners/${ids.listener}`, root: "listener", schema: schema("ListenerPut"), valid: () => ({ name: "x" }) },
  {
    name: "pool create",
    method: "POST",
    path: () => "/v2/lbaas/pools",
    root: "pool",
    schema: schema("PoolPost"),
    valid: () => ({ loadbalancer_id: ids.lb, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" }),
  },
  { name: "pool update", method: "PUT", path: () => `/v2/lbaas/pools/${ids.pool}`, root: "pool", schema: schema("PoolPut"), valid: () => ({ name: "x" }) },
  {
    name: "member create",
    method: "POST",
    path: () => `/v2/lbaas/pools/${ids.pool}/members`,
    root: "member",
    schema: schema("MemberPost"),
    valid: () => ({ address: "192.0.2.77", protocol_port: 80 }),
  },
  { name: "member update", method: "PUT", path: () => `/v2/lbaas/pools/${ids.pool}/members/${ids.member}`, root: "member", schema: schema("MemberPut"), valid: () => ({ name: "x" }) },
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
];

async function tableSnapshot(): Promise<string[]> {
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

async function created(path: string, root: string, body: Record<string, unknown>): Promise<string> {
  const res = await t.call("POST", path, { [root]: body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await t.settle();
  return res.body[root].id;
}

beforeAll(async () => {
  t = await inProcessApp();
  ids.lb = await created("/v2/lbaas/loadbalancers", "loadbalancer", { vip_subnet_id: SUBNET });
  ids.listener = await created("/v2/lbaas/listeners", "listener", { loadbalancer_id: ids.lb, protocol: "HTTP", protocol_port: 80 });
  ids.pool = await created("/v2/lbaas/pools", "pool", { loadbalancer_id: ids.lb, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" });
  ids.pool2 = await created("/v2/lbaas/pools", "pool", { loadbalancer_id: ids.lb, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" });
  ids.member = await created(`/v2/lbaas/pools/${ids.pool}/members`, "member", { address: "192.0.2.10", protocol_port: 80 });
  ids.hm = await created("/v2/lbaas/healthmonitors", "healthmonitor", { pool_id: ids.pool, type: "HTTP", delay: 5, timeout: 3, max_retries: 3 });
});

function expectFault(res: { status: number; body: unknown }, what: string) {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(400);
  expect(res.body, what).toEqual({ faultcode: "Client", faultstring: expect.any(String), debuginfo: null });
}

describe.each(ENDPOINTS)("$name", (e) => {
  const wrap = (inner: Record<string, unknown>) => ({ [e.root]: e.list ? [inner] : inner });

  it("answers every bad input with a 400 fault and changes nothing", async () => {
    const before = await tableSnapshot();
    expectFault(await t.call(e.method, e.path(), `{"${e.root}": {`), "malformed JSON");
    expectFault(await t.call(e.method, e.path(), wrap({ ...e.valid(), no_such_field: 1 })), "unknown field");
    expectFault(await t.call(e.method, e.path(), { ...wrap(e.valid()), bogus_root: {} }), "unknown root field");
    for (const field of Object.keys(e.schema.shape)) {
      expectFault(await t.call(e.method, e.path(), wrap({ ...e.valid(), [field]: "x".repeat(5000) })), `${field}: oversized string`);
      expectFault(await t.call(e.method, e.path(), wrap({ ...e.valid(), [field]: { nested: [1, 2] } })), `${field}: nested object`);
    }
    const after = await tableSnapshot();
    expect(after.filter((i) => !before.includes(i)), "items written or changed").toEqual([]);
    expect(after.length, "items count").toBe(before.length);
  });
});
