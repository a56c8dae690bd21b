// The flow trail (an Ottava extension): GET /v2/lbaas/loadbalancers/{id}/flows, over DynamoDB Local
// and the real ASL in the local runner.
import { beforeAll, describe, expect, it } from "vitest";
import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import {
  Fault,
  defaultPolicy,
  failedFlowEnd,
  getFlowTrail,
  lockAndStart,
  markUnavailable,
  MUTABLE_STATUSES,
  sanitizeCause,
  tokenContext,
  type FlowTrailEntry,
  type WorkflowEngine,
} from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { DynamoFlowTrail, createClients } from "@ottava/db";
import { PROJECT, SUBNET, fault, inProcessApp, pick, activeLb } from "@ottava/local/testing";
import { captureMetrics } from "@ottava/edge/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
const LBS = "/v2/lbaas/loadbalancers";
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const log = createLogger({ service: "test" }, "error");

let t: App;

const flows = async (app: App, id: string, prefix = "/v2") => {
  const res = await app.call("GET", `${prefix}/lbaas/loadbalancers/${id}/flows`);
  expect(res.status).toBe(200);
  return res.body.flows as FlowTrailEntry[];
};

beforeAll(async () => {
  t = await inProcessApp();
});

describe("the flow trail of a load balancer", () => {
  it("records each flow run, newest first, with its start, end and outcome (and /v2.0 answers the same)", async () => {
    const id = (await activeLb(t)).id;
    expect((await t.call("PUT", `${LBS}/${id}`, { loadbalancer: { name: "renamed" } })).status).toBe(200);
    await t.settle();
    const listener = await t.call("POST", "/v2/lbaas/listeners", {
      listener: { loadbalancer_id: id, protocol: "HTTP", protocol_port: 80 },
    });
    expect(listener.status).toBe(201);
    await t.settle();

    const trail = await flows(t, id);
    expect(trail.map((f) => [f.flow, f.outcome])).toEqual([
      ["listener-create", "SUCCEEDED"],
      ["loadbalancer-update", "SUCCEEDED"],
      ["loadbalancer-create", "SUCCEEDED"],
    ]);
    const [lc, update, create] = trail as [FlowTrailEntry, FlowTrailEntry, FlowTrailEntry];
    expect(create).toEqual({
      flow: "loadbalancer-create",
      execution: `create-${id}`,
      execution_arn: t.engine.executionArn("loadbalancer-create", `create-${id}`),
      started_at: expect.stringMatching(ISO),
      ended_at: expect.stringMatching(ISO),
      outcome: "SUCCEEDED",
      reason: null,
      failed_step: null,
      error: null,
      subject: [{ kind: "loadbalancer", id }],
    });
    expect(update).toMatchObject({ execution: `update-${id}-v2`, subject: [{ kind: "loadbalancer", id }], failed_step: null, error: null });
    expect(lc.subject).toEqual([{ kind: "listener", id: listener.body.listener.id }]);
    for (const f of trail) expect(f.ended_at! >= f.started_at, f.execution).toBe(true);
    expect(update.started_at >= create.ended_at!).toBe(true);
    // The LB records the last execution too, as before; the trail is not part of its tree.
    expect((await t.store.getLoadBalancer(id))!.executionArn).toBe(lc.execution_arn);
    expect((await t.store.tree(id)).items.map((i) => i.kind)).toEqual(["amphora", "listener"]);
    expect(await flows(t, id, "/v2.0")).toEqual(trail);
  });

  it("is measured: FlowsStarted, then FlowsSucceeded and FlowDuration (its start to its end), dimension flow", async () => {
    const out = captureMetrics();
    const id = (await activeLb(t)).id;
    const [create] = await flows(t, id);
    const of = (name: string) =>
      out.emitted(name).map((m) => [m._aws.CloudWatchMetrics[0]!.Namespace, m._aws.CloudWatchMetrics[0]!.Dimensions, m.flow, m[name]]);
    expect(of("FlowsStarted")).toEqual([["Ottava", [["service", "flow"]], "loadbalancer-create", 1]]);
    expect(of("FlowsSucceeded")).toEqual([["Ottava", [["service", "flow"]], "loadbalancer-create", 1]]);
    expect(of("FlowsFailed")).toEqual([]);
    const [duration] = out.emitted("FlowDuration");
    expect(duration!._aws.CloudWatchMetrics[0]!.Metrics).toEqual([{ Name: "FlowDuration", Unit: "Milliseconds" }]);
    expect(duration).toMatchObject({
      flow: "loadbalancer-create",
      FlowDuration: Date.parse(create!.ended_at!) - Date.parse(create!.started_at),
    });
  });

  it("answers 404 for an unknown load balancer, and for a deleted one", async () => {
    const unknown = "11111111-2222-3333-4444-555555555555";
    expect(pick(await t.call("GET", `${LBS}/${unknown}/flows`))).toEqual(fault(404, `Load Balancer ${unknown} not found.`));
    expect((await t.call("GET", `/v2.0/lbaas/loadbalancers/${unknown}/flows`)).status).toBe(404);
    const id = (await activeLb(t)).id;
    expect((await t.call("DELETE", `${LBS}/${id}`)).status).toBe(204);
    await t.settle();
    expect(pick(await t.call("GET", `${LBS}/${id}/flows`))).toEqual(fault(404, `Load Balancer ${id} not found.`));
  });

  it("expires with the load balancer: a DELETED LB's trail entries get its TTL", async () => {
    const id = (await activeLb(t)).id;
    expect((await t.call("DELETE", `${LBS}/${id}`)).status).toBe(204);
    await t.settle();
    const { doc } = createClients(t.config.dynamodbEndpoint);
    const items = (
      await doc.send(
        new QueryCommand({
          TableName: t.config.tableName,
          KeyConditionExpression: "pk = :pk AND begins_with(sk, :p)",
          ExpressionAttributeValues: { ":pk": `LB#${id}`, ":p": "~FLOW#" },
        }),
      )
    ).Items!;
    expect(items.map((i) => [i.flow, i.outcome])).toEqual([
      ["loadbalancer-create", "SUCCEEDED"],
      ["loadbalancer-delete", "SUCCEEDED"],
    ]);
    const lb = (await doc.send(new GetCommand({ TableName: t.config.tableName, Key: { pk: `LB#${id}`, sk: "LB" } }))).Item!;
    expect(lb.provisioning_status).toBe("DELETED");
    for (const i of items) {
      expect(i.sk).toMatch(/^~FLOW#\d{4}-\d\d-\d\dT[^#]+#(create|delete)-/);
      // In no index, and purged by TTL about when the LB is.
      expect(Object.keys(i).filter((k) => /^gsi/.test(k))).toEqual([]);
      expect(Math.abs(Number(i.expires_at) - Number(lb.expires_at))).toBeLessThan(60);
    }
  });
});

describe("the end of a flow", () => {
  it("is written once: a retried final task changes nothing", async () => {
    const id = (await activeLb(t)).id;
    const [create] = await flows(t, id);
    const again = { outcome: "SUCCEEDED" as const, endedAt: new Date(Date.now() + 60_000).toISOString() };
    expect(await t.trail.recordFlowEnd(id, create!.execution, again)).toBeUndefined();
    expect(await t.trail.recordFlowEnd(id, create!.execution, { ...again, outcome: "REPAIRED", reason: "housekeeping" })).toBeUndefined();
    expect(await flows(t, id)).toEqual([create]);

    // A running entry ends once, whatever the retries.
    const startedAt = new Date().toISOString();
    await t.trail.recordFlowStart(id, {
      flow: "loadbalancer-update",
      execution: `probe-${id}`,
      executionArn: "arn:probe",
      startedAt,
      subject: [],
    });
    const end = { outcome: "SUCCEEDED" as const, endedAt: new Date().toISOString() };
    // The end answers the entry it was written to: its flow and start (what the flow metrics need).
    expect(await t.trail.recordFlowEnd(id, `probe-${id}`, end)).toEqual({ flow: "loadbalancer-update", startedAt });
    expect(await t.trail.recordFlowEnd(id, `probe-${id}`, { ...end, endedAt: new Date(Date.now() + 5000).toISOString() })).toBeUndefined();
    const trail = await flows(t, id);
    expect(trail).toHaveLength(2);
    expect(trail[0]).toMatchObject({ execution: `probe-${id}`, outcome: "SUCCEEDED", ended_at: end.endedAt });
    // A FAILED end replaces a SUCCEEDED one (the finish wrote it, then the release failed), once.
    const failed = {
      outcome: "FAILED" as const,
      endedAt: new Date().toISOString(),
      failedStep: "MarkLoadBalancerActive",
      error: { error: "X", cause: "y" },
    };
    expect(await t.trail.recordFlowEnd(id, `probe-${id}`, failed)).toEqual({ flow: "loadbalancer-update", startedAt });
    expect(await t.trail.recordFlowEnd(id, `probe-${id}`, failed)).toBeUndefined();
    expect(await t.trail.recordFlowEnd(id, "no-such-execution", end)).toBeUndefined();
    expect((await flows(t, id))[0]).toMatchObject({
      outcome: "FAILED",
      failed_step: "MarkLoadBalancerActive",
      error: { error: "X", cause: "y" },
    });
  });

  it("keeps the newest entries only", async () => {
    const id = (await activeLb(t)).id;
    const { doc } = createClients(t.config.dynamodbEndpoint);
    const small = new DynamoFlowTrail(doc, { tableName: t.config.tableName, expiryAge: 60, flowTrailMax: 3 });
    for (let i = 1; i <= 4; i++) {
      await small.recordFlowStart(id, {
        flow: "f",
        execution: `e${i}`,
        executionArn: `arn:e${i}`,
        startedAt: new Date(Date.now() + i * 1000).toISOString(),
        subject: [],
      });
    }
    expect((await small.flowTrail(id)).map((f) => f.execution)).toEqual(["e4", "e3", "e2"]);
    expect((await t.trail.flowTrail(id, 2)).map((f) => f.execution)).toEqual(["e4", "e3"]);
  });

  it("of an execution that could not start is FAILED, and the lock is given back", async () => {
    const id = (await activeLb(t)).id;
    const engine: WorkflowEngine = {
      executionArn: (flow, name) => t.engine.executionArn(flow, name),
      describe: async () => undefined,
      // Step Functions throttled, as the engine's client marks it (classifyUnavailable in @ottava/edge).
      start: async () => {
        throw markUnavailable(Object.assign(new Error("Rate exceeded (token=abc123)"), { name: "ThrottlingException" }));
      },
    };
    const out = captureMetrics();
    await expect(
      lockAndStart(
        { store: t.store, trail: t.trail, catalog: t.catalog, engine, log, metrics },
        { lbId: id, flow: "loadbalancer-update", verb: "update", from: MUTABLE_STATUSES, to: "PENDING_UPDATE" },
      ),
    ).rejects.toMatchObject({ name: "ThrottlingException" }); // Step Functions unavailable: rethrown, the API's 503
    expect(out.emitted("FlowsStarted").map((m) => [m.flow, m.FlowsStarted])).toEqual([["loadbalancer-update", 1]]);
    expect(out.emitted("FlowsFailed").map((m) => [m.flow, m.FlowsFailed])).toEqual([["loadbalancer-update", 1]]);
    expect((await t.store.getLoadBalancer(id))!.record.provisioning_status).toBe("ACTIVE");
    const [failed] = await flows(t, id);
    expect(failed).toMatchObject({
      flow: "loadbalancer-update",
      outcome: "FAILED",
      reason: "the execution could not be started",
      failed_step: null,
      error: { error: "ThrottlingException", cause: "Rate exceeded (token=***)" },
    });
  });
});

describe("a failed flow", () => {
  it("records the state that failed and the driver's error (OTTAVA_NOOP_FAULTS=compute.build)", async () => {
    const f = await inProcessApp({ OTTAVA_NOOP_FAULTS: "compute.build" });
    const out = captureMetrics();
    const res = await f.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET } });
    expect(res.status).toBe(201);
    const id = res.body.loadbalancer.id as string;
    // While it runs (the failing build is retried 1 s, then 2 s later), the entry is RUNNING.
    expect((await flows(f, id))[0]).toMatchObject({ outcome: "RUNNING", ended_at: null, failed_step: null, error: null });
    await f.settle();
    expect((await f.call("GET", `${LBS}/${id}`)).body.loadbalancer.provisioning_status).toBe("ERROR");
    const [entry] = await flows(f, id);
    expect(entry).toMatchObject({
      flow: "loadbalancer-create",
      execution: `create-${id}`,
      outcome: "FAILED",
      failed_step: "ComputeCreate",
      error: { error: "DriverError", cause: expect.stringContaining("Injected fault: compute.build") },
      ended_at: expect.stringMatching(ISO),
    });
    expect(out.emitted("FlowsFailed").map((m) => [m.flow, m.FlowsFailed])).toEqual([["loadbalancer-create", 1]]);
    expect(out.emitted("FlowsSucceeded")).toEqual([]);
    expect(out.emitted("FlowDuration").map((m) => m.FlowDuration)).toEqual([Date.parse(entry!.ended_at!) - Date.parse(entry!.started_at)]);
  }, 30_000);

  it("inside a Map records the innermost state that failed and its error (a failover whose compute.delete fails)", async () => {
    const f = await inProcessApp({ OTTAVA_NOOP_FAULTS: "compute.delete" });
    const id = (await activeLb(f)).id;
    expect((await f.call("PUT", `${LBS}/${id}/failover`)).status).toBe(202);
    await f.settle();
    const [entry] = await flows(f, id);
    expect(entry).toMatchObject({
      flow: "loadbalancer-failover",
      outcome: "FAILED",
      failed_step: "RemoveOldAmphora",
      error: { error: "DriverError", cause: expect.stringContaining("Injected fault: compute.delete") },
    });
  }, 60_000);
});

