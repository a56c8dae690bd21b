export { startRuntime, type Runtime, type RuntimeOptions } from "./runtime";
export {
  LocalWorkflowEngine,
  ExecutionAlreadyExists,
  type LocalWorkflowEngineOptions,
  type TaskCall,
  type TaskDecorator,
  type TaskInvoke,
} from "./runner";
export { MemoryExecutionJournal } from "./journal-memory";
export { startDynamoDbLocal } from "./dynamodb-local";
export { loadOrCreateLocalCa } from "./ca";
export { startStandIn, type StandIn } from "./cli-standin";
