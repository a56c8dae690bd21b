// /v2/lbaas/loadbalancers/{id}/resize: start (PUT) or cancel (DELETE) a load-balancer resize.
import { Hono } from "hono";
import { cancelResize, parseResizeBody, resizeLoadBalancer } from "@ottava/core";
import type { ApiDeps } from "../deps";
import { jsonBody } from "../http";
import type { Env } from "../middleware/context";

export function resizeRoutes(deps: ApiDeps) {
  return new Hono<Env>()
    .put("/", async (c) => {
      const body = parseResizeBody(await jsonBody(c));
      await resizeLoadBalancer({ ...deps, log: c.get("log") }, c.get("ctx"), c.req.param("id")!, body);
      return c.body(null, 202);
    })
    .delete("/", async (c) => {
      await cancelResize({ ...deps, log: c.get("log") }, c.get("ctx"), c.req.param("id")!);
      return c.body(null, 202);
    });
}
