// Over 400 lines because Octavia's listener (two wsme types of 25 attributes, the longest descriptor and
// ListenersController's create and update checks) is one resource's rules; its Python ports are in compat/.
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
  VALID_LISTENER_POOL_PROTOCOL_MAP,
} from "../constants";
import { Fault, invalidOption, notFound, requireFound, validation } from "../faults";
import { authorize, type RequestContext } from "../policy";
import type { LoadBalancerStore, TreeRecord } from "../ports";
import { body, bool, integer, str, tags, uuid } from "../validation";
import { ipNetwork } from "../compat/ipaddress";
import { pyRepr, pyStr } from "../compat/repr";
import { stringItem, wsmeEnum, wsmeList, wsmeStringDict } from "../compat/wsme";
import type { ChildRef, ChildResource, Tree } from "./child";
import { checkClientCaAndCrl, checkTlsRefs, TlsLookup } from "./tls-refs";
import { checkAlpnProtocols, checkCiphers, checkTlsVersions } from "./tls-options";
import { apiTime, octaviaFilters, type ResourceDescriptor } from "./descriptor";
import { listenerStatistics, providerStats, type StatsAmphora } from "../health/stats";

const MIN_PORT_NUMBER = 1;
const MAX_PORT_NUMBER = 65535;
const TERMINATED_HTTPS = "TERMINATED_HTTPS";
const PROMETHEUS = "PROMETHEUS";

const timeout = () => integer(MIN_TIMEOUT, MAX_TIMEOUT);

/** types.CidrType: Python's ip_network(value, strict=False). Ottava refuses a scoped IPv6 network (fe80::%eth0/64), which Python takes. */
const cidrItem = (v: unknown) => (typeof v === "string" && cidr(v) !== undefined ? undefined : "Value should be IPv4 or IPv6 CIDR format");
const alpnItem = (v: unknown) =>
  typeof v === "string" && SUPPORTED_ALPN_PROTOCOLS.includes(v) ? undefined : "Value should be a valid ALPN protocol ID";

/** The network's `with_prefixlen` (host bits cleared), or undefined where the CIDR type refuses the value. */
function cidr(value: string): string | undefined {
  if (value.includes("%")) return undefined;
  try {
    return ipNetwork(value, false);
  } catch {
    return undefined;
  }
}

// ---- request bodies -------------------------------------------------------------------------------

export const ListenerPost = body({
  name: str(NAME_MAX).nullish(),
  description: str(DESCRIPTION_MAX).nullish(),
  admin_state_up: bool().nullish(),
  protocol: wsmeEnum(LISTENER_PROTOCOLS),
  protocol_port: integer(MIN_PORT_NUMBER, MAX_PORT_NUMBER),
  connection_limit: integer(MIN_CONNECTION_LIMIT).nullish(),
  default_tls_container_ref: str(255).nullish(),
  sni_container_refs: wsmeList<string | null>(stringItem(255)).nullish(),
  // Deprecated and ignored: a listener belongs to its load balancer's project.
  project_id: str(36).nullish(),
  default_pool_id: uuid().nullish(),
  // A load balancer's fully populated create fills these; a listener's own create cannot take them.
  default_pool: z.unknown().optional(),
  l7policies: wsmeList<unknown>(() => undefined).nullish(),
  insert_headers: wsmeStringDict().nullish(),
  loadbalancer_id: uuid(),
  timeout_client_data: timeout().nullish(),
  timeout_member_connect: timeout().nullish(),
  timeout_member_data: timeout().nullish(),
  timeout_tcp_inspect: timeout().nullish(),
  tags: tags().nullish(),
  client_ca_tls_container_ref: str(255).nullish(),
  client_authentication: wsmeEnum(SUPPORTED_CLIENT_AUTH_MODES).nullish(),
  client_crl_container_ref: str(255).nullish(),
  allowed_cidrs: wsmeList<string>(cidrItem).nullish(),
  tls_ciphers: str(2048).nullish(),
  tls_versions: wsmeList<string | null>(stringItem(32)).nullish(),
  alpn_protocols: wsmeList<string>(alpnItem).nullish(),
  // v2.27: IntegerType(minimum=0) and bools defaulting to False (absent only: a null stays None).
  hsts_max_age: integer(0).nullish(),
  hsts_include_subdomains: bool().nullish(),
  hsts_preload: bool().nullish(),
});
export type ListenerPost = z.output<typeof ListenerPost>;

/**
 * ListenerSingleCreate: a listener inline in a load balancer's fully populated create. Octavia master's
 * type (api/v2/types/listener.py) declares hsts_max_age as IntegerType() with no minimum there, so a
 * negative max age passes where ListenerPOST refuses it; the other fields are ListenerPOST's.
 */
export const ListenerSingleCreate = ListenerPost.extend({ hsts_max_age: integer().nullish() });

/** ListenerPUT: protocol, protocol_port and loadbalancer_id cannot change. */
export const ListenerPut = body({
  name: str(NAME_MAX).nullish(),
  description: str(DESCRIPTION_MAX).nullish(),
  admin_state_up: bool().nullish(),
  connection_limit: integer(MIN_CONNECTION_LIMIT).nullish(),
  default_tls_container_ref: str(255).nullish(),
  sni_container_refs: wsmeList<string | null>(stringItem(255)).nullish(),
  default_pool_id: uuid().nullish(),
  insert_headers: wsmeStringDict().nullish(),
  timeout_client_data: timeout().nullish(),
  timeout_member_connect: timeout().nullish(),
  timeout_member_data: timeout().nullish(),
  timeout_tcp_inspect: timeout().nullish(),
  tags: tags().nullish(),
  client_ca_tls_container_ref: str(255).nullish(),
  client_authentication: wsmeEnum(SUPPORTED_CLIENT_AUTH_MODES).nullish(),
  client_crl_container_ref: str(255).nullish(),
  allowed_cidrs: wsmeList<string>(cidrItem).nullish(),
  tls_ciphers: str(2048).nullish(),
  tls_versions: wsmeList<string | null>(stringItem(32)).nullish(),
  alpn_protocols: wsmeList<string>(alpnItem).nullish(),
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
const uniqueCidrs = (cidrs: readonly string[] | null | undefined) => [...new Set((cidrs ?? []).map((c) => cidr(c)!))];

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
      checkAlpnProtocols(alpn);
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
    if (b.alpn_protocols !== undefined) checkAlpnProtocols(b.alpn_protocols);
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
  const found = requireFound(await deps.store.getChild("listener", id), "Listener", id);
  authorize(ctx, "os_load-balancer_api:listener:get_stats", String(found.record.project_id));
  const { items } = await deps.store.tree(found.lbId);
  const amphorae = items.filter((i) => i.kind === "amphora").map((i) => i.record as unknown as StatsAmphora);
  const s: ListenerStats = listenerStatistics(id, [...amphorae, ...providerStats([found.record])]);
  return { stats: s };
}
