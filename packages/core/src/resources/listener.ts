// The listener resource (octavia/api/v2/types/listener.py, controllers/listener.py): a load
// balancer's frontends, under /v2/lbaas/listeners, and their statistics.
import * as z from "zod";
import {
  CLIENT_AUTH_NONE,
  DEFAULT_CONNECTION_LIMIT,
  DEFAULT_LISTENER_ALPN_PROTOCOLS,
  DEFAULT_LISTENER_CIPHERS,
  DEFAULT_LISTENER_TLS_VERSIONS,
  DEFAULT_TIMEOUT_CLIENT_DATA,
  DEFAULT_TIMEOUT_MEMBER_CONNECT,
  DEFAULT_TIMEOUT_MEMBER_DATA,
  DEFAULT_TIMEOUT_TCP_INSPECT,
  DELETED,
  DESCRIPTION_MAX,
  HAPROXY_BASE_PEER_PORT,
  L4_PROTOCOL_MAP,
  LISTENER_PROTOCOLS,
  LISTENER_PROTOCOLS_SUPPORTING_HEADER_INSERTION,
  LVS_PROTOCOLS,
  MAX_TIMEOUT,
  MIN_CONNECTION_LIMIT,
  MIN_TIMEOUT,
  NAME_MAX,
  OFFLINE,
  PENDING_CREATE,
  SUPPORTED_ALPN_PROTOCOLS,
  SUPPORTED_CLIENT_AUTH_MODES,
  SUPPORTED_HTTP_HEADERS,
  SUPPORTED_SSL_HEADERS,
  TLS_ALL_VERSIONS,
  TLS_CIPHER_PROHIBIT_LIST,
  VALID_LISTENER_POOL_PROTOCOL_MAP,
} from "../constants";
import { Fault, invalidOption, notFound, validation } from "../faults";
import { authorize, type RequestContext } from "../policy";
import type { LoadBalancerStore, TreeRecord } from "../ports";
import { body, bool, integer, pyRepr, str, tags, uuid } from "../validation";
import type { ChildRef, ChildResource, Tree } from "./child";
import { checkClientCaAndCrl, checkTlsRefs, TlsLookup } from "./tls-refs";
import { apiTime, octaviaFilters, type ResourceDescriptor } from "./descriptor";
import { listenerStatistics, providerStats, type StatsAmphora } from "../health/stats";

const MIN_PORT_NUMBER = 1;
const MAX_PORT_NUMBER = 65535;
const TERMINATED_HTTPS = "TERMINATED_HTTPS";
const PROMETHEUS = "PROMETHEUS";
const VALID_CIPHER_RE = /^[A-Za-z0-9\-+!:@=_.]+$/;

// ---- wsme types, as Octavia's ListenerPOST/ListenerPUT declare them ------------------------------

const issue = (ctx: z.RefinementCtx, message: string) => {
  ctx.addIssue({ code: "custom", message });
  return z.NEVER;
};

const timeout = () => integer(MIN_TIMEOUT, MAX_TIMEOUT);

/** wsme Enum (whose message lists the values in octavia_lib's order here, not a Python set's). */
const enumOf = <T extends string>(values: readonly T[]) =>
  z
    .unknown()
    .transform((v, ctx) =>
      typeof v === "string" && (values as readonly string[]).includes(v)
        ? (v as T)
        : issue(ctx, `Value should be one of: ${values.join(", ")}`),
    );

/**
 * wsme ArrayType: `check` answers each item's problem; as in wsme, a bad item is reported with the
 * whole list as the attribute's value.
 */
const list = <T>(check: (item: unknown) => string | undefined) =>
  z.unknown().transform((v, ctx) => {
    if (!Array.isArray(v)) return issue(ctx, `Value not a valid list: ${pyStr(v)}`);
    for (const item of v) {
      const problem = check(item);
      if (problem !== undefined) return issue(ctx, problem);
    }
    return v as T[];
  });

/** wsme StringType(max_length) as a list item, where null passes as wsme lets it. */
const stringItem = (max: number) => (v: unknown) =>
  v === null
    ? undefined
    : typeof v !== "string"
      ? "Value should be string"
      : v.length > max
        ? `Value should have a maximum character requirement of ${max}`
        : undefined;
const cidrItem = (v: unknown) =>
  typeof v === "string" && ipNetwork(v) !== undefined ? undefined : "Value should be IPv4 or IPv6 CIDR format";
const alpnItem = (v: unknown) =>
  typeof v === "string" && SUPPORTED_ALPN_PROTOCOLS.includes(v) ? undefined : "Value should be a valid ALPN protocol ID";

/** wsme DictType(str, StringType(max_length=255)), for insert_headers. */
const headers = () =>
  z.unknown().transform((v, ctx) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return issue(ctx, `Value not a valid dict: ${pyStr(v)}`);
    for (const value of Object.values(v)) {
      const problem = stringItem(255)(value);
      if (problem !== undefined) return issue(ctx, problem);
    }
    return v as Record<string, string | null>;
  });

