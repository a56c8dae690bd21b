// DynamoDB faults beyond the SDK's retries, in the flows (OTTAVA_DYNAMODB_FAULTS rules naming a task,
// `<Operation|*>@<task>:…`, injected below the SDK's retry layer): the task fails with TransientError,
// which the flow's Retry retries (as Step Functions retries a Lambda's error), so a passing outage
// is invisible; one that outlasts the retries ends in the flow's Catch and its reverts, the objects
// ERROR or back to ACTIVE as Octavia's reverts leave them, never PENDING_*. The real ASL in the local
// runner over DynamoDB Local; each test's faulted app shares the setup app's table.
import { beforeAll, describe, it } from "vitest";
import { repairStuck } from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { DynamoRepairStore, createClients } from "@ottava/db";
import { inProcessApp, SUBNET, activeLb, activePool } from "@ottava/local/testing";
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
const faulty = (faults: string, env: Record<string, string> = {}) =>
  inProcessApp({ OTTAVA_TABLE_NAME: base.config.tableName, OTTAVA_DYNAMODB_FAULTS: faults, ...env });

/** The faults injected under one task's label. */
const injectedIn = (f: App, task: string) => f.dynamoFaults!.injected.filter((i) => i.label === task);

describe("a task meets DynamoDB faults beyond the SDK's retries; the flow's Retry absorbs them", () => {
  it.concurrent(
    "a create flow's task (createAmphoraeInDB: its amphora write loses the connection 4 times): ACTIVE, the retry logged",
    async ({ expect }) => {
      const f = await faulty("TransactWriteItems@createAmphoraeInDB:drop:4", { OTTAVA_LOG_LEVEL: "warn" });
      const lines = captureOutput();
      const res = await f.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET } });
      expect(res.status).toBe(201);
      const lbId = res.body.loadbalancer.id as string;
      await f.settle();
      const { lb, items } = await nothingHeld(lbId);
      expect(lb.record.provisioning_status).toBe("ACTIVE");
      expect(items.filter((i) => i.kind === "amphora").map((i) => i.record.status)).toEqual(["ALLOCATED"]);
      // The first attempt's write was tried 4 times by the SDK and failed; the flow's second attempt wrote it.
      expect(injectedIn(f, "createAmphoraeInDB")).toHaveLength(4);
      expect(f.dynamoFaults!.attempts("TransactWriteItems", "createAmphoraeInDB")).toBe(5);
      expect(await newestFlow(lbId)).toMatchObject({ flow: "loadbalancer-create", outcome: "SUCCEEDED" });
      const retried = jsonLines(lines).filter(
        (l) => l.message === "task failed: service unavailable; the flow retries it" && l.lbId === lbId,
      );
      expect(retried).toEqual([
        expect.objectContaining({
          level: "WARN",
          task: "createAmphoraeInDB",
          execution: `create-${lbId}`,
          error: "ECONNRESET",
          attempts: 4,
        }),
      ]);
    },
  );

  it.concurrent("an update's task (updateAmphoraeConfig: its tree Query throttled 4 times): ACTIVE with the update", async ({ expect }) => {
    const lbId = (await activeLb(base)).id;
    const f = await faulty("Query@updateAmphoraeConfig:throttle:4");
    expect((await f.call("PUT", `${LBS}/${lbId}`, { loadbalancer: { name: "renamed" } })).status).toBe(200);
    await f.settle();
    const { lb } = await nothingHeld(lbId);
    expect(lb.record).toMatchObject({ name: "renamed", provisioning_status: "ACTIVE" });
    expect(injectedIn(f, "updateAmphoraeConfig").map((i) => i.fault)).toEqual(["throttle", "throttle", "throttle", "throttle"]);
    expect(await newestFlow(lbId)).toMatchObject({ flow: "loadbalancer-update", outcome: "SUCCEEDED" });
  });

  it.concurrent("a delete's task (deleteAmphorae: its amphora write fails 4 times): DELETED", async ({ expect }) => {
    const lbId = (await activeLb(base)).id;
    const f = await faulty("TransactWriteItems@deleteAmphorae:internal:4");
    expect((await f.call("DELETE", `${LBS}/${lbId}`)).status).toBe(204);
    await f.settle();
    expect((await base.call("GET", `${LBS}/${lbId}`)).status).toBe(404);
    const { lb, items } = await base.store.tree(lbId);
    expect(lb!.record.provisioning_status).toBe("DELETED");
    expect(lb!.lockOwner).toBeUndefined();
    expect(items.filter((i) => i.kind === "amphora").map((i) => i.record.status)).toEqual(["DELETED"]);
    expect(injectedIn(f, "deleteAmphorae")).toHaveLength(4);
    expect(await newestFlow(lbId)).toMatchObject({ flow: "loadbalancer-delete", outcome: "SUCCEEDED" });
  });

  it.concurrent(
    "the finish writes (finishChange: the write that releases the lock fails 4 times, after its objects' and the trail's): ACTIVE, one trail end",
    async ({ expect }) => {
      const lbId = (await activeLb(base)).id;
      // finishChange's UpdateItems: 1 the trail's end, 2 to 5 the LB's release; the retry writes both again (the trail's end once).
      const f = await faulty("UpdateItem@finishChange:internal:2-5");
      const res = await f.call("POST", "/v2/lbaas/listeners", { listener: { loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80 } });
      expect(res.status).toBe(201);
      await f.settle();
      const { lb, items } = await nothingHeld(lbId);
      expect(lb.record.provisioning_status).toBe("ACTIVE");
      expect(items.find((i) => i.record.id === res.body.listener.id)?.record.provisioning_status).toBe("ACTIVE");
      expect(injectedIn(f, "finishChange")).toHaveLength(4);
      expect(await newestFlow(lbId)).toMatchObject({ flow: "listener-create", outcome: "SUCCEEDED" });
    },
  );

  it.concurrent(
    "the cross-pool chunk task (applyMemberChunk: the member writes lose the connection 4 times): the members ACTIVE",
    async ({ expect }) => {
      const lbId = (await activeLb(base)).id;
      const poolId = (await activePool(base, { lbId })).poolId;
      const f = await faulty("TransactWriteItems@applyMemberChunk:drop:4");
      const members = [1, 2, 3].map((i) => ({ pool_id: poolId, address: `192.0.20.${i}`, protocol_port: 80 }));
      expect((await f.call("PUT", "/v2/lbaas/pools/members", { members })).status).toBe(202);
      await f.settle();
      const { items } = await nothingHeld(lbId);
      expect(items.filter((i) => i.kind === "member").map((i) => i.record.provisioning_status)).toEqual(["ACTIVE", "ACTIVE", "ACTIVE"]);
      expect(injectedIn(f, "applyMemberChunk")).toHaveLength(4);
      expect(await newestFlow(lbId)).toMatchObject({ flow: "member-cross-pool-update", outcome: "SUCCEEDED" });
    },
  );
});

