// Every error leaves as Octavia's fault body; an unexpected one is logged and answered 500 without internals.
import type { Context } from "hono";
import { Fault, internalError } from "@ottava/core";
import type { Env } from "./context";

export function faultResponse(c: Context, fault: Fault) {
  return c.json(fault.body(), fault.status as 400);
}

export function onError(err: Error, c: Context<Env>) {
  if (err instanceof Fault) return faultResponse(c, err);
  c.get("log")?.error("unhandled error", { error: err.name, cause: err.message, stack: err.stack });
  return faultResponse(c, internalError());
}

export const notFoundHandler = (c: Context<Env>) => faultResponse(c, new Fault(404, "The resource could not be found."));
