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
export const AMPHORA_STATUSES = [AMPHORA_ALLOCATED, AMPHORA_BOOTING, AMPHORA_READY, ACTIVE, PENDING_CREATE, PENDING_DELETE, DELETED, ERROR] as const;
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
export const NOOP_LB_NETWORK_IP = "192.0.2.1";

// Field limits (octavia/api/v2/types).
export const NAME_MAX = 255;
export const DESCRIPTION_MAX = 255;
export const TAG_MAX = 255;

// API pagination (octavia [api_settings] pagination_max_limit).
export const PAGINATION_MAX_LIMIT = 1000;

// Seconds a DELETED load balancer is kept before it is purged ([house_keeping] load_balancer_expiry_age).
export const LOAD_BALANCER_EXPIRY_AGE = 604800;

// CONSTANTS:listener
// CONSTANTS:pool
// CONSTANTS:member
// CONSTANTS:l7
// CONSTANTS:catalog
