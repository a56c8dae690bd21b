// DynamoDB faults beyond the SDK's retries, in the API (OTTAVA_DYNAMODB_FAULTS, injected below the
// SDK's retry layer): a request answers 503 with Octavia's fault body, holds no lock afterwards and
// leaves nothing PENDING_*. Each faulted request goes through a second app on the same table, whose
// fault counts start at its first request; the first app (no faults) sets up and checks.
import { beforeAll, describe, expect, it } from "vitest";
import { lockAndStart, MUTABLE_STATUSES, repairStuck } from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { DynamoRepairStore, createClients } from "@ottava/db";
import { fault, inProcessApp, pick, PROJECT, SUBNET, activeLb, activePool } from "@ottava/local/testing";
import { captureOutput, jsonLines } from "@ottava/edge/testing";
import * as faults from "./support/faults";
import { LBS } from "./support/faults";

type App = Awaited<ReturnType<typeof inProcessApp>>;
let base: App;

beforeAll(async () => {
  base = await inProcessApp();
});
const nothingHeld = (lbId: string) => faults.nothingHeld(base, lbId);
const newestFlow = (lbId: string) => faults.newestFlow(base, lbId);

/** An app on the same table whose DynamoDB requests meet `faults` (counted from its first request). */
const faulty = (faults: string) => inProcessApp({ OTTAVA_TABLE_NAME: base.config.tableName, OTTAVA_DYNAMODB_FAULTS: faults });
const unavailable = (name: string) => fault(503, `The service is temporarily unavailable (${name}). Please retry the request later.`);

const members = (n: number, base3 = 10) => Array.from({ length: n }, (_, i) => ({ address: `192.0.${base3}.${i + 1}`, protocol_port: 80 }));

const live = (items: { kind: string; record: Record<string, unknown> }[], kind: string) =>
  items.filter((i) => i.kind === kind && i.record.provisioning_status !== "DELETED");

describe("API reads", () => {
  it("a fault the SDK's retries absorb is invisible: the first 3 GetItem requests fail (InternalServerError), the 4th answers", async () => {
    const lbId = (await activeLb(base)).id;
    const f = await faulty("GetItem:internal:3");
    const res = await f.call("GET", `${LBS}/${lbId}`);
    expect(pick(res)).toEqual(pick(await base.call("GET", `${LBS}/${lbId}`)));
    expect(res.status).toBe(200);
    expect(f.dynamoFaults!.injected).toHaveLength(3);
    expect(f.dynamoFaults!.attempts("GetItem")).toBe(4);
  });

  it("GET of a load balancer, every attempt throttled (ProvisionedThroughputExceededException): 503, one JSON error line with the request id", async () => {
    const lbId = (await activeLb(base)).id;
    const f = await faulty("GetItem:throttle:4");
    const lines = captureOutput();
    const res = await f.call("GET", `${LBS}/${lbId}`);
    expect(pick(res)).toEqual(unavailable("ProvisionedThroughputExceededException"));
    expect(f.dynamoFaults!.attempts("GetItem")).toBe(4);
    const logged = jsonLines(lines).filter((l) => l.message === "service unavailable");
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      level: "ERROR",
      requestId: res.headers.get("x-openstack-request-id"),
      error: "ProvisionedThroughputExceededException",
      attempts: 4,
    });
    // The faults are spent: the same app answers again.
    expect((await f.call("GET", `${LBS}/${lbId}`)).status).toBe(200);
  });

  it("a list whose Queries lose their connection on every attempt (ECONNRESET): 503", async () => {
    (await activeLb(base)).id;
    const f = await faulty("Query:drop");
    expect(pick(await f.call("GET", LBS))).toEqual(unavailable("ECONNRESET"));
    // (The list reads its index's shards at once: the first Query to have been tried 4 times answers the request.)
    expect(f.dynamoFaults!.attempts("Query")).toBeGreaterThanOrEqual(4);
    expect((await base.call("GET", LBS)).status).toBe(200);
  });
});

