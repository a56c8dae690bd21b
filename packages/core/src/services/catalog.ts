// The catalog's API operations (octavia/api/v2/controllers/quotas.py, provider.py, flavors.py,
// flavor_profiles.py, availability_zones.py, availability_zone_profiles.py), over the CatalogStore
// port. Checks run in the order Octavia's controllers run them, so the same request meets the same
// refusal first; every "in use" or "already exists" refusal is decided by the store's conditional
// write, not by a read before it.
import { randomUUID } from "node:crypto";
import { AVAILABILITY_ZONE_DATA, FLAVOR_DATA, NIL_UUID } from "../constants";
import type { Config } from "../config";
import { CatalogConflict, type CatalogConflictReason, type CatalogRecords, type CatalogStore } from "../catalog";
import { Fault, invalidOption, notFound, projectIdOf } from "../faults";
import { authorize, listScope, type RequestContext } from "../policy";
import type { QuotaLimits } from "./quota";
import type { ItemSource } from "../query";
import type { LoadBalancerStore } from "../ports";
import type { AvailabilityZone, AvailabilityZoneProfile, Flavor, FlavorProfile } from "../resources/flavor";
import { QUOTA_FIELDS, type Quota, type QuotaValues } from "../resources/quota";
import {
  enabledProviders,
  metadataCapabilities,
  parseMetadata,
  providerSchemas,
  validateMetadata,
  type MetadataKind,
  type ProviderInfo,
} from "../resources/provider";

export interface CatalogDeps {
  catalog: CatalogStore;
  config: Config;
}

const API = "os_load-balancer_api";
const inUse = (what: string, id: string) => new Fault(409, `${what} ${id} is in use and cannot be modified.`);
const alreadyExists = (field: string, name: string | null) => new Fault(409, `A ${field} of ${name ?? "None"} already exists.`);

/** Answers a refused catalog write with the fault Octavia gives for that reason. */
function refused(e: unknown, faults: Partial<Record<CatalogConflictReason, () => Fault>>): never {
  if (e instanceof CatalogConflict) {
    const f = faults[e.reason];
    if (f) throw f();
  }
  throw e;
}

/** As Octavia's catalog controllers: the rule checked on the caller's own project. */
const authorizeCaller = (ctx: RequestContext, rule: string) => authorize(ctx, rule, ctx.projectId);

// ---- quotas ------------------------------------------------------------------------------------

/** [quotas] default_*_quota. */
export function defaultQuotas(config: Config): QuotaValues {
  return {
    load_balancer: config.defaultLoadBalancerQuota,
    listener: config.defaultListenerQuota,
    member: config.defaultMemberQuota,
    pool: config.defaultPoolQuota,
    health_monitor: config.defaultHealthMonitorQuota,
    l7policy: config.defaultL7policyQuota,
    l7rule: config.defaultL7ruleQuota,
  };
}

/** A project's quotas with the defaults where none is set (_get_db_quotas). */
export function effectiveQuotas(config: Config, q: Quota | undefined): QuotaValues {
  const d = defaultQuotas(config);
  return Object.fromEntries(QUOTA_FIELDS.map((f) => [f, q?.[f] ?? d[f]])) as QuotaValues;
}

/** The limits charges are checked against: a project's quotas under keystone; none under noauth, as Octavia. */
export function enforcedQuotaLimits(deps: CatalogDeps): QuotaLimits | undefined {
  if (deps.config.authStrategy !== "keystone") return undefined;
  return async (project) => effectiveQuotas(deps.config, await deps.catalog.get("quota", project));
}

/** Stored quotas only, as Octavia lists them (a project reset by DELETE stays listed, all null). */
/** The projects' quotas, each with its usage (in_use) where quotas are counted (keystone), as Octavia's rows. */
export function listQuotas(
  deps: CatalogDeps & { store: Pick<LoadBalancerStore, "quotaUsage"> },
  ctx: RequestContext,
  projectFilter: string | undefined,
): ItemSource {
  const scope = listScope(ctx, "quota", projectFilter);
  const all = deps.catalog.list("quota");
  const counted = deps.config.authStrategy === "keystone";
  return async function* (order, after) {
    for await (const q of all(order, after)) {
      if (scope !== undefined && q.project_id !== scope) continue;
      yield counted ? { ...q, in_use: await deps.store.quotaUsage(String(q.project_id)) } : q;
    }
  };
}

