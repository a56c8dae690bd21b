// The health-manager service on AWS (stacks/health.ts, a container behind a UDP NLB): the heartbeat
// receiver, the health check under its lease, and GET /healthcheck on 8080 for the NLB's target
// health. Stops cleanly on SIGTERM (ECS stops tasks with it).
import { createServer } from "node:http";
import { loadConfig } from "@ottava/core";
import { classifyUnavailable, createLogger, metrics } from "@ottava/edge";
import { DynamoHealthCheckStore, createClients, createStores } from "@ottava/db";
import { createDrivers } from "@ottava/amphora";
import { StepFunctionsEngine } from "../engine-sfn";
import { HealthChecker } from "../jobs/healthcheck";
import { startHeartbeatReceiver } from "./receiver";

const HEALTH_PORT = 8080;

const config = loadConfig();
if (!config.stateMachineArnPrefix) throw new Error("OTTAVA_STATE_MACHINE_ARN_PREFIX must be set (the stacks set it)");
// On AWS the key comes from its SSM SecureString, through the task definition's secrets (stacks/health.ts).
if (!config.heartbeatKey)
  throw new Error("OTTAVA_HEARTBEAT_KEY must be set (the SST secret HeartbeatKey, given to the task from its SSM parameter)");
const log = createLogger({ service: "ottava-health" }, config.logLevel);
const { store, trail, catalog, cloudIds } = createStores(config);
const engine = new StepFunctionsEngine(config.stateMachineArnPrefix);
const receiver = (await startHeartbeatReceiver(config, {
  compute: createDrivers(config, { log, decorateAwsClient: classifyUnavailable, cloudIds }).compute,
  log,
  metrics,
  // VRRP promotion reports start amphora-vip-promote flows.
  promotions: { engine, store },
}))!;
const checker = new HealthChecker(
  {
    store,
    trail,
    catalog,
    engine,
    log,
    metrics,
    checks: new DynamoHealthCheckStore(createClients(config.dynamodbEndpoint).doc, config.tableName),
  },
  {
    heartbeatTimeout: config.heartbeatTimeout,
    failoverThreshold: config.failoverThreshold,
    failoverOnError: config.failoverOnError,
    interval: config.healthCheckInterval,
  },
);
checker.start();
const health = createServer((req, res) => {
  res.writeHead(req.url === "/healthcheck" ? 200 : 404, { "content-type": "text/plain" }).end(req.url === "/healthcheck" ? "OK" : "");
}).listen(HEALTH_PORT, config.bindHost);
log.info("health manager ready", { heartbeatPort: config.heartbeatPort, healthPort: HEALTH_PORT, holder: checker.holder });

process.once("SIGTERM", async () => {
  health.close();
  await receiver.stop();
  await checker.stop();
  process.exit(0);
});
