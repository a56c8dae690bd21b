// Which errors of the AWS SDK's clients are a service being unavailable (for now): throttling, 5xx,
// lost connections and timeouts, told apart from refusals and bugs here, once, with the SDK's own
// names, and marked as @ottava/core's unavailability (markUnavailable) by a middleware on each client
// the product builds, once the SDK's retries are spent (classifyUnavailable). The API answers them 503;
// a flow task rethrows them as TransientError (isUnavailable and its callers, in @ottava/core).
import { markUnavailable } from "@ottava/core";

/** Error names of throttling (the SDK's THROTTLING_ERROR_CODES that DynamoDB and Step Functions answer). */
const THROTTLING = new Set([
  "ProvisionedThroughputExceededException",
  "ThrottlingException",
  "Throttling",
  "RequestLimitExceeded",
  "TooManyRequestsException",
]);
/** Error names of a service that failed or did not answer in time. */
const SERVER = new Set([
  "InternalServerError",
  "InternalFailure",
  "ServiceUnavailable",
  "ServiceUnavailableException",
  "TimeoutError",
  "RequestTimeout",
  "RequestTimeoutException",
]);
/** Node's codes of a connection lost or never made (the SDK's NODEJS_TIMEOUT_ERROR_CODES and NODEJS_NETWORK_ERROR_CODES). */
const NETWORK = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);

interface SdkError {
  name?: unknown;
  code?: unknown;
  $retryable?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: number; attempts?: number };
  CancellationReasons?: { Code?: string }[];
  cause?: unknown;
}

/**
 * Is this error of the AWS SDK a service being unavailable? Throttling names, 5xx answers (and errors
 * the SDK models as server faults), errors the SDK marks retryable (`$retryable`), network errors and
 * timeouts, a transaction cancelled because an item was throttled; also when such an error is the
 * `cause` of another.
 */
export function isAwsUnavailable(e: unknown, depth = 0): boolean {
  if (typeof e !== "object" || e === null) return false;
  const err = e as SdkError;
  const name = typeof err.name === "string" ? err.name : "";
  if (THROTTLING.has(name) || SERVER.has(name)) return true;
  if (typeof err.code === "string" && NETWORK.has(err.code)) return true;
  if (err.$retryable !== undefined || err.$fault === "server") return true;
  const status = err.$metadata?.httpStatusCode;
  if (status !== undefined && status >= 500) return true;
  if (name === "TransactionCanceledException" && (err.CancellationReasons ?? []).some((r) => r?.Code === "ThrottlingError")) return true;
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
 * one (isAwsUnavailable), and thrown on as it was (its class, name and fields unchanged).
 */
export function classifyUnavailable(client: SdkClient): void {
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
}
