// Housekeeping on a schedule (octavia/controller/housekeeping, and Ottava's stuck-state repair): each
// job is a Lambda run by an EventBridge Scheduler schedule (sst.aws.CronV2), one pass per run; locally
// `npm start` runs the same passes on timers. The health check is not here: it runs every few seconds,
// which no schedule can, inside the heartbeat receiver service (stacks/health.ts) under a lease.
//
// A job never overlaps itself: its function has a reserved concurrency of 1, so a run that is due while
// the last one still runs waits (Lambda keeps the event and tries again) instead of running beside it.
// A run that fails is tried again (Lambda's retries of an asynchronous invocation); one that still fails,
// or could not start within JOB_EVENT_MAX_AGE_SECONDS, or that the scheduler could not deliver, lands in
// the jobs' dead-letter queue, whose oldest message's age is alarmed on (stacks/alarms.ts).
import { FLOW_NAMES } from "@ottava/controller/flows";
import type { AmphoraCompute } from "./compute";
import { stateMachineName } from "./flows";
import { SWEEP, callsOf, permissionsFor, type Permission } from "./iam";
import type { Network } from "./network";
import { LOG_RETENTION, NODEJS, RUNTIME, TRACING, deploy, sharedEnvironment, xrayPolicy } from "./settings";
import { tablePermissions, type Table } from "./table";

/** One run of a job at a time. */
export const JOB_CONCURRENCY = 1;
/** Runs of a failed job after the first (Lambda's asynchronous retries, a minute and then two apart). */
export const JOB_RETRIES = 2;
/** How long a due run may wait (behind a running one, or between retries) before it is given up to the dead-letter queue. */
export const JOB_EVENT_MAX_AGE_SECONDS = 900;
/** The scheduler's own retries of an invocation it could not deliver. */
export const SCHEDULE_RETRIES = 3;
const JOB_TIMEOUT = "5 minutes";
/** Dead letters are kept for SQS's longest: 14 days. */
const DEAD_LETTER_RETENTION_SECONDS = 14 * 24 * 3600;

export function createJobs(table: Table, stateMachineArnPrefix: $util.Input<string>, compute: AmphoraCompute, network: Network) {
  const region = aws.getRegionOutput().region;
  const accountId = aws.getCallerIdentityOutput().accountId;
  const executions = FLOW_NAMES.map((flow) => $interpolate`arn:aws:states:${region}:${accountId}:execution:${stateMachineName(flow)}:*`);
  const deadLetters = new aws.sqs.Queue("JobsDeadLetters", {
    messageRetentionSeconds: DEAD_LETTER_RETENTION_SECONDS,
    sqsManagedSseEnabled: true,
  });

  const job = (name: string, handler: string, schedule: sst.aws.CronV2Args["schedule"], permissions: Permission[]) =>
    new sst.aws.CronV2(name, {
      schedule,
      retries: SCHEDULE_RETRIES,
      dlq: deadLetters.arn,
      function: {
        handler: `packages/controller/src/jobs/lambda.${handler}`,
        runtime: RUNTIME,
        nodejs: NODEJS,
        timeout: JOB_TIMEOUT,
        environment: {
          ...sharedEnvironment(network),
          OTTAVA_TABLE_NAME: table.name,
          OTTAVA_STATE_MACHINE_ARN_PREFIX: stateMachineArnPrefix,
        },
        // Lambda writes a failed invocation's record to the dead-letter queue as the function's role.
        permissions: [...tablePermissions(table), ...permissions, { actions: ["sqs:SendMessage"], resources: [deadLetters.arn] }],
        concurrency: { reserved: JOB_CONCURRENCY },
        retries: JOB_RETRIES,
        logging: { retention: LOG_RETENTION },
        policies: xrayPolicy().apply((arn) => [arn]),
        transform: {
          function: TRACING,
          eventInvokeConfig: {
            maximumEventAgeInSeconds: JOB_EVENT_MAX_AGE_SECONDS,
            destinationConfig: { onFailure: { destination: deadLetters.arn } },
          },
        },
      },
    });
  const jobs = {
    // [house_keeping] cleanup_interval is 30 s in Octavia; a schedule runs at most once a minute.
    Purge: job("Purge", "purgeHandler", "rate(1 minute)", []),
    // Repair asks each stuck LB's execution whether it still runs.
    RepairStuck: job("RepairStuck", "repairHandler", "rate(1 minute)", [{ actions: ["states:DescribeExecution"], resources: executions }]),
    // The orphan sweep (OTTAVA_COMPUTE_DRIVER=ec2; a pass of nothing otherwise): three list calls a run.
    [SWEEP]: job(SWEEP, "sweepHandler", "rate(5 minutes)", permissionsFor(callsOf(SWEEP, deploy()), compute.role.arn)),
    // [house_keeping] cert_interval: 3600 s. It only starts amphora-cert-rotate flows; their tasks sign.
    RotateCerts: job("RotateCerts", "rotateCertsHandler", "rate(1 hour)", [
      {
        actions: ["states:StartExecution"],
        resources: [$interpolate`arn:aws:states:${region}:${accountId}:stateMachine:${stateMachineName("amphora-cert-rotate")}`],
      },
    ]),
  };
  return { jobs, deadLetters };
}

export type Jobs = ReturnType<typeof createJobs>;
