// What other tests share from amphora (@ottava/amphora/testing): an amphora agent stand-in, `haproxy -c` as the agent runs it, a test PKI,
// the trees the drivers take, and the no-op drivers with injected faults and latency (which npm start imports alone, as
// @ottava/amphora/testing/noop-faults: it loads no vitest).
export * from "./fake-agent";
export * from "./haproxy-check";
export * from "./noop-faults";
export * from "./pki";
export * from "./tree";
