// What other tests share from amphora (@ottava/amphora/testing): an amphora agent stand-in, `haproxy -c` as the agent runs it, a test PKI and the trees the drivers take.
export * from "./fake-agent";
export * from "./haproxy-check";
export * from "./pki";
export * from "./tree";
