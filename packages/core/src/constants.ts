// Octavia's constants (octavia/common/constants.py) that Ottava uses, in one place.

export const ACTIVE = "ACTIVE";
export const PENDING_CREATE = "PENDING_CREATE";
export const PENDING_UPDATE = "PENDING_UPDATE";
export const PENDING_DELETE = "PENDING_DELETE";
export const DELETED = "DELETED";
export const ERROR = "ERROR";

export const PROVISIONING_STATUSES = [ACTIVE, DELETED, ERROR, PENDING_CREATE, PENDING_UPDATE, PENDING_DELETE] as const;
export type ProvisioningStatus = (typeof PROVISIONING_STATUSES)[number];
export const PENDING_STATUSES: readonly string[] = [PENDING_CREATE, PENDING_UPDATE, PENDING_DELETE];

export const ONLINE = "ONLINE";
export const OFFLINE = "OFFLINE";
export const DEGRADED = "DEGRADED";
export const NO_MONITOR = "NO_MONITOR";
export const DRAINING = "DRAINING";
export const OPERATING_STATUSES = [ONLINE, DRAINING, OFFLINE, DEGRADED, ERROR, NO_MONITOR] as const;

// Amphora statuses and roles.
export const AMPHORA_ALLOCATED = "ALLOCATED";
export const AMPHORA_BOOTING = "BOOTING";
export const AMPHORA_READY = "READY";
/** The health manager stopped failing it over: too many amphorae went stale at once. */
export const AMPHORA_FAILOVER_STOPPED = "FAILOVER_STOPPED";
/**
 * The `alert` field of the ERROR line the health check writes on every pass that stops failovers
 * because too many amphorae are stale at once (failover_threshold). On AWS a log metric filter counts
 * these lines and an alarm watches the count (stacks/alarms.ts).
 */
export const FAILOVER_THRESHOLD_ALERT = "amphora.failover.threshold";
/**
 * The `alert` field of the WARN line the orphan sweep writes for each cloud resource it removes (one a
 * crash left behind). On AWS a log metric filter counts these lines and an alarm watches the count.
 */
export const ORPHAN_SWEPT_ALERT = "cloud.orphan.swept";
/**
 * The `alert` field of the ERROR line a build writes when its amphorae failed to boot: the instance never
 * ran (ComputeWait gave up, or the instance ended) or its agent was never reached (the connectivity wait
 * gave up). On AWS a log metric filter counts these lines and an alarm watches the count.
 */
export const AMPHORA_BOOT_FAILED_ALERT = "amphora.boot.failed";
export const AMPHORA_STATUSES = [
  AMPHORA_ALLOCATED,
  AMPHORA_BOOTING,
  AMPHORA_READY,
  ACTIVE,
  PENDING_CREATE,
  PENDING_DELETE,
  DELETED,
  ERROR,
  AMPHORA_FAILOVER_STOPPED,
] as const;

// Which statuses a change may start from, each rule named once (octavia/common/constants.py names the
// first three). Every check reads them through requireStatus (faults.ts), and the lock's condition
// (`provisioning_status IN (...)`, ports.ts LockRequest) takes only these.
declare const named: unique symbol;
/** A named set of statuses: made only here, so no check and no lock condition writes a list of its own. */
export type StatusSet = readonly string[] & { readonly [named]: true };
const statusSet = (...statuses: string[]) => statuses as readonly string[] as StatusSet;
/** MUTABLE_STATUSES: an update of the LB or of anything in its tree, and the parent (pool, L7 policy) a change names. */
export const MUTABLE_STATUSES = statusSet(ACTIVE);
/** DELETABLE_STATUSES: a load balancer delete. */
export const DELETABLE_STATUSES = statusSet(ACTIVE, ERROR);
/** FAILOVERABLE_STATUSES: a load balancer failover, and the health manager's failover of a stale amphora's LB. */
export const FAILOVERABLE_STATUSES = statusSet(ACTIVE, ERROR);
/**
 * A load balancer resize (Ottava; specs/loadbalancer-resize.rst): a failover onto the new flavor, and a
 * failed one leaves the LB in ERROR "allowing the user to perform a failover or retry the same call".
 */
export const RESIZABLE_STATUSES = statusSet(ACTIVE, ERROR);
/** An amphora delete (AmphoraRepository.test_and_set_status_for_delete): a spare or a broken amphora. */
export const AMPHORA_DELETABLE_STATUSES = statusSet(AMPHORA_READY, ERROR);
/** The stale amphorae the health check fails over (AmphoraHealthRepository.get_stale_amphora). */
export const AMPHORA_FAILOVERABLE_STATUSES = statusSet(AMPHORA_ALLOCATED, AMPHORA_FAILOVER_STOPPED);
/**
 * The stale amphorae the failover threshold sets FAILOVER_STOPPED (Ottava: one in service, or in ERROR,
 * which failover_on_error fails over; Octavia's query stops any stale one not DELETED or PENDING_DELETE).
 */
