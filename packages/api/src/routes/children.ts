// The routes of every object of an LB tree, from its ChildResource descriptor: thin handlers over
// the one generic mechanism (createChild, updateChild, deleteChild, showChild, childSource). A nested
// collection (a pool's members, a policy's rules) first looks its parent up, once per request.
import { Hono, type Context } from "hono";
import {
  childSource,
  createChild,
  deleteChild,
  parseRoot,
  scopeLb,
  showChild,
  updateChild,
  type ChildResource,
  type TreeRecord,
} from "@ottava/core";
import type { ApiDeps } from "../deps";
import { jsonBody, listResponse, showResponse } from "../http";
import type { Env } from "../middleware/context";

export function childRoutes<T extends TreeRecord, Post, Put>(
  res: ChildResource<T, Post, Put>,
  deps: ApiDeps,
  extend?: (app: Hono<Env>) => void,
) {
  const d = res.descriptor;
  const withLog = (c: Context<Env>) => ({ ...deps, log: c.get("log") });
  const app = new Hono<Env>();
  const scope = res.scope;
  // Octavia's parent controller answers 404 "<Parent> <id> not found." for an unknown parent before
  // any route of the collection runs (a bad body included); the LB it found is handed on, not read again.
  if (scope) {
    app.use("*", async (c, next) => {
      c.set("scopeLb", await scopeLb(deps, scope, c.req.param()));
      await next();
    });
  }
  const parentLb = (c: Context<Env>) => (scope ? c.get("scopeLb") : undefined);
  extend?.(app); // resource-specific routes (e.g. stats, batch member update) go before /:id
  return app
    .get("/", (c) =>
      listResponse(
        c,
        d,
        (project) => childSource(deps, c.get("ctx"), res, project, c.req.param(), parentLb(c)),
        deps.config.paginationMaxLimit,
      ),
    )
    .post("/", async (c) => {
      const body = parseRoot(res.argument, d.root, res.post, await jsonBody(c));
      const { record } = await createChild(withLog(c), c.get("ctx"), res, body, c.req.param(), parentLb(c));
      return showResponse(c, d, record, 201);
    })
    .get("/:id", async (c) => {
      const { record } = await showChild(deps, c.get("ctx"), res, c.req.param("id"), c.req.param());
      return showResponse(c, d, record, 200);
    })
    .put("/:id", async (c) => {
      const body = parseRoot(res.argument, d.root, res.put, await jsonBody(c));
      const { record } = await updateChild(withLog(c), c.get("ctx"), res, c.req.param("id"), body, c.req.param());
      return showResponse(c, d, record, 200);
    })
    .delete("/:id", async (c) => {
      await deleteChild(withLog(c), c.get("ctx"), res, c.req.param("id"), c.req.param());
      return c.body(null, 204);
    });
}
