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
export * from "./services/graph";
export * from "./resources/listener";
// EXPORT:listener
export * from "./resources/pool";
export * from "./resources/healthmonitor";
// EXPORT:pool
export * from "./resources/member";
export * from "./services/member-batch";
// EXPORT:member
export * from "./resources/l7rule";
export * from "./resources/l7policy";
// EXPORT:l7
export * from "./catalog";
export * from "./resources/availability-zone";
export * from "./resources/quota";
export * from "./resources/provider";
export * from "./services/catalog";
// EXPORT:catalog
export * from "./services/member-cross-pool";
// EXPORT:crosspool
export * from "./services/resize";
// EXPORT:resize
export * from "./services/healthmanager";
// EXPORT:healthmanager
