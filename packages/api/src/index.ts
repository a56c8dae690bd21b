export { createApp } from "./app";
export { createDeps } from "./wiring";
export type { ApiDeps } from "./deps";
