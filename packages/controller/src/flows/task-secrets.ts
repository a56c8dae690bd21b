// Which task functions hold which secrets on AWS (stacks/flows.ts gives each function only the SSM
// parameters of its own list, and IAM lets it read those alone). Pure, like the rest of flows/: the
// stacks import it. packages/controller/test/task-secrets.test.ts checks the lists against the handlers.

/** The tasks that sign amphora certificates with the CA: only they read its private key (and passphrase). */
export const CA_TASKS = ["computeCreate", "uploadAmphoraCert"] as const;

/**
 * The tasks that call amphora agents (the REST amphora driver): only they hold the agents' client
 * certificate and its key, and with OTTAVA_AMPHORA_DRIVER=rest only they run in the VPC, with a route and
 * a security-group rule to the amphora management network.
 */
export const AGENT_TASKS = [
  "amphoraeConnectivityWait",
  "postVipPlug",
  "startVrrp",
  "updateAmphoraeConfig",
  "updateListeners",
  "handleNetworkDeltas",
  "restoreCrossPoolMembers",
  "updateAmphoraAgentConfig",
  "refreshAgentConfigPage",
  "uploadAmphoraCert",
] as const;

/**
 * The tasks that push the listeners' configuration to the amphorae (the amphora driver's update): with
 * the REST driver they read the listeners' and pools' certificates from the certificate manager, so with
 * OTTAVA_CERT_MANAGER=secretsmanager only they, and the API, may read certificate secrets (stacks/certificates.ts).
 */
export const CERT_TASKS = ["handleNetworkDeltas", "restoreCrossPoolMembers", "updateAmphoraeConfig", "updateListeners"] as const;

/**
 * The tasks that render the amphora agent's configuration, which carries the heartbeat key: those that
 * push it to the agents (postVipPlug, when the configuration changed since the build), and
 * computeCreate, which hands it to the compute driver for the new instance.
 */
export const HEARTBEAT_KEY_TASKS = ["computeCreate", "postVipPlug", "updateAmphoraAgentConfig", "refreshAgentConfigPage"] as const;

/**
 * The tasks that call the compute driver: with OTTAVA_COMPUTE_DRIVER=ec2 only they may launch, describe
 * and terminate instances and make and delete the amphorae's secrets (stacks/compute.ts).
 */
export const COMPUTE_TASKS = [
  "computeCreate",
  "computeDelete",
  "computeWait",
  "createServerGroup",
  "deleteAmphora",
  "deleteAmphorae",
  "deleteServerGroup",
  "removeOldAmphora",
  "resizeRemoveOldAmphorae",
  "revertServerGroup",
] as const;

const has = (list: readonly string[], task: string) => list.includes(task);
/** What a task's function needs beyond its settings. */
export const taskSecrets = (task: string) => ({
  ca: has(CA_TASKS, task),
  agent: has(AGENT_TASKS, task),
  heartbeatKey: has(HEARTBEAT_KEY_TASKS, task),
  certificates: has(CERT_TASKS, task),
});
