// An amphora's haproxy.cfg, as Octavia's combined-listeners JinjaTemplater renders it for the amphora driver's update_amphora_listeners (octavia/common/jinja/haproxy/combined_listeners: jinja_cfg.py, templates/base.j2, haproxy.cfg.j2, macros.j2).
//
// The transforms (_transform_*) and the templates are followed step by step, whitespace included,
// and proven equal to Octavia 11's output by test/render-haproxy.test.ts over the cases of
// test/fixtures/octavia-haproxy.json. Ottava renders otherwise only where Octavia's output is
// wrong, each such line marked in the fixture with why:
//  - values are written as HAProxy reads them: Octavia's Jinja environment escapes them for HTML
//    (autoescape=True), which HAProxy reads literally ("&amp;") or, worse, as a comment from the
//    "#" of "&#34;" and "&#39;" on; Ottava writes no entities and escapes " ' # with a backslash
//    (and, in a sample fetch's argument, a header or cookie name, a quote once more for the argument);
//  - expected codes are listed in ascending order, stripped of whitespace (Octavia joins a Python
//    set, in hash order, and keeps the whitespace of "200 ,202", which HAProxy refuses);
//  - an IPv6 monitor address is written in brackets ("addr fd00::5" is refused by HAProxy);
//  - a FILE_TYPE EQUAL_TO rule is "path_end <value>" and an LB with an IPv6 VIP gets "type ipv6"
//    stick tables, as Octavia master renders them (bugs fixed there);
//  - a null insert_headers value is not "true" (Octavia's template fails on it).
// HSTS (API v2.27) is rendered as Octavia master renders it. As in Octavia's combined configuration,
// the peers of ACTIVE_STANDBY listen on HAPROXY_BASE_PEER_PORT (1025): a listener's peer_port is not read.
//
// One file, long as it is: it mirrors Octavia's one combined-listeners templater (jinja_cfg.py's transforms
// and the templates they feed) section by section, and is read beside it; the view types join the halves.
import { createHash } from "node:crypto";
import {
  AMPHORA_ALLOCATED,
  DEFAULT_LISTENER_CIPHERS,
  DEFAULT_POOL_CIPHERS,
  DEFAULT_TIMEOUT_CLIENT_DATA,
  DEFAULT_TIMEOUT_MEMBER_CONNECT,
  DEFAULT_TIMEOUT_MEMBER_DATA,
  DEFAULT_TIMEOUT_TCP_INSPECT,
  HAPROXY_BASE_PEER_PORT,
  HAPROXY_HTTP_PROTOCOLS,
  L7POLICY_ACTION_REDIRECT_PREFIX,
  L7POLICY_ACTION_REDIRECT_TO_POOL,
  L7POLICY_ACTION_REDIRECT_TO_URL,
  L7POLICY_ACTION_REJECT,
  LVS_PROTOCOLS,
  PENDING_DELETE,
  TOPOLOGY_ACTIVE_STANDBY,
  type Amphora,
  type HealthMonitor,
  type L7Policy,
  type L7Rule,
  type Listener,
  type LoadBalancer,
  type Member,
  type Pool,
  type Tree,
} from "@ottava/core";
import { osPathJoin, pyFloat, pyReplace, pyStr, pyStrip, truthy } from "./common";

// ---- the input ----------------------------------------------------------------------------------

/**
 * What the renderer reads of Octavia's settings, by their Octavia names: [haproxy_amphora]
 * base_path, base_cert_dir, connection_logging, haproxy_stick_size, user_log_format,
 * default_connection_limit and the timeouts; [amphora_agent] user_log_facility and
 * administrative_log_facility; [api_settings] default_listener_ciphers and default_pool_ciphers
 * (what a stored cipher string that is not one falls back to); and the JinjaTemplater's log_http
 * and log_server, which Octavia's driver leaves unset. Octavia 11 has no user_group option (the
 * amphora agent adds the group) and a custom haproxy_template cannot be followed.
 */
export interface HaproxySettings {
  /**
   * The agent's files: the stats socket is `<base_path>/<lb id>.sock`, the server state
   * `<base_path>/<lb id>/servers-state`. Absolute: HAProxy reads a socket path without a leading "/" as an address.
   */
  base_path: string;
  /** The certificates: a listener's crt-list is `<base_cert_dir>/<lb id>/<listener id>.pem`. */
  base_cert_dir: string;
  /** false: `no log` and no log-format. */
  connection_logging: boolean;
  /** The size of SOURCE_IP and APP_COOKIE stick tables ("10k"). */
  haproxy_stick_size: string;
  /** The listeners' log-format, where `{{ project_id }}` and `{{ lb_id }}` are the LB's. */
  user_log_format: string;
  /** A listener's maxconn when its connection_limit is unset, -1 or 0. */
  default_connection_limit: number;
  /** A listener's timeouts (ms) when its own are unset or 0. */
  timeout_client_data: number;
  timeout_member_connect: number;
  timeout_member_data: number;
  timeout_tcp_inspect: number;
  /** LOG_LOCAL<n> of the user flow logs and of HAProxy's own. */
  user_log_facility: number;
  administrative_log_facility: number;
  default_listener_ciphers: string;
  default_pool_ciphers: string;
  /** The log targets; null: /run/rsyslog/octavia/log. */
  log_http: string | null;
  log_server: string | null;
}

