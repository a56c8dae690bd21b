// Octavia's API faults (octavia/common/exceptions.py) and their wire body.

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
