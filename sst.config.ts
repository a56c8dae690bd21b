/// <reference path="./.sst/platform/config.d.ts" />
// Ottava on AWS: one DynamoDB table, one Lambda per flow task, one Step Functions state machine per
// flow, the Octavia v2 API as one Lambda behind an HTTP API, housekeeping Lambdas on schedules, the
// heartbeat receiver (with the health check) as a container service behind a UDP Network Load
// Balancer, the secrets in SSM SecureStrings, and CloudWatch alarms. The modules live in stacks/.
export default $config({
  app(input) {
    // Production stages keep their data if the stage is ever removed, cannot be removed with
    // `sst remove`, and their table has deletion protection (stacks/table.ts reads $app.protect).
    // Throwaway stages clean up after themselves.
    const production = input?.stage === "production";
    return {
      name: "ottava",
      // The SST the stacks are written and tested against (the sst devDependency): another CLI refuses to deploy.
      version: "4.17.1",
      removal: production ? "retain" : "remove",
      protect: production,
      home: "aws",
    };
  },
  async run() {
    // Imported here, not at the top: the stacks use SST's globals, which exist only while run() runs.
    const { deploy } = await import("./stacks/settings");
    const { createSecrets } = await import("./stacks/secrets");
    const { createNetwork } = await import("./stacks/network");
    const { createAmphoraCompute } = await import("./stacks/compute");
    const { createTable } = await import("./stacks/table");
    const { createFlows } = await import("./stacks/flows");
    const { createEvents } = await import("./stacks/events");
    const { createApi } = await import("./stacks/api");
    const { createJobs } = await import("./stacks/jobs");
    const { createHealthManager } = await import("./stacks/health");
    const { createAlarms } = await import("./stacks/alarms");

    // Before anything is created: a missing setting or secret stops the deploy here, with all of them named.
    const plan = deploy();
    const secrets = createSecrets(plan);
    const network = createNetwork(plan);
    const table = createTable();
    const compute = createAmphoraCompute();
    const events = createEvents();
    const flows = createFlows(table, network, secrets, compute, events);
    const api = createApi(table, flows, secrets, compute, network);
    // StepFunctionsEngine appends the flow name to this prefix: the state machines are named to match.
    const stateMachineArnPrefix = $interpolate`arn:aws:states:${aws.getRegionOutput().region}:${aws.getCallerIdentityOutput().accountId}:stateMachine:${$app.name}-${$app.stage}-`;
    const jobs = createJobs(table, stateMachineArnPrefix, compute, network);
    const health = createHealthManager(table, stateMachineArnPrefix, network, secrets, compute);
    const alarms = createAlarms(flows, api, jobs, health);

    return {
      api: api.api.url,
      auth: plan.authStrategy,
      table: table.name,
      healthManager: health.service.url,
      alarmTopic: alarms.topicArn,
      eventBus: events.bus.name,
    };
  },
});
