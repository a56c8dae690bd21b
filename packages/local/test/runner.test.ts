// The real ASL, run in process by the local runner, against DynamoDB Local.
import { beforeAll, describe, expect, it } from "vitest";
import {
  ACTIVE,
  DELETED,
  ERROR,
  createLoadBalancer,
  deleteLoadBalancer,
  failoverLoadBalancer,
  noauthContext,
  updateLoadBalancer,
  type LoadBalancerDeps,
} from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { createTaskContext } from "@ottava/controller";
import { createExecutionJournal } from "@ottava/db";
import { ExecutionAlreadyExists, LocalWorkflowEngine, type TaskDecorator } from "../src/runner";
import { readInjected } from "../src/injected";
import { freshTable } from "@ottava/db/testing";
import { noopDriversWith } from "@ottava/amphora/testing";
import { captureOutput, jsonLines } from "@ottava/edge/testing";

const ctx = noauthContext("req-test", "p1");
const SUBNET = "5e6b7c5a-0b7e-4a0e-9d36-1f5b2f3a6a11";
const body = { admin_state_up: true, vip_subnet_id: SUBNET, additional_vips: [], listeners: [], pools: [] };

/** The settings `env` (npm start's injected faults among them) on a fresh table, with the local runner. */
async function setup(env: Record<string, string> = {}) {
  const { config, ...stores } = await freshTable(env);
  const { store, trail, catalog } = stores;
  const tasks = createTaskContext(config, stores, { noop: readInjected(env).noopDrivers });
  const log = createLogger({}, "error");
  const engine = new LocalWorkflowEngine(tasks, log);
  const deps: LoadBalancerDeps = { store, trail, catalog, engine, network: tasks.drivers.network, config, log, metrics };
  const lastRun = async (id: string) => engine.wait((await store.getLoadBalancer(id))!.executionArn!);
  return { store, catalog, engine, deps, lastRun };
}

describe("load balancer flows", () => {
  let s: Awaited<ReturnType<typeof setup>>;
  beforeAll(async () => {
    s = await setup();
  });

  it("create builds one STANDALONE amphora and ends ACTIVE, OFFLINE", async () => {
    const { lb } = await createLoadBalancer(s.deps, ctx, body);
    expect((await s.lastRun(lb.id))!.status).toBe("SUCCEEDED");
    const after = (await s.store.getLoadBalancer(lb.id))!;
    expect(after.record.provisioning_status).toBe(ACTIVE);
    expect(after.record.operating_status).toBe("OFFLINE");
    expect(after.lockOwner).toBeUndefined();
    const amps = await s.store.amphoraeOf(lb.id);
    expect(amps.map((a) => [a.role, a.status, a.lb_network_ip])).toEqual([["STANDALONE", "ALLOCATED", "192.0.2.1"]]);
  });

  it("update, failover and delete each run their flow to the end", async () => {
    const { lb } = await createLoadBalancer(s.deps, ctx, body);
    await s.lastRun(lb.id);
    const [old] = await s.store.amphoraeOf(lb.id);
    await updateLoadBalancer(s.deps, ctx, lb.id, { name: "renamed" });
    await s.lastRun(lb.id);
    expect((await s.store.getLoadBalancer(lb.id))!.record).toMatchObject({ name: "renamed", provisioning_status: ACTIVE });

    await failoverLoadBalancer(s.deps, ctx, lb.id);
    expect((await s.lastRun(lb.id))!.status).toBe("SUCCEEDED");
    const amps = await s.store.amphoraeOf(lb.id);
    expect(amps.find((a) => a.id === old!.id)!.status).toBe(DELETED);
    const live = amps.filter((a) => a.status !== DELETED);
    expect(live).toHaveLength(1);
    expect(live[0]!.id).not.toBe(old!.id);

    await deleteLoadBalancer(s.deps, ctx, lb.id, false);
    await s.lastRun(lb.id);
    expect((await s.store.getLoadBalancer(lb.id))!.record.provisioning_status).toBe(DELETED);
    expect((await s.store.amphoraeOf(lb.id)).every((a) => a.status === DELETED)).toBe(true);
  });

  it("starting the same execution twice changes nothing the second time", async () => {
    const { lb } = await createLoadBalancer(s.deps, ctx, body);
    const first = (await s.lastRun(lb.id))!;
    const again = await s.engine.start("loadbalancer-create", first.name, first.input as Record<string, unknown>);
    expect(again.executionArn).toBe(first.executionArn);
    expect((await s.engine.wait(again.executionArn))!.stopDate).toEqual(first.stopDate);
    await expect(s.engine.start("loadbalancer-create", first.name, { lbId: lb.id, owner: "other" })).rejects.toBeInstanceOf(
      ExecutionAlreadyExists,
    );
    expect(await s.store.amphoraeOf(lb.id)).toHaveLength(1);
  });

  it("a stale execution (its lock released) writes nothing and leaves nothing behind", async () => {
    const { lb } = await createLoadBalancer(s.deps, ctx, body);
    const first = (await s.lastRun(lb.id))!;
    const before = await s.store.getLoadBalancer(lb.id);
    // Another execution with the same lock owner after the lock was released, e.g. a duplicate delivery.
    const stale = await s.engine.start("loadbalancer-create", `${first.name}-dup`, first.input as Record<string, unknown>);
    expect((await s.engine.wait(stale.executionArn))!.status).toBe("FAILED");
    expect(await s.store.getLoadBalancer(lb.id)).toEqual(before);
    expect((await s.store.amphoraeOf(lb.id)).filter((a) => a.status !== DELETED)).toHaveLength(1);
  });
});

