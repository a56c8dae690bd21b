// @ottava/db: the table and its layout, the store, the flow trail, change sets, the health-manager
// configuration, the catalog, the stores of the jobs.
export * from "./client";
export * from "./table";
export * from "./items";
export * from "./store";
export * from "./flow-trail";
export * from "./changesets";
export * from "./healthmanager-config";
export * from "./stores";
export * from "./catalog";
export * from "./query";
export * from "./healthcheck";
export * from "./health";
export * from "./repair";
export * from "./housekeeping";
export * from "./vips";
export * from "./cloud-ids";
export * from "./journal";
