export * from "./noop";
export * from "./drivers";