/** Octavia's defaults of those settings. */
export const HAPROXY_DEFAULT_SETTINGS: Readonly<HaproxySettings> = Object.freeze({
  base_path: "/var/lib/octavia",
  base_cert_dir: "/var/lib/octavia/certs",
  connection_logging: true,
  haproxy_stick_size: "10k",
  user_log_format: "{{ project_id }} {{ lb_id }} %f %ci %cp %t %{+Q}r %ST %B %U %[ssl_c_verify] %{+Q}[ssl_c_s_dn] %b %s %Tt %tsc",
  default_connection_limit: 50000,
  timeout_client_data: DEFAULT_TIMEOUT_CLIENT_DATA,
  timeout_member_connect: DEFAULT_TIMEOUT_MEMBER_CONNECT,
  timeout_member_data: DEFAULT_TIMEOUT_MEMBER_DATA,
  timeout_tcp_inspect: DEFAULT_TIMEOUT_TCP_INSPECT,
  user_log_facility: 0,
  administrative_log_facility: 1,
  default_listener_ciphers: DEFAULT_LISTENER_CIPHERS,
  default_pool_ciphers: DEFAULT_POOL_CIPHERS,
  log_http: null,
  log_server: null,
});

/** A listener's client-authentication files, as Octavia's driver uploads them (_process_secret). */
export interface HaproxyListenerCerts {
  /**
   * The client CA bundle (client_ca_tls_container_ref): a file name under `<base_cert_dir>/<lb id>/`
   * (Octavia's driver names it `<SHA-1 hex of the secret>.pem`), or an absolute path.
   */
  client_ca?: string;
  /** The client CRL (client_crl_container_ref), likewise. */
  client_crl?: string;
}

/** A pool's files, as Octavia's driver uploads them (_process_pool_certs): full paths. */
export interface HaproxyPoolCerts {
  /** The client certificate and key (tls_container_ref): Octavia's `<base_cert_dir>/<lb id>/<SHA-1 hex of the certificate PEM>.pem`. */
  client_cert?: string;
  /** The CA bundle that verifies the members (ca_tls_container_ref): `<base_cert_dir>/<lb id>/<SHA-1 hex of the secret>.pem`. */
  ca_cert?: string;
  /** The members' CRL (crl_container_ref), likewise. */
  crl?: string;
}

/**
 * Where the driver put the certificates the configuration names (Octavia's tls_certs). A
 * listener's TLS certificate and SNI certificates are in its crt-list, which the renderer names
 * itself (`<base_cert_dir>/<lb id>/<listener id>.pem`, the default certificate's path first).
 */
export interface HaproxyCertPaths {
  /** By listener id: required for every listener with a client CA or CRL reference. */
  listeners?: Readonly<Record<string, HaproxyListenerCerts>>;
  /** By pool id: a pool reference without its path is left out of the server lines, as Octavia does. */
  pools?: Readonly<Record<string, HaproxyPoolCerts>>;
}

export interface HaproxyConfigInput {
  /** The load balancer's tree as its amphorae serve it; its UDP and SCTP listeners are not HAProxy's. */
  tree: Tree;
  /** The amphora the configuration is for (Octavia's host_amphora): one of the LB's. */
  amphora: Amphora;
  /** The LB's amphorae (loadbalancer.amphorae): the ALLOCATED ones are the peers of ACTIVE_STANDBY. */
  amphorae: readonly Amphora[];
  /**
   * The HAProxy version the amphora agent reports (haproxy_version of its info, the package's
   * version: "2.6.12-1+deb12u4"). As Octavia, its first two dot-separated parts decide: HTTP reuse
   * (1.6), pool ALPN (1.9), the Prometheus exporter (2), insecure-fork-wanted for PING monitors (2.2).
   */
  haproxyVersion: string;
  certs?: HaproxyCertPaths;
  /** Over HAPROXY_DEFAULT_SETTINGS. */
  settings?: Partial<HaproxySettings>;
}

// ---- Octavia's constants and maps -------------------------------------------------------------

const PROTOCOL_MAP: Readonly<Record<string, string>> = {
  TCP: "tcp",
  HTTP: "http",
  HTTPS: "tcp",
  PROXY: "proxy",
  PROXYV2: "proxy",
  TERMINATED_HTTPS: "http",
  PROMETHEUS: "http",
};
const BALANCE_MAP: Readonly<Record<string, string>> = { ROUND_ROBIN: "roundrobin", LEAST_CONNECTIONS: "leastconn", SOURCE_IP: "source" };
const CLIENT_AUTH_MAP: Readonly<Record<string, string>> = { NONE: "none", OPTIONAL: "optional", MANDATORY: "required" };
const HAPROXY_MAX_MAXCONN = 1_000_000;
const DEFAULT_LOG_TARGET = "/run/rsyslog/octavia/log";
const TLS_VERSION_OPTIONS: readonly (readonly [string, string])[] = [
  ["SSLv3", " no-sslv3"],
  ["TLSv1", " no-tlsv10"],
  ["TLSv1.1", " no-tlsv11"],
  ["TLSv1.2", " no-tlsv12"],
  ["TLSv1.3", " no-tlsv13"],
];
/** validate.VALID_CIPHER_RE, INVALID_URL_CHARS_RE, INVALID_CONFIG_CHARS_RE. */
const VALID_CIPHER_RE = /^[A-Za-z0-9\-+!:@=_.]+$/;
const INVALID_URL_CHARS_RE = /[\x00-\x20\x7f-\x9f]/;
const INVALID_CONFIG_CHARS_RE = /[\x00-\x1f\x7f-\x9f]/;

/**
 * A value as HAProxy's configuration parser reads it back: outside quotes, " and ' would start
 * quoted text and # a comment, so each gets a backslash (what Octavia's _escape_haproxy_config_string
 * did to an L7 rule's backslashes and spaces stays as it is).
 */
