// /v2/lbaas/loadbalancers (octavia/api/v2/controllers/load_balancer.py): thin handlers over the domain.
import { Hono } from "hono";
import {
  LoadBalancerPost,
  LoadBalancerPut,
  createLoadBalancer,
  fullGraphResponse,
  deleteLoadBalancer,
  failoverLoadBalancer,
  getFlowTrail,
  getLoadBalancer,
  listLoadBalancerResponses,
  loadBalancerDescriptor as r,
  loadBalancerStats,
  loadBalancerStatus,
  parseRoot,
  updateLoadBalancer,
} from "@ottava/core";
import type { ApiDeps } from "../deps";
import { jsonBody, listResponse, showResponse, truthy } from "../http";
import type { Env } from "../middleware/context";

export function loadBalancerRoutes(deps: ApiDeps) {
  return (
    new Hono<Env>()
      .get("/", (c) =>
        listResponse(c, r, (project) => listLoadBalancerResponses(deps, c.get("ctx"), project), deps.config.paginationMaxLimit),
      )
      .post("/", async (c) => {
        const body = parseRoot("load_balancer", r.root, LoadBalancerPost, await jsonBody(c));
        const { lb, graph } = await createLoadBalancer({ ...deps, log: c.get("log") }, c.get("ctx"), body);
        // Octavia answers a create with the full graph: listeners and pools as whole objects.
        return c.json({ loadbalancer: { ...r.toResponse(lb), ...fullGraphResponse(lb, graph) } }, 201);
      })
      .get("/:id", async (c) => {
        return showResponse(c, r, await getLoadBalancer(deps, c.get("ctx"), c.req.param("id")));
      })
      .put("/:id", async (c) => {
        const body = parseRoot("load_balancer", r.root, LoadBalancerPut, await jsonBody(c));
        const lb = await updateLoadBalancer({ ...deps, log: c.get("log") }, c.get("ctx"), c.req.param("id"), body);
        // The answer lists the LB's listeners and pools (carried on it), as Octavia's does.
        return showResponse(c, r, lb);
      })
      .delete("/:id", async (c) => {
        await deleteLoadBalancer({ ...deps, log: c.get("log") }, c.get("ctx"), c.req.param("id"), truthy(c.req.query("cascade")));
        return c.body(null, 204);
      })
      .put("/:id/failover", async (c) => {
        await failoverLoadBalancer({ ...deps, log: c.get("log") }, c.get("ctx"), c.req.param("id"));
        return c.body(null, 202);
      })
      // Ottava's flow trail (not in Octavia): the LB's flow runs, newest first.
      .get("/:id/flows", async (c) => c.json(await getFlowTrail(deps, c.get("ctx"), c.req.param("id"))))
      // "statuses" is Octavia's backward-compatible alias of "status".
      .get("/:id/:status{status|statuses}", async (c) => c.json(await loadBalancerStatus(deps, c.get("ctx"), c.req.param("id"))))
      .get("/:id/stats", async (c) => c.json(await loadBalancerStats(deps, c.get("ctx"), c.req.param("id"))))
  );
}
