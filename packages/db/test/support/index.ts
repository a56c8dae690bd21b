// What other packages' tests share from db (@ottava/db/testing): a fresh table in the run's DynamoDB Local, and the objects tests start from.
export * from "./dynamo";
export * from "./fixtures";
export { PROJECT, SUBNET } from "@ottava/core/testing";
