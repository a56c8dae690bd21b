// /v2/lbaas/listeners (octavia/api/v2/controllers/listener.py): the generic child routes, plus the
// listener's statistics.
import { listenerResource, listenerStats, showChild, validation } from "@ottava/core";
import type { ApiDeps } from "../deps";
import { jsonBody } from "../http";
import { childRoutes } from "./children";

export function listenerRoutes(deps: ApiDeps) {
  return childRoutes(listenerResource, deps, (app) => {
    app.get("/:id/stats", async (c) => c.json(await listenerStats(deps, c.get("ctx"), c.req.param("id"))));
    // A PUT of an empty object: Octavia finds the listener (404), then refuses the missing listener
    // object with its own message rather than wsme's missing argument. Anything else goes on.
    app.put("/:id", async (c, next) => {
      const raw = await jsonBody(c);
      if (typeof raw === "object" && raw !== null && !Array.isArray(raw) && Object.keys(raw).length === 0) {
        await showChild(deps, c.get("ctx"), listenerResource, c.req.param("id"));
        throw validation("No listener object supplied.");
      }
      await next();
    });
  });
}
