// What other packages' tests share from edge (@ottava/edge/testing): what the process writes, captured,
// as the Powertools logger and metrics write it.
export * from "./output";