describe("topology", () => {
  it("ACTIVE_STANDBY (OTTAVA_LOADBALANCER_TOPOLOGY) builds a MASTER and a BACKUP, failed over one at a time", async () => {
    const s = await setup({ OTTAVA_LOADBALANCER_TOPOLOGY: "ACTIVE_STANDBY" });
    const { lb } = await createLoadBalancer(s.deps, ctx, body);
    await s.lastRun(lb.id);
    const amps = await s.store.amphoraeOf(lb.id);
    expect(amps.map((a) => [a.role, a.vrrp_priority, a.status]).sort()).toEqual([
      ["BACKUP", 90, "ALLOCATED"],
      ["MASTER", 100, "ALLOCATED"],
    ]);
    await failoverLoadBalancer(s.deps, ctx, lb.id);
    expect((await s.lastRun(lb.id))!.status).toBe("SUCCEEDED");
    const all = await s.store.amphoraeOf(lb.id);
    const live = all.filter((a) => a.status !== DELETED);
    expect(live.map((a) => a.role).sort()).toEqual(["BACKUP", "MASTER"]);
    expect(live.some((l) => amps.some((a) => a.id === l.id))).toBe(false);
    // One at a time: the BACKUP's replacement was allocated before the MASTER was touched.
    const newBackup = live.find((a) => a.role === "BACKUP")!;
    const oldMaster = all.find((a) => a.role === "MASTER" && a.status === DELETED)!;
    expect(newBackup.created_at < oldMaster.updated_at!).toBe(true);
  });

  it("a flavor's loadbalancer_topology wins over the setting", async () => {
    const s = await setup();
    await s.catalog.create("flavorprofile", {
      id: "fp1",
      name: "ha",
      provider_name: "amphora",
      flavor_data: '{"loadbalancer_topology": "ACTIVE_STANDBY"}',
    });
    const flavorId = "6f8a3c1e-2b4d-4e5f-8a9b-0c1d2e3f4a5b";
    await s.catalog.create("flavor", { id: flavorId, name: "ha", description: "", enabled: true, flavor_profile_id: "fp1" });
    const { lb } = await createLoadBalancer(s.deps, ctx, { ...body, flavor_id: flavorId });
    await s.lastRun(lb.id);
    expect(await s.store.amphoraeOf(lb.id)).toHaveLength(2);
  });
});

describe("failures", () => {
  it("a failing task runs the compensation and leaves the LB in ERROR, amphorae removed", async () => {
    const s = await setup({ OTTAVA_NOOP_FAULTS: "network.plugVip" });
    const { lb } = await createLoadBalancer(s.deps, ctx, body);
    const run = (await s.lastRun(lb.id))!;
    expect(run.status).toBe("FAILED");
    const after = (await s.store.getLoadBalancer(lb.id))!;
    expect(after.record.provisioning_status).toBe(ERROR);
    expect(after.lockOwner).toBeUndefined();
    expect((await s.store.amphoraeOf(lb.id)).map((a) => a.status)).toEqual([DELETED]);
  });

  it("a fault that clears within the retries (compute.build:1) still ends ACTIVE", async () => {
    const s = await setup({ OTTAVA_NOOP_FAULTS: "compute.build:1" });
    const { lb } = await createLoadBalancer(s.deps, ctx, body);
    expect((await s.lastRun(lb.id))!.status).toBe("SUCCEEDED");
    expect((await s.store.getLoadBalancer(lb.id))!.record.provisioning_status).toBe(ACTIVE);
  });
});

