// A fresh table in the shared DynamoDB Local, with the real store, for one test file.
import { randomUUID } from "node:crypto";
import { inject } from "vitest";
import { loadConfig, type Config } from "@ottava/core";
import { DynamoStore, createClients, ensureTable } from "@ottava/db";

export async function freshTable(env: Record<string, string> = {}): Promise<{ config: Config; store: DynamoStore }> {
  const config = loadConfig({
    OTTAVA_DYNAMODB_ENDPOINT: inject("dynamoEndpoint"),
    OTTAVA_TABLE_NAME: `t-${randomUUID()}`,
    OTTAVA_LOG_LEVEL: "error",
    ...env,
  });
  await ensureTable(createClients(config.dynamodbEndpoint).client, config.tableName);
  const { doc } = createClients(config.dynamodbEndpoint);
  return { config, store: new DynamoStore(doc, { tableName: config.tableName, expiryAge: config.loadBalancerExpiryAge }) };
}
