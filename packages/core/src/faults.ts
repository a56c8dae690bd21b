// Octavia's API faults (octavia/common/exceptions.py), their wire body, and the two checks that raise
// NotFound and ImmutableObject for every resource.
import { DELETED, type StatusSet } from "./constants";

export interface FaultBody {
  faultcode: "Client" | "Server";
  faultstring: string;
  debuginfo: string | null;
}

export class Fault extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "Fault";
  }

  body(): FaultBody {
    return { faultcode: this.status >= 500 ? "Server" : "Client", faultstring: this.message, debuginfo: null };
  }
}

export const notFound = (resource: string, id: string) => new Fault(404, `${resource} ${id} not found.`);

export const immutable = (resource: string, id: string) => new Fault(409, `${resource} ${id} is immutable and cannot be updated.`);

/**
 * `found` (a store's read: `{ record, ... }`), unless it is absent or DELETED: Octavia's 404
 * "<resource> <id> not found." (a DELETED object is never answered).
 */
export function requireFound<T extends { record: { provisioning_status?: string } }>(
  found: T | undefined,
  resource: string,
  id: string,
): T {
  if (!found || found.record.provisioning_status === DELETED) throw notFound(resource, id);
  return found;
}

/**
 * `record`, if its provisioning status is one of `statuses` (constants.ts names every such set), else
 * Octavia's `if x.provisioning_status not in constants.MUTABLE_STATUSES: raise ImmutableObject`: the 409
 * "<resource> <id> is immutable and cannot be updated." (an absent record too).
 */
export function requireStatus<T extends { provisioning_status?: string }>(
  record: T | undefined,
  statuses: StatusSet,
  resource: string,
  id: string,
): T {
  if (!record || !statuses.includes(record.provisioning_status ?? "")) throw immutable(resource, id);
  return record;
}

export const validation = (detail: string) => new Fault(400, `Validation failure: ${detail}`);

export const invalidOption = (value: string, option: string) => new Fault(400, `${value} is not a valid option for ${option}`);

export const providerNotFound = (provider: string) => new Fault(501, `Provider '${provider}' was not found.`);

export const quotaMet = (resource: string) => new Fault(403, `Quota has been met for resources: ${resource}`);

export const policyForbidden = () => new Fault(403, "Policy does not allow this request to be performed.");

export const invalidInput = (field: string, value: unknown, reason: string) =>
  new Fault(400, `Invalid input for field/attribute ${field}. Value: '${formatValue(value)}'. ${reason}`);

/**
 * A project id Ottava takes (from X-Project-Id under noauth, or a quota's path): at most 255 characters,
 * as Keystone's ids (64 at most) always are. Octavia's project_id columns hold 36 and fail with a
 * database error beyond; a longer one here would be a key DynamoDB refuses.
 */
export function projectIdOf(id: string): string {
  if (id.length > 255) throw invalidInput("project_id", id.slice(0, 64) + "…", "Value should have a maximum character requirement of 255");
  return id;
}

/** The 500 that stands for any error we did not anticipate: never leaks internals. */
export const internalError = () => new Fault(500, "An unknown exception occurred.");

function formatValue(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  return JSON.stringify(value);
}
