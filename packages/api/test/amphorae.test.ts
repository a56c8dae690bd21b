// Amphora actions: failover, agent configuration, delete, stats (octavia/api/v2/controllers/amphora.py).
import { beforeAll, describe, expect, it } from "vitest";
import { inProcessApp, pick, SUBNET } from "@ottava/local/testing";

let t: Awaited<ReturnType<typeof inProcessApp>>;
const fault = (status: number, faultstring: string) => ({ status, body: { faultcode: "Client", faultstring, debuginfo: null } });

async function lbWithAmphora(app = t) {
  const res = await app.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET } });
  await app.settle();
  const id = res.body.loadbalancer.id as string;
  const amp = (await app.call("GET", `/v2/octavia/amphorae?loadbalancer_id=${id}`)).body.amphorae[0];
  return { id, amp };
}

beforeAll(async () => {
  t = await inProcessApp();
});

describe("amphora failover", () => {
  it("answers 202, locks the LB and replaces the amphora", async () => {
    // Booting the replacement takes half a second, so the flow is still running when the test reads the lock.
    const slow = await inProcessApp({ OTTAVA_NOOP_LATENCY: "compute.build:500" });
    const t = slow;
    const { id, amp } = await lbWithAmphora(slow);
    const res = await t.call("PUT", `/v2/octavia/amphorae/${amp.id}/failover`);
    expect(res.status).toBe(202);
    expect(res.body).toBeUndefined();
    expect((await t.call("GET", `/v2/lbaas/loadbalancers/${id}`)).body.loadbalancer.provisioning_status).toBe("PENDING_UPDATE");
    expect((await t.call("PUT", `/v2/octavia/amphorae/${amp.id}/failover`)).status).toBe(409);
    await t.settle();
    const after = (await t.call("GET", `/v2/octavia/amphorae?loadbalancer_id=${id}`)).body.amphorae;
    expect(after).toHaveLength(1);
    expect(after[0].id).not.toBe(amp.id);
    expect(after[0]).toMatchObject({ role: "STANDALONE", status: "ALLOCATED" });
    expect((await t.call("GET", `/v2/lbaas/loadbalancers/${id}`)).body.loadbalancer.provisioning_status).toBe("ACTIVE");
    expect((await t.call("GET", `/v2/octavia/amphorae/${amp.id}`)).status).toBe(404);
  });

  it("404s an unknown amphora", async () => {
    const id = "11111111-2222-3333-4444-555555555555";
    expect(pick(await t.call("PUT", `/v2/octavia/amphorae/${id}/failover`))).toEqual(fault(404, `Amphora ${id} not found.`));
  });
});

describe("amphora configuration", () => {
  it("answers 202 without locking the LB", async () => {
    const { id, amp } = await lbWithAmphora();
    const res = await t.call("PUT", `/v2/octavia/amphorae/${amp.id}/config`);
    expect(res.status).toBe(202);
    expect((await t.call("GET", `/v2/lbaas/loadbalancers/${id}`)).body.loadbalancer.provisioning_status).toBe("ACTIVE");
    await t.settle();
  });
});

describe("amphora delete", () => {
  it("refuses an allocated amphora with 409", async () => {
    const { amp } = await lbWithAmphora();
    expect(pick(await t.call("DELETE", `/v2/octavia/amphorae/${amp.id}`))).toEqual(
      fault(409, `Amphora ${amp.id} is immutable and cannot be updated.`),
    );
  });

  it("deletes an amphora in ERROR (204), which then answers 404", async () => {
    // Deleting the instance takes a while, so PENDING_DELETE can be seen.
    const slow = await inProcessApp({ OTTAVA_NOOP_LATENCY: "compute.delete:1000" });
    const { id, amp } = await lbWithAmphora(slow);
    // An amphora the health manager found broken (as issue 6's health checks will mark it).
    expect(await slow.store.updateAmphoraIf(id, amp.id, ["ALLOCATED"], { status: "ERROR" })).toBe(true);
    expect((await slow.call("DELETE", `/v2/octavia/amphorae/${amp.id}`)).status).toBe(204);
    expect((await slow.call("GET", `/v2/octavia/amphorae/${amp.id}`)).body.amphora.status).toBe("PENDING_DELETE");
    await slow.settle();
    expect((await slow.call("GET", `/v2/octavia/amphorae/${amp.id}`)).status).toBe(404);
  });
});

describe("amphora stats", () => {
  it("404s until the amphora has reported statistics, as Octavia", async () => {
    const { amp } = await lbWithAmphora();
    expect(pick(await t.call("GET", `/v2/octavia/amphorae/${amp.id}/stats`))).toEqual(fault(404, `Amphora stats for ${amp.id} not found.`));
  });
});