/** Python's str() (`%s`) of a JSON value. */
const pyStr = (v: unknown) => (typeof v === "string" ? v : pyRepr(v));

// ---- request bodies -------------------------------------------------------------------------------

export const ListenerPost = body({
  name: str(NAME_MAX).nullish(),
  description: str(DESCRIPTION_MAX).nullish(),
  admin_state_up: bool().nullish(),
  protocol: enumOf(LISTENER_PROTOCOLS),
  protocol_port: integer(MIN_PORT_NUMBER, MAX_PORT_NUMBER),
  connection_limit: integer(MIN_CONNECTION_LIMIT).nullish(),
  default_tls_container_ref: str(255).nullish(),
  sni_container_refs: list<string | null>(stringItem(255)).nullish(),
  // Deprecated and ignored: a listener belongs to its load balancer's project.
  project_id: str(36).nullish(),
  default_pool_id: uuid().nullish(),
  // A load balancer's fully populated create fills these; a listener's own create cannot take them.
  default_pool: z.unknown().optional(),
  l7policies: list<unknown>(() => undefined).nullish(),
  insert_headers: headers().nullish(),
  loadbalancer_id: uuid(),
  timeout_client_data: timeout().nullish(),
  timeout_member_connect: timeout().nullish(),
  timeout_member_data: timeout().nullish(),
  timeout_tcp_inspect: timeout().nullish(),
  tags: tags().nullish(),
  client_ca_tls_container_ref: str(255).nullish(),
  client_authentication: enumOf(SUPPORTED_CLIENT_AUTH_MODES).nullish(),
  client_crl_container_ref: str(255).nullish(),
  allowed_cidrs: list<string>(cidrItem).nullish(),
  tls_ciphers: str(2048).nullish(),
  tls_versions: list<string | null>(stringItem(32)).nullish(),
  alpn_protocols: list<string>(alpnItem).nullish(),
  // v2.27: IntegerType(minimum=0) and bools defaulting to False (absent only: a null stays None).
  hsts_max_age: integer(0).nullish(),
  hsts_include_subdomains: bool().nullish(),
  hsts_preload: bool().nullish(),
});
export type ListenerPost = z.output<typeof ListenerPost>;

/** ListenerPUT: protocol, protocol_port and loadbalancer_id cannot change. */
export const ListenerPut = body({
  name: str(NAME_MAX).nullish(),
  description: str(DESCRIPTION_MAX).nullish(),
  admin_state_up: bool().nullish(),
  connection_limit: integer(MIN_CONNECTION_LIMIT).nullish(),
  default_tls_container_ref: str(255).nullish(),
  sni_container_refs: list<string | null>(stringItem(255)).nullish(),
  default_pool_id: uuid().nullish(),
  insert_headers: headers().nullish(),
  timeout_client_data: timeout().nullish(),
  timeout_member_connect: timeout().nullish(),
  timeout_member_data: timeout().nullish(),
  timeout_tcp_inspect: timeout().nullish(),
  tags: tags().nullish(),
  client_ca_tls_container_ref: str(255).nullish(),
  client_authentication: enumOf(SUPPORTED_CLIENT_AUTH_MODES).nullish(),
  client_crl_container_ref: str(255).nullish(),
  allowed_cidrs: list<string>(cidrItem).nullish(),
  tls_ciphers: str(2048).nullish(),
  tls_versions: list<string | null>(stringItem(32)).nullish(),
  alpn_protocols: list<string>(alpnItem).nullish(),
  hsts_max_age: integer(0).nullish(),
  hsts_include_subdomains: bool().nullish(),
  hsts_preload: bool().nullish(),
});
export type ListenerPut = z.output<typeof ListenerPut>;

// ---- the record -----------------------------------------------------------------------------------

/** The counters amphorae report for a listener (written by the health work; absent means zero). */
export interface ListenerStats {
  bytes_in: number;
  bytes_out: number;
  active_connections: number;
  total_connections: number;
  request_errors: number;
}

/** A listener as stored: its response fields but the derived `loadbalancers` and `l7policies`. */
export type Listener = TreeRecord & {
  id: string;
  /** Carried (relations.ts): its L7 policies, in order of position. */
  l7policy_ids?: string[];
  project_id: string;
  loadbalancer_id: string;
  name: string | null;
  description: string | null;
  provisioning_status: string;
  operating_status: string;
  admin_state_up: boolean;
  protocol: string;
  protocol_port: number;
  connection_limit: number | null;
  default_tls_container_ref: string | null;
  sni_container_refs: string[];
  default_pool_id: string | null;
  insert_headers: Record<string, string | null>;
  timeout_client_data: number;
  timeout_member_connect: number;
  timeout_member_data: number;
  timeout_tcp_inspect: number;
  tags: string[];
  client_ca_tls_container_ref: string | null;
  client_authentication: string;
  client_crl_container_ref: string | null;
  allowed_cidrs: string[];
  tls_ciphers: string | null;
  tls_versions: string[] | null;
  alpn_protocols: string[] | null;
  /**
   * v2.27: HTTP Strict Transport Security (TERMINATED_HTTPS only); absent on older records: off. A
   * create given null keeps the flags null, as Octavia's nullable columns do.
   */
  hsts_max_age?: number | null;
  hsts_include_subdomains?: boolean | null;
  hsts_preload?: boolean | null;
  /** HAProxy's peer port of the listener (Octavia's _find_next_peer_port); absent on older records. */
  peer_port?: number;
  created_at: string;
  updated_at: string | null;
  stats?: Partial<ListenerStats>;
};

