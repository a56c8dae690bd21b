// What every function shares: its runtime, and the OTTAVA_* settings passed through from the deployer's
// environment (see packages/core/src/config.ts for what each means).

/** A Lambda runtime AWS still supports; the code needs Node >= 22 (package.json engines). */
export const RUNTIME = "nodejs22.x";

/**
 * How SST bundles every function (esbuild, the AWS SDK included). Minified: SST's docs say `minify`
 * defaults to true, but SST 4.17's build minifies only when it is set. Split: what is only imported
 * dynamically (the SDK's other credential providers, the YAML parser, the X.509 library) goes to chunks
 * that Node neither parses nor runs until they are imported, which takes ~15-20 ms off each cold start.
 * `npm run bench:cold` bundles the functions the same way (test/support/lambda-bundles.ts).
 */
export const NODEJS = { minify: true, splitting: true };

/**
 * The settings that mean something on AWS. The local-only ones (BIND_HOST, BIND_PORT, DYNAMODB_ENDPOINT,
 * FLOW_CONCURRENCY) are left out; TABLE_NAME and STATE_MACHINE_ARN_PREFIX are set by the stacks.
 */
const PASSED_THROUGH = [
  "OTTAVA_AUTH_STRATEGY",
  "OTTAVA_KEYSTONE_USER_DOMAIN_NAME",
  "OTTAVA_KEYSTONE_PROJECT_DOMAIN_NAME",
  "OTTAVA_TOKEN_CACHE_TIME",
  "OTTAVA_TOKEN_CACHE_SIZE",
  "OTTAVA_ENFORCE_NEW_DEFAULTS",
  "OTTAVA_ENFORCE_SCOPE",
  "OTTAVA_LOADBALANCER_TOPOLOGY",
  "OTTAVA_DENYLIST_VIP_NETWORKS",
  "OTTAVA_LOAD_BALANCER_EXPIRY_AGE",
  "OTTAVA_PAGINATION_MAX_LIMIT",
  "OTTAVA_NOOP_FAULTS",
  "OTTAVA_NOOP_LATENCY",
  "OTTAVA_LOG_LEVEL",
  "OTTAVA_DEFAULT_LOAD_BALANCER_QUOTA",
  "OTTAVA_DEFAULT_LISTENER_QUOTA",
  "OTTAVA_DEFAULT_POOL_QUOTA",
  "OTTAVA_DEFAULT_MEMBER_QUOTA",
  "OTTAVA_DEFAULT_HEALTH_MONITOR_QUOTA",
  "OTTAVA_DEFAULT_L7POLICY_QUOTA",
  "OTTAVA_DEFAULT_L7RULE_QUOTA",
  "OTTAVA_CONTROLLER_IP_PORT_LIST",
  "OTTAVA_HEALTHMANAGER_REFRESH_PAGE_SIZE",
  "OTTAVA_CERT_VALIDITY_TIME",
  "OTTAVA_CERT_EXPIRY_BUFFER",
  "OTTAVA_AMPHORA_EXPIRY_AGE",
  // The heartbeat receiver's UDP port. Its key, OTTAVA_HEARTBEAT_KEY, is a secret, never passed through:
  // `new sst.Secret("HeartbeatKey").value` (`npx sst secret set HeartbeatKey ... --stage <stage>`).
  "OTTAVA_HEARTBEAT_PORT",
  "OTTAVA_HEARTBEAT_TIMEOUT",
  "OTTAVA_HEALTH_CHECK_INTERVAL",
  "OTTAVA_FAILOVER_THRESHOLD",
  "OTTAVA_FAILOVER_ON_ERROR",
  // The REST amphora driver: the agents' port, its calls' timeouts and retries, the CA the agents are
  // checked against (public) and the interface of link-local amphora addresses. Its client certificate,
  // OTTAVA_CLIENT_CERT, is a secret, never passed through.
  "OTTAVA_AMPHORA_DRIVER",
  "OTTAVA_AMPHORA_AGENT_PORT",
  "OTTAVA_REST_REQUEST_CONN_TIMEOUT",
  "OTTAVA_REST_REQUEST_READ_TIMEOUT",
  "OTTAVA_CONNECTION_MAX_RETRIES",
  "OTTAVA_CONNECTION_RETRY_INTERVAL",
  "OTTAVA_ACTIVE_CONNECTION_MAX_RETRIES",
  "OTTAVA_ACTIVE_CONNECTION_RETRY_INTERVAL",
  "OTTAVA_SERVER_CA",
  "OTTAVA_LB_NETWORK_INTERFACE",
  // Powertools' switch for the metrics (EMF lines in the functions' logs): "true" turns them off.
  "POWERTOOLS_METRICS_DISABLED",
] as const;

/** The pass-through settings that are set (and not empty) where `sst deploy` runs; unset ones keep the app's defaults. */
export function sharedEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED_THROUGH) {
    const value = process.env[name];
    if (value !== undefined && value !== "") env[name] = value;
  }
  return env;
}

/**
 * Under OTTAVA_AUTH_STRATEGY=keystone, where the API validates tokens and as whom: from SST secrets
 * (`npx sst secret set KeystonePassword ... --stage <stage>`), never from code, the deployer's
 * environment or logs. Pulumi keeps them encrypted in its state; Lambda keeps them encrypted at rest.
 */
export function keystoneEnvironment(): Record<string, $util.Input<string>> {
  if (process.env.OTTAVA_AUTH_STRATEGY !== "keystone") return {};
  return {
    OTTAVA_KEYSTONE_URL: new sst.Secret("KeystoneUrl").value,
    OTTAVA_KEYSTONE_USERNAME: new sst.Secret("KeystoneUsername").value,
    OTTAVA_KEYSTONE_PASSWORD: new sst.Secret("KeystonePassword").value,
    OTTAVA_KEYSTONE_PROJECT_NAME: new sst.Secret("KeystoneProjectName").value,
  };
}

/**
 * The CA amphora certificates are signed with (OTTAVA_CA_CERTIFICATE, OTTAVA_CA_PRIVATE_KEY and its
 * passphrase), from SST secrets: `npx sst secret set CaCertificate "$(cat ca.pem)"`, `CaPrivateKey`,
 * `CaPrivateKeyPassphrase` (set it to "" for an unencrypted key). Given only to the tasks that sign.
 * Lambda's environment holds 4 KB in all: an EC P-256 or RSA 2048 CA fits, RSA 4096 does not.
 */
let ca: Record<string, $util.Input<string>> | undefined;
export function caEnvironment(): Record<string, $util.Input<string>> {
  ca ??= {
    OTTAVA_CA_CERTIFICATE: new sst.Secret("CaCertificate").value,
    OTTAVA_CA_PRIVATE_KEY: new sst.Secret("CaPrivateKey").value,
    OTTAVA_CA_PRIVATE_KEY_PASSPHRASE: new sst.Secret("CaPrivateKeyPassphrase", "").value,
  };
  return ca;
}
