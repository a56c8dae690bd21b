// The controller: one Lambda per task and one Step Functions state machine per flow.
// The ASL is the JSONPath definition the local runner executes (packages/controller/src/flows), with the
// task functions' ARNs filled in; SST's StepFunctions builders emit JSONata, which that runner cannot run.
import {
  CA_TASKS,
  FLOW_NAMES,
  FLOW_TASKS,
  TASK_FUNCTION_TIMEOUT_SECONDS,
  definitionOf,
  taskSecrets,
  tasksOf,
  type FlowName,
} from "@ottava/controller/flows";
import { certificateReadPermissions, readsCertificates } from "./certificates";
import type { AmphoraCompute } from "./compute";
import type { DeployPlan, StoredSecret } from "./config";
import { callsOf, permissionsFor } from "./iam";
import type { Events } from "./events";
import type { Network } from "./network";
import type { Secrets } from "./secrets";
import { LOG_RETENTION, LOG_RETENTION_DAYS, NODEJS, RUNTIME, TRACING, deploy, sharedEnvironment, xrayPolicy } from "./settings";
import { tablePermissions, type Table } from "./table";

/** Resource names: "computeCreate" → "ComputeCreate", "loadbalancer-create" → "LoadbalancerCreate". */
const pascal = (s: string) =>
  s
    .split("-")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");

/** The state machine's name; the API finds it as OTTAVA_STATE_MACHINE_ARN_PREFIX + flow (see stacks/api.ts). */
export const stateMachineName = (flow: FlowName) => `${$app.name}-${$app.stage}-${flow}`;

/**
 * A task function's timeout: shorter than its Task state's TimeoutSeconds (TASK_TIMEOUT_SECONDS) by
 * construction, so a slow task ends as a Lambda error the state's Retry and Catch handle, never as a state
 * timeout while the function still runs and writes under the flow's lock.
 */
export const TASK_FUNCTION_TIMEOUT = `${TASK_FUNCTION_TIMEOUT_SECONDS} seconds` as const;

/** The secrets (SSM parameters) a task's function reads, from the lists in packages/controller/src/flows/task-secrets.ts. */
function storedSecretsOf(task: string, plan: DeployPlan): StoredSecret[] {
  const needs = taskSecrets(task);
  return [
    ...(needs.ca ? (["CaPrivateKey", "CaPrivateKeyPassphrase"] as const) : []),
    ...(needs.agent && plan.amphoraDriver === "rest" ? (["ClientCert"] as const) : []),
    ...(needs.heartbeatKey ? (["HeartbeatKey"] as const) : []),
  ];
}

