// The catalog's API operations (octavia/api/v2/controllers/quotas.py, provider.py, flavors.py,
// flavor_profiles.py, availability_zones.py, availability_zone_profiles.py), over the CatalogStore
// port: quotas and providers, then one create, show, list, update and delete for the four other
// kinds, driven by their CatalogObject descriptors. Checks run in the order Octavia's controllers run
// them, so the same request meets the same refusal first; every "in use" or "already exists" refusal
// of a profile, a flavor name or a zone name is decided by the store's conditional write, not by a
// read before it.
import { randomUUID } from "node:crypto";
import { FLAVOR_DATA, NIL_UUID } from "../constants";
import type { Config } from "../config";
import { CatalogConflict, type CatalogConflictReason, type CatalogStore } from "../catalog";
import { Fault, invalidOption, notFound, projectIdOf } from "../faults";
import { authorize, listScope, type RequestContext } from "../policy";
import type { QuotaLimits } from "./quota";
import type { ItemSource } from "../query";
import type { LoadBalancerStore } from "../ports";
import type { CatalogObject } from "../resources/descriptor";
import type { ProfileValidator } from "../drivers";
import { checkProfileData } from "./profiles";
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
  /** Checks what profiles name against the cloud (the EC2 compute driver's); absent, nothing is checked. */
  profiles?: ProfileValidator | undefined;
}

const API = "os_load-balancer_api";
const inUse = (what: string, id: string) => new Fault(409, `${what} ${id} is in use and cannot be modified.`);
const alreadyExists = (field: string, name: string | null) => new Fault(409, `A ${field} of ${name ?? "None"} already exists.`);

type Faults = Partial<Record<CatalogConflictReason, () => Fault>>;

