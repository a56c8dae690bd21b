// The wait for a booting amphora's agent as the create flow's ASL expresses it (loadbalancer-create: AmphoraeConnectivityWait, its Choice and Wait states), run by aws-local-stepfunctions with the real wait task and the REST driver against an agent stand-in that comes up late, or never.
import "@ottava/local/polyfill"; // aws-local-stepfunctions needs Promise.withResolvers (Node 20), as the local runner
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { StateMachine } from "aws-local-stepfunctions";
import { AMPHORA_BOOT_FAILED_ALERT, ComputeBuildError, ComputeWaitTimeout, loadConfig, type Amphora } from "@ottava/core";
import { createLogger } from "@ottava/edge";
import { captureOutput } from "@ottava/edge/testing";
import { freePort, noopDrivers, type AmphoraApiClient } from "@ottava/amphora";
import { TASKS, definitionOf, localTaskArn, taskOfArn, taskStates, type TaskContext } from "@ottava/controller";
import { agentDriver, amphora, loadBalancer, startFakeAgent, testPki, type FakeAgent, type TestPki } from "@ottava/amphora/testing";

type JSONValue = Parameters<StateMachine["run"]>[0];

/** The lines among `lines` that say amphorae failed to boot (AMPHORA_BOOT_FAILED_ALERT), parsed. */
const bootFailures = (lines: string[]) =>
  lines.flatMap((l) => {
    try {
      const o = JSON.parse(l) as Record<string, unknown>;
      return o.alert === AMPHORA_BOOT_FAILED_ALERT && o.level === "ERROR" && o.message === "amphora failed to boot" ? [o] : [];
    } catch {
      return [];
    }
  });

let pki: TestPki;
const agents: FakeAgent[] = [];
const clients: AmphoraApiClient[] = [];

beforeAll(async () => {
  pki = await testPki();
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(agents.splice(0).map((a) => a.close()));
});

/**
 * Runs the create flow's definition: the connectivity wait is the real task (the REST driver, the
 * settings given), every other task records its call and answers as the flow needs (the plan).
 */
async function runCreate(
  amp: Amphora,
  driver: TaskContext["drivers"]["amphora"],
  env: Record<string, string>,
  compute?: TaskContext["drivers"]["compute"],
) {
  const amphorae = new Map([[amp.id, { ...amp }]]);
  const ctx = {
    config: loadConfig(env),
    log: createLogger({ service: "rest-wait-test" }, "error"),
    drivers: { ...noopDrivers(), amphora: driver, ...(compute ? { compute } : {}) },
    store: {
      getAmphora: async (id: string) => amphorae.get(id),
      updateAmphora: async (_lb: string, id: string, _owner: string, set: Partial<Amphora>) =>
        void amphorae.set(id, { ...amphorae.get(id)!, ...set }),
    },
  } as unknown as TaskContext;
  const definition = definitionOf("loadbalancer-create", localTaskArn);
  const ran: string[] = [];
  let failure: unknown;
  const handlers: Record<string, (input: JSONValue) => Promise<JSONValue>> = {};
  for (const [state, task] of taskStates(definition, taskOfArn)) {
    handlers[state] = async (input) => {
      ran.push(state);
      if (task === "failChange") failure = (input as { error?: unknown }).error;
      if (task === "planAmphorae") return [{ id: amp.id, role: amp.role, vrrp_priority: null }];
      if (task === "amphoraeConnectivityWait") return (await TASKS.amphoraeConnectivityWait!(input as never, ctx)) as JSONValue;
      // With a compute driver given, the compute wait is the real task too; else it answers as the real one does for an instance that runs.
      if (task === "computeWait")
        return compute ? ((await TASKS.computeWait!(input as never, ctx)) as JSONValue) : { waiting: false, attempts: 1, retryIn: 0 };
      return null;
    };
  }
  const machine = new StateMachine(definition as never, { validationOptions: { checkArn: true } });
  const started = Date.now();
  const execution = machine.run(
    { lbId: amp.loadbalancer_id, owner: "test-execution" },
    {
      // The ASL's retries of a failed step (1 s, 2 s) are not what is measured here.
      overrides: { taskResourceLocalHandlers: handlers, retryIntervalOverrides: { AmphoraeConnectivityWait: 0 } },
    },
  );
  const entered: string[] = [];
  const logs = (async () => {
    for await (const e of execution.eventLogs) if (e.type === "StateEntered") entered.push((e as { state: { name: string } }).state.name);
  })();
  const outcome = await execution.result.then(
    (output) => ({ ok: true as const, output }),
    (error: Error) => ({ ok: false as const, error }),
  );
  await logs;
  return { outcome, failure, ran, entered, ms: Date.now() - started, amphora: amphorae.get(amp.id)! };
}

