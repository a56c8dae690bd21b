// Every setting is an environment variable OTTAVA_<NAME>, named after Octavia's option where one exists.
import { LOAD_BALANCER_EXPIRY_AGE, MAX_REQUEST_BODY_SIZE, PAGINATION_MAX_LIMIT, TOPOLOGIES, type Topology } from "./constants";

export interface Config {
  /** [api_settings] auth_strategy: noauth (every caller an admin, quotas not enforced) or keystone. */
  authStrategy: "noauth" | "keystone";
  /** [keystone_authtoken]: where tokens are validated and the service user Ottava validates them as (keystone only). */
  keystone: KeystoneSettings | undefined;
  /** [keystone_authtoken] token_cache_time: seconds a validated token is trusted without asking Keystone again. */
  tokenCacheTime: number;
  /** How many validated tokens the cache holds (least recently used go first). */
  tokenCacheSize: number;
  /** [oslo_policy] policy_file: operator overrides of the policy rules (YAML or JSON). */
  policyFile: string | undefined;
  /** [oslo_policy] enforce_new_defaults: drop the deprecated rules instead of OR-ing them in (Octavia 11: off). */
  enforceNewDefaults: boolean;
  /** [oslo_policy] enforce_scope: check token scopes (Octavia 11: off). */
  enforceScope: boolean;
  /** [api_settings] bind_host / bind_port of the local server. */
  bindHost: string;
  bindPort: number;
  /** [api_settings] pagination_max_limit. */
  paginationMaxLimit: number;
  /** [oslo_middleware] max_request_body_size: the largest request body in bytes (413 beyond; Octavia sets none). */
  maxRequestBodySize: number;
  /**
   * [networking] denylist_vip_networks: network IDs refused for a load balancer's VIP ("Supplied VIP
   * network_id is not allowed by the configuration of this deployment."), compared case-insensitively; empty: none.
   */
  denylistVipNetworks: string[];
  /** [controller_worker] loadbalancer_topology: the default when a flavor does not say. */
  loadbalancerTopology: Topology;
  /** [house_keeping] load_balancer_expiry_age: seconds a DELETED LB is kept before DynamoDB's TTL purges it. */
  loadBalancerExpiryAge: number;
  /** The DynamoDB table. */
  tableName: string;
  /** A DynamoDB endpoint other than AWS's (DynamoDB Local). */
  dynamodbEndpoint: string | undefined;
  /**
   * The data plane: "noop" (Octavia's no-op drivers: nothing is balanced) or "haproxy" (each amphora
   * a local HAProxy process, its VIP a loopback address: the defaults of the three drivers below).
   */
  dataplane: Dataplane;
  /** [controller_worker] amphora_driver: noop, rest (Octavia's amphora agent API 1.0) or local (HAProxy on this machine). */
  amphoraDriver: AmphoraDriverName;
  /** [controller_worker] compute_driver: noop, local (an amphora is a process on this machine) or ec2 (an EC2 instance: @ottava/aws). */
  computeDriver: ComputeDriverName;
  /** [controller_worker] network_driver: noop, or local (VIPs from a loopback range). */
  networkDriver: NetworkDriverName;
  /** The local network driver's addresses (VIPs, VRRP addresses): an IPv4 CIDR, loopback by default; two stacks on one machine need different ranges. */
  localVipRange: string;
  /** The HAProxy binary the local amphorae run (master-worker mode, 2.2 or newer). */
  haproxyBinary: string;
  /** Prefix of the state machine ARNs on AWS; the flow name is appended. */
  stateMachineArnPrefix: string | undefined;
  /** Local runner: how many flow executions run at once. */
  flowConcurrency: number;
  logLevel: "debug" | "info" | "warn" | "error";
  /** [quotas] default_*_quota: a project's quota where none was set; -1 is unlimited. */
  defaultLoadBalancerQuota: number;
  defaultListenerQuota: number;
  defaultMemberQuota: number;
  defaultPoolQuota: number;
  defaultHealthMonitorQuota: number;
  defaultL7policyQuota: number;
  defaultL7ruleQuota: number;
  /** [health_manager] controller_ip_port_list: the initial health-manager addresses ("ip:port,..."); admins change them at /v2/octavia/healthmanager. */
  controllerIpPortList: string[];
  /** Health-manager configuration refresh: amphorae per page (one task invocation each). */
  healthManagerRefreshPageSize: number;
  /** [health_manager] heartbeat_key: the HMAC key amphora heartbeats are signed with; without it no heartbeat is accepted (the receiver does not start). Never logged. */
  heartbeatKey: string | undefined;
  /** [health_manager] bind_port: the UDP port the heartbeat receiver listens on (on bindHost locally); 0 picks a free one. */
  heartbeatPort: number;
  /** [health_manager] heartbeat_interval: seconds between an amphora's heartbeats (the local amphorae's sender; the receiver's "processed too slowly" limit). */
  heartbeatInterval: number;
  /** [certificates] ca_certificate, inline: the PEM of the CA that signs amphora certificates (an SST secret on AWS); unset: `npm start` uses its own local CA. */
  caCertificate: string | undefined;
  /** [certificates] ca_private_key, inline: that CA's private key (PEM: PKCS#8, PKCS#1 or SEC1). Never logged. */
  caPrivateKey: string | undefined;
  /** [certificates] ca_private_key_passphrase: when the CA key is encrypted. Never logged. */
  caPrivateKeyPassphrase: string | undefined;
  /** [certificates] cert_validity_time: seconds an amphora certificate is valid. */
  certValidityTime: number;
  /** [certificates] cert_manager: where listeners' and pools' TLS references are read: noop (any non-empty reference is accepted) local (PEM files under certStoragePath; the default with the haproxy data plane, which serves them) or secretsmanager (Secrets Manager secrets tagged as certificates for the project, Barbican's place on AWS: @ottava/aws/certs). */
  certManager: CertManagerName;
  /** [certificates] storage_path: the local certificate manager's directory; `npm start` and `npm run cert` default to <data dir>/certificates. */
  certStoragePath: string | undefined;
  /** [house_keeping] cert_expiry_buffer: certificates expiring within this many seconds are rotated. */
  certExpiryBuffer: number;
  /** [house_keeping] amphora_expiry_age: seconds a DELETED amphora is kept before housekeeping purges it. */
  amphoraExpiryAge: number;
  /** [house_keeping] cleanup_interval: seconds between purges of DELETED load balancers and amphorae. */
  cleanupInterval: number;
  /**
   * Seconds a cloud resource made for a load balancer before the load balancer's record (a VIP's
   * reservation ENI, say) may wait for that record before the orphan sweep removes it.
   */
  orphanGraceSec: number;
  /** [house_keeping] cert_interval: seconds between certificate rotation checks. */
  certInterval: number;
  /** [health_manager] heartbeat_timeout: seconds after an amphora's last heartbeat before it is failed over. */
  heartbeatTimeout: number;
  /** [health_manager] health_check_interval: seconds between health checks. */
  healthCheckInterval: number;
  /** [health_manager] failover_threshold: this many stale amphorae at once stop all failovers; undefined is no limit. */
  failoverThreshold: number | undefined;
  /** Fail over amphorae in ERROR too (an Ottava extension). */
  failoverOnError: boolean;
  /** [haproxy_amphora] bind_port: the amphora agent's API port the REST amphora driver calls. */
  amphoraAgentPort: number;
  /** [haproxy_amphora] rest_request_conn_timeout: seconds a REST call to an amphora agent waits to connect (TCP and TLS). */
  restRequestConnTimeout: number;
  /** [haproxy_amphora] rest_request_read_timeout: seconds a REST call waits for the agent's answer (silence between bytes). */
  restRequestReadTimeout: number;
  /** [haproxy_amphora] connection_max_retries: how many times the create flows ask a booting amphora's agent before it counts as unreachable. */
  connectionMaxRetries: number;
  /** [haproxy_amphora] connection_retry_interval: seconds between those attempts (the flow's Wait state). */
  connectionRetryInterval: number;
  /** [haproxy_amphora] active_connection_max_retries: attempts of one REST call to a live amphora. */
  activeConnectionMaxRetries: number;
  /** [haproxy_amphora] active_connection_retry_interval: seconds between those attempts. */
  activeConnectionRetryInterval: number;
  /** [haproxy_amphora] client_cert, inline: Ottava's client certificate and key (PEM) for the agents' mutual TLS; unset: issued by the CA where the process hands the drivers its certificate generator. Never logged. */
  clientCert: string | undefined;
  /** [haproxy_amphora] server_ca, inline: the CA (PEM) the agents' server certificates are checked against; unset: the CA certificate. */
  serverCa: string | undefined;
  /** [haproxy_amphora] lb_network_interface: the interface of IPv6 link-local amphora addresses. */
  lbNetworkInterface: string;
  /** The deploy's stage (the stacks set it): tagged on what Ottava makes in AWS (EC2 instances). */
  stage: string;
  /** An EC2 endpoint other than the Region's (a VPC endpoint without private DNS, the test bed's emulator). */
  ec2Endpoint: string | undefined;
  /** A Secrets Manager endpoint other than the Region's: the ec2 driver's calls, and the amphorae's (their user data carries it). */
  secretsmanagerEndpoint: string | undefined;
  /** [controller_worker] event_notifications: the flows send Octavia's event notifications (and Ottava's: resize, cross-pool update). */
  eventNotifications: boolean;
  /** An EventBridge endpoint other than the Region's: locally, events go there too (besides the data directory's events.jsonl). */
  eventbridgeEndpoint: string | undefined;
  /** The EventBridge bus events are put on (the stacks set it to the bus they create); unset: the account's default bus. */
  eventBusName: string | undefined;
  /** The IAM instance profile (name or ARN) the ec2 driver launches amphorae with: their role reads each its own secret (no Octavia option). */
  ampInstanceProfile: string | undefined;
  /** [controller_worker] amp_image_tag: the ec2 driver boots the newest of the account's AMIs tagged with it (AMP_IMAGE_TAG_KEY), unless a flavor profile names another. */
  ampImageTag: string | undefined;
  /** The AMI (stock Debian 12) the ec2 driver boots when no image tag is set, for the amphora's first-boot install. */
  ampBaseImageId: string | undefined;
  /** [controller_worker] amp_flavor_id: the amphorae's instance type, unless a flavor profile's compute_flavor names another. */
  ampFlavorId: string | undefined;
  /** [controller_worker] amp_boot_network_list: the management subnets, at most one per zone; an amphora boots in its zone's. */
  ampBootNetworkList: string[];
  /** [controller_worker] amp_secgroup_list: the amphorae's security groups (on their management interface). */
  ampSecgroupList: string[];
  /** [nova] enable_anti_affinity: the two amphorae of an ACTIVE_STANDBY pair go apart (EC2: a spread placement group). */
  enableAntiAffinity: boolean;
  /** [controller_worker] amp_active_retries: how many times a create flow asks whether a new instance runs. */
  ampActiveRetries: number;
  /** [controller_worker] amp_active_wait_sec: seconds between those questions. */
  ampActiveWaitSec: number;
  /** [networking] allow_invisible_resource_usage: a project may use subnets, VPCs, ENIs and groups not tagged for it (the vpc driver). */
  allowInvisibleResourceUsage: boolean;
  /** AWS's inbound rules per security group (its quota, 60 by default): the vpc driver refuses a listener change that needs more. */
  vpcRulesPerSecurityGroup: number;
  /** AWS's security groups per network interface (its quota, 5 by default): the vpc driver refuses more vip_sg_ids than fit beside the LB's own group. */
  vpcSecurityGroupsPerInterface: number;
}

