// Housekeeping on a schedule (octavia/controller/housekeeping, and Ottava's stuck-state repair): each
// job is a Lambda run by an EventBridge Scheduler schedule (sst.aws.CronV2), one pass per run; locally
// `npm start` runs the same passes on timers. The health check is not here: it runs every few seconds,
// which no schedule can, inside the heartbeat receiver service (stacks/health.ts) under a lease.
import { FLOW_NAMES } from "../packages/controller/src/flows/index";
import { stateMachineName } from "./flows";
import { NODEJS, RUNTIME, sharedEnvironment } from "./settings";
import type { Table } from "./table";

export function createJobs(table: Table, stateMachineArnPrefix: $util.Input<string>) {
  const region = aws.getRegionOutput().region;
  const accountId = aws.getCallerIdentityOutput().accountId;
  const executions = FLOW_NAMES.map((flow) => $interpolate`arn:aws:states:${region}:${accountId}:execution:${stateMachineName(flow)}:*`);
  const job = (name: string, handler: string, schedule: sst.aws.CronV2Args["schedule"], permissions: { actions: string[]; resources: $util.Input<string>[] }[]) =>
    new sst.aws.CronV2(name, {
      schedule,
      function: {
        handler: `packages/controller/src/jobs/lambda.${handler}`,
        runtime: RUNTIME,
        nodejs: NODEJS,
        timeout: "5 minutes",
        link: [table],
        environment: { ...sharedEnvironment(), OTTAVA_TABLE_NAME: table.name, OTTAVA_STATE_MACHINE_ARN_PREFIX: stateMachineArnPrefix },
        permissions,
      },
    });
  // [house_keeping] cleanup_interval is 30 s in Octavia; a schedule runs at most once a minute.
  job("Purge", "purgeHandler", "rate(1 minute)", []);
  // Repair asks each stuck LB's execution whether it still runs.
  job("RepairStuck", "repairHandler", "rate(1 minute)", [{ actions: ["states:DescribeExecution"], resources: executions }]);
  // [house_keeping] cert_interval: 3600 s. It only starts amphora-cert-rotate flows; their tasks sign.
  job("RotateCerts", "rotateCertsHandler", "rate(1 hour)", [
    { actions: ["states:StartExecution"], resources: [$interpolate`arn:aws:states:${region}:${accountId}:stateMachine:${stateMachineName("amphora-cert-rotate")}`] },
  ]);
}
