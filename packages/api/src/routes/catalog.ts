// Octavia's global objects under /v2/lbaas: quotas, providers, flavors, flavor profiles, availability
// zones and availability zone profiles (octavia/api/v2/controllers/quotas.py, provider.py,
// flavors.py, flavor_profiles.py, availability_zones.py, availability_zone_profiles.py).
import { Hono, type Context } from "hono";
import {
  AvailabilityZonePost,
  AvailabilityZoneProfilePost,
  AvailabilityZoneProfilePut,
  AvailabilityZonePut,
  Fault,
  FlavorPost,
  FlavorProfilePost,
  FlavorProfilePut,
  FlavorPut,
  availabilityZoneProfileResource as azp,
  availabilityZoneResource as az,
  createAvailabilityZone,
  createAvailabilityZoneProfile,
  createFlavor,
  createFlavorProfile,
  deleteAvailabilityZone,
  deleteAvailabilityZoneProfile,
  deleteFlavor,
  deleteFlavorProfile,
  flavorProfileResource as fp,
  flavorResource as fl,
  getAvailabilityZone,
  getAvailabilityZoneProfile,
  getDefaultQuotas,
  getFlavor,
  getFlavorProfile,
  getQuotas,
  listAvailabilityZoneProfiles,
  listAvailabilityZones,
  listFlavorProfiles,
  listFlavors,
  listPage,
  listProviders,
  listQuotas,
  noArguments,
  parseListQuery,
  parseQuotaPut,
  parseRoot,
  providerCapabilities,
  quotaBody,
  quotaResource as qr,
  resetQuotas,
  selectFields,
  updateAvailabilityZone,
  updateAvailabilityZoneProfile,
  updateFlavor,
  updateFlavorProfile,
  updateQuotas,
  type CatalogDescriptor,
  type ItemSource,
  listItem,
  type MetadataKind,
  type ProviderInfo,
} from "@ottava/core";
import type { ApiDeps } from "../deps";
import { jsonBody, projectFilter, queryPairs, showResponse } from "../http";
import type { Env } from "../middleware/context";

export function catalogRoutes(deps: ApiDeps) {
  const max = deps.config.paginationMaxLimit;
  return (
    new Hono<Env>()
      // ---- quotas: GET/PUT/DELETE of one project's take no query arguments (wsme refuses them)
      .get("/quotas", (c) => catalogList(c, qr, (project) => listQuotas(deps, c.get("ctx"), project), max, { fields: false }))
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

      // ---- flavor profiles
      .get("/flavorprofiles", (c) => catalogList(c, fp, () => listFlavorProfiles(deps, c.get("ctx")), max))
      .post("/flavorprofiles", async (c) => {
        const body = parseRoot("flavor_profile_", fp.root, FlavorProfilePost, await jsonBody(c));
        return showResponse(c, fp, await createFlavorProfile(deps, c.get("ctx"), body), 201);
      })
      .get("/flavorprofiles/:id", async (c) => showResponse(c, fp, await getFlavorProfile(deps, c.get("ctx"), c.req.param("id"))))
      .put("/flavorprofiles/:id", async (c) => {
        const body = parseRoot("flavor_profile_", fp.root, FlavorProfilePut, await jsonBody(c));
        return showResponse(c, fp, await updateFlavorProfile(deps, c.get("ctx"), c.req.param("id"), body));
      })
      .delete("/flavorprofiles/:id", async (c) => {
        await deleteFlavorProfile(deps, c.get("ctx"), c.req.param("id"));
        return c.body(null, 204);
      })

      // ---- flavors
      .get("/flavors", (c) => catalogList(c, fl, () => listFlavors(deps, c.get("ctx")), max))
      .post("/flavors", async (c) => {
        const body = parseRoot("flavor_", fl.root, FlavorPost, await jsonBody(c));
        return showResponse(c, fl, await createFlavor(deps, c.get("ctx"), body), 201);
      })
      .get("/flavors/:id", async (c) => showResponse(c, fl, await getFlavor(deps, c.get("ctx"), c.req.param("id"))))
      .put("/flavors/:id", async (c) => {
        const body = parseRoot("flavor_", fl.root, FlavorPut, await jsonBody(c));
        return showResponse(c, fl, await updateFlavor(deps, c.get("ctx"), c.req.param("id"), body));
      })
      .delete("/flavors/:id", async (c) => {
        await deleteFlavor(deps, c.get("ctx"), c.req.param("id"));
        return c.body(null, 204);
      })

      // ---- availability zone profiles
      .get("/availabilityzoneprofiles", (c) => catalogList(c, azp, () => listAvailabilityZoneProfiles(deps, c.get("ctx")), max))
      .post("/availabilityzoneprofiles", async (c) => {
        const body = parseRoot("availability_zone_profile_", azp.root, AvailabilityZoneProfilePost, await jsonBody(c));
        return showResponse(c, azp, await createAvailabilityZoneProfile(deps, c.get("ctx"), body), 201);
      })
      .get("/availabilityzoneprofiles/:id", async (c) =>
        showResponse(c, azp, await getAvailabilityZoneProfile(deps, c.get("ctx"), c.req.param("id"))),
      )
      .put("/availabilityzoneprofiles/:id", async (c) => {
        const body = parseRoot("availability_zone_profile_", azp.root, AvailabilityZoneProfilePut, await jsonBody(c));
        return showResponse(c, azp, await updateAvailabilityZoneProfile(deps, c.get("ctx"), c.req.param("id"), body));
      })
      .delete("/availabilityzoneprofiles/:id", async (c) => {
        await deleteAvailabilityZoneProfile(deps, c.get("ctx"), c.req.param("id"));
        return c.body(null, 204);
      })

      // ---- availability zones: keyed by name
      .get("/availabilityzones", (c) => catalogList(c, az, () => listAvailabilityZones(deps, c.get("ctx")), max))
      .post("/availabilityzones", async (c) => {
        const body = parseRoot("availability_zone_", az.root, AvailabilityZonePost, await jsonBody(c));
        return showResponse(c, az, await createAvailabilityZone(deps, c.get("ctx"), body), 201);
      })
      .get("/availabilityzones/:name", async (c) => showResponse(c, az, await getAvailabilityZone(deps, c.get("ctx"), c.req.param("name"))))
      .put("/availabilityzones/:name", async (c) => {
        const body = parseRoot("availability_zone_", az.root, AvailabilityZonePut, await jsonBody(c));
        return showResponse(c, az, await updateAvailabilityZone(deps, c.get("ctx"), c.req.param("name"), body));
      })
      .delete("/availabilityzones/:name", async (c) => {
        await deleteAvailabilityZone(deps, c.get("ctx"), c.req.param("name"));
        return c.body(null, 204);
      })
  );
}