async function restDriver(port: number) {
  const { client, driver } = await agentDriver(pki, port, { readTimeout: 1 });
  clients.push(client);
  return driver;
}

describe("the create flow's wait for the amphora agent (AmphoraeConnectivityWait)", () => {
  it("is a Task, a Choice on $.agentWait.waiting and a Wait of $.agentWait.retryIn seconds, right after ComputeWait", () => {
    const d = definitionOf("loadbalancer-create", localTaskArn) as { States: Record<string, Record<string, unknown>> };
    // The compute wait before it loops the same way, on $.computeWait (OTTAVA_AMP_ACTIVE_RETRIES, _WAIT_SEC).
    expect(d.States.ComputeWait).toMatchObject({ Type: "Task", ResultPath: "$.computeWait", Next: "ComputeWaitLoop" });
    expect(d.States.ComputeWaitLoop).toEqual({
      Type: "Choice",
      Choices: [{ Variable: "$.computeWait.waiting", BooleanEquals: true, Next: "ComputeWaitWait" }],
      Default: "AmphoraeConnectivityWait",
    });
    expect(d.States.ComputeWaitWait).toEqual({ Type: "Wait", SecondsPath: "$.computeWait.retryIn", Next: "ComputeWait" });
    expect(d.States.AmphoraeConnectivityWait).toMatchObject({
      Type: "Task",
      ResultPath: "$.agentWait",
      Next: "AmphoraeConnectivityWaitLoop",
    });
    expect(d.States.AmphoraeConnectivityWaitLoop).toEqual({
      Type: "Choice",
      Choices: [{ Variable: "$.agentWait.waiting", BooleanEquals: true, Next: "AmphoraeConnectivityWaitWait" }],
      Default: "PlugVip",
    });
    expect(d.States.AmphoraeConnectivityWaitWait).toEqual({
      Type: "Wait",
      SecondsPath: "$.agentWait.retryIn",
      Next: "AmphoraeConnectivityWait",
    });
    // The failover and resize flows build amphorae with the same steps.
    const failover = definitionOf("loadbalancer-failover", localTaskArn) as {
      States: Record<string, { ItemProcessor?: { States: Record<string, unknown> } }>;
    };
    expect(failover.States.FailoverAmphorae!.ItemProcessor!.States).toHaveProperty("ReplacementAmphoraeConnectivityWaitWait");
    const resize = definitionOf("loadbalancer-resize", localTaskArn) as {
      States: Record<string, { ItemProcessor?: { States: Record<string, unknown> } }>;
    };
    expect(resize.States.ResizeBuildAmphorae!.ItemProcessor!.States).toHaveProperty("ResizeAmphoraeConnectivityWaitWait");
  });

  it("with the no-op driver answers at once: no Wait state is entered", async () => {
    const lb = loadBalancer();
    const r = await runCreate(amphora(lb), noopDrivers().amphora, {});
    expect(r.outcome.ok).toBe(true);
    expect(r.ran.filter((s) => s === "AmphoraeConnectivityWait")).toHaveLength(1);
    expect(r.entered).not.toContain("AmphoraeConnectivityWaitWait");
  });

  it("asks again after each Wait until the agent answers, then goes on with the flow", async () => {
    const lb = loadBalancer();
    const amp = amphora(lb);
    const port = await freePort();
    // The agent comes up 1.5 s from now (the flow starts once the driver is made: later on a loaded machine).
    const t0 = Date.now();
    const late = new Promise<void>((resolve) =>
      setTimeout(() => void startFakeAgent({ pki, amphoraId: amp.id, port }).then((a) => (agents.push(a), resolve())), 1500),
    );
    const r = await runCreate(amp, await restDriver(port), { OTTAVA_CONNECTION_MAX_RETRIES: "10", OTTAVA_CONNECTION_RETRY_INTERVAL: "1" });
    // The flow ended only once the agent was up: not before it.
    const ended = Date.now() - t0;
    await late;
    expect(r.outcome.ok).toBe(true);
    // Refused until the agent is up (at 0 s and 1 s when the flow starts at once; later starts on a
    // loaded machine see fewer refusals), each refusal followed by a 1 s Wait, then answered.
    const waits = r.entered.filter((s) => s === "AmphoraeConnectivityWaitWait").length;
    expect(waits).toBeGreaterThanOrEqual(1);
    expect(r.ran.filter((s) => s === "AmphoraeConnectivityWait")).toHaveLength(waits + 1);
    expect(r.ran.slice(r.ran.lastIndexOf("AmphoraeConnectivityWait") + 1)).toEqual([
      "PlugVip",
      "AmphoraePostVipPlug",
      "MarkAmphoraeAllocated",
      "UpdateVip",
      "StartVrrp",
      "ListenersUpdate",
      "MarkLoadBalancerActive",
    ]);
    expect(ended).toBeGreaterThanOrEqual(1400);
    expect(agents[0]!.calls.map((c) => `${c.method} ${c.path}`)).toEqual(["GET /1.0/info"]);
  });

  it("gives up after connection_max_retries attempts: the amphora goes to ERROR and the flow runs the reverts", async () => {
    const lines = captureOutput();
    const lb = loadBalancer();
    const amp = amphora(lb, { status: "BOOTING" });
    const r = await runCreate(amp, await restDriver(await freePort()), {
      OTTAVA_CONNECTION_MAX_RETRIES: "3",
      OTTAVA_CONNECTION_RETRY_INTERVAL: "1",
    });
    expect(r.outcome.ok).toBe(false);
    expect(r.failure).toMatchObject({
      Error: "DriverError",
      Cause: expect.stringMatching(new RegExp(`Amphora compute instance failed to become reachable \\(${amp.id}, 3 attempts`)),
    });
    // Three attempts one second apart, then the step fails (and its two retries fail at once).
    expect(r.entered.filter((s) => s === "AmphoraeConnectivityWaitWait")).toHaveLength(2);
    expect(r.ran.filter((s) => s === "AmphoraeConnectivityWait")).toHaveLength(5);
    expect(r.ran.slice(r.ran.lastIndexOf("AmphoraeConnectivityWait") + 1)).toEqual([
      "RevertComputeCreate",
      "RevertCreateAmphoraeInDB",
      "RevertCreateServerGroup",
      "OnFailure",
    ]);
    expect(r.entered).toContain("CatchAmphoraeConnectivityWait");
    expect(r.amphora.status).toBe("ERROR");
    expect(r.ms).toBeLessThan(6000);
    // The alarm's line (stacks/alarms.ts): once a run that gave up (the step's two retries give up again).
    const failures = bootFailures(lines);
    expect(failures).toHaveLength(3);
    for (const f of failures) expect(f).toMatchObject({ amphorae: [amp.id], why: expect.stringContaining("agent was not reached") });
  });
});