export const AMPHORA_STOPPABLE_STATUSES = statusSet(AMPHORA_ALLOCATED, ERROR);

export const ROLE_MASTER = "MASTER";
export const ROLE_BACKUP = "BACKUP";
export const ROLE_STANDALONE = "STANDALONE";

export const TOPOLOGY_SINGLE = "SINGLE";
export const TOPOLOGY_ACTIVE_STANDBY = "ACTIVE_STANDBY";
export const TOPOLOGIES = [TOPOLOGY_SINGLE, TOPOLOGY_ACTIVE_STANDBY] as const;
export type Topology = (typeof TOPOLOGIES)[number];

// Providers: the amphora provider, with "octavia" as its alias (Octavia's default enabled_provider_drivers).
export const PROVIDER_AMPHORA = "amphora";
export const PROVIDER_ALIASES: Readonly<Record<string, string>> = { octavia: PROVIDER_AMPHORA };
export const ENABLED_PROVIDERS: Readonly<Record<string, string>> = {
  amphora: "The Octavia Amphora driver.",
  octavia: "Deprecated alias of the Octavia Amphora driver.",
};
export const DEFAULT_PROVIDER = PROVIDER_AMPHORA;

// Values the no-op drivers hand out, as Octavia's no-op drivers do.
export const NOOP_VIP_ADDRESS = "198.51.100.1";

// VNIC types of the VIP and member ports (v2.28, v2.30), and the flavor keys that ask for SR-IOV.
export const VNIC_TYPE_NORMAL = "normal";
export const VNIC_TYPE_DIRECT = "direct";
export const SRIOV_VIP = "sriov_vip";
export const ALLOW_MEMBER_SRIOV = "allow_member_sriov";

/** The first listener's HAProxy peer port; each new listener of an LB takes the highest one + 1. */
export const HAPROXY_BASE_PEER_PORT = 1025;
export const NOOP_LB_NETWORK_IP = "192.0.2.1";

// Field limits (octavia/api/v2/types).
export const NAME_MAX = 255;
export const DESCRIPTION_MAX = 255;
export const TAG_MAX = 255;

// API pagination (octavia [api_settings] pagination_max_limit).
export const PAGINATION_MAX_LIMIT = 1000;

// Seconds a DELETED load balancer is kept before it is purged ([house_keeping] load_balancer_expiry_age).
export const LOAD_BALANCER_EXPIRY_AGE = 604800;