/** ListenerRepository._find_next_peer_port: one above the highest of the LB's listeners, the first 1025. */
const nextPeerPort = (tree: Tree) =>
  Math.max(HAPROXY_BASE_PEER_PORT - 1, ...tree.of<Listener>("listener").map((l) => l.peer_port ?? 0)) + 1;

export const listenerDescriptor: ResourceDescriptor<Listener> = {
  kind: "listener",
  displayName: "Listener",
  quotaField: "listener",
  root: "listener",
  collection: "listeners",
  attributes: [
    "id",
    "name",
    "description",
    "provisioning_status",
    "operating_status",
    "admin_state_up",
    "protocol",
    "protocol_port",
    "connection_limit",
    "default_tls_container_ref",
    "sni_container_refs",
    "project_id",
    "default_pool_id",
    "l7policies",
    "insert_headers",
    "created_at",
    "updated_at",
    "loadbalancers",
    "timeout_client_data",
    "timeout_member_connect",
    "timeout_member_data",
    "timeout_tcp_inspect",
    "tags",
    "client_ca_tls_container_ref",
    "client_authentication",
    "client_crl_container_ref",
    "allowed_cidrs",
    "tls_ciphers",
    "tls_versions",
    "alpn_protocols",
    "hsts_max_age",
    "hsts_include_subdomains",
    "hsts_preload",
  ],
  filters: octaviaFilters(
    [
      "alpn_protocols",
      "client_authentication",
      "client_ca_tls_certificate_id",
      "client_crl_container_id",
      "connection_limit",
      "created_at",
      "default_pool_id",
      "description",
      "enabled",
      "hsts_include_subdomains",
      "hsts_max_age",
      "hsts_preload",
      "id",
      "insert_headers",
      "load_balancer_id",
      "name",
      "operating_status",
      "peer_port",
      "project_id",
      "protocol",
      "protocol_port",
      "provisioning_status",
      "timeout_client_data",
      "timeout_member_connect",
      "timeout_member_data",
      "timeout_tcp_inspect",
      "tls_certificate_id",
      "tls_ciphers",
      "tls_versions",
      "updated_at",
    ],
    {
      admin_state_up: "enabled",
      client_ca_tls_container_ref: "client_ca_tls_certificate_id",
      client_crl_container_ref: "client_crl_container_id",
      default_tls_container_ref: "tls_certificate_id",
      loadbalancer_id: "load_balancer_id",
    },
  ),
  model: (l) => ({
    enabled: l.admin_state_up,
    load_balancer_id: l.loadbalancer_id,
    tls_certificate_id: l.default_tls_container_ref,
    client_ca_tls_certificate_id: l.client_ca_tls_container_ref,
    client_crl_container_id: l.client_crl_container_ref,
    peer_port: l.peer_port ?? null,
  }),
  listReads: {
    l7policies: ["l7policy_ids"],
    loadbalancers: ["loadbalancer_id"],
    enabled: ["admin_state_up"],
    load_balancer_id: ["loadbalancer_id"],
    tls_certificate_id: ["default_tls_container_ref"],
    client_ca_tls_certificate_id: ["client_ca_tls_container_ref"],
    client_crl_container_id: ["client_crl_container_ref"],
  },
  toResponse: (l) => ({
    id: l.id,
    name: l.name ?? "",
    description: l.description ?? "",
    provisioning_status: l.provisioning_status,
    operating_status: l.operating_status,
    admin_state_up: l.admin_state_up,
    protocol: l.protocol,
    protocol_port: l.protocol_port,
    connection_limit: l.connection_limit,
    default_tls_container_ref: l.default_tls_container_ref,
    sni_container_refs: l.sni_container_refs,
    project_id: l.project_id,
    default_pool_id: l.default_pool_id,
    l7policies: (l.l7policy_ids ?? []).map((id) => ({ id })),
    insert_headers: l.insert_headers ?? {},
    created_at: apiTime(l.created_at),
    updated_at: apiTime(l.updated_at),
    loadbalancers: [{ id: l.loadbalancer_id }],
    timeout_client_data: l.timeout_client_data,
    timeout_member_connect: l.timeout_member_connect,
    timeout_member_data: l.timeout_member_data,
    timeout_tcp_inspect: l.timeout_tcp_inspect,
    tags: l.tags,
    client_ca_tls_container_ref: l.client_ca_tls_container_ref,
    client_authentication: l.client_authentication,
    client_crl_container_ref: l.client_crl_container_ref,
    // Octavia answers no CIDRs as null.
    allowed_cidrs: l.allowed_cidrs.length > 0 ? l.allowed_cidrs : null,
    tls_ciphers: l.tls_ciphers,
    tls_versions: l.tls_versions,
    alpn_protocols: l.alpn_protocols,
    hsts_max_age: l.hsts_max_age ?? null,
    hsts_include_subdomains: l.hsts_include_subdomains === undefined ? false : l.hsts_include_subdomains,
    hsts_preload: l.hsts_preload === undefined ? false : l.hsts_preload,
  }),
};

