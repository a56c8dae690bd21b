// When DynamoDB (or another service a request or task calls) cannot answer: throttled, failing, out of
// reach, once the client's own retries are spent. The adapter of each service tells such an error
// apart from every other, since only it knows its service's errors (@ottava/edge's classifyUnavailable
// for the AWS SDK's clients), and marks it (markUnavailable); here the mark is read, once. The API
// answers such an error 503 with Octavia's fault body (serviceUnavailable); a flow task rethrows it as
// TransientError, which the flows' Retry retries (flows/builder.ts in @ottava/controller), as Step
// Functions retries a Lambda's transient errors.
import { Fault } from "./faults";

/** The errors marked: the mark is kept beside an error, never on it. */
const marked = new WeakSet<object>();

/** Marks an error as a service being unavailable (for now), and answers it: the error itself, unchanged. */
export function markUnavailable<E extends object>(e: E): E {
  marked.add(e);
  return e;
}

/**
 * Is this error a service being unavailable (for now), rather than a refusal or a bug? An error its
 * adapter marked (markUnavailable), or one whose `cause` is.
 */
export function isUnavailable(e: unknown, depth = 0): boolean {
  return (
    typeof e === "object" && e !== null && (marked.has(e) || (depth < 5 && isUnavailable((e as { cause?: unknown }).cause, depth + 1)))
  );
}

/** What an unavailability error is called in faults and logs: its name, or Node's code for a network error. */
export function unavailableReason(e: unknown): string {
  const err = e as { name?: unknown; code?: unknown };
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
