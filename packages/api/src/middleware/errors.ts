// Every error leaves as Octavia's fault body; an unexpected one is logged and answered 500 without internals.
// DynamoDB (or another service) unavailable once the SDK's retries are spent — throttled, failing
// (5xx), unreachable — is a 503 (isUnavailable in @ottava/core), whatever the route.
import type { Context } from "hono";
import { Fault, internalError, isUnavailable, serviceUnavailable, unavailableReason } from "@ottava/core";
import type { Env } from "./context";

export function faultResponse(c: Context, fault: Fault) {
  return c.json(fault.body(), fault.status as 400);
}

export function onError(err: Error, c: Context<Env>) {
  if (err instanceof Fault) return faultResponse(c, err);
  if (isUnavailable(err)) {
    const attempts = (err as { $metadata?: { attempts?: number } }).$metadata?.attempts;
    c.get("log")?.error("service unavailable", { error: unavailableReason(err), cause: err.message, attempts });
    return faultResponse(c, serviceUnavailable(err));
  }
  c.get("log")?.error("unhandled error", { error: err.name, cause: err.message, stack: err.stack });
  return faultResponse(c, internalError());
}

export const notFoundHandler = (c: Context<Env>) => faultResponse(c, new Fault(404, "The resource could not be found."));
