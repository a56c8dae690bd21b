// What other tests share from amphora (@ottava/amphora/testing): an amphora agent stand-in and the trees the drivers take.
export * from "./fake-agent";
export * from "./tree";
