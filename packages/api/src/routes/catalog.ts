// Octavia's global objects under /v2/lbaas: quotas, providers, flavors, flavor profiles, availability
// zones and availability zone profiles (octavia/api/v2/controllers/quotas.py, provider.py,
// flavors.py, flavor_profiles.py, availability_zones.py, availability_zone_profiles.py).
import { Hono, type Context } from "hono";
import {
  Fault,
  availabilityZoneCatalog,
  availabilityZoneProfileCatalog,
  createCatalogObject,
  deleteCatalogObject,
  flavorCatalog,
  flavorProfileCatalog,
  getCatalogObject,
  getDefaultQuotas,
  getQuotas,
  listCatalogObjects,
  listProviders,
  listQuotas,
  noArguments,
  parseQuotaPut,
  parseRoot,
  providerCapabilities,
  quotaBody,
  quotaCatalog,
  resetQuotas,
  selectFields,
  updateCatalogObject,
  updateQuotas,
  type CatalogDescriptor,
  type CatalogObject,
  type ItemSource,
  type MetadataKind,
  type ProviderInfo,
} from "@ottava/core";
import type { ApiDeps } from "../deps";
import { fieldsOf, jsonBody, listItems, listResponse, queryPairs, showResponse } from "../http";
import type { Env } from "../middleware/context";

export function catalogRoutes(deps: ApiDeps) {
  return (
    new Hono<Env>()
      // ---- quotas: GET/PUT/DELETE of one project's take no query arguments (wsme refuses them)
      .get("/quotas", (c) => {
        const quotas = (project: string | undefined) => keyedItems(quotaCatalog, listQuotas(deps, c.get("ctx"), project));
        return listResponse(c, quotaCatalog, quotas, deps.config.paginationMaxLimit, { fields: false });
      })
      .put("/quotas", () => missingProjectId())
      .delete("/quotas", () => missingProjectId())
      .get("/quotas/:project_id", async (c) => {
        noArguments(queryPairs(c));
        return c.json(quotaBody(await getQuotas(deps, c.get("ctx"), c.req.param("project_id"))));
      })
      .get("/quotas/:project_id/default", (c) => {
        noArguments(queryPairs(c));
        return c.json(quotaBody(getDefaultQuotas(deps, c.get("ctx"), c.req.param("project_id"))));
      })
      .put("/quotas/:project_id", async (c) => {
        noArguments(queryPairs(c));
        const set = parseQuotaPut(await jsonBody(c));
        return c.json(quotaBody(await updateQuotas(deps, c.get("ctx"), c.req.param("project_id"), set)), 202);
      })
      .delete("/quotas/:project_id", async (c) => {
        noArguments(queryPairs(c));
        await resetQuotas(deps, c.get("ctx"), c.req.param("project_id"));
        return c.body(null, 202);
      })

      // ---- providers: plain lists (no paging); capabilities filter on name and description
      .get("/providers", (c) => c.json({ providers: selectAll(c, listProviders(c.get("ctx"))) }))
      .get("/providers/:provider/flavor_capabilities", (c) => c.json({ flavor_capabilities: capabilityList(c, "flavor") }))
      .get("/providers/:provider/availability_zone_capabilities", (c) =>
        c.json({ availability_zone_capabilities: capabilityList(c, "availability_zone") }),
      )

      .route("/flavorprofiles", objectRoutes(flavorProfileCatalog, deps))
      .route("/flavors", objectRoutes(flavorCatalog, deps))
      .route("/availabilityzoneprofiles", objectRoutes(availabilityZoneProfileCatalog, deps))
      // zones are keyed by name
      .route("/availabilityzones", objectRoutes(availabilityZoneCatalog, deps))
  );
}

/** The five routes of a flavor, a zone or a profile, from its descriptor: thin handlers over services/catalog.ts. */
function objectRoutes<T, Post, Put>(d: CatalogObject<T, Post, Put>, deps: ApiDeps) {
  return new Hono<Env>()
    .get("/", (c) => listResponse(c, d, () => keyedItems(d, listCatalogObjects(deps, c.get("ctx"), d)), deps.config.paginationMaxLimit))
    .post("/", async (c) => {
      const body = parseRoot(d.argument, d.root, d.post, await jsonBody(c));
      return showResponse(c, d, await createCatalogObject(deps, c.get("ctx"), d, body), 201);
    })
    .get("/:key", async (c) => showResponse(c, d, await getCatalogObject(deps, c.get("ctx"), d, c.req.param("key"))))
    .put("/:key", async (c) => {
      const body = parseRoot(d.argument, d.root, d.put, await jsonBody(c));
      return showResponse(c, d, await updateCatalogObject(deps, c.get("ctx"), d, c.req.param("key"), body));
    })
    .delete("/:key", async (c) => {
      await deleteCatalogObject(deps, c.get("ctx"), d, c.req.param("key"));
      return c.body(null, 204);
    });
}

/** PUT or DELETE of /quotas without a project, answered as wsme answers the missing argument. */
function missingProjectId(): never {
  throw new Fault(400, 'Missing argument: "project_id"');
}

/**
 * A catalog kind's records as list items. listPage pages by `id`: objects keyed otherwise (zones by
 * name, quotas by project) carry their key as `id` while listed (listResponse drops it again).
 */
function keyedItems<T>(d: CatalogDescriptor<T>, records: ItemSource): ItemSource {
  const items = listItems(records, d);
  if (d.key === "id") return items;
  return async function* (order, after, query) {
    for await (const item of items(order, after, query)) yield Object.assign(item, { id: item[d.key] });
  };
}

const selectAll = (c: Context, list: ProviderInfo[]) => list.map((p) => selectFields({ ...p }, fieldsOf(c)));

/** A provider's capabilities, filtered on `name` and `description` as Octavia does; other arguments are ignored. */
function capabilityList(c: Context<Env>, kind: MetadataKind) {
  const name = c.req.query("name");
  const description = c.req.query("description");
  const all = providerCapabilities(c.get("ctx"), c.req.param("provider")!, kind);
  const kept = all.filter((p) => (!name || p.name === name) && (!description || p.description === description));
  return selectAll(c, kept);
}
