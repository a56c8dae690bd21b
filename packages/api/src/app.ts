// Builds the Hono app: the Octavia v2 API, with /v2.0 as an alias of /v2.
import { Hono } from "hono";
import { createLogger } from "@ottava/core";
import type { ApiDeps } from "./deps";
import { requestContext, type Env } from "./middleware/context";
import { notFoundHandler, onError } from "./middleware/errors";
import { amphoraRoutes } from "./routes/amphorae";
import { loadBalancerRoutes } from "./routes/loadbalancers";
import { v2Index, versionRoutes } from "./routes/versions";
// IMPORT:listener
// IMPORT:pool
// IMPORT:member
// IMPORT:l7
// IMPORT:catalog

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
    // ROUTES:listener
    // ROUTES:pool
    // ROUTES:member
    // ROUTES:l7
    // ROUTES:catalog
  }
  return app;
}
