// One DynamoDB Local for every integration test of the run (each test file uses its own tables).
import type { TestProject } from "vitest/node";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDynamoDbLocal } from "@ottava/local/dynamodb-local";

declare module "vitest" {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}

export default async function setup(project: TestProject) {
  const dynamo = await startDynamoDbLocal({ inMemory: true, dataDir: mkdtempSync(join(tmpdir(), "ottava-test-")) });
  project.provide("dynamoEndpoint", dynamo.endpoint);
  return () => dynamo.stop();
}
