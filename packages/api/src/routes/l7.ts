// L7 policies (/v2/lbaas/l7policies) and their rules (/v2/lbaas/l7policies/{l7policy_id}/rules):
// the generic child routes of their descriptors (the rules' look their policy up first).
import { l7PolicyResource, l7RuleResource, parseRoot, updateChild } from "@ottava/core";
import type { ApiDeps } from "../deps";
import { jsonBody, showResponse } from "../http";
import { childRoutes } from "./children";

export const l7PolicyRoutes = (deps: ApiDeps) => childRoutes(l7PolicyResource, deps);

export function l7RuleRoutes(deps: ApiDeps) {
  return childRoutes(l7RuleResource, deps, (app) => {
    // The rule controller's put() names its body argument l7rule_ (post() names it rule_), which
    // wsme's messages quote.
    app.put("/:id", async (c) => {
      const body = parseRoot("l7rule_", "rule", l7RuleResource.put, await jsonBody(c));
      const { record } = await updateChild(
        { ...deps, log: c.get("log") },
        c.get("ctx"),
        l7RuleResource,
        c.req.param("id"),
        body,
        c.req.param(),
      );
      return showResponse(c, l7RuleResource.descriptor, record);
    });
  });
}
