// CloudWatch alarms on what needs an operator, each notifying the SNS topic OTTAVA_ALARM_TOPIC (or, when
// it is not set, a topic the stage makes: subscribe to its ARN, an output of the deploy) when it goes
// into ALARM and when it is OK again. Every alarm watches a metric that exists without Ottava's own
// metrics (POWERTOOLS_METRICS_DISABLED may turn those off):
// - flow failures and timeouts: Step Functions' ExecutionsFailed and ExecutionsTimedOut, per state machine;
// - the failover-storm stop: a metric filter on the health manager's log, counting the ERROR line the
//   health check writes on every pass that stops failovers (`"alert": "amphora.failover.threshold"`);
// - API 5xx: API Gateway's 5xx of the HTTP API;
// - throttles: Lambda's Throttles, per function (API, tasks, jobs). A job's only when it is throttled in
//   JOB_THROTTLE_PERIODS periods running: its reserved concurrency of 1 throttles a run that is due while
//   the last one still runs (stacks/jobs.ts), which is how a job waits its turn, not a fault. A job that
//   throttles period after period cannot keep up with its schedule;
// - dead letters: the age of the oldest message in the jobs' dead-letter queue;
// - orphans swept: a metric filter on the orphan sweep's log, counting the WARN line it writes for each
//   cloud resource it removes (`"alert": "cloud.orphan.swept"`): a crash left it behind;
// - amphorae that failed to boot: metric filters on the logs of the two tasks that wait for a build
//   (computeWait, amphoraeConnectivityWait), counting their line when they give up (`"alert":
//   "amphora.boot.failed"`). A VIP move that fails fails its flow (amphora-vip-promote, a failover):
//   the flows' alarms above.
// Names: <app>-<stage>-<what>, e.g. ottava-production-flow-loadbalancer-create-failed.
import { AMPHORA_BOOT_FAILED_ALERT, FAILOVER_THRESHOLD_ALERT, ORPHAN_SWEPT_ALERT } from "@ottava/core/constants";
import type { Api } from "./api";
import type { Flows } from "./flows";
import type { HealthManager } from "./health";
import type { Jobs } from "./jobs";
import { deploy } from "./settings";

/** The period every alarm sums or takes the maximum over, in seconds. */
export const ALARM_PERIOD_SECONDS = 300;
/** Any failed or timed-out execution of a flow in a period. */
export const FLOW_FAILURES_THRESHOLD = 1;
/** 5xx answers of the API in a period (Keystone unreachable answers 503, as keystonemiddleware). */
export const API_5XX_THRESHOLD = 5;
/** Throttled invocations of a function in a period. */
export const THROTTLES_THRESHOLD = 1;
/** A job's throttles alarm only in this many periods running (an overlap with its previous run is one period's). */
export const JOB_THROTTLE_PERIODS = 3;
/** A dead letter older than a minute: any dead letter (a job failed after its retries, or could not run) alarms within a period. */
export const DEAD_LETTER_AGE_THRESHOLD_SECONDS = 60;
/** The namespace of the metric the health manager's log filter makes (the same as Ottava's own metrics). */
export const METRICS_NAMESPACE = "Ottava";
/** One a health-check pass that stopped failovers (the EMF metric FailoverStormStops counts the amphorae stopped, only when some newly are). */
export const FAILOVER_STORM_METRIC = "FailoverStormAlerts";
/** One a cloud resource the orphan sweep removed (the EMF metric OrphansSwept counts them too, when metrics are on). */
export const ORPHANS_SWEPT_METRIC = "OrphanSweepAlerts";
/** One a build whose amphorae failed to boot. */
export const AMPHORA_BOOT_METRIC = "AmphoraBootFailureAlerts";

type Watched = { metricName: string; namespace: string; dimensions: Record<string, $util.Input<string>>; statistic: "Sum" | "Maximum" };

