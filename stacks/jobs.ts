// Housekeeping on a schedule (octavia/controller/housekeeping): each job is a Lambda run by an
// EventBridge Scheduler schedule (sst.aws.CronV2), one pass per run. Locally `npm start` runs the same
// passes on timers. The health check is not here: it runs every few seconds, inside the heartbeat
// receiver service (stacks/health.ts), under a DynamoDB lease.
import { RUNTIME, caEnvironment, sharedEnvironment } from "./settings";
import type { Table } from "./table";

export function createJobs(table: Table, stateMachineArnPrefix: $util.Input<string>, flowArns: $util.Input<string>[]) {
  const environment = { ...sharedEnvironment(), OTTAVA_TABLE_NAME: table.name, OTTAVA_STATE_MACHINE_ARN_PREFIX: stateMachineArnPrefix };
  const job = (name: string, handler: string, schedule: string, extra: Record<string, $util.Input<string>> = {}) =>
    new sst.aws.CronV2(name, {
      schedule,
      function: {
        handler: `packages/controller/src/jobs/lambda.${handler}`,
        runtime: RUNTIME,
        timeout: "5 minutes",
        link: [table],
        environment: { ...environment, ...extra },
        permissions: [
          // Repair reads executions; rotation starts the amphora-cert-rotate flow.
          { actions: ["states:StartExecution", "states:DescribeExecution"], resources: ["*"] },
        ],
      },
    });
  // [house_keeping] cleanup_interval is 30 s in Octavia; a schedule runs at most once a minute.
  job("Purge", "purgeHandler", "rate(1 minute)");
  job("RepairStuck", "repairHandler", "rate(1 minute)");
  // [house_keeping] cert_interval: 3600 s.
  job("RotateCerts", "rotateCertsHandler", "rate(1 hour)", caEnvironment());
  void flowArns;
}
