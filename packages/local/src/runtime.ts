// The embedded runtime behind `npm start`: DynamoDB Local, the table, the in-process workflow
// runner, the local data plane (--dataplane haproxy) and the Hono app on a Node server. Also what
// the end-to-end tests start.
import { serve, type ServerType } from "@hono/node-server";
import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Config } from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import type { ClientDecorator } from "@ottava/db";
import type { CreateDriversOptions } from "@ottava/amphora";
import { startDynamoDbLocal, type DynamoDbLocal } from "./dynamodb-local";
import type { LocalWorkflowEngine, TaskDecorator } from "./runner";
import { loadOrCreateLocalCa } from "./ca";
import { storesDecorator, taskDecorator, type Injected } from "./injected";
import { jsonLinesNotifier } from "./events";

export interface RuntimeOptions {
  config: Config;
  /** Keep DynamoDB Local's data in memory only (else in dataDir), and the local amphorae in a temporary directory. */
  inMemory: boolean;
  dataDir: string;
  /** npm start's injected faults and latency (OTTAVA_NOOP_FAULTS, OTTAVA_NOOP_LATENCY, OTTAVA_DYNAMODB_FAULTS: readInjected). */
  injected?: Injected;
  /**
   * Benchmarks only: done to every DynamoDB client this runtime makes but the journal's, before its first
   * request (the API benchmark adds its meter, @ottava/db/testing/metering). `npm start` passes none.
   */
  decorateClient?: ClientDecorator;
  /** Benchmarks only: wraps each task invocation below the runner's journal (the API benchmark times the tasks with it). `npm start` passes none. */
  decorateTask?: TaskDecorator;
  /** Benchmarks only: done to each AWS client the drivers make, after classifyUnavailable (the EC2 benchmark counts calls with it). `npm start` passes none. */
  decorateAwsClient?: CreateDriversOptions["decorateAwsClient"];
}

export interface Runtime {
  url: string;
  engine: LocalWorkflowEngine;
  /** The UDP port amphora heartbeats are received on (undefined without OTTAVA_HEARTBEAT_KEY). */
  heartbeatPort: number | undefined;
  stop(): Promise<void>;
}

