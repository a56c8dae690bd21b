// What tests of the AWS drivers share: the emulator (moto) each test file starts for itself, and the
// proxy in front of it that adds what moto lacks (idempotency, placement groups, booting, faults).
export * from "./moto";
export * from "./secrets";
export * from "./cert-command";
export * from "./bed";
export * from "./image";
export * from "./ec2-proxy";
export * from "./events-proxy";
export * from "./fixture";
export * from "./vpc-driver";
export * from "./aws-calls";
