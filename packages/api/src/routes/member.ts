// Members of a pool (/v2/lbaas/pools/{pool_id}/members): the generic child routes (which look the
// pool up first), plus Octavia's batch update (PUT on the collection).
import { batchUpdateMembers, memberResource, MembersPut, parseRoot } from "@ottava/core";
import type { ApiDeps } from "../deps";
import { jsonBody, truthy } from "../http";
import { childRoutes } from "./children";

export function memberRoutes(deps: ApiDeps) {
  return childRoutes(memberResource, deps, (app) => {
    app.put("/", async (c) => {
      const members = parseRoot("members_", "members", MembersPut, await jsonBody(c));
      const pool = { lbId: c.get("scopeLb"), poolId: c.req.param("pool_id") ?? "" };
      await batchUpdateMembers({ ...deps, log: c.get("log") }, c.get("ctx"), pool, members, truthy(c.req.query("additive_only")));
      return c.body(null, 202);
    });
  });
}
