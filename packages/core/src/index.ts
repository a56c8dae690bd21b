export * from "./constants";
export * from "./faults";
export * from "./validation";
export * from "./query";
export * from "./policy";
export * from "./config";
export * from "./log";
export * from "./ports";
export * from "./resources/descriptor";
export * from "./resources/loadbalancer";
export * from "./resources/amphora";
export * from "./drivers";
export * from "./resources/flavor";
export * from "./services/lock";
export * from "./services/loadbalancers";
export * from "./resources/child";
export * from "./services/children";
export * from "./services/amphorae";
// EXPORT:listener
// EXPORT:pool
// EXPORT:member
// EXPORT:l7
// EXPORT:catalog
