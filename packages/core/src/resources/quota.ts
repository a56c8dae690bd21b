// Quotas (octavia/api/v2/types/quotas.py). Stored under the data model's names (load_balancer,
// health_monitor); answered with the API's spellings as Octavia answers them: a project's quota
// ({"quota": ...}, defaults filled in) with the data model's names only, a list item with both.
import * as z from "zod";
import { MAX_QUOTA, MIN_QUOTA } from "../constants";
import { Fault, invalidInput } from "../faults";
import { body, parseRoot } from "../validation";
import { pyRepr } from "../compat/repr";
import { pythonInt } from "../compat/wsme";
import { octaviaFilters, type CatalogDescriptor } from "./descriptor";

export const QUOTA_FIELDS = ["load_balancer", "listener", "member", "pool", "health_monitor", "l7policy", "l7rule"] as const;
export type QuotaField = (typeof QUOTA_FIELDS)[number];
/** A quota per resource: -1 is unlimited; null means "the configured default". */
export type QuotaValues = Record<QuotaField, number | null>;

/** A project's stored quotas. A field never set (or reset by DELETE) is null. */
export interface Quota extends Partial<QuotaValues> {
  project_id: string;
  /** As listed: the project's usage where quotas are counted (keystone), Octavia's in_use_* columns. */
  in_use?: Partial<Record<QuotaField, number>>;
}

/**
 * QuotaBase's attributes in wsme's order, each with the field it sets. "loadbalancer" and
 * "healthmonitor" are the current spellings; when both spellings are given they win (QuotaBase.to_dict).
 */
const ATTRIBUTES: readonly (readonly [string, QuotaField])[] = [
  ["loadbalancer", "load_balancer"],
  ["load_balancer", "load_balancer"],
  ["listener", "listener"],
  ["member", "member"],
  ["pool", "pool"],
  ["healthmonitor", "health_monitor"],
  ["health_monitor", "health_monitor"],
  ["l7policy", "l7policy"],
  ["l7rule", "l7rule"],
];
const PREFERRED = new Set(["loadbalancer", "healthmonitor"]);

export const QuotaPut = body(Object.fromEntries(ATTRIBUTES.map(([a]) => [a, z.unknown().optional()])));

/** The PUT body {"quota": {...}}: the fields it sets (null resets one to the default). */
export function parseQuotaPut(raw: unknown): Partial<QuotaValues> {
  const inner = parseRoot("quotas", "quota", QuotaPut, raw) as Record<string, unknown>;
  const set: Partial<QuotaValues> = {};
  const given = ATTRIBUTES.filter(([a]) => a in inner).map(([a, field]) => [a, field, quotaInt(a, inner[a], raw)] as const);
  for (const [a, field, value] of given) if (!PREFERRED.has(a)) set[field] = value;
  for (const [a, field, value] of given) if (PREFERRED.has(a)) set[field] = value;
  return set;
}

/** wsme's IntegerType(minimum=-1, maximum=2000000000): Python's int() of the JSON value, then the bounds. */
function quotaInt(attr: string, v: unknown, raw: unknown): number | null {
  if (v === null) return null;
  const n = pythonInt(v);
  // wsme reports a failed int() against the whole body ("quotas"), in Python's words.
  if (typeof n === "string") throw invalidInput("quotas", pyRepr(raw), n);
  if (n < MIN_QUOTA) throw invalidInput(attr, n, `Value should be greater or equal to ${MIN_QUOTA}`);
  if (n > MAX_QUOTA) throw invalidInput(attr, n, `Value should be lower or equal to ${MAX_QUOTA}`);
  return n;
}

/** A project's quota as GET, PUT and the defaults answer it (QuotaResponse). */
export const quotaBody = (q: QuotaValues) => ({
  quota: {
    load_balancer: q.load_balancer,
    listener: q.listener,
    member: q.member,
    pool: q.pool,
    health_monitor: q.health_monitor,
    l7policy: q.l7policy,
    l7rule: q.l7rule,
  },
});

/** Quotas as the list answers them (QuotaAllBase): stored values, null where unset, both spellings. */
export const quotaCatalog: CatalogDescriptor<Quota> = {
  kind: "quota",
  displayName: "Quotas",
  root: "quota",
  collection: "quotas",
  links: "quotas_links",
  key: "project_id",
  attributes: [
    "project_id",
    "loadbalancer",
    "load_balancer",
    "listener",
    "member",
    "pool",
    "healthmonitor",
    "health_monitor",
    "l7policy",
    "l7rule",
  ],
  filters: octaviaFilters(
    [
      "health_monitor",
      "l7policy",
      "l7rule",
      "listener",
      "load_balancer",
      "member",
      "pool",
      "project_id",
      ...QUOTA_FIELDS.map((f) => `in_use_${f}`),
    ],
    { healthmonitor: "health_monitor", loadbalancer: "load_balancer" },
  ),
  // Octavia counts usage only where it enforces quotas (not under noauth): null there, as its columns.
  model: (q) => Object.fromEntries(QUOTA_FIELDS.map((f) => [`in_use_${f}`, q.in_use ? (q.in_use[f] ?? 0) : null])),
  toResponse: (q) => ({
    project_id: q.project_id,
    loadbalancer: q.load_balancer ?? null,
    load_balancer: q.load_balancer ?? null,
    listener: q.listener ?? null,
    member: q.member ?? null,
    pool: q.pool ?? null,
    healthmonitor: q.health_monitor ?? null,
    health_monitor: q.health_monitor ?? null,
    l7policy: q.l7policy ?? null,
    l7rule: q.l7rule ?? null,
    tenant_id: q.project_id,
  }),
};

/** wsme refuses query arguments a handler does not take (quota GET, PUT, DELETE take none). */
export function noArguments(params: [string, string][]): void {
  const first = params[0];
  if (first) throw new Fault(400, `Unknown argument: "${first[0]}"`);
}