/** PUT or DELETE of /quotas without a project, answered as wsme answers the missing argument. */
function missingProjectId(): never {
  throw new Fault(400, 'Missing argument: "project_id"');
}

/**
 * GET on a catalog collection: the generic paging, sorting, filtering and `fields` of listPage, with
 * the catalog's own links key, and `fields` ignored where Octavia ignores it (quotas). listPage pages
 * by `id`: objects keyed otherwise (zones by name, quotas by project) carry their key as `id` while
 * it does, and lose it before they are answered.
 */
async function catalogList<T>(
  c: Context<Env>,
  d: CatalogDescriptor<T>,
  source: (projectFilter: string | undefined) => ItemSource,
  maxLimit: number,
  opts: { fields?: boolean } = {},
) {
  const q = parseListQuery(queryPairs(c), d.attributes, d.filters, maxLimit);
  const records = source(projectFilter(d, q));
  const hasId = d.attributes.includes("id");
  const shaped: ItemSource = async function* (order, after) {
    for await (const r of records(order, after)) yield { ...listItem(d, r as T), id: r[d.key] };
  };
  const url = new URL(c.req.url);
  const page = await listPage(shaped, q, `${url.origin}${url.pathname}`);
  const items = page.items.map((item) => {
    const { id, ...rest } = item;
    const shown = hasId ? item : rest;
    return opts.fields === false ? shown : selectFields(shown, q.fields);
  });
  return c.json({ [d.collection]: items, [d.links]: page.links });
}

/** The `fields=` of a request (repeated or comma-separated). */
const fieldsOf = (c: Context) =>
  new URL(c.req.url).searchParams
    .getAll("fields")
    .flatMap((f) => f.split(","))
    .filter(Boolean);

const selectAll = (c: Context, list: ProviderInfo[]) => list.map((p) => selectFields({ ...p }, fieldsOf(c)));

/** A provider's capabilities, filtered on `name` and `description` as Octavia does; other arguments are ignored. */
function capabilityList(c: Context<Env>, kind: MetadataKind) {
  const name = c.req.query("name");
  const description = c.req.query("description");
  const all = providerCapabilities(c.get("ctx"), c.req.param("provider")!, kind);
  const kept = all.filter((p) => (!name || p.name === name) && (!description || p.description === description));
  return selectAll(c, kept);
}
