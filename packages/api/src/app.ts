// Builds the Hono app: the Octavia v2 API, with /v2.0 as an alias of /v2.
import { Hono } from "hono";
import { createLogger } from "@ottava/core";
import type { ApiDeps } from "./deps";
import { requestContext, type Env } from "./middleware/context";
import { notFoundHandler, onError } from "./middleware/errors";
import { amphoraRoutes } from "./routes/amphorae";
import { loadBalancerRoutes } from "./routes/loadbalancers";
import { v2Index, versionRoutes } from "./routes/versions";
import { listenerRoutes } from "./routes/listener";
// IMPORT:listener
import { healthMonitorRoutes, poolRoutes } from "./routes/pool";
// IMPORT:pool
import { memberRoutes } from "./routes/member";
// IMPORT:member
import { l7PolicyRoutes, l7RuleRoutes } from "./routes/l7";
// IMPORT:l7
import { catalogRoutes } from "./routes/catalog";
// IMPORT:catalog
import { crossPoolMemberRoutes } from "./routes/crosspool";
// IMPORT:crosspool
import { resizeRoutes } from "./routes/resize";
// IMPORT:resize
import { healthManagerRoutes } from "./routes/healthmanager";
// IMPORT:healthmanager

export function createApp(deps: ApiDeps): Hono<Env> {
  const app = new Hono<Env>({ strict: false });
  app.use("*", requestContext(deps.log ?? createLogger({ service: "ottava-api" })));
  app.onError(onError);
  app.notFound(notFoundHandler);
  app.route("/", versionRoutes);
  for (const v of ["/v2", "/v2.0"]) {
    app.route(v, v2Index);
    app.route(`${v}/lbaas/loadbalancers`, loadBalancerRoutes(deps));
    app.route(`${v}/octavia/amphorae`, amphoraRoutes(deps));
    app.route(`${v}/lbaas/listeners`, listenerRoutes(deps));
    app.route(`${v}/lbaas/pools/members`, crossPoolMemberRoutes(deps));
    // ROUTES:crosspool (before the pool routes: /pools/members is not /pools/{pool_id})
    app.route(`${v}/lbaas/loadbalancers/:id/resize`, resizeRoutes(deps));
    // ROUTES:resize
    app.route(`${v}/octavia/healthmanager`, healthManagerRoutes(deps));
    // ROUTES:healthmanager
    // ROUTES:listener
    app.route(`${v}/lbaas/pools`, poolRoutes(deps));
    app.route(`${v}/lbaas/healthmonitors`, healthMonitorRoutes(deps));
    // ROUTES:pool
    app.route(`${v}/lbaas/pools/:pool_id/members`, memberRoutes(deps));
    // ROUTES:member
    app.route(`${v}/lbaas/l7policies/:l7policy_id/rules`, l7RuleRoutes(deps));
    app.route(`${v}/lbaas/l7policies`, l7PolicyRoutes(deps));
    // ROUTES:l7
    app.route(`${v}/lbaas`, catalogRoutes(deps));
    // ROUTES:catalog
  }
  return app;
}
