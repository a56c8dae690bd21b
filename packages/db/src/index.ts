export * from "./client";
export * from "./table";
export * from "./items";
export * from "./store";
export * from "./catalog";
export * from "./query";
export * from "./healthcheck";
