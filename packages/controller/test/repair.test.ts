// Stuck-state repair over DynamoDB Local and the local runner: an LB whose execution is lost (a
// runner that never heard of it: no journal holds it) goes to ERROR with its PENDING objects, and the
// flow trail says why; an LB whose execution runs, or is journaled as running (a restarted runner
// continues it), is left alone.
import { describe, expect, it } from "vitest";
import { repairStuck } from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { DynamoRepairStore, createClients, createExecutionJournal } from "@ottava/db";
import { createTaskContext } from "@ottava/controller";
import { LocalWorkflowEngine } from "@ottava/local/runner";
import { inProcessApp, SUBNET } from "@ottava/local/testing";

describe("stuck-state repair", () => {
  it("moves an LB whose execution is gone to ERROR, records why, and leaves running ones alone", async () => {
    // amphora.update takes 20 s: the update's flow is still running when the repair looks.
    const t = await inProcessApp({ OTTAVA_NOOP_LATENCY: "amphora.update:20000" }, { durable: true });
    const log = createLogger({ service: "test" }, "error");
    const created = await t.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET } });
    const lbId = created.body.loadbalancer.id as string;
    for (let i = 0; i < 400 && (await t.store.getLoadBalancer(lbId))?.record.provisioning_status !== "ACTIVE"; i++)
      await new Promise((r) => setTimeout(r, 100));
    const listener = await t.call("POST", "/v2/lbaas/listeners", {
      listener: { loadbalancer_id: lbId, protocol: "TCP", protocol_port: 80 },
    });
    expect(listener.status).toBe(201);
    expect((await t.store.getLoadBalancer(lbId))?.record.provisioning_status).toBe("PENDING_UPDATE");

    const pending = new DynamoRepairStore(createClients(t.config.dynamodbEndpoint).doc, t.config.tableName);
    const later = new Date(Date.now() + 120_000);
    // The runner that started it knows it is running: nothing to repair.
    expect(
      (await repairStuck({ store: t.store, trail: t.trail, catalog: t.catalog, engine: t.engine, log, metrics, pending }, later)).repaired,
    ).toEqual([]);
    // A runner started again on the same table (as `npm start` after a crash) finds it RUNNING in the
    // journal, before it has even continued it: nothing to repair, however old the lock.
    const again = new LocalWorkflowEngine(createTaskContext(t.config, t), log, { journal: createExecutionJournal(t.config) });
    expect(
      (await repairStuck({ store: t.store, trail: t.trail, catalog: t.catalog, engine: again, log, metrics, pending }, later)).repaired,
    ).toEqual([]);
    // Within the grace period nothing is repaired either, whatever the engine says.
    const restarted = new LocalWorkflowEngine(createTaskContext(t.config, t), log, 1);
    expect(
      (await repairStuck({ store: t.store, trail: t.trail, catalog: t.catalog, engine: restarted, log, metrics, pending }, new Date()))
        .repaired,
    ).toEqual([]);

    // A runner that never heard of it (the execution truly vanished: no journal holds it): repaired.
    const result = await repairStuck(
      { store: t.store, trail: t.trail, catalog: t.catalog, engine: restarted, log, metrics, pending },
      later,
    );
    expect(result.repaired).toEqual([lbId]);
    const lb = await t.store.getLoadBalancer(lbId);
    expect(lb?.record.provisioning_status).toBe("ERROR");
    expect(lb?.lockOwner).toBeUndefined();
    const shown = await t.call("GET", `/v2/lbaas/listeners/${listener.body.listener.id}`);
    expect(shown.body.listener.provisioning_status).toBe("ERROR");
    const trail = await t.call("GET", `/v2/lbaas/loadbalancers/${lbId}/flows`);
    expect(trail.body.flows[0]).toMatchObject({ flow: "listener-create", outcome: "REPAIRED" });
    expect(trail.body.flows[0].reason).toMatch(/execution not found/);
    // Nothing is left to repair, and the LB can be deleted again.
    expect(
      (await repairStuck({ store: t.store, trail: t.trail, catalog: t.catalog, engine: restarted, log, metrics, pending }, later)).repaired,
    ).toEqual([]);
    expect((await t.call("DELETE", `/v2/lbaas/loadbalancers/${lbId}?cascade=true`)).status).toBe(204);
  }, 90_000);
});
