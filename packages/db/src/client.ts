// The DynamoDB clients, for AWS or for DynamoDB Local.
import { ConditionalCheckFailedException, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, UpdateCommand, type TransactWriteCommand, type UpdateCommandInput } from "@aws-sdk/lib-dynamodb";
import { classifyUnavailable } from "@ottava/edge";
import { DynamoFaults, faultingHandler } from "./faults";
import { addMetering, dynamoMeter, dynamoMeteringEnabled } from "./metering";

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
 * A DynamoDB client and its document client. `faults` (OTTAVA_DYNAMODB_FAULTS: a setting, or the
 * DynamoFaults several clients share) wraps the SDK's request handler with the injected faults
 * (faults.ts); without it, or when it is empty, the SDK's handler is used as it is. `metered: false`
 * keeps a client out of the DynamoDB meter even when metering is on: the local runner's journal
 * (journal.ts) is the local stand-in for Step Functions' own history, not a request Ottava makes on
 * AWS, so the benchmark's counts and costs leave it out.
 */
export function createClients(
  endpoint?: string,
  opts: { faults?: string | DynamoFaults; metered?: boolean } = {},
): { client: DynamoDBClient; doc: DynamoDBDocumentClient } {
  const client = new DynamoDBClient(
    endpoint
      ? { endpoint, region: process.env.AWS_REGION ?? "us-east-1", credentials: { accessKeyId: "local", secretAccessKey: "local" } }
      : {},
  );
  // Below the retry middleware: every attempt goes through it. (The handler the SDK built, wrapped
  // before the first request: each request reads it from the configuration.)
  const { faults } = opts;
  const injected = typeof faults === "string" ? (faults.trim() ? new DynamoFaults(faults) : undefined) : faults;
  if (injected) client.config.requestHandler = faultingHandler(client.config.requestHandler, injected);
  // The SDK's logger middleware filters every input and output for a logger we never give it (a
  // no-op logger still gets the filtered copies): a measurable share of each call's CPU, for nothing.
  client.middlewareStack.remove("loggerMiddleware");
  // Its errors that are DynamoDB unavailable (throttled, failing, unreachable), once the SDK's retries
  // are spent, marked as such: the API's 503, a flow task's TransientError.
  classifyUnavailable(client);
  // Metered only when asked for (enableDynamoMetering): the document client shares the middleware.
  if (opts.metered !== false && dynamoMeteringEnabled()) addMetering(client, dynamoMeter);
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