// ---- Octavia's checks -----------------------------------------------------------------------------

/**
 * _has_tls_container_refs: a default certificate or SNI list. Octavia also looks for the client CA
 * under a key its dicts never carry, so a client CA alone does not count.
 */
const hasTlsRefs = (defaultRef: string | null | undefined, sni: readonly unknown[] | null | undefined) =>
  Boolean(defaultRef) || (sni?.length ?? 0) > 0;

const hasHeaders = (h: Record<string, unknown> | null | undefined) => h != null && Object.keys(h).length > 0;

/** _validate_insert_headers; `shown` is how Octavia prints the header names (create and update differ). */
function checkInsertHeaders(names: string[], protocol: string, shown: string) {
  if (!LISTENER_PROTOCOLS_SUPPORTING_HEADER_INSERTION.includes(protocol))
    throw invalidOption("insert-headers", `a ${protocol} protocol listener.`);
  if (names.some((n) => !SUPPORTED_HTTP_HEADERS.includes(n) && !SUPPORTED_SSL_HEADERS.includes(n)))
    throw invalidOption(shown, "insert_headers");
  const ssl = names.filter((n) => SUPPORTED_SSL_HEADERS.includes(n));
  if (protocol !== TERMINATED_HTTPS && ssl.length > 0) throw invalidOption(pyRepr(ssl), `${protocol} protocol listener.`);
}

/** validate.check_cipher_prohibit_list. The empty default list still holds "" (Python's ''.split(':')), refusing empty entries. */
function checkCiphers(ciphers: string) {
  if (!VALID_CIPHER_RE.test(ciphers)) {
    throw validation("Invalid characters in cipher string. Only alphanumeric, -, +, !, :, @, =, _, and . are allowed.");
  }
  const prohibited = TLS_CIPHER_PROHIBIT_LIST.split(":");
  const rejected = ciphers.split(":").filter((c) => prohibited.includes(c));
  if (rejected.length > 0) throw validation(`The following ciphers have been prohibited by an administrator: ${rejected.join(", ")}`);
}

/** validate.check_tls_version_list (no minimum_tls_version is configured). */
function checkTlsVersions(versions: readonly (string | null)[] | null | undefined) {
  if (versions == null) return;
  if (versions.length === 0)
    throw validation("Empty TLS version list. Either specify at least one TLS version or remove this parameter to use the default.");
  const invalid = versions.filter((v) => v === null || !TLS_ALL_VERSIONS.includes(v));
  if (invalid.length > 0) throw validation(`Invalid TLS versions: ${invalid.map(pyStr).join(", ")}`);
}

/** validate.check_alpn_protocols (the items were checked by their type). */
function checkAlpn(protocols: readonly string[] | null | undefined) {
  if (protocols?.length === 0) {
    throw validation("Empty ALPN protocol list. Either specify at least one ALPN protocol or remove this parameter to use the default.");
  }
}

const HSTS_PROTOCOL = "The HSTS feature can only be used for listeners using the TERMINATED_HTTPS protocol.";

/** validate.check_hsts_options: the flags need a max age (0 counts), and a max age a TERMINATED_HTTPS listener. */
function checkHsts(
  maxAge: number | null | undefined,
  includeSubdomains: boolean | null | undefined,
  preload: boolean | null | undefined,
  protocol: string,
) {
  if ((includeSubdomains || preload) && maxAge == null) {
    throw validation("HSTS configuration options hsts_include_subdomains and hsts_preload only make sense if hsts_max_age is set as well.");
  }
  if (maxAge != null && protocol !== TERMINATED_HTTPS) throw validation(HSTS_PROTOCOL);
}

/**
 * validate.check_hsts_options_put: enabling a flag needs a max age given or stored (a null max age
 * given beside a stored one passes), and a max age given needs a TERMINATED_HTTPS listener.
 */
function checkHstsPut(b: ListenerPut, db: Listener) {
  const disabled = db.hsts_max_age == null && b.hsts_max_age == null;
  if ((b.hsts_include_subdomains || b.hsts_preload) && disabled) {
    throw validation("Cannot enable hsts_include_subdomains or hsts_preload if hsts_max_age was not set as well.");
  }
  if (b.hsts_max_age != null && db.protocol !== TERMINATED_HTTPS) throw validation(HSTS_PROTOCOL);
}

