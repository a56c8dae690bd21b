/// <reference path="./.sst/platform/config.d.ts" />
// Ottava on AWS: one DynamoDB table, one Lambda per flow task, one Step Functions state machine per
// flow, the Octavia v2 API as one Lambda behind an HTTP API, housekeeping Lambdas on schedules, and
// the heartbeat receiver (with the health check) as a container service behind a UDP Network Load
// Balancer. The modules live in stacks/.
export default $config({
  app(input) {
    return {
      name: "ottava",
      // The SST the stacks are written and tested against (the sst devDependency): another CLI refuses to deploy.
      version: "4.17.1",
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
    const { createJobs } = await import("./stacks/jobs");
    const { createHealthManager } = await import("./stacks/health");

    const table = createTable();
    const flows = createFlows(table);
    const api = createApi(table, flows);
    // StepFunctionsEngine appends the flow name to this prefix: the state machines are named to match.
    const stateMachineArnPrefix = $interpolate`arn:aws:states:${aws.getRegionOutput().region}:${aws.getCallerIdentityOutput().accountId}:stateMachine:${$app.name}-${$app.stage}-`;
    createJobs(table, stateMachineArnPrefix);
    const health = createHealthManager(table, stateMachineArnPrefix);

    return { api: api.url, table: table.name, healthManager: health.service.url };
  },
});
