// What tests of the AWS drivers share: the emulator (moto) each test file starts for itself.
export * from "./moto";
export * from "./secrets";
export * from "./bed";
export * from "./image";