/** _validate_cidr_compatible_with_vip: CIDRs of the VIP's IP version only. */
function checkCidrs(cidrs: readonly string[], vip: string, vipSgIds: readonly string[] = []) {
  // v2.29 (_validate_cidr_compatible_with_vip): a VIP with custom security groups takes no allowed CIDRs.
  if (cidrs.length > 0 && vipSgIds.length > 0) throw validation("Allowed CIDRs are not allowed when using custom VIP Security Groups.");
  for (const cidr of cidrs) {
    if (cidr.includes(":") !== vip.includes(":")) throw validation(`CIDR ${cidr} IP version incompatible with VIP ${vip} IP version.`);
  }
}

/** The default pool: none for PROMETHEUS, else a pool of this load balancer of a compatible protocol (_validate_pool). */
function checkDefaultPool(tree: Tree, poolId: string, protocol: string) {
  if (protocol === PROMETHEUS) throw new Fault(400, `Protocol ${PROMETHEUS} listeners cannot have child objects.`);
  const pool = tree.get<{ protocol?: string }>("pool", poolId);
  if (!pool) throw notFound("Pool", poolId);
  if (!(VALID_LISTENER_POOL_PROTOCOL_MAP[protocol] ?? []).includes(String(pool.protocol))) {
    throw validation(`The pool protocol '${pool.protocol}' is invalid while the listener protocol is '${protocol}'.`);
  }
}

/** The CIDRs as Octavia keeps them: normalised by their type, each once. */
const uniqueCidrs = (cidrs: readonly string[] | null | undefined) => [...new Set((cidrs ?? []).map((c) => ipNetwork(c)!))];

// ---- the descriptor -------------------------------------------------------------------------------

