// A fresh table in the shared DynamoDB Local, with the real stores, for one test file.
import { randomUUID } from "node:crypto";
import { inject } from "vitest";
import { loadConfig, type Config } from "@ottava/core";
import { createClients, createStores, ensureTable, type ClientDecorator, type Stores } from "@ottava/db";

/** The settings `env` on a table of their own, and its stores (their client `decorate`d: a meter, faults). */
export async function freshTable(env: Record<string, string> = {}, decorate?: ClientDecorator): Promise<{ config: Config } & Stores> {
  const config = loadConfig({
    OTTAVA_DYNAMODB_ENDPOINT: inject("dynamoEndpoint"),
    OTTAVA_TABLE_NAME: `t-${randomUUID()}`,
    OTTAVA_LOG_LEVEL: "error",
    ...env,
  });
  await ensureTable(createClients(config.dynamodbEndpoint).client, config.tableName);
  return { config, ...createStores(config, decorate) };
}
