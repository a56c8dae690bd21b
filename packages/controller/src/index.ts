export * from "./registry";
export * from "./flows";
export * from "./deps";
export * from "./task-context";
export * from "./run-task";
export * from "./engine-sfn";

export * from "./flows/builder";
export type { TaskContext, FlowInput } from "./tasks/context";
export * from "./jobs/healthcheck";
export * from "./health/receiver";
export * from "./jobs/housekeeping";
export { caFromConfig, certGenerator, createLocalCa, LocalCertGenerator, type CaSource } from "./certs/local";
