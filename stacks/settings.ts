// What every function shares: its runtime, its logs' retention, tracing, and the OTTAVA_* settings passed
// through from the deployer's environment (see packages/core/src/config.ts for what each means).
import { deployPlan, type DeployPlan } from "./config";
import type { Network } from "./network";

/** A Lambda runtime AWS still supports; the code needs Node >= 22 (package.json engines). */
export const RUNTIME = "nodejs22.x";

/** How long every log is kept: the functions', the health manager's, the API's access log and the flows'. */
export const LOG_RETENTION = "1 month";
/** LOG_RETENTION in days, for the log groups the stacks make themselves (CloudWatch's retentionInDays). */
export const LOG_RETENTION_DAYS = 30;

/** X-Ray active tracing, for a Lambda function (its `transform.function`). */
export const TRACING = { tracingConfig: { mode: "Active" } };
/** What a traced function or state machine may do with X-Ray: AWS's managed policy (X-Ray takes no resource narrower than "*"). */
export const xrayPolicy = () => $interpolate`arn:${aws.getPartitionOutput().partition}:iam::aws:policy/AWSXRayDaemonWriteAccess`;

let plan: DeployPlan | undefined;
/**
 * This deploy's decisions (stacks/config.ts), from the deployer's environment; the first call stops the
 * deploy, before anything is created, if a setting or secret is missing. Production stages are those the
 * app protects (sst.config.ts).
 */
export function deploy(): DeployPlan {
  plan ??= deployPlan(process.env, $app.stage, $app.protect, $cli.paths.root);
  return plan;
}

/**
 * How SST bundles every function (esbuild, the AWS SDK included). Minified: SST's docs say `minify`
 * defaults to true, but SST 4.17's build minifies only when it is set. Split: what is only imported
 * dynamically (the SDK's other credential providers, the YAML parser, the X.509 library) goes to chunks
 * that Node neither parses nor runs until they are imported, which takes ~15-20 ms off each cold start.
 * `npm run bench:cold` bundles the functions the same way (test/support/lambda-bundles.ts).
 */
export const NODEJS = { minify: true, splitting: true };

/**
 * The settings that mean something on AWS. The local-only ones (listed in stacks/README.md, "Settings")
 * are left out; TABLE_NAME, STATE_MACHINE_ARN_PREFIX and STAGE are set by the stacks, and so
 * is AUTH_STRATEGY, on the API alone (stacks/config.ts decides it; under keystone every other process
 * would ask for the Keystone settings it has no use for). Secrets are never passed through: see
 * stacks/secrets.ts.
 */
const PASSED_THROUGH = [
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
  "OTTAVA_MAX_REQUEST_BODY_SIZE",
  "OTTAVA_LOG_LEVEL",
  "OTTAVA_DEFAULT_LOAD_BALANCER_QUOTA",
  "OTTAVA_DEFAULT_LISTENER_QUOTA",
  "OTTAVA_DEFAULT_POOL_QUOTA",
  "OTTAVA_DEFAULT_MEMBER_QUOTA",
  "OTTAVA_DEFAULT_HEALTH_MONITOR_QUOTA",
  "OTTAVA_DEFAULT_L7POLICY_QUOTA",
  "OTTAVA_DEFAULT_L7RULE_QUOTA",
  "OTTAVA_CONTROLLER_IP_PORT_LIST", // the external amphorae's; with ec2 the stacks set it (stacks/network.ts)
  "OTTAVA_HEALTHMANAGER_REFRESH_PAGE_SIZE",
  "OTTAVA_CERT_VALIDITY_TIME",
  "OTTAVA_CERT_EXPIRY_BUFFER",
  "OTTAVA_AMPHORA_EXPIRY_AGE",
  // The heartbeat receiver's UDP port. Its key, OTTAVA_HEARTBEAT_KEY, is a secret (stacks/secrets.ts).
  "OTTAVA_HEARTBEAT_PORT",
  "OTTAVA_HEARTBEAT_INTERVAL", // written into the amphorae's agent configuration, and the receiver's limit
  "OTTAVA_HEARTBEAT_TIMEOUT",
  "OTTAVA_HEALTH_CHECK_INTERVAL",
  "OTTAVA_FAILOVER_THRESHOLD",
  "OTTAVA_FAILOVER_ON_ERROR",
  // The REST amphora driver: the agents' port, its calls' timeouts and retries, the CA the agents are
  // checked against (public) and the interface of link-local amphora addresses. Its client certificate,
  // OTTAVA_CLIENT_CERT, is a secret (stacks/secrets.ts).
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
  // [controller_worker] compute_driver and network_driver: noop, or ec2 and vpc (stacks/config.ts refuses local).
  "OTTAVA_COMPUTE_DRIVER",
  "OTTAVA_NETWORK_DRIVER",
  // The EC2 compute driver's (its endpoint: a VPC endpoint without private DNS).
  "OTTAVA_EC2_ENDPOINT",
  // Secrets Manager's, where the amphorae's secrets are (and the amphorae read them: their user data says it).
  "OTTAVA_SECRETSMANAGER_ENDPOINT",
  // [controller_worker] event_notifications, and EventBridge's endpoint (a VPC endpoint without private DNS); the bus is the stacks' (stacks/events.ts).
  "OTTAVA_EVENT_NOTIFICATIONS",
  "OTTAVA_EVENTBRIDGE_ENDPOINT",
  // [certificates] cert_manager: noop or secretsmanager (stacks/config.ts refuses local; stacks/certificates.ts grants the reads).
  "OTTAVA_CERT_MANAGER",
  // The orphan sweep's wait for a load balancer's record (housekeeping's SweepOrphans job).
  "OTTAVA_ORPHAN_GRACE_SEC",
  "OTTAVA_AMP_IMAGE_TAG",
  "OTTAVA_AMP_BASE_IMAGE_ID",
  "OTTAVA_AMP_FLAVOR_ID",
  // (OTTAVA_AMP_BOOT_NETWORK_LIST and OTTAVA_AMP_SECGROUP_LIST are the stacks' own: stacks/network.ts.)
  "OTTAVA_ENABLE_ANTI_AFFINITY",
  "OTTAVA_AMP_ACTIVE_RETRIES",
  "OTTAVA_AMP_ACTIVE_WAIT_SEC",
  // The vpc network driver's (the API's VIP allocation and the look-ups, the task functions' plugs).
  "OTTAVA_ALLOW_INVISIBLE_RESOURCE_USAGE",
  "OTTAVA_VPC_RULES_PER_SECURITY_GROUP",
  "OTTAVA_VPC_SECURITY_GROUPS_PER_INTERFACE",
  // Powertools' switch for the metrics (EMF lines in the functions' logs): "true" turns them off.
  "POWERTOOLS_METRICS_DISABLED",
] as const;

/**
 * The pass-through settings that are set (and not empty) where `sst deploy` runs; unset ones keep the
 * app's defaults. And the stage, which the AWS drivers tag what they make with (OTTAVA_STAGE), and what
 * the network gives (with ec2, the management subnets and the amphorae's security group).
 */
export function sharedEnvironment(network: Network): Record<string, $util.Input<string>> {
  const env: Record<string, $util.Input<string>> = { OTTAVA_STAGE: $app.stage };
  for (const name of PASSED_THROUGH) {
    const value = process.env[name];
    if (value !== undefined && value !== "") env[name] = value;
  }
  return { ...env, ...network.environment };
}
