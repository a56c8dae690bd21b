// The embedded runtime behind `npm start`: DynamoDB Local, the table, the in-process workflow
// runner and the Hono app on a Node server. Also what the end-to-end tests start.
import { serve, type ServerType } from "@hono/node-server";
import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createLogger, type Config } from "@ottava/core";
import { startDynamoDbLocal, type DynamoDbLocal } from "./dynamodb-local";
import type { LocalWorkflowEngine } from "./runner";
import { loadOrCreateLocalCa } from "./ca";

export interface RuntimeOptions {
  config: Config;
  /** Keep DynamoDB Local's data in memory only (else in dataDir). */
  inMemory: boolean;
  dataDir: string;
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
  const booting = opts.config.dynamodbEndpoint ? undefined : startDynamoDbLocal({ inMemory: opts.inMemory, dataDir, log: (m, x) => log.debug(m, x) });
  const [
    { createApp },
    { createStore, createTaskContext, startHeartbeatReceiver, HealthChecker, Housekeeping, createHousekeepingDeps },
    { createCatalog, createClients, ensureTable, DynamoHealthCheckStore },
    { LocalWorkflowEngine },
  ] = await Promise.all([
    import("@ottava/api"),
    import("@ottava/controller"),
    import("@ottava/db"),
    import("./runner"),
  ]).catch(async (e) => {
    await (await booting?.catch(() => undefined))?.stop();
    throw e;
  });
  const dynamo: DynamoDbLocal | undefined = await booting;
  let config = opts.config;
  if (dynamo) {
    config = { ...config, dynamodbEndpoint: dynamo.endpoint };
    log.info("DynamoDB Local started", { endpoint: dynamo.endpoint, inMemory: opts.inMemory, dataDir });
  }
  let server: ServerType | undefined;
  let heartbeats: Awaited<ReturnType<typeof startHeartbeatReceiver>>;
  let healthChecker: InstanceType<typeof HealthChecker> | undefined;
  let housekeeping: InstanceType<typeof Housekeeping> | undefined;
  const stopJobs = async () => {
    await heartbeats?.stop();
    await healthChecker?.stop();
    await housekeeping?.stop();
  };
  try {
    await ensureTable(createClients(config.dynamodbEndpoint).client, config.tableName);
    const store = createStore(config);
    // Amphora certificates: the settings' CA, else a local one kept in <data dir>/ca (in memory with --in-memory).
    const tasks = createTaskContext(config, store, { ca: () => loadOrCreateLocalCa(opts.inMemory ? undefined : dataDir) });
    const engine = new LocalWorkflowEngine(tasks, log, config.flowConcurrency);
    // The health manager: the heartbeat receiver (with OTTAVA_HEARTBEAT_KEY) and the health check.
    const healthLog = createLogger({ service: "ottava-health" }, config.logLevel);
    // Without OTTAVA_HEARTBEAT_KEY, a local key (kept in <data dir>/heartbeat_key, never logged).
    const heartbeatKey = config.heartbeatKey ?? localHeartbeatKey(dataDir);
    heartbeats = await startHeartbeatReceiver({ ...config, heartbeatKey }, { compute: tasks.drivers.compute, log: healthLog });
    const checks = new DynamoHealthCheckStore(createClients(config.dynamodbEndpoint).doc, config.tableName);
    healthChecker = new HealthChecker(
      { store, engine, log: healthLog, checks },
      {
        heartbeatTimeout: config.heartbeatTimeout,
        failoverThreshold: config.failoverThreshold,
        failoverOnError: config.failoverOnError,
        interval: config.healthCheckInterval,
      },
    );
    healthChecker.start();
    // Housekeeping: purge, stuck-state repair, certificate rotation, on timers.
    housekeeping = new Housekeeping(createHousekeepingDeps(config, engine, createLogger({ service: "ottava-housekeeping" }, config.logLevel)));
    housekeeping.start();
    const api = createLogger({ service: "ottava-api" }, config.logLevel);
    const app = createApp({ store, engine, network: tasks.drivers.network, config, log: api, catalog: createCatalog(config) });
    const port = await new Promise<number>((ok, fail) => {
      server = serve({ fetch: app.fetch, hostname: config.bindHost, port: config.bindPort }, (info) => ok(info.port));
      server.once("error", fail);
    });
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
          await Promise.race([engine.drain(), new Promise((ok) => setTimeout(ok, 5000))]);
          await dynamo?.stop();
        })()),
    };
  } catch (e) {
    server?.close();
    await stopJobs();
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
