// The cross-pool member batch update (PUT /v2/lbaas/pools/members): mounted before the pool routes,
// since /pools/members is not /pools/{pool_id}.
import { Hono } from "hono";
import { crossPoolUpdateMembers, CrossPoolMembersPut, parseRoot } from "@ottava/core";
import type { ApiDeps } from "../deps";
import { jsonBody, truthy } from "../http";
import type { Env } from "../middleware/context";

export function crossPoolMemberRoutes(deps: ApiDeps) {
  return new Hono<Env>().put("/", async (c) => {
    const members = parseRoot("members_", "members", CrossPoolMembersPut, await jsonBody(c));
    await crossPoolUpdateMembers({ ...deps, log: c.get("log") }, c.get("ctx"), members, truthy(c.req.query("additive_only")));
    return c.body(null, 202);
  });
}
