// The DynamoDB clients, for AWS or for DynamoDB Local.
import { ConditionalCheckFailedException, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, UpdateCommand, type TransactWriteCommand, type UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import { classifyUnavailable } from "@ottava/edge";

/** What every DynamoDB adapter is given: the table, and a clock (tests set it; the wall clock otherwise). */
export interface AdapterOptions {
  tableName: string;
  now?: () => Date;
}

/** A DynamoDB adapter of a port: its document client, its table and its clock, held once for all of them. */
export abstract class DynamoAdapter<O extends AdapterOptions = AdapterOptions> {
  protected readonly table: string;
  protected readonly now: () => Date;

  constructor(
    protected readonly doc: DynamoDBDocumentClient,
    protected readonly opts: O,
  ) {
    this.table = opts.tableName;
    this.now = opts.now ?? (() => new Date());
  }
}

/** One item of a TransactWriteItems request. */
export type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]["TransactItems"]>[number];
/** DynamoDB's limit of items in one transaction. */
export const MAX_TRANSACTION = 100;

/**
 * What a caller does to a DynamoDB client before its first request: add middleware, or wrap the SDK's
 * request handler. The product gives none; tests and benchmarks add their meter or their injected
 * faults (`@ottava/db/testing/metering`, `@ottava/db/testing/faults`), and the document client built on
 * the client shares what was added.
 */
export type ClientDecorator = (client: DynamoDBClient) => void;

/** A DynamoDB client and its document client, `decorate`d before either is used. */
export function createClients(endpoint?: string, decorate?: ClientDecorator): { client: DynamoDBClient; doc: DynamoDBDocumentClient } {
  const client = new DynamoDBClient(
    endpoint
      ? { endpoint, region: process.env.AWS_REGION ?? "us-east-1", credentials: { accessKeyId: "local", secretAccessKey: "local" } }
      : {},
  );
  // The SDK's logger middleware filters every input and output for a logger we never give it (a
  // no-op logger still gets the filtered copies): a measurable share of each call's CPU, for nothing.
  client.middlewareStack.remove("loggerMiddleware");
  // Its errors that are DynamoDB unavailable (throttled, failing, unreachable), once the SDK's retries
  // are spent, marked as such: the API's 503, a flow task's TransientError.
  classifyUnavailable(client);
  decorate?.(client);
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  return { client, doc };
}

const CONFLICT = new Set(["TransactionConflictException", "TransactionInProgressException"]);

/** Is this a transaction conflict (retried, never answered with 409)? */
export function isTransactionConflict(e: unknown): boolean {
  const err = e as { name?: string; CancellationReasons?: { Code?: string }[] };
  if (CONFLICT.has(err?.name ?? "")) return true;
  return err?.name === "TransactionCanceledException" && (err.CancellationReasons ?? []).some((r) => r?.Code === "TransactionConflict");
}

/** Runs a write, retrying transaction conflicts with jittered backoff. */
export async function retryConflicts<T>(fn: () => Promise<T>, attempts = 8): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (e) {
      if (i >= attempts || !isTransactionConflict(e)) throw e;
      await new Promise((r) => setTimeout(r, Math.random() * 20 * 2 ** i));
    }
  }
}

/**
 * Makes a conditional write: true if it was made, false if its condition did not hold
 * (ConditionalCheckFailedException); any other error is thrown.
 */
export async function conditionally(write: () => Promise<unknown>): Promise<boolean> {
  try {
    await write();
    return true;
  } catch (e) {
    if (e instanceof ConditionalCheckFailedException) return false;
    throw e;
  }
}

/** A conditional UpdateItem, its transaction conflicts retried: true if made, false if its condition did not hold. */
export function conditionalUpdate(doc: DynamoDBDocumentClient, input: UpdateCommandInput): Promise<boolean> {
  return conditionally(() => retryConflicts(() => doc.send(new UpdateCommand(input))));
}
