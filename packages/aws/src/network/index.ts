// @ottava/aws/network: the vpc network driver and its parts. Over edge's minimal EC2 Query client, not the
// SDK's EC2 client, so the API (which allocates VIPs and answers the Neutron look-ups) loads it too.
export * from "./ids";
export * from "./tenancy";
export * from "./rules";
export * from "./ec2-query";
export * from "./vpc";
export * from "./lookups";
