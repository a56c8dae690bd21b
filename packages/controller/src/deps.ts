// Wiring: the store, drivers and logger a process (a Lambda or the local runtime) gives its tasks.
import { createLogger, type Config } from "@ottava/core";
import { DynamoStore, createClients } from "@ottava/db";
import { noopDrivers } from "./drivers/noop";
import type { TaskContext } from "./tasks/context";

export function createStore(config: Config): DynamoStore {
  const { doc } = createClients(config.dynamodbEndpoint);
  return new DynamoStore(doc, { tableName: config.tableName, expiryAge: config.loadBalancerExpiryAge });
}

export function createTaskContext(config: Config, store = createStore(config)): TaskContext {
  return { store, drivers: noopDrivers(config.noopFaults, config.noopLatency), config, log: createLogger({ service: "ottava-controller" }, config.logLevel) };
}