describe("authorization (keystone contexts, called at the service)", () => {
  const ctx = (project: string, roles: string[]) =>
    tokenContext("req-test", { projectId: project, userId: "u", roles, systemScope: undefined }, defaultPolicy());

  it("allows the LB's own project and admins; refuses other projects and global observers with 403", async () => {
    const id = (await activeLb(t)).id;
    const ok = await getFlowTrail({ store: t.store, trail: t.trail }, ctx(PROJECT, ["load-balancer_member"]), id);
    expect(ok.flows.map((e) => e.flow)).toEqual(["loadbalancer-create"]);
    expect((await getFlowTrail({ store: t.store, trail: t.trail }, ctx(PROJECT, ["load-balancer_observer"]), id)).flows).toHaveLength(1);
    expect((await getFlowTrail({ store: t.store, trail: t.trail }, ctx("another-project", ["admin"]), id)).flows).toHaveLength(1);
    for (const roles of [["load-balancer_member"], ["load-balancer_global_observer"], ["member", "reader"]]) {
      const denied = getFlowTrail({ store: t.store, trail: t.trail }, ctx("another-project", roles), id);
      await expect(denied, roles.join()).rejects.toBeInstanceOf(Fault);
      await expect(denied, roles.join()).rejects.toMatchObject({ status: 403 });
    }
    // An unknown LB is a 404 whoever asks.
    await expect(
      getFlowTrail({ store: t.store, trail: t.trail }, ctx("another-project", ["load-balancer_member"]), "nope"),
    ).rejects.toMatchObject({ status: 404 });
  });
});

