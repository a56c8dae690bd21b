// Members of a pool (/v2/lbaas/pools/{pool_id}/members): the generic child routes, plus Octavia's
// batch update (PUT on the collection).
import { batchUpdateMembers, lbOf, memberResource, MembersPut, parseRoot } from "@ottava/core";
import type { ApiDeps } from "../deps";
import { jsonBody, truthy } from "../http";
import { childRoutes } from "./children";

export function memberRoutes(deps: ApiDeps) {
  return childRoutes(memberResource, deps, (app) => {
    // Octavia's pool controller answers 404 for an unknown pool before any member route runs.
    app.use("*", async (c, next) => {
      await lbOf(deps, { kind: "pool", id: c.req.param("pool_id") ?? "" });
      await next();
    });
    app.put("/", async (c) => {
      const members = parseRoot("members_", "members", MembersPut, await jsonBody(c));
      const log = c.get("log");
      await batchUpdateMembers({ ...deps, log }, c.get("ctx"), c.req.param("pool_id") ?? "", members, truthy(c.req.query("additive_only")));
      return c.body(null, 202);
    });
  });
}
