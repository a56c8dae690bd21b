// /v2/octavia/amphorae (octavia/api/v2/controllers/amphora.py): list, show, stats, failover,
// agent configuration refresh, delete.
import { Hono } from "hono";
import {
  amphoraDescriptor as r,
  amphoraStats,
  authorize,
  configureAmphora,
  deleteAmphora,
  failoverAmphora,
  getAmphora,
} from "@ottava/core";
import type { ApiDeps } from "../deps";
import { listItems, listResponse, showResponse } from "../http";
import type { Env } from "../middleware/context";

export function amphoraRoutes(deps: ApiDeps) {
  return new Hono<Env>()
    .get("/", (c) => {
      // As Octavia's AmphoraController: the rule on the caller's project, then any project_id is just a filter.
      authorize(c.get("ctx"), "os_load-balancer_api:amphora:get_all", c.get("ctx").projectId);
      return listResponse(c, r, (project) => listItems(deps.store.amphorae(project), r), deps.config.paginationMaxLimit);
    })
    .get("/:id", async (c) => showResponse(c, r, await getAmphora(deps, c.get("ctx"), c.req.param("id"))))
    .get("/:id/stats", async (c) => c.json(await amphoraStats(deps, c.get("ctx"), c.req.param("id"))))
    .put("/:id/failover", async (c) => {
      await failoverAmphora({ ...deps, log: c.get("log") }, c.get("ctx"), c.req.param("id"));
      return c.body(null, 202);
    })
    .put("/:id/config", async (c) => {
      await configureAmphora({ ...deps, log: c.get("log") }, c.get("ctx"), c.req.param("id"));
      return c.body(null, 202);
    })
    .delete("/:id", async (c) => {
      await deleteAmphora({ ...deps, log: c.get("log") }, c.get("ctx"), c.req.param("id"));
      return c.body(null, 204);
    });
}
