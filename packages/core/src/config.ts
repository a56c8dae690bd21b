// Every setting is an environment variable OTTAVA_<NAME>, named after Octavia's option where one exists.
import { LOAD_BALANCER_EXPIRY_AGE, PAGINATION_MAX_LIMIT, TOPOLOGIES, type Topology } from "./constants";

export interface Config {
  /** [api_settings] auth_strategy; only noauth until Keystone arrives. */
  authStrategy: "noauth";
  /** [api_settings] bind_host / bind_port of the local server. */
  bindHost: string;
  bindPort: number;
  /** [api_settings] pagination_max_limit. */
  paginationMaxLimit: number;
  /** [controller_worker] loadbalancer_topology: the default when a flavor does not say. */
  loadbalancerTopology: Topology;
  /** [house_keeping] load_balancer_expiry_age: seconds a DELETED LB is kept before DynamoDB's TTL purges it. */
  loadBalancerExpiryAge: number;
  /** The DynamoDB table. */
  tableName: string;
  /** A DynamoDB endpoint other than AWS's (DynamoDB Local). */
  dynamodbEndpoint: string | undefined;
  /** The no-op drivers' injected faults: "driver.method[:N],...". */
  noopFaults: string;
  /** The no-op drivers' simulated latency: "driver.method:MS,...". */
  noopLatency: string;
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
}

type Env = Record<string, string | undefined>;

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
  return {
    authStrategy: oneOf("AUTH_STRATEGY", ["noauth"] as const, "noauth"),
    bindHost: get("BIND_HOST") ?? "127.0.0.1",
    bindPort: int("BIND_PORT", 9876),
    paginationMaxLimit: int("PAGINATION_MAX_LIMIT", PAGINATION_MAX_LIMIT, 1),
    loadbalancerTopology: oneOf("LOADBALANCER_TOPOLOGY", TOPOLOGIES, "SINGLE"),
    loadBalancerExpiryAge: int("LOAD_BALANCER_EXPIRY_AGE", LOAD_BALANCER_EXPIRY_AGE),
    tableName: get("TABLE_NAME") ?? "ottava",
    dynamodbEndpoint: get("DYNAMODB_ENDPOINT"),
    noopFaults: get("NOOP_FAULTS") ?? "",
    noopLatency: get("NOOP_LATENCY") ?? "",
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
    controllerIpPortList: (get("CONTROLLER_IP_PORT_LIST") ?? "").split(",").map((s) => s.trim()).filter(Boolean),
    healthManagerRefreshPageSize: int("HEALTHMANAGER_REFRESH_PAGE_SIZE", 100, 1),
  };
}
