// The Lambda entries of the housekeeping jobs, each run by an EventBridge schedule (stacks/): one pass
// per invocation. `purgeHandler`, `repairHandler` and (with OTTAVA_COMPUTE_DRIVER=ec2) `sweepHandler` every OTTAVA_CLEANUP_INTERVAL, `rotateCertsHandler` every
// OTTAVA_CERT_INTERVAL. Rotation only starts flows (the CA is needed by the flow's task functions, not here).
import { loadConfig } from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { StepFunctionsEngine } from "../engine-sfn";
import { createHousekeepingDeps, purge, repair, rotateCerts, sweep } from "./housekeeping";

const config = loadConfig();
if (!config.stateMachineArnPrefix) throw new Error("OTTAVA_STATE_MACHINE_ARN_PREFIX must be set (the stacks set it)");
const deps = createHousekeepingDeps(
  config,
  new StepFunctionsEngine(config.stateMachineArnPrefix),
  createLogger({ service: "ottava-housekeeping" }, config.logLevel),
  metrics,
);

export const purgeHandler = async () => purge(deps, new Date());

export const repairHandler = async () => {
  const result = await repair(deps, new Date());
  return { checked: result.checked, repaired: result.repaired.length };
};

export const sweepHandler = async () => {
  const result = await sweep(deps);
  return { checked: result.checked, removed: result.removed.length };
};

export const rotateCertsHandler = async () => {
  const result = await rotateCerts(deps, new Date());
  return { started: result.started.length, skipped: result.skipped };
};
