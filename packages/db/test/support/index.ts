// What other packages' tests share from db (@ottava/db/testing): a fresh table in the run's DynamoDB Local, the objects tests start from,
// the DynamoDB meter (with its capacity units) and injected faults. The last two load no vitest: npm start and the benchmarks import
// them alone, as @ottava/db/testing/metering and @ottava/db/testing/faults.
export * from "./dynamo";
export * from "./fixtures";
export * from "./metering";
export * from "./capacity";
export * from "./faults";
export { PROJECT, SUBNET } from "@ottava/core/testing";