/** The service user's password auth against Keystone v3 (user and project domain Default unless set). */
export interface KeystoneSettings {
  url: string;
  username: string;
  password: string;
  projectName: string;
  userDomainName: string;
  projectDomainName: string;
}

type Env = Record<string, string | undefined>;

/**
 * The settings that are secrets. Each may instead be named by OTTAVA_<NAME>_PARAMETER, an SSM parameter
 * that the processes on AWS read before their settings (configLoader in ./secrets); locally each is set
 * itself, as any other setting.
 */
export const SECRET_SETTINGS = [
  "KEYSTONE_PASSWORD",
  "HEARTBEAT_KEY",
  "CA_PRIVATE_KEY",
  "CA_PRIVATE_KEY_PASSPHRASE",
  "CLIENT_CERT",
] as const;
export type SecretSetting = (typeof SECRET_SETTINGS)[number];
/** The setting that names where a secret is kept: OTTAVA_CA_PRIVATE_KEY_PARAMETER for CA_PRIVATE_KEY. */
export const parameterSetting = (name: SecretSetting) => `OTTAVA_${name}_PARAMETER`;

export const DATAPLANES = ["noop", "haproxy"] as const;
export type Dataplane = (typeof DATAPLANES)[number];
export const AMPHORA_DRIVERS = ["noop", "rest", "local"] as const;
export type AmphoraDriverName = (typeof AMPHORA_DRIVERS)[number];
export const COMPUTE_DRIVERS = ["noop", "local", "ec2"] as const;
export type ComputeDriverName = (typeof COMPUTE_DRIVERS)[number];
export const NETWORK_DRIVERS = ["noop", "local", "vpc"] as const;
export type NetworkDriverName = (typeof NETWORK_DRIVERS)[number];
export const CERT_MANAGERS = ["noop", "local", "secretsmanager"] as const;
export type CertManagerName = (typeof CERT_MANAGERS)[number];