export function createFlows(table: Table, network: Network, secrets: Secrets, compute: AmphoraCompute, events: Events) {
  const plan = deploy();
  const shared = sharedEnvironment(network);
  const ca = secrets.plain(["CaCertificate"]);
  // OTTAVA_TASK says which task a function is. The signing tasks run their own entry point, the only
  // bundle with the certificate code; every other task runs lambda.ts.
  const signs = (task: string) => (CA_TASKS as readonly string[]).includes(task);
  const functions = Object.fromEntries(
    FLOW_TASKS.map((task) => {
      const needs = taskSecrets(task);
      const stored = storedSecretsOf(task, plan);
      const callsAgents = needs.agent && network.agentCallers !== undefined;
      return [
        task,
        new sst.aws.Function(`Task${pascal(task)}`, {
          handler: signs(task) ? "packages/controller/src/lambda-signing.handler" : "packages/controller/src/lambda.handler",
          runtime: RUNTIME,
          nodejs: NODEJS,
          timeout: TASK_FUNCTION_TIMEOUT,
          memory: "512 MB", // test/bench/cost.ts reads this literal for its Lambda prices
          environment: {
            ...shared,
            // The tasks that sign get the CA's certificate (its key is a parameter, below).
            ...(needs.ca ? ca : {}),
            // Those that call agents check them against the CA ([haproxy_amphora] server_ca) unless the deployer set another.
            ...(callsAgents && !needs.ca && !shared.OTTAVA_SERVER_CA ? { OTTAVA_SERVER_CA: ca.OTTAVA_CA_CERTIFICATE! } : {}),
            ...secrets.environment(stored),
            // Those that call the compute driver get the amphorae's instance profile (stacks/compute.ts).
            ...(compute.computes(task) ? compute.environment : {}),
            // Those that send events get the bus (stacks/events.ts).
            ...(events.notifies(task) ? events.environment : {}),
            OTTAVA_TASK: task,
            OTTAVA_TABLE_NAME: table.name,
          },
          permissions: [
            ...tablePermissions(table),
            ...secrets.permissions(stored),
            // The EC2 and Secrets Manager calls of its drivers (stacks/iam.ts).
            ...permissionsFor(callsOf(task, plan), compute.role.arn),
            // Those that push the listeners' configuration upload their certificates (stacks/certificates.ts).
            ...(readsCertificates(task, plan) ? certificateReadPermissions(plan) : []),
            ...(events.notifies(task) ? events.permissions : []),
          ],
          ...(callsAgents ? { vpc: network.agentCallers } : {}),
          logging: { retention: LOG_RETENTION },
          policies: xrayPolicy().apply((arn) => [arn]),
          transform: { function: TRACING },
        }),
      ];
    }),
  );

  const machines = FLOW_NAMES.map((flow) => {
    const name = stateMachineName(flow);
    const tasks = tasksOf(flow);

    // Each flow may invoke exactly the functions of its own tasks, and write its errors to its log group.
    const role = new aws.iam.Role(`Flow${pascal(flow)}Role`, {
      assumeRolePolicy: JSON.stringify({
        Version: "2012-10-17",
        Statement: [{ Effect: "Allow", Principal: { Service: "states.amazonaws.com" }, Action: "sts:AssumeRole" }],
      }),
    });
    const policy = new aws.iam.RolePolicy(`Flow${pascal(flow)}Policy`, {
      role: role.id,
      policy: $jsonStringify({
        Version: "2012-10-17",
        Statement: [
          { Effect: "Allow", Action: "lambda:InvokeFunction", Resource: tasks.map((t) => functions[t]!.arn) },
          {
            // Step Functions' log delivery takes no narrower resource than "*".
            Effect: "Allow",
            Action: [
              "logs:CreateLogDelivery",
              "logs:GetLogDelivery",
              "logs:UpdateLogDelivery",
              "logs:DeleteLogDelivery",
              "logs:ListLogDeliveries",
              "logs:PutResourcePolicy",
              "logs:DescribeResourcePolicies",
              "logs:DescribeLogGroups",
            ],
            Resource: "*",
          },
        ],
      }),
    });
    // Tracing: the state machine sends its traces to X-Ray (AWS's managed policy; X-Ray takes no narrower resource).
    const tracing = new aws.iam.RolePolicyAttachment(`Flow${pascal(flow)}Tracing`, { role: role.name, policyArn: xrayPolicy() });

    // The /aws/vendedlogs/ prefix keeps the log group's resource policy small when there are many.
    const logGroup = new aws.cloudwatch.LogGroup(`Flow${pascal(flow)}Logs`, {
      name: `/aws/vendedlogs/states/${name}`,
      retentionInDays: LOG_RETENTION_DAYS,
    });

    const arns = $resolve(Object.fromEntries(tasks.map((t) => [t, functions[t]!.arn])));
    const machine = new aws.sfn.StateMachine(
      `Flow${pascal(flow)}`,
      {
        name,
        type: "STANDARD", // Standard workflows: execution names are idempotency keys, and runs may last an hour.
        roleArn: role.arn,
        definition: arns.apply((a) => JSON.stringify(definitionOf(flow, (task) => a[task]!))),
        // Errors only, without inputs or outputs: the state already lives in the table.
        loggingConfiguration: { logDestination: $interpolate`${logGroup.arn}:*`, level: "ERROR", includeExecutionData: false },
        tracingConfiguration: { enabled: true },
      },
      { dependsOn: [policy, tracing] },
    ); // Creating it checks that the role may already write the logs.
    return { flow, machine };
  });

  return { functions, machines };
}

export type Flows = ReturnType<typeof createFlows>;