export const listenerResource: ChildResource<Listener, ListenerPost, ListenerPut> = {
  descriptor: listenerDescriptor,
  argument: "listener_",
  post: ListenerPost,
  put: ListenerPut,
  parentOf: (b) => ({ kind: "loadbalancer", id: b.loadbalancer_id }),

  // ListenersController.post, db_prepare.create_listener and _validate_create_listener, in their order.
  create({ body: b, tree, id, now, certs = TlsLookup.unchecked }) {
    const protocol = b.protocol;
    const terminated = protocol === TERMINATED_HTTPS;
    if (b.default_pool_id) checkDefaultPool(tree, b.default_pool_id, protocol);

    const sni = b.sni_container_refs ?? [];
    const refs = hasTlsRefs(b.default_tls_container_ref, sni);
    const tlsOffload = terminated || (protocol === PROMETHEUS && refs);
    const clientCa = b.client_ca_tls_container_ref ?? null;
    const clientAuth = b.client_authentication === undefined ? CLIENT_AUTH_NONE : b.client_authentication;
    const tlsCiphers = b.tls_ciphers ?? (terminated ? DEFAULT_LISTENER_CIPHERS : null);
    const tlsVersions = b.tls_versions ?? (terminated ? [...DEFAULT_LISTENER_TLS_VERSIONS] : null);
    const alpn = b.alpn_protocols ?? (terminated ? [...DEFAULT_LISTENER_ALPN_PROTOCOLS] : null);

    if (hasHeaders(b.insert_headers)) {
      const names = Object.keys(b.insert_headers!);
      checkInsertHeaders(names, protocol, `dict_keys(${pyRepr(names)})`);
    }
    if (LVS_PROTOCOLS.includes(protocol) && (refs || hasHeaders(b.insert_headers))) {
      throw validation(`${protocol} protocol listener does not support TLS.`);
    }
    if (!tlsOffload && refs) throw validation(`Certificate container references are not allowed on ${protocol} protocol listeners.`);
    if (clientCa && !refs)
      throw validation("An SNI or default certificate container reference must be provided with a client CA container reference.");
    if (tlsOffload && !refs) {
      const what = protocol === PROMETHEUS ? `${protocol} with TLS` : protocol;
      throw validation(`An SNI or default certificate container reference must be provided for ${what} protocol listeners.`);
    }
    if (clientAuth !== CLIENT_AUTH_NONE && !clientCa) {
      throw validation(`Client authentication setting ${pyStr(clientAuth)} requires a client CA container reference.`);
    }
    if (b.client_crl_container_ref && !clientCa) {
      throw validation("A client authentication CA reference is required to specify a client authentication revocation list.");
    }
    if (tlsCiphers) checkCiphers(tlsCiphers);
    checkTlsRefs(certs, b.default_tls_container_ref ? [...sni, b.default_tls_container_ref] : sni);
    if (clientCa) checkClientCaAndCrl(certs, clientCa, b.client_crl_container_ref);

    // No two listeners of one L4 protocol on a port: TCP-family listeners and UDP or SCTP ones may share it.
    const clash = tree
      .of<Listener>("listener")
      .find((l) => l.protocol_port === b.protocol_port && L4_PROTOCOL_MAP[l.protocol] === L4_PROTOCOL_MAP[protocol]);
    if (clash)
      throw new Fault(
        409,
        `Another Listener on this Load Balancer is already using protocol ${clash.protocol} and protocol_port ${b.protocol_port}`,
      );

    const allowedCidrs = uniqueCidrs(b.allowed_cidrs);
    checkCidrs(allowedCidrs, tree.lb.vip_address, tree.lb.vip_sg_ids);
    if (tlsOffload) {
      checkTlsVersions(tlsVersions);
      checkAlpn(alpn);
    }
    checkHsts(b.hsts_max_age, b.hsts_include_subdomains, b.hsts_preload, protocol);
    // Octavia's ORM fails (500) on a single create given a graph's pool or policies; Ottava refuses
    // them clearly: they belong to the fully populated load-balancer create. A null
    // client_authentication is a NOT NULL column there, answered as its DBError.
    if (b.default_pool != null || (b.l7policies?.length ?? 0) > 0) {
      throw validation("default_pool and l7policies can only be given in a fully populated load balancer create.");
    }
    if (clientAuth === null) throw invalidOption(protocol, "protocol");

    return {
      id,
      project_id: tree.lb.project_id,
      loadbalancer_id: tree.lb.id,
      peer_port: nextPeerPort(tree),
      name: b.name ?? null,
      description: b.description ?? null,
      provisioning_status: PENDING_CREATE,
      operating_status: OFFLINE,
      // wsme: absent is the default (true), null is false.
      admin_state_up: b.admin_state_up === undefined ? true : Boolean(b.admin_state_up),
      protocol,
      protocol_port: b.protocol_port,
      // Only an absent limit takes the default; Octavia keeps an explicit null.
      connection_limit: b.connection_limit === undefined ? DEFAULT_CONNECTION_LIMIT : b.connection_limit,
      default_tls_container_ref: b.default_tls_container_ref ?? null,
      sni_container_refs: [...new Set(sni as string[])],
      default_pool_id: b.default_pool_id ?? null,
      insert_headers: b.insert_headers ?? {},
      timeout_client_data: b.timeout_client_data ?? DEFAULT_TIMEOUT_CLIENT_DATA,
      timeout_member_connect: b.timeout_member_connect ?? DEFAULT_TIMEOUT_MEMBER_CONNECT,
      timeout_member_data: b.timeout_member_data ?? DEFAULT_TIMEOUT_MEMBER_DATA,
      timeout_tcp_inspect: b.timeout_tcp_inspect ?? DEFAULT_TIMEOUT_TCP_INSPECT,
      tags: b.tags ?? [],
      client_ca_tls_container_ref: clientCa,
      client_authentication: clientAuth,
      client_crl_container_ref: b.client_crl_container_ref ?? null,
      allowed_cidrs: allowedCidrs,
      tls_ciphers: tlsCiphers,
      tls_versions: tlsVersions as string[] | null,
      alpn_protocols: alpn,
      hsts_max_age: b.hsts_max_age ?? null,
      // wsme's default False is for an absent flag only: a null is stored as None.
      hsts_include_subdomains: b.hsts_include_subdomains === undefined ? false : b.hsts_include_subdomains,
      hsts_preload: b.hsts_preload === undefined ? false : b.hsts_preload,
      created_at: now,
      updated_at: null,
    };
  },

  // The certificates named, the client CA and CRL in force (the new ones, or else the listener's).
  tlsRefs(input) {
    const b = input.body;
    const certificates = [...(b.sni_container_refs ?? []), b.default_tls_container_ref];
    if (input.action === "create")
      return { certificates, secrets: b.client_ca_tls_container_ref ? [b.client_ca_tls_container_ref, b.client_crl_container_ref] : [] };
    const db = input.record;
    return {
      certificates,
      secrets: [b.client_ca_tls_container_ref || db.client_ca_tls_container_ref, b.client_crl_container_ref || db.client_crl_container_ref],
    };
  },

  // ListenersController.put: _validate_listener_PUT, _set_default_on_none, then the default pool.
  update({ body: b, record: db, tree, certs = TlsLookup.unchecked }) {
    const protocol = db.protocol;
    const refs = hasTlsRefs(b.default_tls_container_ref, b.sni_container_refs);
    const tlsOffload = protocol === TERMINATED_HTTPS || (protocol === PROMETHEUS && refs);
    if (LVS_PROTOCOLS.includes(protocol) && (refs || hasHeaders(b.insert_headers))) {
      throw validation(`${protocol} protocol listener does not support TLS or header insertion.`);
    }
    if (!tlsOffload && refs) throw validation(`Certificate container references are not allowed on ${protocol} protocol listeners.`);
    if (
      b.client_authentication !== undefined &&
      b.client_authentication !== CLIENT_AUTH_NONE &&
      !(db.client_ca_tls_container_ref || b.client_ca_tls_container_ref)
    ) {
      throw validation(`Client authentication setting ${pyStr(b.client_authentication)} requires a client CA container reference.`);
    }
    if (hasHeaders(b.insert_headers)) {
      const names = Object.keys(b.insert_headers!);
      checkInsertHeaders(names, protocol, pyRepr(names));
    }
    const sni = b.sni_container_refs ?? [];
    checkTlsRefs(certs, b.default_tls_container_ref ? [...sni, b.default_tls_container_ref] : sni);
    // The CA and CRL in force: the new ones, or else the listener's.
    const ca = b.client_ca_tls_container_ref || db.client_ca_tls_container_ref;
    const crl = b.client_crl_container_ref || db.client_crl_container_ref;
    if (crl && !ca)
      throw validation("A client authentication CA reference is required to specify a client authentication revocation list.");
    if (ca || crl) checkClientCaAndCrl(certs, ca, crl);
    const allowedCidrs = b.allowed_cidrs === undefined ? undefined : uniqueCidrs(b.allowed_cidrs);
    if (allowedCidrs) checkCidrs(allowedCidrs, tree.lb.vip_address, tree.lb.vip_sg_ids);
    if (b.tls_ciphers) checkCiphers(b.tls_ciphers);
    if (b.tls_versions !== undefined) checkTlsVersions(b.tls_versions);
    if (b.alpn_protocols !== undefined) checkAlpn(b.alpn_protocols);
    checkHstsPut(b, db);
    if (b.default_pool_id) checkDefaultPool(tree, b.default_pool_id, protocol);

    // Every attribute given changes; null clears it or, where Octavia has one, restores the default.
    const set: Partial<Listener> = { updated_at: new Date().toISOString() };
    const given = <K extends keyof ListenerPut>(k: K) => b[k] !== undefined;
    if (given("name")) set.name = b.name ?? null;
    if (given("description")) set.description = b.description ?? null;
    if (given("admin_state_up")) set.admin_state_up = Boolean(b.admin_state_up); // null is false, as wsme has it
    if (given("connection_limit")) set.connection_limit = b.connection_limit ?? DEFAULT_CONNECTION_LIMIT;
    if (given("default_tls_container_ref")) set.default_tls_container_ref = b.default_tls_container_ref ?? null;
    if (given("sni_container_refs")) set.sni_container_refs = [...new Set(sni as string[])];
    if (given("default_pool_id")) set.default_pool_id = b.default_pool_id ?? null;
    if (given("insert_headers")) set.insert_headers = b.insert_headers ?? {};
    if (given("timeout_client_data")) set.timeout_client_data = b.timeout_client_data ?? DEFAULT_TIMEOUT_CLIENT_DATA;
    if (given("timeout_member_connect")) set.timeout_member_connect = b.timeout_member_connect ?? DEFAULT_TIMEOUT_MEMBER_CONNECT;
    if (given("timeout_member_data")) set.timeout_member_data = b.timeout_member_data ?? DEFAULT_TIMEOUT_MEMBER_DATA;
    if (given("timeout_tcp_inspect")) set.timeout_tcp_inspect = b.timeout_tcp_inspect ?? DEFAULT_TIMEOUT_TCP_INSPECT;
    // Null tags leave the tags alone, as Octavia's repository does.
    if (b.tags != null) set.tags = b.tags;
    if (given("client_ca_tls_container_ref")) set.client_ca_tls_container_ref = b.client_ca_tls_container_ref ?? null;
    if (given("client_authentication")) set.client_authentication = b.client_authentication ?? CLIENT_AUTH_NONE;
    if (given("client_crl_container_ref")) set.client_crl_container_ref = b.client_crl_container_ref ?? null;
    if (allowedCidrs) set.allowed_cidrs = allowedCidrs;
    if (given("tls_ciphers")) set.tls_ciphers = b.tls_ciphers ?? DEFAULT_LISTENER_CIPHERS;
    if (given("tls_versions")) set.tls_versions = (b.tls_versions as string[] | null) ?? [...DEFAULT_LISTENER_TLS_VERSIONS];
    if (given("alpn_protocols")) set.alpn_protocols = b.alpn_protocols ?? [...DEFAULT_LISTENER_ALPN_PROTOCOLS];
    // A null max age turns HSTS off; null flags become False (_set_default_on_none).
    if (given("hsts_max_age")) set.hsts_max_age = b.hsts_max_age ?? null;
    if (given("hsts_include_subdomains")) set.hsts_include_subdomains = Boolean(b.hsts_include_subdomains);
    if (given("hsts_preload")) set.hsts_preload = Boolean(b.hsts_preload);
    return set;
  },

  // Only the load balancer, which the mechanism always locks.
  parents: () => [],

  // A listener's L7 policies and their rules go with it; its default pool stays.
  cascade(l, tree): ChildRef[] {
    const policies = tree.of<{ id: string; listener_id?: string }>("l7policy").filter((p) => p.listener_id === l.id);
    const ids = new Set(policies.map((p) => p.id));
    const rules = tree.of<{ id: string; l7policy_id?: string }>("l7rule").filter((r) => ids.has(String(r.l7policy_id)));
    return [...policies.map((p) => ({ kind: "l7policy", id: p.id })), ...rules.map((r) => ({ kind: "l7rule", id: r.id }))];
  },
};

