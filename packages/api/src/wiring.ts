// Wiring, written once: configuration -> DynamoDB clients and stores -> drivers -> workflow engine ->
// the API's dependencies. The Lambda takes every default (the stores on the configured table, the
// API's own drivers, Step Functions); npm start and the tests give the parts they build themselves
// (their stores, the local runner, their task context's drivers, a logger). The default logger and
// metrics are @ottava/edge's, on Powertools.
import { loadConfig, type Config, type Drivers, type Logger, type Metrics, type ProfileValidator, type WorkflowEngine } from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { createApiDrivers, createProfileValidator } from "@ottava/amphora/api-drivers";
// The engine alone, not the controller's index: the API bundle then holds none of the tasks' code (nor the certificate code).
import { StepFunctionsEngine } from "@ottava/controller/engine-sfn";
import { createStores, type Stores } from "@ottava/db";
import type { ApiDeps } from "./deps";

export interface DepsParts {
  /** Else createStores(config). */
  stores?: Stores;
  /** Else Step Functions, at OTTAVA_STATE_MACHINE_ARN_PREFIX. */
  engine?: WorkflowEngine;
  /** The drivers the API calls itself; else createApiDrivers(config, the stores' cloud ids). */
  drivers?: Pick<Drivers, "network" | "certificates">;
  /** The checks of flavor and zone profiles; else createProfileValidator(config) (none but with OTTAVA_COMPUTE_DRIVER=ec2). */
  profiles?: ProfileValidator;
  /** Else the "ottava-api" logger at the configured level. */
  log?: Logger;
  /** Else the process's metrics. */
  metrics?: Metrics;
}

export function createDeps(config: Config = loadConfig(), parts: DepsParts = {}): ApiDeps {
  if (!parts.engine && !config.stateMachineArnPrefix) throw new Error("OTTAVA_STATE_MACHINE_ARN_PREFIX is not set");
  const stores = parts.stores ?? createStores(config);
  const log = parts.log ?? createLogger({ service: "ottava-api" }, config.logLevel);
  const drivers = parts.drivers ?? createApiDrivers(config, stores.cloudIds, log);
  return {
    ...stores,
    engine: parts.engine ?? new StepFunctionsEngine(config.stateMachineArnPrefix!),
    network: drivers.network,
    certificates: drivers.certificates,
    profiles: parts.profiles ?? createProfileValidator(config, stores.cloudIds),
    config,
    log,
    metrics: parts.metrics ?? metrics,
  };
}
