import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    // Most test time is spent waiting on DynamoDB Local, flows and child processes, not on CPU:
    // more workers than the machine's 2 cores keep it busy.
    maxWorkers: 3,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ["default", "json"],
    outputFile: { json: ".test-results/vitest.json" },
  },
});