describe("what the trail keeps of an error", () => {
  it("is the Lambda error's message, credentials masked, at most 1000 characters", () => {
    const lambda = JSON.stringify({
      errorType: "DriverError",
      errorMessage: "boom at https://user:pw@nova.example/v2",
      trace: ["at x (/var/task/index.js:1:1)"],
    });
    expect(sanitizeCause(lambda)).toBe("boom at https://***@nova.example/v2");
    expect(sanitizeCause("password=hunter2 X-Auth-Token: gAAAA123 Authorization: Bearer abc.def")).toBe(
      "password=*** X-Auth-Token: *** Authorization: ***",
    );
    expect(sanitizeCause("x".repeat(5000))).toHaveLength(1000);
    expect(sanitizeCause(undefined)).toBeNull();
  });

  it("of a failed Map iteration is the iteration's own failed state and error", () => {
    const inner = { failedStep: "ReplacementPlugVip", error: { Error: "DriverError", Cause: "no port" } };
    const end = failedFlowEnd({ failedStep: "FailoverAmphorae", error: { Error: "IterationFailed", Cause: JSON.stringify(inner) } });
    expect(end).toMatchObject({ outcome: "FAILED", failedStep: "ReplacementPlugVip", error: { error: "DriverError", cause: "no port" } });
    expect(failedFlowEnd({ failedStep: "PlugVip", error: { Error: "States.Timeout" } })).toMatchObject({
      failedStep: "PlugVip",
      error: { error: "States.Timeout", cause: null },
    });
  });
});
