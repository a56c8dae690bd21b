// The AWS drivers (Octavia's compute/drivers, network/drivers and certificates for a cloud that is AWS):
// EC2 instances as amphorae so far, each with a Secrets Manager secret of its own. They depend on
// @ottava/core, and on @ottava/edge for its signed JSON calls (Secrets Manager); a process loads this
// package only when its settings pick an AWS driver (createDrivers in @ottava/amphora imports it dynamically).
export * from "./constants";
export * from "./ec2-client";
export * from "./secretsmanager-client";
export * from "./compute/ec2";
export * from "./compute/amphora-secret";
export * from "./compute/user-data";
export * from "./profiles";
export * from "./sweeper";