export async function startRuntime(opts: RuntimeOptions): Promise<Runtime> {
  const log = createLogger({ service: "ottava-local" }, opts.config.logLevel);
  const started = Date.now();
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });

  // DynamoDB Local (a JVM) boots while this process loads the app's modules: the two overlap.
  const booting = opts.config.dynamodbEndpoint
    ? undefined
    : startDynamoDbLocal({ inMemory: opts.inMemory, dataDir, log: (m, x) => log.debug(m, x) });
  // The local data plane's needs (HAProxy, a VIP range it can bind) are checked meanwhile: a machine
  // without them stops here, with a message saying what to install or set.
  const localDrivers = [opts.config.computeDriver, opts.config.amphoraDriver, opts.config.networkDriver].includes("local");
  const preflight = localDrivers
    ? import("@ottava/amphora").then(({ LocalDataplane }) => LocalDataplane.preflight(opts.config))
    : undefined;
  const [
    { createApp, createDeps },
    { createTaskContext, createHealthStore, startHeartbeatReceiver, HealthChecker, Housekeeping, createHousekeepingDeps },
    { createStores, createClients, createExecutionJournal, ensureTable, DynamoHealthCheckStore, DynamoVipStore },
    { LocalWorkflowEngine },
    { LocalDataplane },
  ] = await Promise.all([
    import("@ottava/api"),
    import("@ottava/controller"),
    import("@ottava/db"),
    import("./runner"),
    import("@ottava/amphora"),
    preflight,
  ]).catch(async (e) => {
    await (await booting?.catch(() => undefined))?.stop();
    throw e;
  });
  const dynamo: DynamoDbLocal | undefined = await booting;
  const decorate = opts.decorateClient;
  const dynamoFaults = opts.injected?.dynamoFaults;
  // [certificates] storage_path: the local certificate manager's files in <data dir>/certificates unless set.
  let config = { ...opts.config, certStoragePath: opts.config.certStoragePath ?? join(dataDir, "certificates") };
  if (dynamo) {
    config = { ...config, dynamodbEndpoint: dynamo.endpoint };
    log.info("DynamoDB Local started", { endpoint: dynamo.endpoint, inMemory: opts.inMemory, dataDir });
  }
  let server: ServerType | undefined;
  let heartbeats: Awaited<ReturnType<typeof startHeartbeatReceiver>>;
  let healthChecker: InstanceType<typeof HealthChecker> | undefined;
  let housekeeping: InstanceType<typeof Housekeeping> | undefined;
  let dataplane: Awaited<ReturnType<typeof LocalDataplane.open>> | undefined;
  // The local amphorae live in <data dir>/amphorae, or with --in-memory in a temporary directory removed at stop.
  const planeDir = localDrivers && opts.inMemory ? mkdtempSync(join(tmpdir(), "ottava-dataplane-")) : dataDir;
  const stopJobs = async () => {
    await heartbeats?.stop();
    await healthChecker?.stop();
    await housekeeping?.stop();
  };
  const stopDataplane = async () => {
    await dataplane?.stop();
    if (planeDir !== dataDir) rmSync(planeDir, { recursive: true, force: true });
  };
  try {
    await ensureTable(createClients(config.dynamodbEndpoint, decorate).client, config.tableName);
    // The injected DynamoDB faults (OTTAVA_DYNAMODB_FAULTS) on the stores' client: the API's and the flows' requests.
    const stores = createStores(config, storesDecorator(dynamoFaults, decorate));
    const { store, trail, catalog } = stores;
    // Without OTTAVA_HEARTBEAT_KEY, a local key (kept in <data dir>/heartbeat_key, never logged).
    const heartbeatKey = config.heartbeatKey ?? localHeartbeatKey(dataDir);
    if (localDrivers) {
      // The local amphorae send their heartbeats to the receiver below (unless their agent configuration names other controllers).
      const receiverHost = config.bindHost === "0.0.0.0" ? "127.0.0.1" : config.bindHost === "::" ? "::1" : config.bindHost;
      dataplane = await LocalDataplane.open({
        config,
        dataDir: planeDir,
        store,
        healthManagerConfig: stores.healthManagerConfig,
        vips: new DynamoVipStore(createClients(config.dynamodbEndpoint, decorate).doc, config.tableName),
        heartbeat: {
          key: heartbeatKey,
          localReceiver: () => (heartbeats?.port ? { host: receiverHost, port: heartbeats.port } : undefined),
        },
        log: createLogger({ service: "ottava-dataplane" }, config.logLevel),
      });
    }
    // Amphora certificates: the settings' CA, else a local one kept in <data dir>/ca (in memory with --in-memory).
    const tasks = createTaskContext(config, stores, {
      ca: () => loadOrCreateLocalCa(opts.inMemory ? undefined : dataDir),
      local: dataplane,
      noop: opts.injected?.noopDrivers,
      decorateClient: decorate,
      decorateAwsClient: opts.decorateAwsClient,
      // The flows' events, as JSON lines in the data directory (and to OTTAVA_EVENTBRIDGE_ENDPOINT when set).
      notifier: jsonLinesNotifier(join(dataDir, "events.jsonl"), log),
    });
    // The runner journals its executions in the table, so those a stopped process left running are
    // continued now, before the health check and housekeeping's stuck-state repair look at them.
    const engine = new LocalWorkflowEngine(tasks, log, {
      concurrency: config.flowConcurrency,
      journal: createExecutionJournal(config),
      decorateTask: taskDecorator(dynamoFaults, opts.decorateTask),
    });
    await engine.resume();
    // The health manager: the heartbeat receiver (with OTTAVA_HEARTBEAT_KEY) and the health check.
    const healthLog = createLogger({ service: "ottava-health" }, config.logLevel);
    heartbeats = await startHeartbeatReceiver(
      { ...config, heartbeatKey },
      {
        compute: tasks.drivers.compute,
        log: healthLog,
        metrics,
        store: createHealthStore(config, decorate),
        // VRRP promotion reports start amphora-vip-promote flows (they move the VIP only with a network driver that has takeVip).
        promotions: { engine, store },
      },
      { heartbeatInterval: config.heartbeatInterval },
    ).catch(portTaken(`the heartbeat port ${config.bindHost}:${config.heartbeatPort}/udp`, "--heartbeat-port (OTTAVA_HEARTBEAT_PORT)"));
    if (dataplane) {
      // What the previous run served (its ACTIVE load balancers) is served again before the API answers.
      const restored = await dataplane.restore(tasks.drivers.amphora);
      log.info("local data plane ready", {
        ...restored,
        dir: join(planeDir, "amphorae"),
        haproxy: dataplane.host?.haproxyVersion,
        vipRange: dataplane.range.cidr,
      });
    }
    const checks = new DynamoHealthCheckStore(createClients(config.dynamodbEndpoint, decorate).doc, config.tableName);
    healthChecker = new HealthChecker(
      { store, trail, catalog, engine, log: healthLog, metrics, checks },
      {
        heartbeatTimeout: config.heartbeatTimeout,
        failoverThreshold: config.failoverThreshold,
        failoverOnError: config.failoverOnError,
        interval: config.healthCheckInterval,
      },
    );
    healthChecker.start();
    // Housekeeping: purge, stuck-state repair, certificate rotation, on timers.
    housekeeping = new Housekeeping(
      createHousekeepingDeps(config, engine, createLogger({ service: "ottava-housekeeping" }, config.logLevel), metrics, decorate),
    );
    housekeeping.start();
    const app = await createApp(createDeps(config, { stores, engine, drivers: tasks.drivers }));
    const port = await new Promise<number>((ok, fail) => {
      server = serve({ fetch: app.fetch, hostname: config.bindHost, port: config.bindPort }, (info) => ok(info.port));
      server.once("error", fail);
    }).catch(portTaken(`the API port ${config.bindHost}:${config.bindPort}`, "--port (OTTAVA_BIND_PORT)"));
    const host = config.bindHost.includes(":") ? `[${config.bindHost}]` : config.bindHost;
    const url = `http://${host}:${port}`;
    log.info("Ottava ready", { url, ms: Date.now() - started });
    let stopping: Promise<void> | undefined;
    return {
      url,
      engine,
      heartbeatPort: heartbeats?.port,
      stop: () =>
        (stopping ??= (async () => {
          await new Promise<void>((ok) => (server ? server.close(() => ok()) : ok()));
          await stopJobs();
          // Flows that end within 5 s end; the others stop between two tasks (the journal has them) and
          // the next start continues them. Nothing runs a task once the data plane and DynamoDB stop.
          await Promise.race([engine.drain(), new Promise((ok) => setTimeout(ok, 5000))]);
          await Promise.race([engine.pause(), new Promise((ok) => setTimeout(ok, 5000))]);
          await stopDataplane();
          await dynamo?.stop();
        })()),
    };
  } catch (e) {
    server?.close();
    await stopJobs();
    await stopDataplane();
    await dynamo?.stop();
    throw e;
  }
}

/** The local heartbeat key: created once (0600) in the data directory, shared by every local start. */
function localHeartbeatKey(dataDir: string): string {
  const file = join(dataDir, "heartbeat_key");
  // Written aside, then linked into place: a concurrent start reads a whole key or makes its own attempt fail.
  const aside = `${file}.${process.pid}`;
  writeFileSync(aside, randomBytes(24).toString("hex"), { mode: 0o600 });
  try {
    linkSync(aside, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  } finally {
    unlinkSync(aside);
  }
  return readFileSync(file, "utf8").trim();
}

/** A port another process holds: say which, and the flag that gives this stack another (0: a free one). */
const portTaken =
  (what: string, flag: string) =>
  (e: unknown): never => {
    if ((e as { code?: string })?.code === "EADDRINUSE")
      throw new Error(`${what} is taken (another Ottava?): give this one another with ${flag}; 0 picks a free one`);
    throw e;
  };
