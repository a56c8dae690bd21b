// Request ids, the caller's context and a request-scoped logger, as Octavia's middleware pipeline:
// under keystone, keystonemiddleware's auth_token in front (X-Auth-Token validated, identity headers
// sent by the client ignored, 401/503 as it answers them); under noauth, X-Project-Id and admin.
import { randomUUID } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { noauthContext, tokenContext, type Logger, type PolicyEnforcer, type RequestContext } from "@ottava/core";
import { InvalidToken, KeystoneUnavailable, type KeystoneAuth } from "../keystone";

export type Env = {
  Variables: {
    ctx: RequestContext;
    log: Logger;
    /** Under a nested collection (a pool's members, a policy's rules): the LB its parent hangs from, read once (routes/children.ts). */
    scopeLb: string;
  };
};

/** Paths keystonemiddleware lets through unauthenticated in Octavia (octavia/common/keystone.py _NOAUTH_PATHS). */
const NOAUTH_PATHS = new Set(["/", "/load-balancer/", "/healthcheck", "/load-balancer/healthcheck"]);

export interface AuthSetup {
  policy: PolicyEnforcer;
  /** Present under auth_strategy keystone. */
  keystone: KeystoneAuth | undefined;
}

export function requestContext(log: Logger, auth: AuthSetup): MiddlewareHandler<Env> {
  return async (c, next) => {
    const requestId = `req-${randomUUID()}`;
    const reqLog = log.child({ requestId });
    c.set("log", reqLog);
    c.header("x-openstack-request-id", requestId);
    const started = Date.now();
    const denied = await authenticate(c, requestId, auth, reqLog);
    if (denied) {
      reqLog.info("request", { method: c.req.method, path: c.req.path, status: denied.status, ms: Date.now() - started });
      return denied;
    }
    await next();
    reqLog.info("request", {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Date.now() - started,
      project: c.get("ctx").projectId,
      user: c.get("ctx").userId,
    });
  };
}

/** Sets the context, or answers the request (401/503) when the caller cannot be identified. */
async function authenticate(c: Context<Env>, requestId: string, auth: AuthSetup, log: Logger): Promise<Response | undefined> {
  if (!auth.keystone) {
    c.set("ctx", noauthContext(requestId, c.req.header("x-project-id"), auth.policy));
    return undefined;
  }
  const anonymous = { projectId: undefined, userId: "", roles: [], systemScope: undefined };
  if (NOAUTH_PATHS.has(c.req.path)) {
    c.set("ctx", tokenContext(requestId, anonymous, auth.policy));
    return undefined;
  }
  const token = c.req.header("x-auth-token");
  try {
    if (!token) throw new InvalidToken("no X-Auth-Token");
    const info = await auth.keystone.validate(token);
    c.set("ctx", tokenContext(requestId, info, auth.policy));
    return undefined;
  } catch (e) {
    if (e instanceof InvalidToken) {
      log.warn("authorization failed for token", { reason: e.message });
      return c.json({ error: { code: 401, title: "Unauthorized", message: "The request you have made requires authentication." } }, 401, {
        "WWW-Authenticate": `Keystone uri="${auth.keystone.authUri}"`,
      });
    }
    if (e instanceof KeystoneUnavailable) {
      log.error("unable to validate token", { reason: e.message });
      return c.json(
        {
          message:
            "The server is currently unavailable. Please try again at a later time.<br /><br />\nThe Keystone service is temporarily unavailable.\n\n",
          code: "503 Service Unavailable",
          title: "Service Unavailable",
        },
        503,
      );
    }
    throw e;
  }
}
