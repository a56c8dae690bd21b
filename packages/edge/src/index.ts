export * from "./log";
export * from "./metrics";
export * from "./aws-signed";
export * from "./aws-json";
export * from "./ssm";
export * from "./unavailable";
export * from "./workload";