export async function getQuotas(deps: CatalogDeps, ctx: RequestContext, projectId: string): Promise<QuotaValues> {
  authorize(ctx, `${API}:quota:get_one`, projectId);
  return effectiveQuotas(deps.config, await deps.catalog.get("quota", projectId));
}

export function getDefaultQuotas(deps: CatalogDeps, ctx: RequestContext, projectId: string): QuotaValues {
  authorize(ctx, `${API}:quota:get_defaults`, projectId);
  return defaultQuotas(deps.config);
}

/** PUT: sets the given quotas (null: back to the default), creating the project's record if needed. */
export async function updateQuotas(
  deps: CatalogDeps,
  ctx: RequestContext,
  projectId: string,
  set: Partial<QuotaValues>,
): Promise<QuotaValues> {
  authorize(ctx, `${API}:quota:put`, projectIdOf(projectId));
  return effectiveQuotas(deps.config, await deps.catalog.upsert("quota", projectId, { ...set, project_id: projectId }));
}

/** DELETE: every quota back to the default. The record stays (listed with nulls), as in Octavia. */
export async function resetQuotas(deps: CatalogDeps, ctx: RequestContext, projectId: string): Promise<void> {
  authorize(ctx, `${API}:quota:delete`, projectId);
  const nulls = Object.fromEntries(QUOTA_FIELDS.map((f) => [f, null])) as Partial<Quota>;
  await deps.catalog.update("quota", projectId, nulls).catch((e) => refused(e, { not_found: () => notFound("Quotas", projectId) }));
}

// ---- providers ---------------------------------------------------------------------------------

export function listProviders(ctx: RequestContext): ProviderInfo[] {
  authorizeCaller(ctx, `${API}:provider:get_all`);
  return enabledProviders();
}

/** GET /providers/{provider}/flavor_capabilities or /availability_zone_capabilities. */
export function providerCapabilities(ctx: RequestContext, provider: string, kind: MetadataKind): ProviderInfo[] {
  authorizeCaller(ctx, `${API}:${kind === "flavor" ? "provider-flavor" : "provider-availability-zone"}:get_all`);
  return metadataCapabilities(providerSchemas(provider)[kind]);
}

// ---- flavor profiles and availability zone profiles ------------------------------------------------

type Profile = FlavorProfile | AvailabilityZoneProfile;

/** What differs between the two profile controllers, messages included. */
interface ProfileKind {
  kind: "flavorprofile" | "availabilityzoneprofile";
  rbac: string;
  dataField: typeof FLAVOR_DATA | typeof AVAILABILITY_ZONE_DATA;
  metadata: MetadataKind;
  /** The data model's name: GET's and PUT's "... not found." */
  modelName: string;
  /** The controller's name: the NIL id's, DELETE's and in-use messages. */
  name: string;
  /** The option PUT names when the data is not JSON (Octavia says flavor_data for both). */
  putDataOption: string;
}

const FLAVOR_PROFILE: ProfileKind = {
  kind: "flavorprofile",
  rbac: `${API}:flavor-profile`,
  dataField: FLAVOR_DATA,
  metadata: "flavor",
  modelName: "Flavor Profile",
  name: "Flavor profile",
  putDataOption: FLAVOR_DATA,
};

const AZ_PROFILE: ProfileKind = {
  kind: "availabilityzoneprofile",
  rbac: `${API}:availability-zone-profile`,
  dataField: AVAILABILITY_ZONE_DATA,
  metadata: "availability_zone",
  modelName: "Availability Zone Profile",
  name: "Availability Zone Profile",
  putDataOption: FLAVOR_DATA,
};

type ProfilePost = { name: string | null; provider_name: string | null } & Partial<Record<ProfileKind["dataField"], string | null>>;
type ProfilePut = { name?: string | null | undefined; provider_name?: string | null | undefined } & Partial<
  Record<ProfileKind["dataField"], string | null>