const escapeValue = (text: string) => text.replace(/["'#]/g, "\\$&");

/** `{{ value }}` in Octavia's templates, as Ottava writes it: Python's str() of the value, escaped for HAProxy. */
const cfg = (v: unknown): string => escapeValue(pyStr(v));

/**
 * A sample fetch's argument (a header or cookie name: HTTP tokens may hold ' and #): HAProxy reads
 * arguments with quotes and backslashes of their own, so a quote gets a backslash for the argument,
 * then the line's escaping (backslashes included).
 */
const fetchArg = (v: unknown): string =>
  pyStr(v)
    .replace(/[\\'"]/g, "\\$&")
    .replace(/[\\"'#]/g, "\\$&");

const get = <T>(map: Readonly<Record<string, T>>, key: unknown): T | undefined =>
  typeof key === "string" && Object.hasOwn(map, key) ? map[key] : undefined;

// ---- the HAProxy version ------------------------------------------------------------------------

/** PEP 440 (packaging.version.Version), which oslo's versionutils.is_compatible reads versions with. */
const PEP440 =
  /^\s*v?(?:(\d+)!)?(\d+(?:\.\d+)*)((?:[-_.]?(?:alpha|a|beta|b|preview|pre|c|rc)[-_.]?\d*)?)((?:-\d+|[-_.]?(?:post|rev|r)[-_.]?\d*)?)((?:[-_.]?dev[-_.]?\d*)?)(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?\s*$/i;

/** is_compatible("<major>.<minor>.0", version, same_major=False): version >= major.minor.0. */
function atLeast(version: string, major: number, minor: number): boolean {
  const m = PEP440.exec(version);
  if (!m) throw new Error(`HAProxy version '${version}' is not a PEP 440 version`);
  if (Number(m[1] ?? 0) > 0) return true;
  const release = m[2]!.split(".").map(Number);
  const wanted = [major, minor, 0];
  for (let i = 0; i < Math.max(release.length, wanted.length); i++) {
    const a = release[i] ?? 0;
    const b = wanted[i] ?? 0;
    if (a !== b) return a > b;
  }
  // The same release: a pre-release, or a development release that is not a post-release, is older.
  return !m[3] && !(m[5] && !m[4]);
}

interface Features {
  httpReuse: boolean;
  poolAlpn: boolean;
  prometheus: boolean;
  insecureFork: boolean;
}

/** build_config's feature_compatibility, from the first two dot-separated parts of the version. */
function features(reported: string): Features {
  const parts = reported.split(".").slice(0, 2);
  const version = parts.join(".");
  const major = parts[0]!;
  const httpReuse = atLeast(version, 1, 6);
  const poolAlpn = atLeast(version, 1, 9);
  if (!/^\s*[+-]?\d+(?:_\d+)*\s*$/.test(major)) throw new Error(`HAProxy version '${reported}' has no major version`);
  return { httpReuse, poolAlpn, prometheus: Number(major.trim().replace(/_/g, "")) >= 2, insecureFork: atLeast(version, 2, 2) };
}

// ---- the transforms (JinjaTemplater._transform_*) ----------------------------------------------

interface ViewMonitor {
  type: string;
  delay: unknown;
  timeout: unknown;
  fall_threshold: unknown;
  rise_threshold: unknown;
  http_method: unknown;
  url_path: unknown;
  expected_codes: string | null;
  enabled: unknown;
  http_version: number | null;
  domain_name: unknown;
}

interface ViewMember {
  id: string;
  address: string;
  protocol_port: number;
  weight: unknown;
  enabled: unknown;
  monitor_address: unknown;
  monitor_port: unknown;
  backup: unknown;
}

interface ViewPool {
  id: string;
  protocol: string;
  proxy_protocol: 1 | 2 | null;
  listener_tls_enabled: boolean;
  lb_algorithm: string;
  members: ViewMember[];
  health_monitor: ViewMonitor | null;
  session_persistence: { type: unknown; cookie_name: unknown } | null;
  enabled: unknown;
  stick_size: string;
  http_reuse: boolean;
  tls_enabled: unknown;
  client_cert?: string;
  ca_cert?: string;
  crl?: string;
  tls_ciphers?: string;
  tls_versions?: readonly unknown[];
  alpn_protocols?: string;
}

interface ViewRule {
  id: string;
  type: string;
  compare_type: string;
  key: unknown;
  value: string;
  invert: unknown;
}

interface ViewPolicy {
  id: string;
  action: string;
  redirect_url: string | null;
  redirect_prefix: string | null;
  enabled: unknown;
  redirect_pool: ViewPool | null;
  redirect_http_code: unknown;
  l7rules: ViewRule[];
}

interface ViewListener {
  id: string;
  protocol_port: number;
  protocol_mode: string;
  protocol: string;
  insert_headers: Readonly<Record<string, unknown>>;
  enabled: unknown;
  timeout_client_data: unknown;
  timeout_member_connect: unknown;
  timeout_member_data: unknown;
  timeout_tcp_inspect: unknown;
  prometheus: boolean;
  user_log_format?: string;
  connection_limit: unknown;
  crt_list_filename?: string;
  client_ca_tls_path?: string;
  client_auth?: string | null;
  client_crl_path?: string;
  tls_ciphers?: string;
  tls_versions?: readonly unknown[];
  alpn_protocols?: string;
  hsts_directives?: string;
  pools: ViewPool[];
  default_pool?: ViewPool;
  l7policies: ViewPolicy[];
}

/** The listeners HAProxy serves, in the tree's order: all but UDP and SCTP ones (Octavia's listeners_to_update). */
export function haproxyListeners(tree: Tree): Listener[] {
  return tree.of<Listener>("listener").filter((l) => !LVS_PROTOCOLS.includes(l.protocol));
}

/**
 * The peer name of an amphora in the peers section: octavia_utils.base64_sha1_string of its id (a
 * leading "-" made "x") without "=". The amphora agent starts HAProxy with `-L <this name>`.
 */
export function haproxyPeerName(amphoraId: string): string {
  const b64 = createHash("sha1").update(amphoraId, "utf8").digest("base64").replace(/\+/g, "_").replace(/\//g, "-");
  return b64.replace(/^-/, "x").replace(/=/g, "");
}

/**
 * Octavia's expand_expected_codes ("200-204", "200, 202"), each code stripped of whitespace and the
 * set listed in ascending order: where HAProxy's configuration departs from Octavia's (see the top).
 * keepalived's (render/lvs.ts expandExpectedCodes) keeps Octavia's text order.
 */
function haproxyExpectedCodes(codes: string): string[] {
  const out = new Set<string>();
  for (const code of pyStrip(codes).split(/\s*,\s*/)) {
    if (!code) continue;
    if (code.includes("-")) {
      const [low, high] = code.split("-");
      for (let i = Number(low); i <= Number(high); i++) out.add(String(i));
    } else {
      out.add(code);
    }
  }
  return [...out].sort((a, b) => Number(a) - Number(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** _escape_haproxy_config_string: backslashes doubled, spaces escaped. */
const escapeHaproxyString = (value: string) => value.replace(/\\/g, "\\\\").replace(/ /g, "\\ ");

class Transformer {
  private readonly lb: LoadBalancer;
  constructor(
    private readonly tree: Tree,
    private readonly s: HaproxySettings,
    private readonly f: Features,
    private readonly certs: HaproxyCertPaths,
  ) {
    this.lb = tree.lb;
  }

  /** models.Listener.pools: the default pool, then the redirect pools of enabled L7 policies with rules. */
  private listenerPools(l: Listener, policies: L7Policy[]): Pool[] {
    const pools: Pool[] = [];
    const defaultPool = l.default_pool_id ? this.tree.get<Pool>("pool", l.default_pool_id) : undefined;
    if (defaultPool) pools.push(defaultPool);
    for (const p of policies) {
      const pool = p.redirect_pool_id ? this.tree.get<Pool>("pool", p.redirect_pool_id) : undefined;
      if (!pool || p.admin_state_up !== true || this.rulesOf(p).length === 0) continue;
      if (!pools.some((x) => x.id === pool.id)) pools.push(pool);
    }
    return pools;
  }

  private policiesOf(l: Listener): L7Policy[] {
    return this.tree
      .of<L7Policy>("l7policy")
      .filter((p) => p.listener_id === l.id)
      .sort((a, b) => a.position - b.position);
  }

  private rulesOf(p: L7Policy): L7Rule[] {
    return this.tree.of<L7Rule>("l7rule").filter((r) => r.l7policy_id === p.id);
  }

  listener(l: Listener): ViewListener {
    const s = this.s;
    const protocolMode = get(PROTOCOL_MAP, l.protocol);
    if (protocolMode === undefined) throw new Error(`Listener ${l.id}: protocol ${l.protocol} has no HAProxy mode`);
    const v: ViewListener = {
      id: l.id,
      protocol_port: l.protocol_port,
      protocol_mode: protocolMode,
      protocol: l.protocol,
      insert_headers: l.insert_headers ?? {},
      enabled: l.admin_state_up,
      timeout_client_data: truthy(l.timeout_client_data) ? l.timeout_client_data : s.timeout_client_data,
      timeout_member_connect: truthy(l.timeout_member_connect) ? l.timeout_member_connect : s.timeout_member_connect,
      timeout_member_data: truthy(l.timeout_member_data) ? l.timeout_member_data : s.timeout_member_data,
      timeout_tcp_inspect: truthy(l.timeout_tcp_inspect) ? l.timeout_tcp_inspect : s.timeout_tcp_inspect,
      prometheus: this.f.prometheus,
      connection_limit: truthy(l.connection_limit) && l.connection_limit! > -1 ? l.connection_limit : s.default_connection_limit,
      pools: [],
      l7policies: [],
    };
    if (truthy(s.connection_logging)) v.user_log_format = this.logFormat(l.protocol);
    if (truthy(l.default_tls_container_ref)) v.crt_list_filename = osPathJoin(s.base_cert_dir, this.lb.id, `${l.id}.pem`);
    if (truthy(l.client_ca_tls_container_ref)) {
      v.client_ca_tls_path = osPathJoin(s.base_cert_dir, this.lb.id, this.listenerFile(l, "client_ca"));
      v.client_auth = get(CLIENT_AUTH_MAP, l.client_authentication) ?? null;
    }
    if (truthy(l.client_crl_container_ref)) {
      v.client_crl_path = osPathJoin(s.base_cert_dir, this.lb.id, this.listenerFile(l, "client_crl"));
    }
    const tlsEnabled = l.protocol === "TERMINATED_HTTPS" || l.protocol === "PROMETHEUS";
    if (tlsEnabled) {
      if (l.tls_ciphers != null) v.tls_ciphers = VALID_CIPHER_RE.test(l.tls_ciphers) ? l.tls_ciphers : s.default_listener_ciphers;
      if (l.tls_versions != null) v.tls_versions = l.tls_versions;
      if (l.alpn_protocols != null) v.alpn_protocols = l.alpn_protocols.join(",");
      // Octavia master (API v2.27).
      if (l.hsts_max_age != null) {
        let directives = `max-age=${pyStr(l.hsts_max_age)};`;
        if (truthy(l.hsts_include_subdomains)) directives += " includeSubDomains;";
        if (truthy(l.hsts_preload)) directives += " preload;";
        v.hsts_directives = directives;
      }
    }
    const policies = this.policiesOf(l);
    v.pools = this.listenerPools(l, policies)
      .filter((p) => p.provisioning_status !== PENDING_DELETE)
      .map((p) => this.pool(p, tlsEnabled));
    if (l.default_pool_id && this.tree.get("pool", l.default_pool_id)) {
      const found = v.pools.find((p) => p.id === l.default_pool_id);
      if (found) v.default_pool = found;
    }
    v.l7policies = policies.filter((p) => p.provisioning_status !== PENDING_DELETE).map((p) => this.policy(p, tlsEnabled));
    return v;
  }

  /** tls_certs[<the listener's secret reference>]: Octavia's driver always has it (a KeyError otherwise). */
  private listenerFile(l: Listener, which: "client_ca" | "client_crl"): string {
    const file = this.certs.listeners?.[l.id]?.[which];
    if (file === undefined) throw new Error(`Listener ${l.id} has a ${which} reference but no ${which} file in the certificate paths`);
    return file;
  }

  /** _format_log_string. */
  private logFormat(protocol: string): string {
    let format = pyReplace(this.s.user_log_format, "{{ project_id }}", this.lb.project_id);
    format = pyReplace(format, "{{ lb_id }}", this.lb.id);
    if (!HAPROXY_HTTP_PROTOCOLS.includes(protocol)) {
      format = pyReplace(format, "%{+Q}r", "-");
      format = pyReplace(format, "%r", "-");
      format = pyReplace(format, "%{+Q}ST", "-");
      format = pyReplace(format, "%ST", "-");
    }
    return pyReplace(format, " ", "\\ ");
  }

  pool(p: Pool, listenerTlsEnabled: boolean): ViewPool {
    const protocol = get(PROTOCOL_MAP, p.protocol);
    if (protocol === undefined) throw new Error(`Pool ${p.id}: protocol ${p.protocol} has no HAProxy mode`);
    const v: ViewPool = {
      id: p.id,
      protocol,
      proxy_protocol: p.protocol === "PROXY" ? 1 : p.protocol === "PROXYV2" ? 2 : null,
      listener_tls_enabled: listenerTlsEnabled,
      lb_algorithm: get(BALANCE_MAP, p.lb_algorithm) ?? "roundrobin",
      members: this.tree
        .of<Member>("member")
        .filter((m) => m.pool_id === p.id && m.provisioning_status !== PENDING_DELETE)
        .map((m) => ({
          id: m.id,
          address: m.address,
          protocol_port: m.protocol_port,
          weight: m.weight,
          enabled: m.admin_state_up,
          monitor_address: m.monitor_address,
          monitor_port: m.monitor_port,
          backup: m.backup,
        })),
      health_monitor: null,
      session_persistence: p.session_persistence
        ? { type: p.session_persistence.type, cookie_name: p.session_persistence.cookie_name }
        : null,
      enabled: p.admin_state_up,
      stick_size: this.s.haproxy_stick_size,
      http_reuse: this.f.httpReuse,
      tls_enabled: p.tls_enabled,
    };
    const hm = this.tree.of<HealthMonitor>("healthmonitor").find((h) => h.pool_id === p.id);
    if (hm && hm.provisioning_status !== PENDING_DELETE) {
      v.health_monitor = {
        type: hm.type,
        delay: hm.delay,
        timeout: hm.timeout,
        fall_threshold: hm.max_retries_down,
        rise_threshold: hm.max_retries,
        http_method: hm.http_method,
        url_path: hm.url_path,
        expected_codes: truthy(hm.expected_codes) ? haproxyExpectedCodes(hm.expected_codes!).join("|") : null,
        enabled: hm.admin_state_up,
        http_version: hm.http_version,
        domain_name: hm.domain_name,
      };
    }
    const files = this.certs.pools?.[p.id];
    if (truthy(p.tls_container_ref) && truthy(files?.client_cert)) v.client_cert = files!.client_cert!;
    if (p.tls_enabled === true) {
      if (p.tls_ciphers != null) v.tls_ciphers = VALID_CIPHER_RE.test(p.tls_ciphers) ? p.tls_ciphers : this.s.default_pool_ciphers;
      if (p.tls_versions != null) v.tls_versions = p.tls_versions;
      if (p.alpn_protocols != null && this.f.poolAlpn) v.alpn_protocols = p.alpn_protocols.join(",");
    }
    if (truthy(p.ca_tls_container_ref) && truthy(files?.ca_cert)) v.ca_cert = files!.ca_cert!;
    if (truthy(p.crl_container_ref) && truthy(files?.crl)) v.crl = files!.crl!;
    return v;
  }

  private policy(p: L7Policy, listenerTlsEnabled: boolean): ViewPolicy {
    const sanitize = (value: string | null) => (value && INVALID_URL_CHARS_RE.test(value) ? null : value);
    const redirectPool = p.redirect_pool_id ? this.tree.get<Pool>("pool", p.redirect_pool_id) : undefined;
    const redirect = p.action === L7POLICY_ACTION_REDIRECT_TO_URL || p.action === L7POLICY_ACTION_REDIRECT_PREFIX;
    return {
      id: p.id,
      action: p.action,
      redirect_url: sanitize(p.redirect_url),
      redirect_prefix: sanitize(p.redirect_prefix),
      enabled: p.admin_state_up,
      redirect_pool:
        redirectPool && redirectPool.provisioning_status !== PENDING_DELETE ? this.pool(redirectPool, listenerTlsEnabled) : null,
      redirect_http_code: redirect && truthy(p.redirect_http_code) ? p.redirect_http_code : null,
      l7rules: this.rulesOf(p)
        .filter((r) => truthy(r.admin_state_up) && r.provisioning_status !== PENDING_DELETE)
        .filter((r) => !(truthy(r.value) && INVALID_CONFIG_CHARS_RE.test(r.value)))
        .map((r) => ({
          id: r.id,
          type: r.type,
          compare_type: r.compare_type,
          key: r.key,
          value: escapeHaproxyString(r.value),
          invert: r.invert,
        })),
    };
  }
}

// ---- the templates ------------------------------------------------------------------------------

/** `listener.insert_headers.get(name, 'False').lower() == 'true'`; a null value is not "true". */
function header(l: ViewListener, name: string): boolean {
  const value = Object.hasOwn(l.insert_headers, name) ? l.insert_headers[name] : "False";
  return typeof value === "string" && value.toLowerCase() === "true";
}

function tlsVersionOptions(versions: readonly unknown[]): string {
  return TLS_VERSION_OPTIONS.filter(([version]) => !versions.includes(version))
    .map(([, option]) => option)
    .join("");
}

const peersName = (lb: LoadBalancer) => pyStrip(`${pyReplace(lb.id, "-", "")}_peers`);

/** macros.j2 bind_macro, trimmed as frontend_macro writes it. */
function bindLine(l: ViewListener, vip: string): string {
  const crt = l.crt_list_filename !== undefined ? pyStrip(`ssl crt-list ${l.crt_list_filename}`) : "";
  const clientCa =
    truthy(l.client_ca_tls_path) && truthy(l.client_auth) ? pyStrip(`ca-file ${l.client_ca_tls_path} verify ${l.client_auth}`) : "";
  const crl = truthy(l.client_crl_path) && truthy(l.client_ca_tls_path) ? pyStrip(`crl-file ${l.client_crl_path}`) : "";
  const ciphers = l.tls_ciphers !== undefined ? pyStrip(`ciphers ${l.tls_ciphers}`) : "";
  const versions = l.tls_versions !== undefined ? tlsVersionOptions(l.tls_versions) : "";
  const alpn = l.alpn_protocols !== undefined ? pyStrip(`alpn ${l.alpn_protocols}`) : "";
  const options = pyStrip(`${crt} ${clientCa} ${crl} ${ciphers}${versions} ${alpn}`);
  return pyStrip(`bind ${cfg(vip)}:${cfg(l.protocol_port)} ${escapeValue(options)}`);
}

/** l7rule_compare_type_macro; FILE_TYPE EQUAL_TO is "path_end <value>", as on Octavia master. */
function compareType(ctype: string, rtype: string): string {
  switch (ctype) {
    case "REGEX":
      return "-m reg";
    case "STARTS_WITH":
      return "-m beg";
    case "ENDS_WITH":
      return "-m end";
    case "CONTAINS":
      return "-m sub";
    case "EQUAL_TO":
      return rtype === "FILE_TYPE" ? "" : "-m str";
    default:
      return "";
  }
}

function l7rule(r: ViewRule): string {
  const id = cfg(r.id);
  const value = cfg(r.value);
  const cmp = compareType(r.compare_type, r.type);
  switch (r.type) {
    case "HOST_NAME":
      return `        acl ${id} req.hdr(host) -i ${cmp} ${value}\n`;
    case "PATH":
      return `        acl ${id} path ${cmp} ${value}\n`;
    case "FILE_TYPE":
      return `        acl ${id} path_end ${cmp} ${value}\n`;
    case "HEADER":
      return `        acl ${id} req.hdr(${fetchArg(r.key)}) ${cmp} ${value}\n`;
    case "COOKIE":
      return `        acl ${id} req.cook(${fetchArg(r.key)}) ${cmp} ${value}\n`;
    case "SSL_CONN_HAS_CERT":
      return `        acl ${id} ssl_c_used\n`;
    case "SSL_VERIFY_RESULT":
      return `        acl ${id} ssl_c_verify eq ${value}\n`;
    case "SSL_DN_FIELD":
      return `        acl ${id} ssl_c_s_dn(${fetchArg(r.key)}) ${cmp} ${value}\n`;
    default:
      return "";
  }
}

function l7policy(p: ViewPolicy, l: ViewListener): string {
  let out = p.l7rules.map(l7rule).join("");
  const rules = p.l7rules.map((r) => ` ${truthy(r.invert) ? "!" : ""}${cfg(r.id)}`).join("");
  const code = truthy(p.redirect_http_code) ? cfg(` code ${pyStr(p.redirect_http_code)}`) : "";
  if (p.action === L7POLICY_ACTION_REJECT) out += `    http-request deny if${rules}\n`;
  else if (p.action === L7POLICY_ACTION_REDIRECT_TO_URL) out += `    redirect${code} location ${cfg(p.redirect_url)} if${rules}\n`;
  else if (p.action === L7POLICY_ACTION_REDIRECT_TO_POOL && truthy(p.redirect_pool?.enabled)) {
    out += `    use_backend ${cfg(p.redirect_pool!.id)}:${cfg(l.id)} if${rules}\n`;
  } else if (p.action === L7POLICY_ACTION_REDIRECT_PREFIX) out += `    redirect${code} prefix ${cfg(p.redirect_prefix)} if${rules}\n`;
  return out;
}

function frontend(l: ViewListener, lb: LoadBalancer): string {
  let out = `frontend ${cfg(l.id)}\n`;
  out += `    maxconn ${cfg(l.connection_limit)}\n`;
  if (l.protocol.toLowerCase() === "terminated_https") {
    out += "    redirect scheme https if !{ ssl_fc }\n";
    if (l.hsts_directives !== undefined) out += `    http-response set-header Strict-Transport-Security "${cfg(l.hsts_directives)}"\n`;
  }
  out += `    ${bindLine(l, lb.vip_address)}\n`;
  for (const vip of lb.additional_vips ?? []) out += `    ${bindLine(l, vip.ip_address)}\n`;
  out += `    mode ${cfg(l.protocol_mode)}\n`;
  for (const p of l.l7policies) if (truthy(p.enabled) && p.l7rules.length > 0) out += l7policy(p, l);
  if (l.default_pool && truthy(l.default_pool.enabled)) out += `    default_backend ${cfg(l.default_pool.id)}:${cfg(l.id)}\n`;
  out += `    timeout client ${cfg(l.timeout_client_data)}\n`;
  if (truthy(l.timeout_tcp_inspect)) out += `    tcp-request inspect-delay ${cfg(l.timeout_tcp_inspect)}\n`;
  if (l.protocol === "PROMETHEUS" && l.prometheus) out += "    default_backend prometheus-exporter-internal\n";
  if (l.user_log_format !== undefined) out += `    log-format ${cfg(l.user_log_format)}\n`;
  return out;
}

/** An IPv6 monitor address in brackets: HAProxy reads "addr fd00::5" as address "fd00:" port 5. */
const monitorAddress = (address: unknown) => (typeof address === "string" && address.includes(":") ? `[${address}]` : pyStr(address));

function member(pool: ViewPool, m: ViewMember): string {
  const hm = pool.health_monitor;
  let check = "";
  if (hm && truthy(hm.enabled)) {
    const addr = truthy(m.monitor_address) ? ` addr ${monitorAddress(m.monitor_address)}` : "";
    const port = truthy(m.monitor_port) ? ` port ${pyStr(m.monitor_port)}` : "";
    const ssl = hm.type === "HTTPS" ? " check-ssl verify none" : "";
    check = ` check${ssl} inter ${pyStr(hm.delay)}s fall ${pyStr(hm.fall_threshold)} rise ${pyStr(hm.rise_threshold)}${addr}${port}`;
  }
  const cookie = pool.session_persistence?.type === "HTTP_COOKIE" ? ` cookie ${pyStr(m.id)}` : "";
  const proxy =
    pool.proxy_protocol === 1
      ? " send-proxy"
      : pool.proxy_protocol === 2
        ? pool.listener_tls_enabled
          ? " send-proxy-v2-ssl-cn"
          : " send-proxy-v2"
        : "";
  const backup = truthy(m.backup) ? " backup" : "";
  const disabled = truthy(m.enabled) ? "" : " disabled";
  const tls = truthy(pool.tls_enabled);
  const crt = truthy(pool.client_cert) && tls ? ` crt ${pool.client_cert}` : "";
  let ca = "";
  let crl = "";
  let verify = "";
  if (truthy(pool.ca_cert) && tls) {
    ca = ` ca-file ${pool.ca_cert}`;
    if (truthy(pool.crl)) {
      crl = ` crl-file ${pool.crl}`;
      verify = " verify required";
    }
  } else if (tls) {
    verify = " verify none";
  }
  const ciphers = pool.tls_ciphers !== undefined ? ` ciphers ${pool.tls_ciphers}` : "";
  const versions = pool.tls_versions !== undefined ? tlsVersionOptions(pool.tls_versions) : "";
  const alpn = pool.alpn_protocols !== undefined ? ` alpn ${pool.alpn_protocols}` : "";
  const line =
    `server ${pyStr(m.id)} ${pyStr(m.address)}:${m.protocol_port} weight ${pyStr(m.weight)}${check}${cookie}${proxy}${backup}${disabled}` +
    `${tls ? " ssl" : ""}${crt}${ca}${crl}${verify}${tls ? " sni ssl_fc_sni" : ""}${ciphers}${versions}${alpn}`;
  return `    ${escapeValue(pyStrip(line))}\n`;
}

const SSL_HEADERS: readonly (readonly [string, string])[] = [
  ["X-SSL-Client-Verify", "%[ssl_c_verify]"],
  ["X-SSL-Client-Has-Cert", "%[ssl_c_used]"],
  ["X-SSL-Client-DN", "%{+Q}[ssl_c_s_dn]"],
  ["X-SSL-Client-CN", "%{+Q}[ssl_c_s_dn(cn)]"],
  ["X-SSL-Issuer", "%{+Q}[ssl_c_i_dn]"],
  ["X-SSL-Client-SHA1", "%{+Q}[ssl_c_sha1,hex]"],
  ["X-SSL-Client-Not-Before", "%{+Q}[ssl_c_notbefore]"],
  ["X-SSL-Client-Not-After", "%{+Q}[ssl_c_notafter]"],
];

function backend(l: ViewListener, pool: ViewPool, lb: LoadBalancer): string {
  let out = `backend ${cfg(pool.id)}:${cfg(l.id)}\n`;
  out += `    mode ${cfg(pool.proxy_protocol !== null ? l.protocol_mode : pool.protocol)}\n`;
  const protocol = pool.protocol.toLowerCase();
  if (pool.http_reuse && (protocol === "http" || (protocol === "proxy" && l.protocol_mode.toLowerCase() === "http"))) {
    out += "    http-reuse safe\n";
  }
  out += `    balance ${cfg(pool.lb_algorithm)}\n`;
  const sp = pool.session_persistence;
  if (sp) {
    const peers = lb.topology === TOPOLOGY_ACTIVE_STANDBY ? ` peers ${cfg(peersName(lb))}` : "";
    if (sp.type === "SOURCE_IP") {
      // A "type ip" table cannot hold IPv6 clients: "type ipv6" (as Octavia master) for an LB with an IPv6 VIP.
      const ipv6 = [lb.vip_address, ...(lb.additional_vips ?? []).map((v) => v.ip_address)].some((a) => a.includes(":"));
      out += `    stick-table type ${ipv6 ? "ipv6" : "ip"} size ${cfg(pool.stick_size)}${peers}\n`;
      out += "    stick on src\n";
    } else if (sp.type === "APP_COOKIE") {
      out += `    stick-table type string len 64 size ${cfg(pool.stick_size)}${peers}\n`;
      out += `    stick store-response res.cook(${fetchArg(sp.cookie_name)})\n`;
      out += `    stick match req.cook(${fetchArg(sp.cookie_name)})\n`;
    } else if (sp.type === "HTTP_COOKIE") {
      out += "    cookie SRV insert indirect nocache\n";
    }
  }
  const hm = pool.health_monitor;
  if (hm && truthy(hm.enabled)) {
    out += "    load-server-state-from-file global\n";
    out += `    timeout check ${cfg(hm.timeout)}s\n`;
    if (hm.type === "HTTP" || hm.type === "HTTPS") {
      const check = `    option httpchk ${cfg(hm.http_method)} ${cfg(hm.url_path)}`;
      if (truthy(hm.http_version) && hm.http_version === 1.1 && truthy(hm.domain_name)) {
        out += `${check} HTTP/${cfg(pyFloat(hm.http_version))}\\r\\nHost:\\ ${cfg(hm.domain_name)}\n`;
      } else if (truthy(hm.http_version)) {
        out += `${check} HTTP/${cfg(pyFloat(hm.http_version!))}\\r\\n\n`;
      } else {
        out += `${check}\n`;
      }
      out += `    http-check expect rstatus ${cfg(hm.expected_codes)}\n`;
    }
    if (hm.type === "TLS-HELLO") out += "    option ssl-hello-chk\n";
    if (hm.type === "PING") out += "    option external-check\n    external-check command /var/lib/octavia/ping-wrapper.sh\n";
  }
  if (protocol === "http") {
    if (header(l, "X-Forwarded-For")) out += "    option forwardfor\n";
    if (header(l, "X-Forwarded-Port")) out += "    http-request set-header X-Forwarded-Port %[dst_port]\n";
  }
  if (header(l, "X-Forwarded-Proto")) {
    const lp = l.protocol.toLowerCase();
    if (lp === "http") out += "    http-request set-header X-Forwarded-Proto http\n";
    else if (lp === "terminated_https") out += "    http-request set-header X-Forwarded-Proto https\n";
  }
  if (l.protocol.toLowerCase() === "terminated_https") {
    for (const [name, value] of SSL_HEADERS) if (header(l, name)) out += `    http-request set-header ${name} ${value}\n`;
  }
  out += `    fullconn ${cfg(l.connection_limit)}\n`;
  out += "    option allbackups\n";
  out += `    timeout connect ${cfg(l.timeout_member_connect)}\n`;
  out += `    timeout server ${cfg(l.timeout_member_data)}\n`;
  for (const m of pool.members) out += member(pool, m);
  return out;
}

const PROMETHEUS_PROXIES =
  "frontend prometheus-exporter-internal-endpoint\n" +
  "    bind 127.0.0.1:9101\n" +
  "    mode http\n" +
  "    no log\n" +
  "    http-request use-service prometheus-exporter if { path /metrics }\n" +
  "    http-request reject\n" +
  "    timeout http-request 5s\n" +
  "    timeout client 5s\n" +
  "backend prometheus-exporter-internal\n" +
  "    mode http\n" +
  "    no log\n" +
  "    balance first\n" +
  "    timeout connect 5s\n" +
  "    timeout server 5s\n" +
  "    server prometheus-internal 127.0.0.1:9102\n";

/**
 * The haproxy.cfg of `input.amphora` (Octavia's build_config): every HAProxy listener of the tree
 * (UDP and SCTP ones are keepalived's), in one file. Throws when the tree has none (Octavia's
 * driver then deletes the configuration instead), when the amphora is not the LB's, and when a
 * listener's client CA or CRL has no file in `certs`.
 */
export function renderHaproxyConfig(input: HaproxyConfigInput): string {
  const { tree, amphora, amphorae } = input;
  const lb = tree.lb;
  if (amphora.loadbalancer_id !== lb.id) throw new Error(`Amphora ${amphora.id} is not load balancer ${lb.id}'s`);
  const listeners = haproxyListeners(tree);
  if (listeners.length === 0) throw new Error(`Load balancer ${lb.id} has no listener HAProxy serves`);
  const s: HaproxySettings = { ...HAPROXY_DEFAULT_SETTINGS };
  for (const [key, value] of Object.entries(input.settings ?? {}))
    if (value !== undefined) (s as unknown as Record<string, unknown>)[key] = value;
  const f = features(input.haproxyVersion);

  // _transform_loadbalancer.
  const t = new Transformer(tree, s, f, input.certs ?? {});
  const views = listeners.map((l) => t.listener(l));
  let sum = 0;
  for (const l of listeners)
    sum += truthy(l.connection_limit) && l.connection_limit! > -1 ? l.connection_limit! : s.default_connection_limit;
  const globalLimit = sum > 0 && sum < HAPROXY_MAX_MAXCONN ? sum : HAPROXY_MAX_MAXCONN;
  const prometheus = listeners.some((l) => l.protocol === "PROMETHEUS") && f.prometheus;

  // base.j2.
  let out = `# Configuration for loadbalancer ${cfg(lb.id)}\n`;
  out += "global\n    daemon\n    user nobody\n";
  out += `    log ${cfg(truthy(s.log_http) ? s.log_http : DEFAULT_LOG_TARGET)} local${cfg(s.user_log_facility)}\n`;
  out += `    log ${cfg(truthy(s.log_server) ? s.log_server : DEFAULT_LOG_TARGET)} local${cfg(s.administrative_log_facility)} notice\n`;
  out += `    stats socket ${cfg(`${s.base_path}/${lb.id}.sock`)} mode 0666 level user\n`;
  out += `    server-state-file ${cfg(`${s.base_path}/${lb.id}/servers-state`)}\n`;
  out += `    maxconn ${cfg(globalLimit)}\n`;
  const ping = views.some(
    (l) =>
      truthy(l.enabled) &&
      l.pools.some((p) => truthy(p.enabled) && p.health_monitor && truthy(p.health_monitor.enabled) && p.health_monitor.type === "PING"),
  );
  if (ping) out += f.insecureFork ? "    external-check\n    insecure-fork-wanted\n" : "    external-check\n";
  out += "\ndefaults\n";
  out += truthy(s.connection_logging) ? "    log global\n" : "    no log\n";
  out += "    retries 3\n    option redispatch\n    option splice-request\n    option splice-response\n    option http-keep-alive\n\n";

  // haproxy.cfg.j2: peers, prometheus, proxies.
  if (lb.topology === TOPOLOGY_ACTIVE_STANDBY) {
    out += `peers ${cfg(peersName(lb))}\n`;
    for (const amp of amphorae) {
      if (amp.status !== AMPHORA_ALLOCATED) continue;
      out += `    peer ${cfg(haproxyPeerName(amp.id))} ${cfg(amp.vrrp_ip)}:${HAPROXY_BASE_PEER_PORT}\n`;
    }
  }
  out += "\n\n";
  if (prometheus) out += PROMETHEUS_PROXIES;
  out += "\n";
  if (truthy(lb.admin_state_up)) {
    for (const l of views) {
      if (!truthy(l.enabled)) continue;
      out += `${frontend(l, lb)}\n`;
      for (const pool of l.pools) if (truthy(pool.enabled)) out += `${backend(l, pool, lb)}\n`;
    }
  }
  return out;
}