describe("API writes that take the lock", () => {
  it("the lock's transaction fails (InternalServerError on every attempt): 503, the LB as it was, no lock, no flow", async () => {
    const lbId = (await activeLb(base, { fields: { name: "before" } })).id;
    const flows = (await base.trail.flowTrail(lbId)).length;
    const f = await faulty("TransactWriteItems:internal:4");
    expect(pick(await f.call("PUT", `${LBS}/${lbId}`, { loadbalancer: { name: "after" } }))).toEqual(unavailable("InternalServerError"));
    await f.settle();
    const { lb } = await nothingHeld(lbId);
    expect(lb.record).toMatchObject({ name: "before", provisioning_status: "ACTIVE" });
    expect(await base.trail.flowTrail(lbId)).toHaveLength(flows);
    // Once DynamoDB answers, the same request goes through.
    expect((await f.call("PUT", `${LBS}/${lbId}`, { loadbalancer: { name: "after" } })).status).toBe(200);
    await f.settle();
    expect((await nothingHeld(lbId)).lb.record).toMatchObject({ name: "after", provisioning_status: "ACTIVE" });
  });

  it("the read after the lock fails (GetItem 2 to 5): the lock is given back, the LB restored, the trail says why; 503", async () => {
    const lbId = (await activeLb(base, { fields: { name: "before" } })).id;
    const f = await faulty("GetItem:internal:2-5");
    expect(pick(await f.call("PUT", `${LBS}/${lbId}`, { loadbalancer: { name: "after" } }))).toEqual(unavailable("InternalServerError"));
    expect(f.dynamoFaults!.injected).toHaveLength(4);
    await f.settle();
    const { lb } = await nothingHeld(lbId);
    expect(lb.record).toMatchObject({ name: "before", provisioning_status: "ACTIVE" });
    expect(await newestFlow(lbId)).toMatchObject({
      flow: "loadbalancer-update",
      outcome: "FAILED",
      reason: "the change could not be written",
      error: { error: "InternalServerError" },
    });
  });

  it("a member batch too big for one transaction: the lock's goes through, the next fails; what was written is undone, the lock and quota given back; 503", async () => {
    const lbId = (await activeLb(base)).id;
    const poolId = (await activePool(base, { lbId })).poolId;
    const usage = (await base.store.quotaUsage(PROJECT)).member ?? 0;
    // 40 new members are 120 items: the lock's transaction takes 97 of them, the rest need a second one (requests 2 to 5 fail).
    const f = await faulty("TransactWriteItems:internal:2-5");
    expect(pick(await f.call("PUT", `/v2/lbaas/pools/${poolId}/members`, { members: members(40) }))).toEqual(
      unavailable("InternalServerError"),
    );
    await f.settle();
    const { items } = await nothingHeld(lbId);
    expect(items.filter((i) => i.kind === "member").length).toBeGreaterThan(0); // the lock's transaction wrote some…
    expect(live(items, "member")).toEqual([]); // …and they were undone
    expect(live(items, "pool").map((i) => i.record.provisioning_status)).toEqual(["ACTIVE"]);
    expect((await base.store.quotaUsage(PROJECT)).member ?? 0).toBe(usage);
    expect(await newestFlow(lbId)).toMatchObject({
      flow: "member-batch-update",
      outcome: "FAILED",
      reason: "the change could not be written",
    });
    // The same batch, once DynamoDB answers.
    expect((await base.call("PUT", `/v2/lbaas/pools/${poolId}/members`, { members: members(40) })).status).toBe(202);
    await base.settle();
    expect(live((await nothingHeld(lbId)).items, "member").map((i) => i.record.provisioning_status)).toEqual(Array(40).fill("ACTIVE"));
  });

  it("when the give-back cannot be written either, housekeeping's repair moves the LB and its PENDING objects to ERROR", async () => {
    const lbId = (await activeLb(base)).id;
    const poolId = (await activePool(base, { lbId })).poolId;
    const f = await faulty("TransactWriteItems:internal:2-99");
    expect(pick(await f.call("PUT", `/v2/lbaas/pools/${poolId}/members`, { members: members(40, 11) }))).toEqual(
      unavailable("InternalServerError"),
    );
    // Still locked by an execution that never started: nothing the API could do.
    const stuck = (await base.store.getLoadBalancer(lbId))!;
    expect(stuck.record.provisioning_status).toBe("PENDING_UPDATE");
    expect(stuck.lockOwner).toMatch(/^member-batch-update-/);
    const pending = new DynamoRepairStore(createClients(base.config.dynamodbEndpoint).doc, base.config.tableName);
    const deps = {
      store: base.store,
      trail: base.trail,
      catalog: base.catalog,
      engine: base.engine,
      log: createLogger({ service: "test" }, "error"),
      metrics,
      pending,
    };
    // Not before its grace minute…
    expect((await repairStuck(deps, new Date())).repaired).not.toContain(lbId);
    // …then to ERROR, every object the change had moved to PENDING_* with it.
    expect((await repairStuck(deps, new Date(Date.now() + 61_000))).repaired).toContain(lbId);
    const { lb, items } = await nothingHeld(lbId);
    expect(lb.record.provisioning_status).toBe("ERROR");
    expect(live(items, "member").length).toBeGreaterThan(0);
    expect(new Set(live(items, "member").map((i) => i.record.provisioning_status))).toEqual(new Set(["ERROR"]));
  });

  it("a cross-pool update whose change set cannot be stored (the write inside the flow's start): the start's give-back, and 503 rather than 500", async () => {
    const lbId = (await activeLb(base)).id;
    const poolId = (await activePool(base, { lbId })).poolId;
    const f = await faulty("TransactWriteItems:internal:2-5");
    const res = await f.call("PUT", "/v2/lbaas/pools/members", { members: members(3, 12).map((m) => ({ ...m, pool_id: poolId })) });
    expect(pick(res)).toEqual(unavailable("InternalServerError"));
    await f.settle();
    const { items } = await nothingHeld(lbId);
    expect(live(items, "pool").map((i) => i.record.provisioning_status)).toEqual(["ACTIVE"]);
    expect(live(items, "member")).toEqual([]);
    expect(await newestFlow(lbId)).toMatchObject({
      flow: "member-cross-pool-update",
      outcome: "FAILED",
      reason: "the execution could not be started",
    });
  });

  it("a flow start that fails for any other reason is still the 500 it was, with the lock given back", async () => {
    const lbId = (await activeLb(base)).id;
    const engine = {
      executionArn: (flow: string, name: string) => base.engine.executionArn(flow, name),
      describe: async () => undefined,
      start: async () => Promise.reject(new Error("no such state machine")),
    };
    const deps = {
      store: base.store,
      trail: base.trail,
      catalog: base.catalog,
      engine,
      log: createLogger({ service: "test" }, "error"),
      metrics,
    };
    await expect(
      lockAndStart(deps, { lbId, flow: "loadbalancer-update", verb: "update", from: MUTABLE_STATUSES, to: "PENDING_UPDATE" }),
    ).rejects.toMatchObject({
      status: 500,
      message: "Provider 'amphora' reports error: the controller could not start the flow.",
    });
    expect((await nothingHeld(lbId)).lb.record.provisioning_status).toBe("ACTIVE");
  });

  it("a fully populated create whose second chunk of objects fails: the LB and the objects written go to ERROR, unlocked; 503; it can be deleted", async () => {
    // The LB's own transaction is request 1, the first 99 items of its tree request 2, the rest 3 to 6.
    const f = await faulty("TransactWriteItems:internal:3-6");
    const body = {
      loadbalancer: {
        name: "graph-faults",
        vip_subnet_id: SUBNET,
        listeners: [
          {
            protocol: "HTTP",
            protocol_port: 80,
            default_pool: { name: "web", protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", members: members(40, 13) },
          },
        ],
      },
    };
    expect(pick(await f.call("POST", LBS, body))).toEqual(unavailable("InternalServerError"));
    await f.settle();
    const lbId = (await base.call("GET", `${LBS}?name=graph-faults`)).body.loadbalancers[0].id as string;
    const { lb, items } = await nothingHeld(lbId);
    expect(lb.record.provisioning_status).toBe("ERROR");
    expect(items.filter((i) => i.kind === "member").length).toBeGreaterThan(0);
    expect(new Set(items.filter((i) => i.kind !== "amphora").map((i) => i.record.provisioning_status))).toEqual(new Set(["ERROR"]));
    expect(await newestFlow(lbId)).toMatchObject({
      flow: "loadbalancer-create",
      outcome: "FAILED",
      reason: "the change could not be written",
    });
    expect((await base.call("DELETE", `${LBS}/${lbId}?cascade=true`)).status).toBe(204);
    await base.settle();
    expect((await base.call("GET", `${LBS}/${lbId}`)).status).toBe(404);
  });
});
