// A fresh table in the shared DynamoDB Local, with the real stores, for one test file.
import { randomUUID } from "node:crypto";
import { inject } from "vitest";
import { loadConfig, type Config } from "@ottava/core";
import { createClients, createStores, ensureTable, type Stores } from "@ottava/db";

export async function freshTable(env: Record<string, string> = {}): Promise<{ config: Config } & Stores> {
  const config = loadConfig({
    OTTAVA_DYNAMODB_ENDPOINT: inject("dynamoEndpoint"),
    OTTAVA_TABLE_NAME: `t-${randomUUID()}`,
    OTTAVA_LOG_LEVEL: "error",
    ...env,
  });
  await ensureTable(createClients(config.dynamodbEndpoint).client, config.tableName);
  return { config, ...createStores(config) };
}
