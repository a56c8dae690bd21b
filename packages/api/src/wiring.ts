// The API's dependencies on AWS: DynamoDB, Step Functions, the no-op network driver.
import { createLogger, loadConfig, type Config, type WorkflowEngine } from "@ottava/core";
import { createApiDrivers } from "@ottava/amphora";
// The engine alone, not the controller's index: the API bundle then holds none of the tasks' code (nor the certificate code).
import { StepFunctionsEngine } from "@ottava/controller/engine-sfn";
import { createStores } from "@ottava/db";
import type { ApiDeps } from "./deps";

export function createDeps(config: Config = loadConfig(), engine?: WorkflowEngine): ApiDeps {
  if (!engine && !config.stateMachineArnPrefix) throw new Error("OTTAVA_STATE_MACHINE_ARN_PREFIX is not set");
  const drivers = createApiDrivers(config);
  return {
    ...createStores(config),
    engine: engine ?? new StepFunctionsEngine(config.stateMachineArnPrefix!),
    network: drivers.network,
    certificates: drivers.certificates,
    config,
    log: createLogger({ service: "ottava-api" }, config.logLevel),
  };
}
