// Request ids, the caller's context and a request-scoped logger, as Octavia's middleware pipeline.
import { randomUUID } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { noauthContext, type Logger, type RequestContext } from "@ottava/core";

export type Env = { Variables: { ctx: RequestContext; log: Logger } };

export function requestContext(log: Logger): MiddlewareHandler<Env> {
  return async (c, next) => {
    const requestId = `req-${randomUUID()}`;
    // Keystone validation takes this seam: it builds the context from the token instead.
    const ctx = noauthContext(requestId, c.req.header("x-project-id"));
    const reqLog = log.child({ requestId });
    c.set("ctx", ctx);
    c.set("log", reqLog);
    c.header("x-openstack-request-id", requestId);
    const started = Date.now();
    await next();
    reqLog.info("request", { method: c.req.method, path: c.req.path, status: c.res.status, ms: Date.now() - started });
  };
}
