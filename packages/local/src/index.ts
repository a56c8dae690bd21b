export { startRuntime, type Runtime, type RuntimeOptions } from "./runtime";
export { LocalWorkflowEngine } from "./runner";
export { startDynamoDbLocal } from "./dynamodb-local";
export { loadOrCreateLocalCa } from "./ca";
export { startStandIn, type StandIn } from "./cli-standin";