/** Answers a refused catalog write with the fault Octavia gives for that reason. */
function refused(e: unknown, faults: Faults): never {
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

/**
 * The projects' stored quotas only, as Octavia lists them (a project reset by DELETE stays listed, all
 * null), each with its usage (in_use) where quotas are counted (keystone), as Octavia's rows.
 */
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

// ---- flavors, availability zones and their profiles ------------------------------------------------

type Fields = Record<string, unknown>;

/** The name in messages about the NIL id, a delete and "in use": the controller's where it differs from the model's. */
const nameOf = <T>(d: CatalogObject<T>) => d.controllerName ?? d.displayName;

/** The rule of an action on a catalog kind, checked on the caller's own project. */
const authorizeAction = <T>(ctx: RequestContext, d: CatalogObject<T>, action: string) =>
  authorizeCaller(ctx, `${API}:${d.policy}:${action}`);

/**
 * What a refused write means: a taken key or unique name ("A flavor of x already exists."), an unknown
 * profile (Octavia leaves it to the foreign key, an unhandled 500; answered as the profile's 404), a
 * record gone, or a profile in use.
 */
function faultsOf<T>(d: CatalogObject<T>, key: string, fields: Fields): Faults & { exists: () => Fault } {
  const label = d.displayName.toLowerCase();
  const profile = d.profile;
  return {
    exists: () => alreadyExists(label, key),
    duplicate: () => alreadyExists(label, (fields.name as string | null | undefined) ?? null),
    ...(profile ? { no_parent: () => notFound(profile.displayName, String(fields[profile.field])) } : {}),
    not_found: () => notFound(d.displayName, key),
    in_use: () => inUse(nameOf(d), key),
  };
}

export async function createCatalogObject<T, Post>(
  deps: CatalogDeps,
  ctx: RequestContext,
  d: CatalogObject<T, Post>,
  body: Post,
): Promise<T> {
  authorizeAction(ctx, d, "post");
  const given = body as Fields;
  // Octavia's placeholder zone for DELETED load balancers holds the NIL name.
  if (d.key !== "id" && given[d.key] === NIL_UUID) throw faultsOf(d, NIL_UUID, given).exists();
  if (d.profileData) {
    const data = parseMetadata((given[d.profileData.field] as string | null | undefined) ?? null, d.profileData.field);
    // Octavia would store a null provider and fail on the column; refused up front instead.
    if (given.provider_name === null) throw invalidOption("None", "provider_name");
    const provider = given.provider_name as string;
    validateMetadata(provider, providerSchemas(provider)[d.profileData.metadata], data);
    await checkProfileData(deps.profiles, provider, d.profileData.metadata, data as Record<string, unknown>);
  }
  // Every attribute, null where the body has none; objects keyed by id get a new one.
  const record = Object.fromEntries(d.attributes.map((a) => [a, a === "id" ? randomUUID() : (given[a] ?? null)])) as T & Fields;
  const key = String(record[d.key]);
  await deps.catalog.create(d.kind, record as never).catch((e) => refused(e, faultsOf(d, key, record)));
  return record;
}

export async function getCatalogObject<T>(deps: CatalogDeps, ctx: RequestContext, d: CatalogObject<T>, key: string): Promise<T> {
  authorizeAction(ctx, d, "get_one");
  if (key === NIL_UUID) throw notFound(nameOf(d), key);
  const found = await deps.catalog.get(d.kind, key);
  if (!found) throw notFound(d.displayName, key);
  return found as T;
}

export function listCatalogObjects<T>(deps: CatalogDeps, ctx: RequestContext, d: CatalogObject<T>): ItemSource {
  authorizeAction(ctx, d, "get_all");
  return deps.catalog.list(d.kind);
}

/** PUT: writes the given fields, or, when none is given, answers the object as it is. */
export async function updateCatalogObject<T, Put>(
  deps: CatalogDeps,
  ctx: RequestContext,
  d: CatalogObject<T, unknown, Put>,
  key: string,
  body: Put,
): Promise<T> {
  authorizeAction(ctx, d, "put");
  const set = Object.fromEntries(Object.entries(body as Fields).filter(([, v]) => v !== undefined));
  const text = d.profileData && (set[d.profileData.field] as string | undefined);
  // What the driver reads of a profile cannot change while an object uses it.
  const driverChange = d.profileData !== undefined && (text !== undefined || set.provider_name !== undefined);
  if (d.profileData) {
    for (const field of ["name", "provider_name", d.profileData.field]) if (set[field] === null) throw invalidOption("None", field);
    if (driverChange && (await deps.catalog.referenced(d.kind, key))) throw inUse(nameOf(d), key);
  }
  if (key === NIL_UUID) throw notFound(nameOf(d), key);
  if (d.profileData && text !== undefined) {
    // Octavia names the option flavor_data for both kinds of profile here.
    const data = parseMetadata(text, FLAVOR_DATA);
    const provider =
      (set.provider_name as string | undefined) ?? ((await deps.catalog.get(d.kind, key)) as Fields | undefined)?.provider_name;
    if (provider === undefined || provider === null) throw notFound(d.displayName, key);
    validateMetadata(String(provider), providerSchemas(String(provider))[d.profileData.metadata], data);
    await checkProfileData(deps.profiles, String(provider), d.profileData.metadata, data as Record<string, unknown>);
  }
  if (Object.keys(set).length === 0) {
    const current = await deps.catalog.get(d.kind, key);
    if (!current) throw notFound(d.displayName, key);
    return current as T;
  }
  const updated = deps.catalog.update(d.kind, key, set as never, { unreferenced: driverChange });
  return (await updated.catch((e) => refused(e, faultsOf(d, key, set)))) as T;
}

/** DELETE: refused while an object uses a profile, or a load balancer that is not DELETED has a flavor or a zone. */
export async function deleteCatalogObject<T>(deps: CatalogDeps, ctx: RequestContext, d: CatalogObject<T>, key: string): Promise<void> {
  authorizeAction(ctx, d, "delete");
  const name = nameOf(d);
  if (key === NIL_UUID) throw notFound(name, key);
  if (d.usedBy) {
    if (!(await deps.catalog.get(d.kind, key))) throw notFound(name, key);
    if (await deps.catalog.loadBalancersUsing(d.usedBy, key)) throw inUse(name, key);
  }
  await deps.catalog
    .delete(d.kind, key, d.profileData ? { unreferenced: true } : {})
    .catch((e) => refused(e, { ...faultsOf(d, key, {}), not_found: () => notFound(name, key) }));
}
