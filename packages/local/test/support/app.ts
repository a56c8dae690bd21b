// The real app in process (app.request) over DynamoDB Local and the local workflow runner.
import { randomUUID } from "node:crypto";
import { createApp, createDeps } from "@ottava/api";
import { MUTABLE_STATUSES, relationWrites, Tree, type ChildWrite, type Drivers } from "@ottava/core";
import { createLogger } from "@ottava/edge";
import { createTaskContext } from "@ottava/controller";
import { createExecutionJournal, type ClientDecorator } from "@ottava/db";
import { LocalWorkflowEngine, type LocalWorkflowEngineOptions } from "../../src/runner";
import { readInjected, storesDecorator, taskDecorator } from "../../src/injected";
import { freshTable, PROJECT } from "@ottava/db/testing";

/**
 * `env`: settings, npm start's injected faults and latency among them (OTTAVA_NOOP_FAULTS,
 * OTTAVA_NOOP_LATENCY, OTTAVA_DYNAMODB_FAULTS), plugged in as npm start plugs them. `engine`: options of
 * the local runner (a test-only task decorator, retry intervals); `durable` journals its executions in
 * the table as `npm start` does (else in memory); `decorateClient` is done to the app's DynamoDB clients
 * (the stores', the tasks'; not the journal's) before their first request: a test's meter. `drivers`: the
 * no-op drivers to run with (a test watching their calls), in place of those the settings make.
 */
export async function inProcessApp(
  env: Record<string, string> = {},
  engine_: Omit<LocalWorkflowEngineOptions, "journal" | "concurrency"> & {
    durable?: boolean;
    decorateClient?: ClientDecorator;
    drivers?: Drivers;
  } = {},
) {
  const { durable, decorateClient, decorateTask, drivers, ...options } = engine_;
  const injected = readInjected(env);
  const { dynamoFaults } = injected;
  const noopDrivers = drivers ?? injected.noopDrivers;
  const { config, ...stores } = await freshTable(env, storesDecorator(dynamoFaults, decorateClient));
  const tasks = createTaskContext(config, stores, { noop: noopDrivers, decorateClient });
  const log = createLogger({ service: "test" }, "error");
  const engine = new LocalWorkflowEngine(tasks, log, {
    ...options,
    decorateTask: taskDecorator(dynamoFaults, decorateTask),
    concurrency: config.flowConcurrency,
    ...(durable ? { journal: createExecutionJournal(config) } : {}),
  });
  const app = await createApp(createDeps(config, { stores, engine, drivers: tasks.drivers, log }));
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await app.request(path, {
      method,
      headers: { "content-type": "application/json", "x-project-id": PROJECT, ...headers },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  /** Waits for every flow started so far to end. */
  const settle = () => engine.drain();
  return { app, ...stores, dynamoFaults, engine, config, tasks, call, settle };
}

/** Octavia's fault body, as the tests expect it. */
export const fault = (status: number, faultstring: string) => ({
  status,
  body: { faultcode: status >= 500 ? "Server" : "Client", faultstring, debuginfo: null },
});
export const pick = (r: { status: number; body: unknown }) => ({ status: r.status, body: r.body });

type App = Awaited<ReturnType<typeof inProcessApp>>;

/**
 * Writes objects into an LB's tree as a flow would (for the kinds a test does not create through the
 * API), with what the objects show of their children (relations.ts) brought up to date as the API does.
 */
export async function seed(app: App, lbId: string, writes: ChildWrite[]) {
  const owner = `seed-${randomUUID()}`;
  await app.store.lockWith(lbId, { from: MUTABLE_STATUSES, to: "PENDING_UPDATE", owner, executionArn: "seed" }, writes);
  const { lb, items } = await app.store.readParts(lbId, { structure: true });
  const carried = relationWrites(new Tree(lb!.record, items));
  await app.store.applyAsOwner(lbId, owner, carried.writes);
  await app.store.updateLoadBalancer(lbId, owner, { ...carried.lb, provisioning_status: "ACTIVE" }, true);
}

/** A settled record of an LB's tree, for `seed`. */
export const record = (lbId: string, fields: Record<string, unknown>) => ({
  id: randomUUID(),
  project_id: PROJECT,
  loadbalancer_id: lbId,
  provisioning_status: "ACTIVE",
  operating_status: "ONLINE",
  created_at: new Date().toISOString(),
  updated_at: null,
  ...fields,
});
