/// <reference path="./.sst/platform/config.d.ts" />
// Ottava on AWS: one DynamoDB table, one Lambda per flow task, one Step Functions state machine per
// flow, and the Octavia v2 API as one Lambda behind an HTTP API. The modules live in stacks/.
export default $config({
  app(input) {
    return {
      name: "ottava",
      // Keep production data if the stage is ever removed; throwaway stages clean up after themselves.
      removal: input?.stage === "production" ? "retain" : "remove",
      home: "aws",
    };
  },
  async run() {
    // Imported here, not at the top: the stacks use SST's globals, which exist only while run() runs.
    const { createTable } = await import("./stacks/table");
    const { createFlows } = await import("./stacks/flows");
    const { createApi } = await import("./stacks/api");

    const table = createTable();
    const flows = createFlows(table);
    const api = createApi(table, flows);

    return { api: api.url, table: table.name };
  },
});
