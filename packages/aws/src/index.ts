// The AWS drivers (Octavia's compute/drivers, network/drivers and certificates for a cloud that is AWS):
// EC2 instances as amphorae so far. They depend on @ottava/core alone; a process loads this package
// only when its settings pick an AWS driver (createDrivers in @ottava/amphora imports it dynamically).
export * from "./constants";
export * from "./ec2-client";
export * from "./compute/ec2";
export * from "./profiles";