export function loadConfig(env: Env = process.env): Config {
  const get = (name: string) => {
    const v = env[`OTTAVA_${name}`];
    return v === undefined || v === "" ? undefined : v;
  };
  const int = (name: string, fallback: number, min = 0) => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) throw new Error(`OTTAVA_${name} must be an integer >= ${min}, not '${raw}'`);
    return n;
  };
  const oneOf = <T extends string>(name: string, values: readonly T[], fallback: T): T => {
    const raw = get(name) ?? fallback;
    if (!(values as readonly string[]).includes(raw)) throw new Error(`OTTAVA_${name} must be one of ${values.join(", ")}, not '${raw}'`);
    return raw as T;
  };
  const seconds = (name: string, fallback: number) => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`OTTAVA_${name} must be a number of seconds > 0, not '${raw}'`);
    return n;
  };
  const bool = (name: string, fallback: boolean) => {
    const raw = get(name);
    if (raw === undefined) return fallback;
    if (/^(true|1|yes|on)$/i.test(raw)) return true;
    if (/^(false|0|no|off)$/i.test(raw)) return false;
    throw new Error(`OTTAVA_${name} must be true or false, not '${raw}'`);
  };
  // A secret named by its parameter but not read (a process that does not read parameters, e.g. npm
  // start) would otherwise run as if the secret were not set at all.
  const unread = SECRET_SETTINGS.filter((name) => get(`${name}_PARAMETER`) !== undefined && get(name) === undefined);
  if (unread.length) {
    throw new Error(
      `${unread.map(parameterSetting).join(", ")}: this process does not read secrets from parameters; set ${unread.map((n) => `OTTAVA_${n}`).join(", ")} instead`,
    );
  }
  const authStrategy = oneOf("AUTH_STRATEGY", ["noauth", "keystone"] as const, "noauth");
  const dataplane = oneOf("DATAPLANE", DATAPLANES, "noop");
  let keystone: KeystoneSettings | undefined;
  if (authStrategy === "keystone") {
    const required = (name: string) => {
      const v = get(name);
      if (v === undefined) throw new Error(`OTTAVA_${name} must be set when OTTAVA_AUTH_STRATEGY is keystone`);
      return v;
    };
    keystone = {
      url: required("KEYSTONE_URL").replace(/\/+$/, ""),
      username: required("KEYSTONE_USERNAME"),
      password: required("KEYSTONE_PASSWORD"),
      projectName: required("KEYSTONE_PROJECT_NAME"),
      userDomainName: get("KEYSTONE_USER_DOMAIN_NAME") ?? "Default",
      projectDomainName: get("KEYSTONE_PROJECT_DOMAIN_NAME") ?? "Default",
    };
  }
  return {
    authStrategy,
    keystone,
    tokenCacheTime: int("TOKEN_CACHE_TIME", 300),
    tokenCacheSize: int("TOKEN_CACHE_SIZE", 10_000, 1),
    policyFile: get("POLICY_FILE"),
    enforceNewDefaults: bool("ENFORCE_NEW_DEFAULTS", false),
    enforceScope: bool("ENFORCE_SCOPE", false),
    bindHost: get("BIND_HOST") ?? "127.0.0.1",
    bindPort: int("BIND_PORT", 9876),
    paginationMaxLimit: int("PAGINATION_MAX_LIMIT", PAGINATION_MAX_LIMIT, 1),
    maxRequestBodySize: int("MAX_REQUEST_BODY_SIZE", MAX_REQUEST_BODY_SIZE, 1),
    denylistVipNetworks: (get("DENYLIST_VIP_NETWORKS") ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    loadbalancerTopology: oneOf("LOADBALANCER_TOPOLOGY", TOPOLOGIES, "SINGLE"),
    loadBalancerExpiryAge: int("LOAD_BALANCER_EXPIRY_AGE", LOAD_BALANCER_EXPIRY_AGE),
    tableName: get("TABLE_NAME") ?? "ottava",
    dynamodbEndpoint: get("DYNAMODB_ENDPOINT"),
    dataplane,
    amphoraDriver: oneOf("AMPHORA_DRIVER", AMPHORA_DRIVERS, dataplane === "haproxy" ? "local" : "noop"),
    computeDriver: oneOf("COMPUTE_DRIVER", COMPUTE_DRIVERS, dataplane === "haproxy" ? "local" : "noop"),
    networkDriver: oneOf("NETWORK_DRIVER", NETWORK_DRIVERS, dataplane === "haproxy" ? "local" : "noop"),
    localVipRange: ipv4Cidr("LOCAL_VIP_RANGE", get("LOCAL_VIP_RANGE") ?? "127.0.100.0/24"),
    haproxyBinary: get("HAPROXY_BINARY") ?? "/usr/sbin/haproxy",
    stateMachineArnPrefix: get("STATE_MACHINE_ARN_PREFIX"),
    flowConcurrency: int("FLOW_CONCURRENCY", 16, 1),
    logLevel: oneOf("LOG_LEVEL", ["debug", "info", "warn", "error"] as const, "info"),
    defaultLoadBalancerQuota: int("DEFAULT_LOAD_BALANCER_QUOTA", -1, -1),
    defaultListenerQuota: int("DEFAULT_LISTENER_QUOTA", -1, -1),
    defaultMemberQuota: int("DEFAULT_MEMBER_QUOTA", -1, -1),
    defaultPoolQuota: int("DEFAULT_POOL_QUOTA", -1, -1),
    defaultHealthMonitorQuota: int("DEFAULT_HEALTH_MONITOR_QUOTA", -1, -1),
    defaultL7policyQuota: int("DEFAULT_L7POLICY_QUOTA", -1, -1),
    defaultL7ruleQuota: int("DEFAULT_L7RULE_QUOTA", -1, -1),
    controllerIpPortList: (get("CONTROLLER_IP_PORT_LIST") ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    healthManagerRefreshPageSize: int("HEALTHMANAGER_REFRESH_PAGE_SIZE", 100, 1),
    heartbeatKey: get("HEARTBEAT_KEY"),
    heartbeatPort: int("HEARTBEAT_PORT", 5555),
    heartbeatInterval: int("HEARTBEAT_INTERVAL", 10, 1),
    caCertificate: pem(get("CA_CERTIFICATE")),
    caPrivateKey: pem(get("CA_PRIVATE_KEY")),
    caPrivateKeyPassphrase: get("CA_PRIVATE_KEY_PASSPHRASE"),
    certValidityTime: int("CERT_VALIDITY_TIME", 63_072_000, 1),
    certManager: oneOf("CERT_MANAGER", CERT_MANAGERS, dataplane === "haproxy" ? "local" : "noop"),
    certStoragePath: get("CERT_STORAGE_PATH"),
    certExpiryBuffer: int("CERT_EXPIRY_BUFFER", 1_209_600),
    amphoraExpiryAge: int("AMPHORA_EXPIRY_AGE", 604_800),
    cleanupInterval: int("CLEANUP_INTERVAL", 30, 1),
    certInterval: int("CERT_INTERVAL", 3600, 1),
    orphanGraceSec: int("ORPHAN_GRACE_SEC", 900, 1),
    heartbeatTimeout: int("HEARTBEAT_TIMEOUT", 60, 1),
    healthCheckInterval: int("HEALTH_CHECK_INTERVAL", 3, 1),
    failoverThreshold: get("FAILOVER_THRESHOLD") === undefined ? undefined : int("FAILOVER_THRESHOLD", 0, 1),
    failoverOnError: bool("FAILOVER_ON_ERROR", false),
    amphoraAgentPort: int("AMPHORA_AGENT_PORT", 9443, 1),
    restRequestConnTimeout: seconds("REST_REQUEST_CONN_TIMEOUT", 10),
    restRequestReadTimeout: seconds("REST_REQUEST_READ_TIMEOUT", 60),
    connectionMaxRetries: int("CONNECTION_MAX_RETRIES", 120, 1),
    connectionRetryInterval: int("CONNECTION_RETRY_INTERVAL", 5, 1),
    activeConnectionMaxRetries: int("ACTIVE_CONNECTION_MAX_RETRIES", 15, 1),
    activeConnectionRetryInterval: int("ACTIVE_CONNECTION_RETRY_INTERVAL", 2, 0),
    clientCert: pem(get("CLIENT_CERT")),
    serverCa: pem(get("SERVER_CA")),
    lbNetworkInterface: get("LB_NETWORK_INTERFACE") ?? "o-hm0",
    stage: get("STAGE") ?? "local",
    ec2Endpoint: get("EC2_ENDPOINT"),
    secretsmanagerEndpoint: get("SECRETSMANAGER_ENDPOINT"),
    eventNotifications: bool("EVENT_NOTIFICATIONS", true),
    eventbridgeEndpoint: get("EVENTBRIDGE_ENDPOINT"),
    eventBusName: get("EVENT_BUS_NAME"),
    ampInstanceProfile: get("AMP_INSTANCE_PROFILE"),
    ampImageTag: get("AMP_IMAGE_TAG"),
    ampBaseImageId: awsId("AMP_BASE_IMAGE_ID", "ami", get("AMP_BASE_IMAGE_ID")),
    ampFlavorId: get("AMP_FLAVOR_ID"),
    ampBootNetworkList: awsIds("AMP_BOOT_NETWORK_LIST", "subnet", get("AMP_BOOT_NETWORK_LIST")),
    ampSecgroupList: awsIds("AMP_SECGROUP_LIST", "sg", get("AMP_SECGROUP_LIST")),
    enableAntiAffinity: bool("ENABLE_ANTI_AFFINITY", false),
    ampActiveRetries: int("AMP_ACTIVE_RETRIES", 30, 1),
    ampActiveWaitSec: int("AMP_ACTIVE_WAIT_SEC", 10, 1),
    allowInvisibleResourceUsage: bool("ALLOW_INVISIBLE_RESOURCE_USAGE", false),
    vpcRulesPerSecurityGroup: int("VPC_RULES_PER_SECURITY_GROUP", 60, 1),
    vpcSecurityGroupsPerInterface: int("VPC_SECURITY_GROUPS_PER_INTERFACE", 5, 2),
  };
}

/** An IPv4 CIDR setting ("127.0.100.0/24"), prefix 8 to 30, answered with its host bits cleared. */
function ipv4Cidr(name: string, raw: string): string {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(raw.trim());
  const octets = m ? m.slice(1, 5).map(Number) : [];
  const prefix = m ? Number(m[5]) : NaN;
  if (!m || octets.some((o) => o > 255) || prefix < 8 || prefix > 30)
    throw new Error(`OTTAVA_${name} must be an IPv4 CIDR with a prefix from 8 to 30 (e.g. 127.0.100.0/24), not '${raw}'`);
  const base = (((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0) & ((~0 << (32 - prefix)) >>> 0);
  return `${[24, 16, 8, 0].map((s) => (base >>> s) & 255).join(".")}/${prefix}`;
}

/** A comma-separated list of AWS resource ids of one kind ("subnet-0abc...,subnet-0def..."); unset: none. */
function awsIds(name: string, kind: string, raw: string | undefined): string[] {
  const ids = (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = ids.filter((id) => !new RegExp(`^${kind}-[0-9a-f]{8,17}$`).test(id));
  if (bad.length) throw new Error(`OTTAVA_${name} must be ${kind} ids (${kind}-0123abcd...), not '${bad.join(",")}'`);
  return ids;
}

/** One AWS resource id of a kind ("ami-0abc..."), or none. */
function awsId(name: string, kind: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!new RegExp(`^${kind}-[0-9a-f]{8,17}$`).test(raw.trim()))
    throw new Error(`OTTAVA_${name} must be an ${kind} id (${kind}-0123abcd...), not '${raw}'`);
  return raw.trim();
}

/** PEM text from a setting: a value written on one line with literal "\n"s (as shells and .env files keep it) gets its newlines back. */
function pem(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return value.includes("\n") ? value : value.replace(/\\n/g, "\n");
}