/** GET /v2/lbaas/listeners/{id}/stats: the counters its amphorae reported (health/stats.ts), else zeros. */
export async function listenerStats(deps: { store: LoadBalancerStore }, ctx: RequestContext, id: string) {
  const found = await deps.store.getChild("listener", id);
  if (!found || found.record.provisioning_status === DELETED) throw notFound("Listener", id);
  authorize(ctx, "os_load-balancer_api:listener:get_stats", String(found.record.project_id));
  const { items } = await deps.store.tree(found.lbId);
  const amphorae = items.filter((i) => i.kind === "amphora").map((i) => i.record as unknown as StatsAmphora);
  const s: ListenerStats = listenerStatistics(id, [...amphorae, ...providerStats([found.record])]);
  return { stats: s };
}

// ---- CIDRs, as Python's ipaddress.ip_network(value, strict=False) reads and prints them -------------

/** The network's `with_prefixlen` (host bits cleared), or undefined where Python refuses the value. */
function ipNetwork(value: string): string | undefined {
  const parts = value.split("/");
  if (parts.length > 2) return undefined;
  const [address, prefix] = parts as [string, string | undefined];
  const v4 = parseIpv4(address);
  if (v4 !== undefined) {
    const len = prefix === undefined ? 32 : ipv4Prefix(prefix);
    if (len === undefined) return undefined;
    return `${formatIpv4((v4 & ipv4Mask(len)) >>> 0)}/${len}`;
  }
  const v6 = parseIpv6(address);
  if (v6 === undefined) return undefined;
  const len = prefix === undefined ? 128 : decimalPrefix(prefix, 128);
  if (len === undefined) return undefined;
  const mask = len === 0 ? 0n : ((1n << BigInt(len)) - 1n) << BigInt(128 - len);
  return `${formatIpv6(v6 & mask)}/${len}`;
}

