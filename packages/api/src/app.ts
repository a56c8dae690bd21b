// Builds the Hono app: the Octavia v2 API, with /v2.0 as an alias of /v2.
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { bodyTooLarge, enforcedQuotaLimits } from "@ottava/core";
import { asWorkload } from "@ottava/edge";
import { createAuth } from "./auth";
import type { ApiDeps } from "./deps";
import { requestContext, type Env } from "./middleware/context";
import { notFoundHandler, onError } from "./middleware/errors";
import { amphoraRoutes } from "./routes/amphorae";
import { loadBalancerRoutes } from "./routes/loadbalancers";
import { v2Index, versionRoutes } from "./routes/versions";
import { listenerRoutes } from "./routes/listener";
import { healthMonitorRoutes, poolRoutes } from "./routes/pool";
import { memberRoutes } from "./routes/member";
import { l7PolicyRoutes, l7RuleRoutes } from "./routes/l7";
import { catalogRoutes } from "./routes/catalog";
import { crossPoolMemberRoutes } from "./routes/crosspool";
import { resizeRoutes } from "./routes/resize";
import { healthManagerRoutes } from "./routes/healthmanager";
import { neutronRoutes } from "./routes/neutron";

/** Async: the operator's policy file, when set, is read (and a YAML one parsed) before the app answers anything. */
export async function createApp(apiDeps: ApiDeps): Promise<Hono<Env>> {
  const log = apiDeps.log;
  // Quotas are enforced under keystone (as Octavia: never under noauth).
  const deps: ApiDeps = { ...apiDeps, quotaLimits: enforcedQuotaLimits(apiDeps) };
  const auth = await createAuth(deps.config, log);
  const app = new Hono<Env>({ strict: false });
  // Its AWS calls (VIP allocation, the profile checks' and look-ups' Describes, certificate reads) say "api" in their User-Agent (@ottava/edge asWorkload).
  app.use("*", (_c, next) => asWorkload("api", next));
  app.use("*", requestContext(log, auth));
  // Before anything reads a body: a larger one is refused (413) without being read whole.
  const maxSize = deps.config.maxRequestBodySize;
  app.use(
    "*",
    bodyLimit({
      maxSize,
      onError: () => {
        throw bodyTooLarge(maxSize);
      },
    }),
  );
  app.onError(onError);
  app.notFound(notFoundHandler);
  app.route("/", versionRoutes);
  for (const v of ["/v2", "/v2.0"]) {
    app.route(v, v2Index);
    app.route(`${v}/lbaas/loadbalancers`, loadBalancerRoutes(deps));
    app.route(`${v}/octavia/amphorae`, amphoraRoutes(deps));
    app.route(`${v}/lbaas/listeners`, listenerRoutes(deps));
    // Before the pool routes: /pools/members is not /pools/{pool_id}.
    app.route(`${v}/lbaas/pools/members`, crossPoolMemberRoutes(deps));
    app.route(`${v}/lbaas/loadbalancers/:id/resize`, resizeRoutes(deps));
    app.route(`${v}/octavia/healthmanager`, healthManagerRoutes(deps));
    app.route(`${v}/lbaas/pools`, poolRoutes(deps));
    app.route(`${v}/lbaas/healthmonitors`, healthMonitorRoutes(deps));
    app.route(`${v}/lbaas/pools/:pool_id/members`, memberRoutes(deps));
    app.route(`${v}/lbaas/l7policies/:l7policy_id/rules`, l7RuleRoutes(deps));
    app.route(`${v}/lbaas/l7policies`, l7PolicyRoutes(deps));
    app.route(`${v}/lbaas`, catalogRoutes(deps));
  }
  // The Neutron look-ups, answered from the VPC: only with the vpc network driver (else 404, as any unknown path).
  if (deps.config.networkDriver === "vpc") app.route("/network", neutronRoutes(deps));
  return app;
}