// Listeners (octavia_lib and octavia/common/constants.py; Octavia's [api_settings] and
// [haproxy_amphora] defaults).
/** octavia_lib LISTENER_SUPPORTED_PROTOCOLS, in its order. */
export const LISTENER_PROTOCOLS = ["TCP", "HTTPS", "HTTP", "TERMINATED_HTTPS", "UDP", "SCTP", "PROMETHEUS"] as const;
export type ListenerProtocol = (typeof LISTENER_PROTOCOLS)[number];
/** The L4 protocol under each protocol: listeners of one L4 protocol cannot share a port (L4_PROTOCOL_MAP). */
export const L4_PROTOCOL_MAP: Readonly<Record<string, string>> = {
  TCP: "TCP",
  HTTP: "TCP",
  HTTPS: "TCP",
  TERMINATED_HTTPS: "TCP",
  PROXY: "TCP",
  PROXYV2: "TCP",
  UDP: "UDP",
  SCTP: "SCTP",
  PROMETHEUS: "TCP",
};
/** LVS_PROTOCOLS: the protocols the amphora balances with keepalived's LVS instead of HAProxy (no TLS, no header insertion). */
export const LVS_PROTOCOLS: readonly string[] = ["UDP", "SCTP"];
/** HAPROXY_HTTP_PROTOCOLS: the listeners HAProxy runs in HTTP mode (their log format keeps the HTTP fields). */
export const HAPROXY_HTTP_PROTOCOLS: readonly string[] = ["HTTP", "TERMINATED_HTTPS"];
export const LISTENER_PROTOCOLS_SUPPORTING_HEADER_INSERTION: readonly string[] = ["HTTP", "TERMINATED_HTTPS"];
export const SUPPORTED_HTTP_HEADERS: readonly string[] = ["X-Forwarded-For", "X-Forwarded-Port", "X-Forwarded-Proto"];
export const SUPPORTED_SSL_HEADERS: readonly string[] = [
  "X-SSL-Client-Verify",
  "X-SSL-Client-Has-Cert",
  "X-SSL-Client-DN",
  "X-SSL-Client-CN",
  "X-SSL-Issuer",
  "X-SSL-Client-SHA1",
  "X-SSL-Client-Not-Before",
  "X-SSL-Client-Not-After",
];
export const DEFAULT_CONNECTION_LIMIT = -1;
export const MIN_CONNECTION_LIMIT = -1;
/** Listener timeouts, in milliseconds: 0 to 24 days. */
export const MIN_TIMEOUT = 0;
export const MAX_TIMEOUT = 24 * 24 * 60 * 60 * 1000;
export const DEFAULT_TIMEOUT_CLIENT_DATA = 50000;
export const DEFAULT_TIMEOUT_MEMBER_CONNECT = 5000;
export const DEFAULT_TIMEOUT_MEMBER_DATA = 50000;
export const DEFAULT_TIMEOUT_TCP_INSPECT = 0;
export const CLIENT_AUTH_NONE = "NONE";
export const SUPPORTED_CLIENT_AUTH_MODES = ["NONE", "OPTIONAL", "MANDATORY"] as const;
/** Every TLS version Octavia knows, oldest first (TLS_ALL_VERSIONS). */
export const TLS_ALL_VERSIONS: readonly string[] = ["SSLv3", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"];
export const SUPPORTED_ALPN_PROTOCOLS: readonly string[] = ["h2", "http/1.1", "http/1.0"];
export const CIPHERS_OWASP_SUITE_B =
  "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256:DHE-RSA-AES256-GCM-SHA384:" +
  "DHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-SHA256:" +
  "DHE-RSA-AES128-SHA256:ECDHE-RSA-AES256-SHA384:ECDHE-RSA-AES128-SHA256";
export const TLS_VERSIONS_OWASP_SUITE_B: readonly string[] = ["TLSv1.2", "TLSv1.3"];
/** [api_settings] default_listener_ciphers, default_listener_tls_versions, default_listener_alpn_protocols. */
export const DEFAULT_LISTENER_CIPHERS = CIPHERS_OWASP_SUITE_B;
export const DEFAULT_LISTENER_TLS_VERSIONS = TLS_VERSIONS_OWASP_SUITE_B;
export const DEFAULT_LISTENER_ALPN_PROTOCOLS: readonly string[] = ["h2", "http/1.1", "http/1.0"];
// VALID_LISTENER_POOL_PROTOCOL_MAP and TLS_CIPHER_PROHIBIT_LIST are with the pools' constants.
// Pools and health monitors (octavia_lib constants, octavia/common/constants.py, [api_settings] defaults).
export const POOL_PROTOCOLS = ["TCP", "HTTP", "HTTPS", "PROXY", "PROXYV2", "UDP", "SCTP"] as const;
export const LB_ALGORITHMS = ["LEAST_CONNECTIONS", "ROUND_ROBIN", "SOURCE_IP", "SOURCE_IP_PORT"] as const;
/** The amphora driver's AMPHORA_SUPPORTED_LB_ALGORITHMS. */
export const AMPHORA_LB_ALGORITHMS: readonly string[] = ["ROUND_ROBIN", "SOURCE_IP", "LEAST_CONNECTIONS"];
export const SESSION_PERSISTENCE_TYPES = ["SOURCE_IP", "HTTP_COOKIE", "APP_COOKIE"] as const;
/** Which pool protocols a listener protocol may forward to. */
export const VALID_LISTENER_POOL_PROTOCOL_MAP: Readonly<Record<string, readonly string[]>> = {
  TCP: ["HTTP", "HTTPS", "PROXY", "PROXYV2", "TCP"],
  HTTP: ["HTTP", "PROXY", "PROXYV2"],
  HTTPS: ["HTTPS", "PROXY", "PROXYV2", "TCP"],
  TERMINATED_HTTPS: ["HTTP", "PROXY", "PROXYV2"],
  UDP: ["UDP"],
  SCTP: ["SCTP"],
  PROMETHEUS: [],
};
/** [api_settings] default_pool_ciphers (CIPHERS_OWASP_SUITE_B), default_pool_tls_versions, default_pool_alpn_protocols. */
export const DEFAULT_POOL_CIPHERS = CIPHERS_OWASP_SUITE_B;
export const DEFAULT_POOL_TLS_VERSIONS = TLS_VERSIONS_OWASP_SUITE_B;
export const DEFAULT_POOL_ALPN_PROTOCOLS: readonly string[] = ["h2", "http/1.1", "http/1.0"];
/** [api_settings] tls_cipher_prohibit_list (Octavia's default: empty). */
export const TLS_CIPHER_PROHIBIT_LIST = "";
export const HEALTH_MONITOR_TYPES = ["HTTP", "HTTPS", "PING", "TCP", "TLS-HELLO", "UDP-CONNECT", "SCTP"] as const;
export const HEALTH_MONITOR_HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "OPTIONS", "CONNECT", "PATCH"] as const;
export const HEALTH_MONITOR_HTTP_VERSIONS: readonly number[] = [1.0, 1.1];
export const HEALTH_MONITOR_DEFAULT_HTTP_METHOD = "GET";
export const HEALTH_MONITOR_DEFAULT_URL_PATH = "/";
export const HEALTH_MONITOR_DEFAULT_EXPECTED_CODES = "200";
export const MIN_HM_RETRIES = 1;
export const MAX_HM_RETRIES = 10;
export const DEFAULT_MAX_RETRIES_DOWN = 3;
/** [api_settings] udp_connect_min_interval_health_monitor and allow_ping_health_monitors (Octavia's defaults). */
export const UDP_CONNECT_MIN_INTERVAL_HEALTH_MONITOR = 3;
export const ALLOW_PING_HEALTH_MONITORS = true;
// Members (octavia/common/constants.py; [networking] reserved_ips, Octavia's default).
export const MIN_WEIGHT = 0;
export const MAX_WEIGHT = 256;
export const DEFAULT_WEIGHT = 1;
export const RESERVED_IPS: readonly string[] = ["169.254.169.254"];
// L7 policies and rules (octavia_lib and octavia/common/constants.py).
export const L7POLICY_ACTION_REJECT = "REJECT";
export const L7POLICY_ACTION_REDIRECT_TO_URL = "REDIRECT_TO_URL";
export const L7POLICY_ACTION_REDIRECT_TO_POOL = "REDIRECT_TO_POOL";
export const L7POLICY_ACTION_REDIRECT_PREFIX = "REDIRECT_PREFIX";
export const L7POLICY_ACTIONS = [
  L7POLICY_ACTION_REJECT,
  L7POLICY_ACTION_REDIRECT_TO_URL,
  L7POLICY_ACTION_REDIRECT_TO_POOL,
  L7POLICY_ACTION_REDIRECT_PREFIX,
] as const;
export const L7POLICY_REDIRECT_HTTP_CODES = [301, 302, 303, 307, 308] as const;
export const MIN_POLICY_POSITION = 1;
export const MAX_POLICY_POSITION = 2147483647;
export const L7RULE_COMPARE_TYPES = ["REGEX", "STARTS_WITH", "ENDS_WITH", "CONTAINS", "EQUAL_TO"] as const;
export const L7RULE_TYPES = [
  "HOST_NAME",
  "PATH",
  "FILE_TYPE",
  "HEADER",
  "COOKIE",
  "SSL_CONN_HAS_CERT",
  "SSL_VERIFY_RESULT",
  "SSL_DN_FIELD",
] as const;
export const MAX_L7RULES_PER_L7POLICY = 50;
// Quotas (octavia/common/constants.py): -1 is unlimited.
export const QUOTA_UNLIMITED = -1;
export const MIN_QUOTA = QUOTA_UNLIMITED;
export const MAX_QUOTA = 2000000000;
/** The id (or AZ name) of Octavia's placeholders for DELETED load balancers' flavors and zones: never a real object. */
export const NIL_UUID = "00000000-0000-0000-0000-000000000000";
export const FLAVOR_DATA = "flavor_data";
export const AVAILABILITY_ZONE_DATA = "availability_zone_data";
/** Resize marks on the LB item, valued with the resize execution's name (an earlier resize's marks never count). */
export const RESIZE_CANCEL = "resize_cancel_requested";
export const RESIZE_COMMITTED = "resize_committed";

