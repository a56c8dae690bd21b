// /v2/octavia/amphorae (octavia/api/v2/controllers/amphora.py): the amphora records, read-only here.
import { Hono } from "hono";
import { amphoraResource as r, authorize, DELETED, listScope, notFound } from "@ottava/core";
import type { ApiDeps } from "../deps";
import { listResponse, responses, showResponse } from "../http";
import type { Env } from "../middleware/context";

export function amphoraRoutes(deps: ApiDeps) {
  return new Hono<Env>()
    .get("/", (c) => {
      authorize(c.get("ctx"), "os_load-balancer_api:amphora:get_all", undefined);
      return listResponse(c, r, (project) => responses(deps.store.amphorae(listScope(c.get("ctx"), project)), r.toResponse), deps.config.paginationMaxLimit);
    })
    .get("/:id", async (c) => {
      const id = c.req.param("id");
      const a = await deps.store.getAmphora(id);
      if (!a || a.status === DELETED) throw notFound("Amphora", id);
      authorize(c.get("ctx"), "os_load-balancer_api:amphora:get_one", undefined);
      return showResponse(c, r, a);
    });
}