describe("faults that outlast the flow's retries end in its Catch, never PENDING_*", () => {
  it.concurrent(
    "a listener create whose config task always fails, and whose fail writes fail once: the listener ERROR, the LB ACTIVE",
    async ({ expect }) => {
      const lbId = (await activeLb(base)).id;
      const f = await faulty("*@updateAmphoraeConfig:internal, TransactWriteItems@failChange:internal:4");
      const res = await f.call("POST", "/v2/lbaas/listeners", { listener: { loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 81 } });
      expect(res.status).toBe(201);
      await f.settle();
      const { lb, items } = await nothingHeld(lbId);
      expect(lb.record.provisioning_status).toBe("ACTIVE");
      expect(items.find((i) => i.record.id === res.body.listener.id)?.record.provisioning_status).toBe("ERROR");
      // Three attempts (the flow's Retry: 2 more), each's first request tried 4 times by the SDK; then the failure handler, retried once.
      expect(injectedIn(f, "updateAmphoraeConfig")).toHaveLength(12);
      expect(injectedIn(f, "failChange")).toHaveLength(4);
      const flow = await newestFlow(lbId);
      expect(flow).toMatchObject({
        flow: "listener-create",
        outcome: "FAILED",
        failed_step: "UpdateAmphoraeConfig",
        error: { error: "TransientError" },
      });
      expect(flow.error!.cause).toContain("InternalServerError");
    },
  );

  it.concurrent("a load-balancer create whose amphora write always fails: reverted, the LB ERROR", async ({ expect }) => {
    const f = await faulty("TransactWriteItems@createAmphoraeInDB:internal");
    const res = await f.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET } });
    expect(res.status).toBe(201);
    const lbId = res.body.loadbalancer.id as string;
    await f.settle();
    const { lb, items } = await nothingHeld(lbId);
    expect(lb.record.provisioning_status).toBe("ERROR");
    expect(items.filter((i) => i.kind === "amphora" && i.record.status !== "DELETED")).toEqual([]);
    expect(await newestFlow(lbId)).toMatchObject({
      flow: "loadbalancer-create",
      outcome: "FAILED",
      failed_step: "CreateAmphoraeInDB",
      error: { error: "TransientError" },
    });
  });

  it.concurrent(
    "when even the failure handler cannot write, the execution fails holding the lock, and housekeeping's repair moves all to ERROR",
    async ({ expect }) => {
      const lbId = (await activeLb(base)).id;
      const f = await faulty("*@updateAmphoraeConfig:internal, *@failChange:internal");
      const res = await f.call("POST", "/v2/lbaas/listeners", { listener: { loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 82 } });
      expect(res.status).toBe(201);
      await f.settle();
      const stuck = (await base.store.getLoadBalancer(lbId))!;
      expect(stuck.record.provisioning_status).toBe("PENDING_UPDATE");
      expect((await f.engine.describe(stuck.executionArn!))?.status).toBe("FAILED");
      expect(injectedIn(f, "failChange")).toHaveLength(12);
      // Once DynamoDB answers again: the repair pass (every OTTAVA_CLEANUP_INTERVAL) after its grace minute.
      const pending = new DynamoRepairStore(createClients(base.config.dynamodbEndpoint).doc, base.config.tableName);
      const deps = {
        store: base.store,
        trail: base.trail,
        catalog: base.catalog,
        engine: f.engine,
        log: createLogger({ service: "test" }, "error"),
        metrics,
        pending,
      };
      expect((await repairStuck(deps, new Date(Date.now() + 61_000))).repaired).toContain(lbId);
      const { lb, items } = await nothingHeld(lbId);
      expect(lb.record.provisioning_status).toBe("ERROR");
      expect(items.find((i) => i.record.id === res.body.listener.id)?.record.provisioning_status).toBe("ERROR");
      expect(await newestFlow(lbId)).toMatchObject({ flow: "listener-create", outcome: "REPAIRED" });
    },
  );
});