>;

async function createProfile(k: ProfileKind, deps: CatalogDeps, ctx: RequestContext, body: ProfilePost): Promise<Profile> {
  authorizeCaller(ctx, `${k.rbac}:post`);
  const text = body[k.dataField] ?? null;
  const data = parseMetadata(text, k.dataField);
  // Octavia would store a null provider and fail on the column; refused up front instead.
  if (body.provider_name === null) throw invalidOption("None", "provider_name");
  validateMetadata(body.provider_name, providerSchemas(body.provider_name)[k.metadata], data);
  const profile = { id: randomUUID(), name: body.name, provider_name: body.provider_name, [k.dataField]: text } as unknown as Profile;
  await deps.catalog.create(k.kind, profile);
  return profile;
}

async function getProfile(k: ProfileKind, deps: CatalogDeps, ctx: RequestContext, id: string): Promise<Profile> {
  authorizeCaller(ctx, `${k.rbac}:get_one`);
  if (id === NIL_UUID) throw notFound(k.name, id);
  const p = await deps.catalog.get(k.kind, id);
  if (!p) throw notFound(k.modelName, id);
  return p;
}

async function updateProfile(k: ProfileKind, deps: CatalogDeps, ctx: RequestContext, id: string, body: ProfilePut): Promise<Profile> {
  authorizeCaller(ctx, `${k.rbac}:put`);
  for (const field of ["name", "provider_name", k.dataField] as const) {
    if (body[field] === null) throw invalidOption("None", field);
  }
  const text = body[k.dataField] ?? undefined;
  // What the driver reads cannot change while a child uses the profile.
  const driverChange = text !== undefined || body.provider_name !== undefined;
  if (driverChange && (await deps.catalog.referenced(k.kind, id))) throw inUse(k.name, id);
  if (id === NIL_UUID) throw notFound(k.name, id);
  if (text !== undefined) {
    const data = parseMetadata(text, k.putDataOption);
    const provider = body.provider_name ?? (await deps.catalog.get(k.kind, id))?.provider_name;
    if (provider === undefined || provider === null) throw notFound(k.modelName, id);
    validateMetadata(provider, providerSchemas(provider)[k.metadata], data);
  }
  const set = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as Partial<Profile>;
  if (Object.keys(set).length === 0) {
    const p = await deps.catalog.get(k.kind, id);
    if (!p) throw notFound(k.modelName, id);
    return p;
  }
  return deps.catalog
    .update(k.kind, id, set, { unreferenced: driverChange })
    .catch((e) => refused(e, { not_found: () => notFound(k.modelName, id), in_use: () => inUse(k.name, id) }));
}

async function deleteProfile(k: ProfileKind, deps: CatalogDeps, ctx: RequestContext, id: string): Promise<void> {
  authorizeCaller(ctx, `${k.rbac}:delete`);
  if (id === NIL_UUID) throw notFound(k.name, id);
  await deps.catalog
    .delete(k.kind, id, { unreferenced: true })
    .catch((e) => refused(e, { not_found: () => notFound(k.name, id), in_use: () => inUse(k.name, id) }));
}

function listProfiles(k: ProfileKind, deps: CatalogDeps, ctx: RequestContext): ItemSource {
  authorizeCaller(ctx, `${k.rbac}:get_all`);
  return deps.catalog.list(k.kind);
}

export const createFlavorProfile = (deps: CatalogDeps, ctx: RequestContext, body: ProfilePost) =>
  createProfile(FLAVOR_PROFILE, deps, ctx, body) as Promise<FlavorProfile>;
export const getFlavorProfile = (deps: CatalogDeps, ctx: RequestContext, id: string) =>
  getProfile(FLAVOR_PROFILE, deps, ctx, id) as Promise<FlavorProfile>;
export const updateFlavorProfile = (deps: CatalogDeps, ctx: RequestContext, id: string, body: ProfilePut) =>
  updateProfile(FLAVOR_PROFILE, deps, ctx, id, body) as Promise<FlavorProfile>;