function decimalPrefix(s: string, max: number): number | undefined {
  if (!/^[0-9]+$/.test(s)) return undefined;
  const n = parseInt(s, 10);
  return n <= max ? n : undefined;
}

/** An IPv4 prefix: a length, else a netmask, else a hostmask, as Python tries them. */
function ipv4Prefix(s: string): number | undefined {
  if (/^[0-9]+$/.test(s)) return decimalPrefix(s, 32);
  const ip = parseIpv4(s);
  if (ip === undefined) return undefined;
  for (const mask of [ip, ~ip >>> 0]) {
    for (let len = 0; len <= 32; len++) if (ipv4Mask(len) === mask) return len;
  }
  return undefined;
}

const ipv4Mask = (len: number) => (len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0);

function parseIpv4(s: string): number | undefined {
  const octets = s.split(".");
  if (octets.length !== 4) return undefined;
  let n = 0;
  for (const o of octets) {
    // Python refuses leading zeros (ambiguous octal) and more than three digits.
    if (!/^[0-9]{1,3}$/.test(o) || (o.length > 1 && o.startsWith("0"))) return undefined;
    const v = parseInt(o, 10);
    if (v > 255) return undefined;
    n = n * 256 + v;
  }
  return n;
}

const formatIpv4 = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join(".");

function parseIpv6(s: string): bigint | undefined {
  const parts = s.split(":");
  if (parts.length < 3) return undefined;
  const last = parts[parts.length - 1]!;
  if (last.includes(".")) {
    const v4 = parseIpv4(last);
    if (v4 === undefined) return undefined;
    parts.splice(parts.length - 1, 1, ((v4 >>> 16) & 0xffff).toString(16), (v4 & 0xffff).toString(16));
  }
  if (parts.length > 9) return undefined;
  // At most one "::": one empty part inside, or two at an end, or three for "::" alone.
  let skip = -1;
  for (let i = 1; i < parts.length - 1; i++) {
    if (parts[i] === "") {
      if (skip !== -1) return undefined;
      skip = i;
    }
  }
  let head = parts;
  let tail: string[] = [];
  if (skip !== -1) {
    head = parts.slice(0, skip);
    tail = parts.slice(skip + 1);
    if (head.length === 1 && head[0] === "") head = [];
    else if (head[0] === "") return undefined;
    if (tail.length === 1 && tail[0] === "") tail = [];
    else if (tail[tail.length - 1] === "") return undefined;
    if (head.length + tail.length > 7) return undefined;
  } else if (parts.length !== 8) return undefined;
  const hextets = [...head, ...Array<string>(8 - head.length - tail.length).fill("0"), ...tail];
  let n = 0n;
  for (const h of hextets) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(h)) return undefined;
    n = (n << 16n) | BigInt(parseInt(h, 16));
  }
  return n;
}

/** RFC 5952 text as Python prints it: the first longest run of two or more zero groups becomes "::". */
function formatIpv6(n: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j === i ? i + 1 : j;
  }
  if (bestLen < 2) return groups.join(":");
  return `${groups.slice(0, best).join(":")}::${groups.slice(best + bestLen).join(":")}`;
}