export function createAlarms(flows: Flows, api: Api, jobs: Jobs, health: HealthManager) {
  const plan = deploy();
  const topicArn: $util.Input<string> = plan.alarmTopic ?? new aws.sns.Topic("Alarms", { name: `${$app.name}-${$app.stage}-alarms` }).arn;
  const prefix = `${$app.name}-${$app.stage}`;

  /** An alarm on `watched` reaching `threshold` in `periods` periods running (each of them). */
  const alarm = (id: string, name: string, description: string, watched: Watched, threshold: number, periods = 1) =>
    new aws.cloudwatch.MetricAlarm(id, {
      name: `${prefix}-${name}`,
      alarmDescription: description,
      ...watched,
      period: ALARM_PERIOD_SECONDS,
      evaluationPeriods: periods,
      datapointsToAlarm: periods,
      comparisonOperator: "GreaterThanOrEqualToThreshold",
      threshold,
      // No data (nothing ran, nothing failed) is not a problem.
      treatMissingData: "notBreaching",
      alarmActions: [topicArn],
      okActions: [topicArn],
    });

  for (const { flow, machine } of flows.machines) {
    const pascal = flow
      .split("-")
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join("");
    const dimensions = { StateMachineArn: machine.arn };
    alarm(
      `Flow${pascal}Failed`,
      `flow-${flow}-failed`,
      `Executions of the ${flow} flow failed: see the load balancer's flow trail (GET …/loadbalancers/{id}/flows) and the state machine's log.`,
      { namespace: "AWS/States", metricName: "ExecutionsFailed", dimensions, statistic: "Sum" },
      FLOW_FAILURES_THRESHOLD,
    );
    alarm(
      `Flow${pascal}TimedOut`,
      `flow-${flow}-timed-out`,
      `Executions of the ${flow} flow timed out; housekeeping puts their load balancers in ERROR.`,
      { namespace: "AWS/States", metricName: "ExecutionsTimedOut", dimensions, statistic: "Sum" },
      FLOW_FAILURES_THRESHOLD,
    );
  }

  /**
   * An alarm on the log lines whose `alert` field is `alert`: a metric filter on each log group (id →
   * its name) counts them into `metric`, and one of them in a period alarms.
   */
  const alertAlarm = (
    id: string,
    name: string,
    description: string,
    alert: string,
    metric: string,
    logGroups: Record<string, $util.Input<string>>,
  ) => {
    for (const [filter, logGroupName] of Object.entries(logGroups))
      new aws.cloudwatch.LogMetricFilter(filter, {
        logGroupName,
        pattern: `{ $.alert = "${alert}" }`,
        metricTransformation: { namespace: METRICS_NAMESPACE, name: metric, value: "1", unit: "Count" },
      });
    alarm(id, name, description, { namespace: METRICS_NAMESPACE, metricName: metric, dimensions: {}, statistic: "Sum" }, 1);
  };

  // The failover-storm stop: counted from the health check's alert line (not under `sst dev`, where the
  // health manager has no log group in AWS).
  if (health.logGroupName)
    alertAlarm(
      "FailoverStorm",
      "failover-storm",
      "The health check stopped every failover: as many amphorae as OTTAVA_FAILOVER_THRESHOLD are stale at once (FAILOVER_STOPPED). Look for a network or health-manager outage before anything else.",
      FAILOVER_THRESHOLD_ALERT,
      FAILOVER_STORM_METRIC,
      { FailoverStormAlerts: health.logGroupName },
    );

  alarm(
    "Api5xx",
    "api-5xx",
    "The API answered 5xx (a fault of Ottava, DynamoDB, Step Functions or Keystone).",
    { namespace: "AWS/ApiGateway", metricName: "5xx", dimensions: { ApiId: api.api.nodes.api.id }, statistic: "Sum" },
    API_5XX_THRESHOLD,
  );

  const throttles = (id: string, label: string, functionName: $util.Input<string>, periods = 1, why = "Lambda concurrency") =>
    alarm(
      `${id}Throttles`,
      `${label}-throttles`,
      `Invocations of the ${label} function were throttled (${why}).`,
      { namespace: "AWS/Lambda", metricName: "Throttles", dimensions: { FunctionName: functionName }, statistic: "Sum" },
      THROTTLES_THRESHOLD,
      periods,
    );
  throttles("Api", "api", api.fn.name);
  for (const [task, fn] of Object.entries(flows.functions))
    throttles(`Task${task.charAt(0).toUpperCase()}${task.slice(1)}`, `task-${task}`, fn.name);
  for (const [name, cron] of Object.entries(jobs.jobs))
    throttles(
      `Job${name}`,
      `job-${name.replace(/[A-Z]/g, (c, i: number) => (i ? "-" : "") + c.toLowerCase())}`,
      cron.nodes.function.apply((f) => f.name),
      JOB_THROTTLE_PERIODS,
      `in ${JOB_THROTTLE_PERIODS} periods of ${ALARM_PERIOD_SECONDS / 60} minutes running: its runs keep overlapping, the job cannot keep up with its schedule`,
    );

  // Orphans swept: counted from the sweep's line for each resource it removes.
  alertAlarm(
    "OrphansSwept",
    "orphans-swept",
    "The orphan sweep removed cloud resources (instances, ENIs, security groups, placement groups, secrets) whose load balancer or amphora is gone: a crash or a timeout interrupted a flow or an API request. Its log names each resource and why; look for the interrupted work.",
    ORPHAN_SWEPT_ALERT,
    ORPHANS_SWEPT_METRIC,
    { OrphansSwept: jobs.jobs.SweepOrphans.nodes.function.apply((f) => f.nodes.logGroup.apply((g) => g!.name)) },
  );

  // Amphorae that failed to boot: counted from the two waits' lines when they give up.
  const logGroupOf = (task: string) => flows.functions[task]!.nodes.logGroup.apply((g) => g!.name);
  alertAlarm(
    "AmphoraBootFailures",
    "amphora-boot-failed",
    "Amphorae failed to boot: an instance never ran (capacity, the image) or its agent was never reached (the image, its user data, the management network). The task's log names the amphorae, their instances and why; the instances' console output says more.",
    AMPHORA_BOOT_FAILED_ALERT,
    AMPHORA_BOOT_METRIC,
    {
      AmphoraBootFailuresComputeWait: logGroupOf("computeWait"),
      AmphoraBootFailuresAmphoraeConnectivityWait: logGroupOf("amphoraeConnectivityWait"),
    },
  );

  alarm(
    "JobsDeadLetters",
    "jobs-dead-letters",
    "A housekeeping job failed after its retries, or could not run: its event is in the jobs' dead-letter queue.",
    {
      namespace: "AWS/SQS",
      metricName: "ApproximateAgeOfOldestMessage",
      dimensions: { QueueName: jobs.deadLetters.name },
      statistic: "Maximum",
    },
    DEAD_LETTER_AGE_THRESHOLD_SECONDS,
  );

  return { topicArn };
}