export const deleteFlavorProfile = (deps: CatalogDeps, ctx: RequestContext, id: string) => deleteProfile(FLAVOR_PROFILE, deps, ctx, id);
export const listFlavorProfiles = (deps: CatalogDeps, ctx: RequestContext) => listProfiles(FLAVOR_PROFILE, deps, ctx);

export const createAvailabilityZoneProfile = (deps: CatalogDeps, ctx: RequestContext, body: ProfilePost) =>
  createProfile(AZ_PROFILE, deps, ctx, body) as Promise<AvailabilityZoneProfile>;
export const getAvailabilityZoneProfile = (deps: CatalogDeps, ctx: RequestContext, id: string) =>
  getProfile(AZ_PROFILE, deps, ctx, id) as Promise<AvailabilityZoneProfile>;
export const updateAvailabilityZoneProfile = (deps: CatalogDeps, ctx: RequestContext, id: string, body: ProfilePut) =>
  updateProfile(AZ_PROFILE, deps, ctx, id, body) as Promise<AvailabilityZoneProfile>;
export const deleteAvailabilityZoneProfile = (deps: CatalogDeps, ctx: RequestContext, id: string) =>
  deleteProfile(AZ_PROFILE, deps, ctx, id);
export const listAvailabilityZoneProfiles = (deps: CatalogDeps, ctx: RequestContext) => listProfiles(AZ_PROFILE, deps, ctx);

// ---- flavors -----------------------------------------------------------------------------------

const FLAVOR_RBAC = `${API}:flavor`;

export interface FlavorCreate {
  name: string | null;
  description?: string | null | undefined;
  enabled: boolean;
  flavor_profile_id: string;
}

export interface FlavorUpdate {
  name?: string | null | undefined;
  description?: string | null | undefined;
  enabled?: boolean | undefined;
}

export async function createFlavor(deps: CatalogDeps, ctx: RequestContext, body: FlavorCreate): Promise<Flavor> {
  authorizeCaller(ctx, `${FLAVOR_RBAC}:post`);
  const flavor: Flavor = {
    id: randomUUID(),
    name: body.name,
    description: body.description ?? null,
    enabled: body.enabled,
    flavor_profile_id: body.flavor_profile_id,
  };
  // Octavia leaves an unknown profile to the foreign key (an unhandled 500); answered as the profile's 404.
  await deps.catalog.create("flavor", flavor).catch((e) =>
    refused(e, {
      duplicate: () => alreadyExists("flavor", flavor.name),
      no_parent: () => notFound(FLAVOR_PROFILE.modelName, flavor.flavor_profile_id),
    }),
  );
  return flavor;
}

export async function getFlavor(deps: CatalogDeps, ctx: RequestContext, id: string): Promise<Flavor> {
  authorizeCaller(ctx, `${FLAVOR_RBAC}:get_one`);
  const f = id === NIL_UUID ? undefined : await deps.catalog.get("flavor", id);
  if (!f) throw notFound("Flavor", id);
  return f;
}

export function listFlavors(deps: CatalogDeps, ctx: RequestContext): ItemSource {
  authorizeCaller(ctx, `${FLAVOR_RBAC}:get_all`);
  return deps.catalog.list("flavor");
}

export async function updateFlavor(deps: CatalogDeps, ctx: RequestContext, id: string, body: FlavorUpdate): Promise<Flavor> {
  authorizeCaller(ctx, `${FLAVOR_RBAC}:put`);
  if (id === NIL_UUID) throw notFound("Flavor", id);
  return updateOrGet(deps.catalog, "flavor", id, body, {
    not_found: () => notFound("Flavor", id),
    // Octavia lets the unique constraint fail (a 500); answered as its create answers a taken name.
    duplicate: () => alreadyExists("flavor", body.name ?? null),
  });
}