// HAProxy's and keepalived's words, as the agent reports them (octavia/common/constants.py).
export const HB_OPEN = "OPEN";
export const HB_FULL = "FULL";
export const HB_UP = "UP";
export const HB_DOWN = "DOWN";
export const HB_DRAIN = "DRAIN";
export const HB_MAINT = "MAINT";
export const HB_NO_CHECK = "no check";
export const HB_RESTARTING = "RESTARTING";

/** [health_manager] heartbeat_interval (Octavia's default): a heartbeat processed this late is ignored. */
export const HEARTBEAT_INTERVAL = 10;

/** What Octavia's Integer columns hold (MySQL INT, signed 32-bit): the bounds of every integer field without narrower ones. */
export const MIN_INT32 = -2147483648;
export const MAX_INT32 = 2147483647;

/**
 * Request bodies: how deeply they may nest, and their default size limit in bytes (oslo.middleware's
 * `max_request_body_size` names the setting; Octavia itself sets none). The deepest body Octavia takes,
 * a fully populated load balancer create, nests 9 levels (loadbalancer, listeners, a listener,
 * l7policies, a policy, rules, a rule, tags, and the root); 4 MiB holds some 25,000 members in one
 * batch and still fits, base64-encoded with its event, in the 6 MB a synchronous Lambda invocation takes.
 */
export const MAX_BODY_DEPTH = 32;
export const MAX_REQUEST_BODY_SIZE = 4 * 1024 * 1024;
