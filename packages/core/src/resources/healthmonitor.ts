// The health monitor resource (octavia/api/v2/types/health_monitor.py, controllers/health_monitor.py):
// at most one per pool.
import * as z from "zod";
import {
  ALLOW_PING_HEALTH_MONITORS,
  DEFAULT_MAX_RETRIES_DOWN,
  HEALTH_MONITOR_DEFAULT_EXPECTED_CODES,
  HEALTH_MONITOR_DEFAULT_HTTP_METHOD,
  HEALTH_MONITOR_DEFAULT_URL_PATH,
  HEALTH_MONITOR_HTTP_METHODS,
  HEALTH_MONITOR_HTTP_VERSIONS,
  HEALTH_MONITOR_TYPES,
  LVS_PROTOCOLS,
  MAX_HM_RETRIES,
  MIN_HM_RETRIES,
  MUTABLE_STATUSES,
  NAME_MAX,
  OFFLINE,
  PENDING_CREATE,
  UDP_CONNECT_MIN_INTERVAL_HEALTH_MONITOR,
} from "../constants";
import { Fault, invalidOption, requireStatus, validation } from "../faults";
import type { TreeRecord } from "../ports";
import { body, bool, integer, str, tags, uuid } from "../validation";
import type { ChildRef, ChildResource, Tree } from "./child";
import { apiTime, octaviaFilters, type ResourceDescriptor } from "./descriptor";
import { issue, wsmeEnum } from "../compat/wsme";
import { poolListenerIds } from "./relations";

const HTTP_TYPES = ["HTTP", "HTTPS"];
/** The monitor types a UDP or SCTP pool accepts. */
const UDP_SCTP_HM_TYPES = ["UDP-CONNECT", "SCTP", "TCP", "HTTP"];

const EXPECTED_CODES_PATTERN = String.raw`^(\d{3}(\s*,\s*\d{3})*)$|^(\d{3}-\d{3})$`;
const DOMAIN_NAME_PATTERN = String.raw`^(?=.{1,253}\.?$)(?:(?!-|[^.]+_)[A-Za-z0-9-_]{1,63}(?<!-)(?:\.|$))+$`;