describe("the local runner", () => {
  it("runs at most `concurrency` executions at once, queueing the rest", async () => {
    const { config, ...stores } = await freshTable();
    const lines = captureOutput();
    const log = createLogger({ service: "runner" }, "info");
    const tasks = {
      ...createTaskContext(config, stores, { noop: noopDriversWith("", "compute.build:100") }),
      log: createLogger({}, "error"),
    };
    const engine = new LocalWorkflowEngine(tasks, log, 1);
    const deps: LoadBalancerDeps = {
      store: stores.store,
      trail: stores.trail,
      catalog: stores.catalog,
      engine,
      network: tasks.drivers.network,
      config,
      log: createLogger({}, "error"),
      metrics,
    };
    for (let i = 0; i < 3; i++) await createLoadBalancer(deps, ctx, body);
    await engine.drain();
    const events = jsonLines(lines)
      .filter((l) => l.service === "runner")
      .map((l) => String(l.message))
      .filter((m) => m.startsWith("execution"));
    expect(events).toEqual([
      "execution started",
      "execution succeeded",
      "execution started",
      "execution succeeded",
      "execution started",
      "execution succeeded",
    ]);
  });
});

describe("a runner that stops and starts again (the journal in the table)", () => {
  /** Counts the states it invokes; at `stopAt`'s n-th invocation it runs the task, then never answers: the process died there. */
  function watch(stopAt?: { state: string; nth: number; run: boolean }) {
    const invoked: string[] = [];
    let stopped!: () => void;
    const stop = new Promise<void>((ok) => (stopped = ok));
    const counts = new Map<string, number>();
    const decorate: TaskDecorator = (call, invoke) => async (input) => {
      invoked.push(call.state);
      const n = (counts.get(call.state) ?? 0) + 1;
      counts.set(call.state, n);
      if (stopAt?.state === call.state && stopAt.nth === n) {
        if (stopAt.run) await invoke(input);
        stopped();
        return new Promise(() => {});
      }
      return invoke(input);
    };
    return { invoked, stop, decorate };
  }

  it("continues an execution left RUNNING from its journal: recorded tasks (a Map's finished iteration too) are not run again", async () => {
    const { config, ...stores } = await freshTable({ OTTAVA_LOADBALANCER_TOPOLOGY: "ACTIVE_STANDBY" });
    const tasks = createTaskContext(config, stores);
    const log = createLogger({}, "error");
    // The first runner dies in the failover's second iteration (MASTER), after building its replacement's instance.
    const first = watch({ state: "ReplacementComputeCreate", nth: 2, run: true });
    const a = new LocalWorkflowEngine(tasks, log, { journal: createExecutionJournal(config), decorateTask: first.decorate });
    const deps: LoadBalancerDeps = {
      store: stores.store,
      trail: stores.trail,
      catalog: stores.catalog,
      engine: a,
      network: tasks.drivers.network,
      config,
      log,
      metrics,
    };
    const { lb } = await createLoadBalancer(deps, ctx, body);
    await a.wait((await stores.store.getLoadBalancer(lb.id))!.executionArn!);
    const old = await stores.store.amphoraeOf(lb.id);
    await failoverLoadBalancer(deps, ctx, lb.id);
    await first.stop;
    const { executionArn: arn, lockOwner: name } = (await stores.store.getLoadBalancer(lb.id))!;
    expect((await stores.store.getLoadBalancer(lb.id))!.record.provisioning_status).toBe("PENDING_UPDATE");

    // The next runner on the same table: the execution is RUNNING (the repair job leaves it alone), then continued.
    const second = watch();
    const b = new LocalWorkflowEngine(tasks, log, { journal: createExecutionJournal(config), decorateTask: second.decorate });
    expect((await b.describe(arn!))?.status).toBe("RUNNING");
    expect(await b.resume()).toEqual([name]);
    const done = (await b.wait(arn!))!;
    expect(done.status).toBe("SUCCEEDED");
    // Only what had not been recorded ran again: the MASTER's replacement from its instance on.
    expect(second.invoked).toEqual([
      "ReplacementComputeCreate",
      "ReplacementComputeWait",
      "ReplacementAmphoraeConnectivityWait",
      "ReplacementPlugVip",
      "ReplacementAmphoraePostVipPlug",
      "ReplacementMarkAmphoraeAllocated",
      "RemoveOldAmphora",
      "ListenersUpdate",
      "RestartVrrp",
      "MarkLoadBalancerActive",
    ]);
    // Ends as an uninterrupted failover: two new amphorae, the two old ones DELETED, nothing more.
    const after = (await stores.store.getLoadBalancer(lb.id))!;
    expect(after.record.provisioning_status).toBe(ACTIVE);
    expect(after.lockOwner).toBeUndefined();
    const amps = await stores.store.amphoraeOf(lb.id);
    expect(amps).toHaveLength(4);
    expect(amps.filter((x) => old.some((o) => o.id === x.id)).map((x) => x.status)).toEqual([DELETED, DELETED]);
    expect(
      amps
        .filter((x) => x.status !== DELETED)
        .map((x) => x.role)
        .sort(),
    ).toEqual(["BACKUP", "MASTER"]);
    expect((await stores.trail.flowTrail(lb.id))[0]).toMatchObject({ execution: name, outcome: "SUCCEEDED" });

    // Idempotent by name across the restart; described by a third runner from the journal; its task records gone.
    expect((await b.start("loadbalancer-failover", name!, done.input as Record<string, unknown>)).executionArn).toBe(arn);
    const c = new LocalWorkflowEngine(tasks, log, { journal: createExecutionJournal(config) });
    expect(await c.describe(arn!)).toMatchObject({ status: "SUCCEEDED", name, startDate: done.startDate });
    await expect(c.start("loadbalancer-failover", name!, { lbId: lb.id, owner: "other" })).rejects.toBeInstanceOf(ExecutionAlreadyExists);
    expect((await c.start("loadbalancer-failover", name!, done.input as Record<string, unknown>)).executionArn).toBe(arn);
    expect(await c.resume()).toEqual([]);
    expect((await createExecutionJournal(config).tasks("loadbalancer-failover", name!)).size).toBe(0);
  });

  it("replays a task's recorded failures: a flow failing when its runner stopped fails the same way, even if the task would now succeed", async () => {
    const { config, ...stores } = await freshTable();
    const log = createLogger({}, "error");
    // The first runner's plugVip always fails (OTTAVA_NOOP_FAULTS): it dies in the compensation, before the LB's amphora is marked DELETED.
    const first = watch({ state: "RevertCreateAmphoraeInDB", nth: 1, run: false });
    const tasks = createTaskContext(config, stores, { noop: noopDriversWith("network.plugVip") });
    const a = new LocalWorkflowEngine(tasks, log, {
      journal: createExecutionJournal(config),
      decorateTask: first.decorate,
      retryIntervalMs: 1,
    });
    const deps: LoadBalancerDeps = {
      store: stores.store,
      trail: stores.trail,
      catalog: stores.catalog,
      engine: a,
      network: tasks.drivers.network,
      config,
      log,
      metrics,
    };
    const { lb } = await createLoadBalancer(deps, ctx, body);
    await first.stop;
    // The next runner's drivers have no fault: PlugVip would succeed now, but its three recorded failures are answered.
    const second = watch();
    const b = new LocalWorkflowEngine(createTaskContext(config, stores), log, {
      journal: createExecutionJournal(config),
      decorateTask: second.decorate,
      retryIntervalMs: 1,
    });
    await b.resume();
    expect((await b.wait((await stores.store.getLoadBalancer(lb.id))!.executionArn!))!.status).toBe("FAILED");
    expect(second.invoked).toEqual(["RevertCreateAmphoraeInDB", "RevertCreateServerGroup", "OnFailure"]);
    expect((await stores.store.getLoadBalancer(lb.id))!.record.provisioning_status).toBe(ERROR);
    expect((await stores.store.amphoraeOf(lb.id)).map((x) => x.status)).toEqual([DELETED]);
    expect((await stores.trail.flowTrail(lb.id))[0]).toMatchObject({ outcome: "FAILED", failed_step: "PlugVip" });
  });
});