/** Refused while a load balancer that is not DELETED has the flavor (Octavia's foreign key). */
export async function deleteFlavor(deps: CatalogDeps, ctx: RequestContext, id: string): Promise<void> {
  authorizeCaller(ctx, `${FLAVOR_RBAC}:delete`);
  if (id === NIL_UUID || !(await deps.catalog.get("flavor", id))) throw notFound("Flavor", id);
  if (await deps.catalog.loadBalancersUsing("flavor_id", id)) throw inUse("Flavor", id);
  await deps.catalog.delete("flavor", id).catch((e) => refused(e, { not_found: () => notFound("Flavor", id) }));
}

// ---- availability zones ------------------------------------------------------------------------

const AZ_RBAC = `${API}:availability-zone`;

export interface AvailabilityZoneCreate {
  name: string;
  description?: string | null | undefined;
  enabled: boolean;
  availability_zone_profile_id: string;
}

export interface AvailabilityZoneUpdate {
  description?: string | null | undefined;
  enabled?: boolean | undefined;
}

export async function createAvailabilityZone(
  deps: CatalogDeps,
  ctx: RequestContext,
  body: AvailabilityZoneCreate,
): Promise<AvailabilityZone> {
  authorizeCaller(ctx, `${AZ_RBAC}:post`);
  // Octavia's placeholder zone for DELETED load balancers holds that name.
  if (body.name === NIL_UUID) throw alreadyExists("availability zone", body.name);
  const zone: AvailabilityZone = {
    name: body.name,
    description: body.description ?? null,
    enabled: body.enabled,
    availability_zone_profile_id: body.availability_zone_profile_id,
  };
  await deps.catalog.create("availabilityzone", zone).catch((e) =>
    refused(e, {
      exists: () => alreadyExists("availability zone", zone.name),
      no_parent: () => notFound(AZ_PROFILE.modelName, zone.availability_zone_profile_id),
    }),
  );
  return zone;
}

export async function getAvailabilityZone(deps: CatalogDeps, ctx: RequestContext, name: string): Promise<AvailabilityZone> {
  authorizeCaller(ctx, `${AZ_RBAC}:get_one`);
  const z = name === NIL_UUID ? undefined : await deps.catalog.get("availabilityzone", name);
  if (!z) throw notFound("Availability Zone", name);
  return z;
}

export function listAvailabilityZones(deps: CatalogDeps, ctx: RequestContext): ItemSource {
  authorizeCaller(ctx, `${AZ_RBAC}:get_all`);
  return deps.catalog.list("availabilityzone");
}

export async function updateAvailabilityZone(
  deps: CatalogDeps,
  ctx: RequestContext,
  name: string,
  body: AvailabilityZoneUpdate,
): Promise<AvailabilityZone> {
  authorizeCaller(ctx, `${AZ_RBAC}:put`);
  if (name === NIL_UUID) throw notFound("Availability Zone", name);
  return updateOrGet(deps.catalog, "availabilityzone", name, body, { not_found: () => notFound("Availability Zone", name) });
}

/** Refused while a load balancer that is not DELETED is in the zone (Octavia's foreign key). */
export async function deleteAvailabilityZone(deps: CatalogDeps, ctx: RequestContext, name: string): Promise<void> {
  authorizeCaller(ctx, `${AZ_RBAC}:delete`);
  if (name === NIL_UUID || !(await deps.catalog.get("availabilityzone", name))) throw notFound("Availability Zone", name);
  if (await deps.catalog.loadBalancersUsing("availability_zone", name)) throw inUse("Availability Zone", name);
  await deps.catalog.delete("availabilityzone", name).catch((e) => refused(e, { not_found: () => notFound("Availability Zone", name) }));
}

/** Writes the given fields, or, when none is given, answers the object as it is. */
async function updateOrGet<K extends "flavor" | "availabilityzone">(
  catalog: CatalogStore,
  kind: K,
  key: string,
  body: object,
  faults: Partial<Record<CatalogConflictReason, () => Fault>>,
) {
  const set = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as Partial<CatalogRecords[K]>;
  if (Object.keys(set).length === 0) {
    const current = await catalog.get(kind, key);
    if (!current) throw faults.not_found!();
    return current;
  }
  return catalog.update(kind, key, set).catch((e) => refused(e, faults));
}