/** validate.url_path: a path (with an optional query), no scheme, host or whitespace. */
function isUrlPath(v: unknown): boolean {
  if (typeof v !== "string" || /\s/.test(v)) return false;
  const path = v.split(/[?#]/, 1)[0]!;
  if (!path.startsWith("/") || path.startsWith("//")) return false;
  return /^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$/.test(path);
}

const retries = () => integer(MIN_HM_RETRIES, MAX_HM_RETRIES);
const urlPath = () =>
  z.unknown().refine(isUrlPath, { error: "Value must be a valid URL Path string" }) as unknown as z.ZodType<string, unknown>;
const expectedCodes = () =>
  str().regex(new RegExp(EXPECTED_CODES_PATTERN), { error: `Value should match the pattern ${EXPECTED_CODES_PATTERN}` });
const domainName = () =>
  str(255)
    .min(1, { error: "Value should have a minimum character requirement of 1" })
    .regex(new RegExp(DOMAIN_NAME_PATTERN), { error: `Value should match the pattern ${DOMAIN_NAME_PATTERN}` });
/** wsme Enum(float, 1.0, 1.1): float() of the JSON value, then the enum. */
const httpVersion = () =>
  z.unknown().transform((v, ctx) => {
    const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
    if (HEALTH_MONITOR_HTTP_VERSIONS.includes(n)) return n;
    return issue(ctx, "Value should be one of: 1.0, 1.1");
  });

export const HealthMonitorPost = body({
  name: str(NAME_MAX).nullish(),
  // type, delay, timeout and max_retries are mandatory; a null one is refused later as "None is not a valid option for ...".
  type: wsmeEnum(HEALTH_MONITOR_TYPES).nullable(),
  delay: integer(0).nullable(),
  timeout: integer(0).nullable(),
  max_retries_down: retries().nullish(),
  max_retries: retries().nullable(),
  http_method: wsmeEnum(HEALTH_MONITOR_HTTP_METHODS).nullish(),
  url_path: urlPath().nullish(),
  expected_codes: expectedCodes().nullish(),
  // wsme turns a null admin_state_up into False (BaseType.to_dict).
  admin_state_up: bool().nullable().default(true),
  // Deprecated and ignored: a monitor belongs to its load balancer's project.
  project_id: str(36).nullish(),
  tenant_id: str(36).nullish(),
  pool_id: uuid(),
  tags: tags().nullish(),
  http_version: httpVersion().nullish(),
  domain_name: domainName().nullish(),
});
export type HealthMonitorPost = z.output<typeof HealthMonitorPost>;

export const HealthMonitorPut = body({
  name: str(NAME_MAX).nullish(),
  delay: integer(0).nullish(),
  timeout: integer(0).nullish(),
  max_retries_down: retries().nullish(),
  max_retries: retries().nullish(),
  http_method: wsmeEnum(HEALTH_MONITOR_HTTP_METHODS).nullish(),
  url_path: urlPath().nullish(),
  expected_codes: expectedCodes().nullish(),
  admin_state_up: bool().nullish(),
  tags: tags().nullish(),
  http_version: httpVersion().nullish(),
  domain_name: domainName().nullish(),
});
export type HealthMonitorPut = z.output<typeof HealthMonitorPut>;

export type HealthMonitor = TreeRecord & {
  id: string;
  project_id: string;
  loadbalancer_id: string;
  pool_id: string;
  name: string | null;
  type: string;
  delay: number;
  timeout: number;
  max_retries: number;
  max_retries_down: number;
  http_method: string | null;
  url_path: string | null;
  expected_codes: string | null;
  http_version: number | null;
  domain_name: string | null;
  admin_state_up: boolean;
  tags: string[];
  provisioning_status: string;
  operating_status: string;
  created_at: string;
  updated_at: string | null;
};

export const healthMonitorDescriptor: ResourceDescriptor<HealthMonitor> = {
  kind: "healthmonitor",
  displayName: "Health Monitor",
  quotaField: "health_monitor",
  root: "healthmonitor",
  collection: "healthmonitors",
  attributes: [
    "id",
    "name",
    "type",
    "delay",
    "timeout",
    "max_retries",
    "max_retries_down",
    "http_method",
    "url_path",
    "expected_codes",
    "admin_state_up",
    "project_id",
    "tenant_id",
    "pools",
    "provisioning_status",
    "operating_status",
    "created_at",
    "updated_at",
    "tags",
    "http_version",
    "domain_name",
  ],
  filters: octaviaFilters(
    [
      "created_at",
      "delay",
      "domain_name",
      "enabled",
      "expected_codes",
      "fall_threshold",
      "http_method",
      "http_version",
      "id",
      "name",
      "operating_status",
      "pool_id",
      "project_id",
      "provisioning_status",
      "rise_threshold",
      "timeout",
      "type",
      "updated_at",
      "url_path",
    ],
    { admin_state_up: "enabled", max_retries: "rise_threshold", max_retries_down: "fall_threshold" },
  ),
  model: (h) => ({ enabled: h.admin_state_up, rise_threshold: h.max_retries, fall_threshold: h.max_retries_down, pool_id: h.pool_id }),
  listReads: {
    tenant_id: ["project_id"],
    pools: ["pool_id"],
    enabled: ["admin_state_up"],
    rise_threshold: ["max_retries"],
    fall_threshold: ["max_retries_down"],
  },
  toResponse: (h) => ({
    id: h.id,
    name: h.name ?? "",
    type: h.type,
    delay: h.delay,
    timeout: h.timeout,
    max_retries: h.max_retries,
    max_retries_down: h.max_retries_down,
    http_method: h.http_method,
    url_path: h.url_path,
    expected_codes: h.expected_codes,
    admin_state_up: h.admin_state_up,
    project_id: h.project_id,
    tenant_id: h.project_id,
    pools: [{ id: h.pool_id }],
    provisioning_status: h.provisioning_status,
    operating_status: h.operating_status,
    created_at: apiTime(h.created_at),
    updated_at: apiTime(h.updated_at),
    tags: h.tags,
    http_version: h.http_version,
    domain_name: h.domain_name,
  }),
};

// ---- Octavia's validations, in its words ---------------------------------------------------------

/** _validate_healthmonitor_request_for_udp_sctp. */
function checkUdpSctpMonitor(poolProtocol: string, type: string | null, delay: number | null | undefined): void {
  if (!UDP_SCTP_HM_TYPES.includes(type as string)) {
    throw validation(
      `The associated pool protocol is ${poolProtocol}, so only a ${UDP_SCTP_HM_TYPES.join("/")} health monitor is supported.`,
    );
  }
  if (type === "UDP-CONNECT" && typeof delay === "number" && delay < UDP_CONNECT_MIN_INTERVAL_HEALTH_MONITOR) {
    throw validation(
      `The request delay value ${delay} should be larger than ${UDP_CONNECT_MIN_INTERVAL_HEALTH_MONITOR} for UDP-CONNECT health monitor type.`,
    );
  }
}

/** Python's str() of a float: 1.0, not 1. */
const pyFloat = (n: number) => (Number.isInteger(n) ? n.toFixed(1) : String(n));

const badHttpVersion = (v: number) => invalidOption(`http_version ${pyFloat(v)}`, "health monitors HTTP 1.1 domain name health check");
const notForType = (field: string, type: string) => invalidOption(field, `health monitors of type ${type}`);
const HTTP_ONLY_FIELDS = ["http_method", "url_path", "expected_codes"] as const;

/** The objects a monitor change marks PENDING_UPDATE: its pool and the listeners using that pool. */
const monitorParents = (tree: Tree, poolId: string): ChildRef[] => [
  { kind: "pool", id: poolId },
  ...poolListenerIds(tree, poolId).map((id) => ({ kind: "listener", id })),
];

// ---- the resource ----------------------------------------------------------------------------------

export const healthMonitorResource: ChildResource<HealthMonitor, HealthMonitorPost, HealthMonitorPut> = {
  descriptor: healthMonitorDescriptor,
  argument: "health_monitor_",
  post: HealthMonitorPost,
  put: HealthMonitorPut,
  parentOf: (b) => ({ kind: "pool", id: b.pool_id }),

  // In the order of HealthMonitorController.post and _validate_create_hm.
  create({ body: b, tree, id, now }) {
    const pool = tree.get("pool", b.pool_id);
    const protocol = String(pool?.protocol);
    if (!ALLOW_PING_HEALTH_MONITORS && b.type === "PING") {
      throw new Fault(400, "The selected type is not allowed in this deployment: PING");
    }
    if (LVS_PROTOCOLS.includes(protocol)) checkUdpSctpMonitor(protocol, b.type, b.delay);
    else if (b.type === "UDP-CONNECT" || b.type === "SCTP") {
      throw validation(`The ${b.type} type is only supported for pools of type UDP/SCTP.`);
    }
    // The monitor's pool, refused unless mutable (_test_lb_and_listener_and_pool_statuses).
    requireStatus(tree.get("pool", b.pool_id), MUTABLE_STATUSES, "Pool", b.pool_id);

    for (const field of ["type", "delay", "timeout"] as const) if (b[field] === null) throw invalidOption("None", field);
    if (b.max_retries === null) throw invalidOption("None", "max_retries");
    const type = b.type!;
    const http = HTTP_TYPES.includes(type);
    if (!http) for (const field of HTTP_ONLY_FIELDS) if (b[field]) throw notForType(field, type);
    if (b.domain_name && !b.http_version) throw validation("'http_version' must be specified when 'domain_name' is provided.");
    if (b.http_version && b.domain_name && b.http_version < 1.1) throw badHttpVersion(b.http_version);
    // The database's unique pool_id.
    if (tree.of("healthmonitor").some((h) => h.pool_id === b.pool_id)) throw new Fault(409, "This pool already has a health monitor");

    return {
      id,
      project_id: tree.lb.project_id,
      loadbalancer_id: tree.lb.id,
      pool_id: b.pool_id,
      name: b.name ?? null,
      type,
      delay: b.delay!,
      timeout: b.timeout!,
      max_retries: b.max_retries,
      max_retries_down: b.max_retries_down ?? DEFAULT_MAX_RETRIES_DOWN,
      // HTTP monitors get Octavia's defaults for what they leave out.
      http_method: b.http_method || (http ? HEALTH_MONITOR_DEFAULT_HTTP_METHOD : null),
      url_path: b.url_path || (http ? HEALTH_MONITOR_DEFAULT_URL_PATH : null),
      expected_codes: b.expected_codes || (http ? HEALTH_MONITOR_DEFAULT_EXPECTED_CODES : null),
      http_version: b.http_version ?? null,
      domain_name: b.domain_name ?? null,
      admin_state_up: b.admin_state_up ?? false,
      tags: b.tags ?? [],
      provisioning_status: PENDING_CREATE,
      operating_status: OFFLINE,
      created_at: now,
      updated_at: null,
    };
  },

  // In the order of HealthMonitorController.put, _validate_update_hm and _set_default_on_none.
  update({ body: b, record, tree }) {
    if (!HTTP_TYPES.includes(record.type)) {
      for (const field of HTTP_ONLY_FIELDS) if (b[field] !== undefined) throw notForType(field, record.type);
    }
    for (const field of ["delay", "max_retries", "timeout"] as const) if (b[field] === null) throw invalidOption("None", field);
    if (b.domain_name && !(record.http_version || b.http_version)) {
      throw validation("'http_version' must be specified when 'domain_name' is provided.");
    }
    const version = b.http_version || record.http_version;
    if (version && (record.domain_name || b.domain_name) && version < 1.1) throw badHttpVersion(version);
    const pool = tree.get("pool", record.pool_id);
    const protocol = String(pool?.protocol);
    if (LVS_PROTOCOLS.includes(protocol)) checkUdpSctpMonitor(protocol, record.type, b.delay);
    requireStatus(tree.get("pool", record.pool_id), MUTABLE_STATUSES, "Pool", record.pool_id);

    const set: Partial<HealthMonitor> = { updated_at: new Date().toISOString() };
    if (b.name !== undefined) set.name = b.name;
    if (b.delay != null) set.delay = b.delay;
    if (b.timeout != null) set.timeout = b.timeout;
    if (b.max_retries != null) set.max_retries = b.max_retries;
    // Cleared (null) values go back to their defaults.
    if (b.max_retries_down !== undefined) set.max_retries_down = b.max_retries_down ?? DEFAULT_MAX_RETRIES_DOWN;
    if (b.http_method !== undefined) set.http_method = b.http_method ?? HEALTH_MONITOR_DEFAULT_HTTP_METHOD;
    if (b.url_path !== undefined) set.url_path = b.url_path ?? HEALTH_MONITOR_DEFAULT_URL_PATH;
    if (b.expected_codes !== undefined) set.expected_codes = b.expected_codes ?? HEALTH_MONITOR_DEFAULT_EXPECTED_CODES;
    if (b.admin_state_up !== undefined) set.admin_state_up = b.admin_state_up ?? false;
    // A null tags list leaves the tags as they are (the repository ignores None).
    if (b.tags !== undefined && b.tags !== null) set.tags = b.tags;
    if (b.http_version !== undefined) set.http_version = b.http_version;
    if (b.domain_name !== undefined) set.domain_name = b.domain_name;
    return set;
  },

  parents: (record, tree) => monitorParents(tree, record.pool_id),
  checkDelete: (record, tree) => void requireStatus(tree.get("pool", record.pool_id), MUTABLE_STATUSES, "Pool", record.pool_id),
};
