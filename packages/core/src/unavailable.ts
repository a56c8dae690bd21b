// When DynamoDB (or another AWS service a request or task calls) cannot answer: the errors the AWS
// SDK gives up on after its own retries — throttling, 5xx, lost connections and timeouts — told
// apart from every other error here, once. The API answers them 503 with Octavia's fault body
// (serviceUnavailable); a flow task rethrows them as TransientError, which the flows' Retry retries
// (flows/builder.ts in @ottava/controller), as Step Functions retries a Lambda's transient errors.
import { Fault } from "./faults";

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
 * Is this error a service being unavailable (for now), rather than a refusal or a bug? Throttling
 * names, 5xx answers (and errors the SDK models as server faults), errors the SDK marks retryable
 * (`$retryable`), network errors and timeouts, a transaction cancelled because an item was
 * throttled; also when such an error is the `cause` of another. Never an API fault.
 */
export function isUnavailable(e: unknown, depth = 0): boolean {
  if (typeof e !== "object" || e === null || e instanceof Fault) return false;
  const err = e as SdkError;
  const name = typeof err.name === "string" ? err.name : "";
  if (THROTTLING.has(name) || SERVER.has(name)) return true;
  if (typeof err.code === "string" && NETWORK.has(err.code)) return true;
  if (err.$retryable !== undefined || err.$fault === "server") return true;
  const status = err.$metadata?.httpStatusCode;
  if (status !== undefined && status >= 500) return true;
  if (name === "TransactionCanceledException" && (err.CancellationReasons ?? []).some((r) => r?.Code === "ThrottlingError")) return true;
  return depth < 5 && err.cause !== undefined && isUnavailable(err.cause, depth + 1);
}

/** What an unavailability error is called in faults and logs: its name, or Node's code for a network error. */
export function unavailableReason(e: unknown): string {
  const err = e as SdkError;
  const name = typeof err?.name === "string" ? err.name : "Error";
  return name === "Error" && typeof err?.code === "string" ? err.code : name;
}

/** The API's answer to an unavailability error: 503 with Octavia's fault body, naming the error and nothing else of it. */
export const serviceUnavailable = (e: unknown) =>
  new Fault(503, `The service is temporarily unavailable (${unavailableReason(e)}). Please retry the request later.`);

/** A flow task's error that the flow retries (its Retry names it): a service was unavailable. */
export class TransientError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TransientError";
  }
}
