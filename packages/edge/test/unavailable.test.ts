// The AWS SDK's errors that are a service unavailable (isAwsUnavailable), and the middleware that marks
// them on a client (classifyUnavailable), as @ottava/core's isUnavailable reads them. The same through
// real clients: packages/db/test/faults.test.ts (DynamoDB), packages/controller/test/engine-sfn.test.ts
// (Step Functions).
import { describe, expect, it } from "vitest";
import { isUnavailable } from "@ottava/core";
import { classifyUnavailable, isAwsUnavailable, type SdkClient } from "@ottava/edge";

const named = (name: string, extra: object = {}) => Object.assign(new Error("x"), { name, ...extra });

describe("isAwsUnavailable", () => {
  it("tells unavailability from refusals and bugs", () => {
    for (const e of [
      named("ProvisionedThroughputExceededException"),
      named("ThrottlingException"),
      named("RequestLimitExceeded"),
      named("InternalServerError"),
      named("TimeoutError"),
      named("Error", { code: "ECONNREFUSED" }),
      named("SomethingNew", { $metadata: { httpStatusCode: 503 } }),
      named("ReplicatedWriteConflictException", { $retryable: {} }),
      named("TransactionCanceledException", { CancellationReasons: [{ Code: "None" }, { Code: "ThrottlingError" }] }),
      named("Error", { cause: named("Error", { code: "ECONNRESET" }) }),
      // What else the SDK's retry strategy retries: its other throttling names, 429, the other 5xx.
      named("TransactionInProgressException"),
      named("TooManyRequests", { $metadata: { httpStatusCode: 429 } }),
      named("BadGateway", { $metadata: { httpStatusCode: 502 } }),
    ])
      expect(isAwsUnavailable(e), e.name).toBe(true);
    for (const e of [
      named("ConditionalCheckFailedException", { $metadata: { httpStatusCode: 400 } }),
      named("TransactionCanceledException", { CancellationReasons: [{ Code: "ConditionalCheckFailed" }] }),
      named("ValidationException", { $metadata: { httpStatusCode: 400 } }),
      named("LockLost"),
      named("AbortError"),
      new TypeError("x is undefined"),
      "a string",
      undefined,
    ])
      expect(isAwsUnavailable(e)).toBe(false);
  });
});

/** A client's stack reduced to what classifyUnavailable uses: the middleware it adds, and where. */
function stack() {
  const added: { middleware: Parameters<SdkClient["middlewareStack"]["add"]>[0]; options: object }[] = [];
  const client: SdkClient = { middlewareStack: { add: (middleware, options) => void added.push({ middleware, options }) } };
  classifyUnavailable(client);
  /** A call through the middleware to a handler that fails with `e` (the SDK's retries spent). */
  const fail = async (e: unknown) =>
    added[0]!
      .middleware(async () => Promise.reject(e))(undefined as never)
      .catch((thrown: unknown) => thrown);
  return { added, fail };
}

describe("classifyUnavailable", () => {
  it("adds one middleware at the outermost step, above the SDK's retries", () => {
    expect(stack().added.map((a) => a.options)).toEqual([{ step: "initialize", priority: "high", name: "ottavaUnavailable" }]);
  });

  it("marks the errors that are unavailability, and throws each as it was (the same object, its class and fields)", async () => {
    const { fail } = stack();
    class ConditionalCheckFailedException extends Error {}
    const refusal = Object.assign(new ConditionalCheckFailedException("no"), { name: "ConditionalCheckFailedException" });
    const throttled = named("ThrottlingException", { $metadata: { httpStatusCode: 400, attempts: 4 } });
    const dropped = named("Error", { code: "ECONNRESET" });
    expect(await fail(refusal)).toBe(refusal);
    expect(isUnavailable(refusal)).toBe(false);
    expect(refusal).toBeInstanceOf(ConditionalCheckFailedException);
    expect(await fail(throttled)).toBe(throttled);
    expect(isUnavailable(throttled)).toBe(true);
    expect(throttled).toMatchObject({ name: "ThrottlingException", message: "x", $metadata: { attempts: 4 } });
    expect(Object.keys(throttled)).toEqual(["name", "$metadata"]); // the mark is not an enumerable field
    expect(await fail(dropped)).toBe(dropped);
    expect(isUnavailable(dropped)).toBe(true);
  });

  it("answers what the call answered", async () => {
    const { added } = stack();
    const out = { output: { Item: {} }, response: {} };
    await expect(added[0]!.middleware(async () => out)(undefined as never)).resolves.toBe(out);
  });
});
