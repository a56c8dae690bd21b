// Which errors of the AWS SDK's clients are a service being unavailable (for now): what the SDK's own
// retry strategy retries (its service error classification: throttling, transient and server errors,
// lost connections and timeouts), once its retries are spent, and the few answers of DynamoDB it leaves
// to their status code: told apart from refusals and bugs here, once, and marked as @ottava/core's
// unavailability (markUnavailable) by a middleware on each client the product builds
// (classifyUnavailable). The API answers them 503; a flow task rethrows them as TransientError
// (isUnavailable and its callers, in @ottava/core).
import { markUnavailable } from "@ottava/core";
import { isServerError, isThrottlingError, isTransientError } from "@smithy/core/retry";

/** Error names of a service that failed, whatever the answer's status. */
const SERVER = new Set(["InternalServerError", "InternalFailure", "ServiceUnavailable", "ServiceUnavailableException"]);

type SdkError = Parameters<typeof isTransientError>[0] & { $fault?: unknown; CancellationReasons?: { Code?: string }[] };

/**
 * Is this error of the AWS SDK a service being unavailable? What the SDK retries: throttling (its
 * names, 429, `$retryable.throttling`), transient errors (`$retryable`, timeouts, network errors, 500,
 * 502, 503, 504) and other 5xx answers; errors the SDK models as server faults, or named as DynamoDB
 * names its failures; a transaction cancelled because an item was throttled; also when such an error
 * is the `cause` of another.
 */
export function isAwsUnavailable(e: unknown, depth = 0): boolean {
  if (typeof e !== "object" || e === null) return false;
  const err = e as SdkError;
  if (isThrottlingError(err) || isTransientError(err) || isServerError(err) || SERVER.has(err.name) || err.$fault === "server") return true;
  if (err.name === "TransactionCanceledException" && (err.CancellationReasons ?? []).some((r) => r?.Code === "ThrottlingError"))
    return true;
  return depth < 5 && err.cause !== undefined && isAwsUnavailable(err.cause, depth + 1);
}

/** A handler of the SDK's stack, as the middleware sees it: arguments handed on untouched, whatever their type. */
type Next = (args: never) => Promise<unknown>;

/** What classifyUnavailable needs of an SDK client: its middleware stack (every client of SDK v3 has one). */
export interface SdkClient {
  middlewareStack: { add(middleware: (next: Next) => Next, options: { step: "initialize"; priority: "high"; name: string }): void };
}

/**
 * Adds to `client` (and to a document client built on it, which shares its stack) the outermost
 * middleware, above the SDK's retries: an error the call ends with is marked unavailable when it is
 * one (isAwsUnavailable), and thrown on as it was (the same object). Answers the client.
 */
export function classifyUnavailable<C extends SdkClient>(client: C): C {
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (e) {
        throw isAwsUnavailable(e) ? markUnavailable(e as object) : e;
      }
    },
    { step: "initialize", priority: "high", name: "ottavaUnavailable" },
  );
  return client;
}
