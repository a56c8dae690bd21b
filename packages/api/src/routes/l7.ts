// L7 policies (/v2/lbaas/l7policies) and their rules (/v2/lbaas/l7policies/{l7policy_id}/rules):
// the generic child routes of their descriptors.
import { DELETED, l7PolicyResource, l7RuleResource, notFound, parseRoot, updateChild } from "@ottava/core";
import type { ApiDeps } from "../deps";
import { jsonBody, showResponse } from "../http";
import { childRoutes } from "./children";

export const l7PolicyRoutes = (deps: ApiDeps) => childRoutes(l7PolicyResource, deps);

export function l7RuleRoutes(deps: ApiDeps) {
  return childRoutes(l7RuleResource, deps, (app) => {
    // Octavia's policy controller looks the policy up before handing over to the rules: an unknown
    // one is answered "L7Policy <id> not found." whatever the rule request.
    app.use("*", async (c, next) => {
      const id = c.req.param("l7policy_id") ?? "";
      const found = await deps.store.getChild("l7policy", id);
      if (!found || found.record.provisioning_status === DELETED) throw notFound("L7Policy", id);
      await next();
    });
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
