// End to end over HTTP: the stack started as `npm start` starts it, driving a load balancer's whole life.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, waitSettled, type Stack } from "./support/stack";
import { SUBNET } from "@ottava/core/testing";

let stack: Stack;

beforeAll(async () => {
  // Pushing configuration to amphorae takes time in a real cloud; here it keeps the update flow
  // running while the 20 racing requests arrive.
  stack = await startStack(["--in-memory"], { OTTAVA_NOOP_LATENCY: "amphora.update:1500" });
});
afterAll(async () => {
  await stack?.stop();
});

describe("the local stack", () => {
  it("is ready within 15 s and serves version discovery", async () => {
    expect(stack.readyMs).toBeLessThan(15_000);
    const root = await stack.call("GET", "/");
    expect(root.body.versions.at(-1)).toMatchObject({ id: "v2.30", status: "CURRENT" });
  });

  it("drives a load balancer through create, update, failover and delete", async () => {
    const created = await stack.call("POST", "/v2.0/lbaas/loadbalancers", { loadbalancer: { name: "e2e", vip_subnet_id: SUBNET } });
    expect(created.status).toBe(201);
    expect(created.body.loadbalancer).toMatchObject({
      provisioning_status: "PENDING_CREATE",
      operating_status: "OFFLINE",
      vip_address: "198.51.100.1",
    });
    const id = created.body.loadbalancer.id;
    expect((await waitSettled(stack, id)).body.loadbalancer).toMatchObject({ provisioning_status: "ACTIVE", operating_status: "OFFLINE" });

    const amps = await stack.call("GET", `/v2/octavia/amphorae?loadbalancer_id=${id}`);
    expect(amps.body.amphorae.map((a: { role: string; status: string }) => [a.role, a.status])).toEqual([["STANDALONE", "ALLOCATED"]]);

    const updated = await stack.call("PUT", `/v2/lbaas/loadbalancers/${id}`, { loadbalancer: { description: "changed" } });
    expect(updated.status).toBe(200);
    expect(updated.body.loadbalancer.provisioning_status).toBe("PENDING_UPDATE");
    expect((await waitSettled(stack, id)).body.loadbalancer).toMatchObject({ description: "changed", provisioning_status: "ACTIVE" });

    expect((await stack.call("PUT", `/v2/lbaas/loadbalancers/${id}/failover`)).status).toBe(202);
    await waitSettled(stack, id);
    const after = await stack.call("GET", `/v2/octavia/amphorae?loadbalancer_id=${id}`);
    expect(after.body.amphorae).toHaveLength(1);
    expect(after.body.amphorae[0].id).not.toBe(amps.body.amphorae[0].id);

    const status = await stack.call("GET", `/v2/lbaas/loadbalancers/${id}/status`);
    expect(status.body.statuses.loadbalancer).toMatchObject({ id, provisioning_status: "ACTIVE" });

    expect((await stack.call("DELETE", `/v2/lbaas/loadbalancers/${id}`)).status).toBe(204);
    expect((await waitSettled(stack, id)).status).toBe(404);
    const listed = await stack.call("GET", "/v2/lbaas/loadbalancers?name=e2e");
    expect(listed.body.loadbalancers).toEqual([]);
  });

  it("accepts exactly one of 20 concurrent updates; the final state is the accepted one", async () => {
    const created = await stack.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { name: "race", vip_subnet_id: SUBNET } });
    const id = created.body.loadbalancer.id;
    await waitSettled(stack, id);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => stack.call("PUT", `/v2/lbaas/loadbalancers/${id}`, { loadbalancer: { name: `racer-${i}` } })),
    );
    const accepted = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 409);
    expect(accepted).toHaveLength(1);
    expect(refused).toHaveLength(19);
    for (const r of refused) expect(r.body.faultstring).toBe(`Load Balancer ${id} is immutable and cannot be updated.`);
    const final = await waitSettled(stack, id);
    expect(final.body.loadbalancer.name).toBe(accepted[0]!.body.loadbalancer.name);
    expect(final.body.loadbalancer.provisioning_status).toBe("ACTIVE");
  });
});

describe("a forced task failure", () => {
  let faulty: Stack;
  beforeAll(async () => {
    faulty = await startStack(["--in-memory"], { OTTAVA_NOOP_FAULTS: "compute.build" });
  });
  afterAll(async () => {
    await faulty?.stop();
  });

  it("ends in ERROR, never stuck in PENDING_*, with its amphora removed", async () => {
    const created = await faulty.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET } });
    const id = created.body.loadbalancer.id;
    const final = await waitSettled(faulty, id);
    expect(final.body.loadbalancer.provisioning_status).toBe("ERROR");
    const amps = await faulty.call("GET", `/v2/octavia/amphorae?loadbalancer_id=${id}`);
    expect(amps.body.amphorae).toEqual([]);
    // From ERROR it can still be deleted.
    expect((await faulty.call("DELETE", `/v2/lbaas/loadbalancers/${id}`)).status).toBe(204);
    expect((await waitSettled(faulty, id)).status).toBe(404);
  });
});