describe("the create flow's wait for the instance (ComputeWait: Octavia's ComputeWait under ComputeRetry)", () => {
  /** A compute driver whose instance is not running for the first `pending` looks (ComputeWaitTimeout), then runs. */
  const slowCompute = (pending: number) => {
    let looks = 0;
    return {
      ...noopDrivers().compute,
      async getInstance(computeId: string) {
        if (++looks <= pending) throw new ComputeWaitTimeout(computeId);
        return { compute_id: computeId, lb_network_ip: "198.18.0.10", image_id: "ami-1", compute_flavor: "t3.small", cached_zone: "az-1" };
      },
    };
  };

  it("asks again after OTTAVA_AMP_ACTIVE_WAIT_SEC while the instance is pending, then records it and goes on", async () => {
    const lb = loadBalancer();
    const amp = amphora(lb, { compute_id: "i-1" });
    const r = await runCreate(
      amp,
      noopDrivers().amphora,
      { OTTAVA_AMP_ACTIVE_RETRIES: "5", OTTAVA_AMP_ACTIVE_WAIT_SEC: "1" },
      slowCompute(2),
    );
    expect(r.outcome.ok).toBe(true);
    expect(r.entered.filter((s) => s === "ComputeWaitWait")).toHaveLength(2);
    expect(r.ran.filter((s) => s === "ComputeWait")).toHaveLength(3);
    expect(r.amphora).toMatchObject({ lb_network_ip: "198.18.0.10", image_id: "ami-1", compute_flavor: "t3.small", cached_zone: "az-1" });
    expect(r.ms).toBeGreaterThanOrEqual(1900);
  });

  it("gives up after OTTAVA_AMP_ACTIVE_RETRIES looks: the step fails with ComputeWaitTimeout and the reverts run", async () => {
    const lines = captureOutput();
    const lb = loadBalancer();
    const amp = amphora(lb, { compute_id: "i-1" });
    const r = await runCreate(
      amp,
      noopDrivers().amphora,
      { OTTAVA_AMP_ACTIVE_RETRIES: "3", OTTAVA_AMP_ACTIVE_WAIT_SEC: "1" },
      slowCompute(100),
    );
    expect(r.outcome.ok).toBe(false);
    expect(r.failure).toMatchObject({
      Error: "ComputeWaitTimeout",
      Cause: expect.stringContaining("Waiting for compute id i-1 to go active timeout."),
    });
    // Three looks one second apart; ComputeWaitTimeout is not one of the errors the steps' Retry retries.
    expect(r.ran.filter((s) => s === "ComputeWait")).toHaveLength(3);
    expect(bootFailures(lines)).toEqual([
      expect.objectContaining({ amphorae: [amp.id], computeIds: ["i-1"], why: "its instance is not running after 3 looks" }),
    ]);
    expect(r.ran.slice(r.ran.lastIndexOf("ComputeWait") + 1)).toEqual([
      "RevertComputeCreate",
      "RevertCreateAmphoraeInDB",
      "RevertCreateServerGroup",
      "OnFailure",
    ]);
  });

  it("fails at once for an instance that will never run (ComputeBuildError)", async () => {
    const lines = captureOutput();
    const lb = loadBalancer();
    const amp = amphora(lb, { compute_id: "i-1" });
    const broken = {
      ...noopDrivers().compute,
      getInstance: async () => {
        throw new ComputeBuildError("instance i-1 is terminated: Server.InsufficientInstanceCapacity");
      },
    };
    const r = await runCreate(amp, noopDrivers().amphora, {}, broken);
    expect(r.outcome.ok).toBe(false);
    expect(r.failure).toMatchObject({ Error: "ComputeBuildError" });
    expect(r.ran.filter((s) => s === "ComputeWait")).toHaveLength(1);
    expect(r.entered).not.toContain("ComputeWaitWait");
    expect(bootFailures(lines)).toEqual([
      expect.objectContaining({ amphorae: [amp.id], why: expect.stringContaining("Server.InsufficientInstanceCapacity") }),
    ]);
  });
});
