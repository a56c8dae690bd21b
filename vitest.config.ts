import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    // Much test time is spent waiting on DynamoDB Local, flows and child processes, not on CPU:
    // more workers than the machine's 2 cores keep it busy. Measured on a fresh clone of this 2-core
    // machine (2026-11-28): 3 workers 953 s, 4 workers 859 s (1.8 cores busy on average).
    maxWorkers: 4,
    // A worker runs its files one after another in one module graph instead of importing every module
    // anew for each file: the suite's files share nothing else (each test file makes its own tables,
    // moto servers and stacks; environment stubs are undone with vi.unstubAllEnvs). Measured on this
    // machine (2026-11-28): the API's 27 files 249 → 174 CPU-s; the whole suite passed in 551 s.
    isolate: false,
    // Metrics (EMF lines on stdout, one a data point) are off for the suite; tests that check them
    // turn them on (captureMetrics in packages/edge/test/support/output.ts). The stacks the e2e tests start inherit it.
    env: { POWERTOOLS_METRICS_DISABLED: "true" },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ["default", "json"],
    outputFile: { json: ".test-results/vitest.json" },
  },
});
