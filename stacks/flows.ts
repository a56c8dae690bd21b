// The controller: one Lambda per task and one Step Functions state machine per flow.
// The ASL is the JSONPath definition the local runner executes (packages/controller/src/flows), with the
// task functions' ARNs filled in; SST's StepFunctions builders emit JSONata, which that runner cannot run.
import { FLOW_NAMES, FLOW_TASKS, definitionOf, tasksOf, type FlowName } from "../packages/controller/src/flows/index";
import { CA_TASKS } from "../packages/controller/src/flows/amphora-cert-rotate";
import { NODEJS, RUNTIME, caEnvironment, sharedEnvironment } from "./settings";
import type { Table } from "./table";

/** Resource names: "computeCreate" → "ComputeCreate", "loadbalancer-create" → "LoadbalancerCreate". */
const pascal = (s: string) => s.split("-").map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");

/** The state machine's name; the API finds it as OTTAVA_STATE_MACHINE_ARN_PREFIX + flow (see stacks/api.ts). */
export const stateMachineName = (flow: FlowName) => `${$app.name}-${$app.stage}-${flow}`;

export function createFlows(table: Table) {
  // Only the tasks that sign amphora certificates see the CA (SST secrets).
  const ca = caEnvironment();
  const signs = (task: string) => (CA_TASKS as readonly string[]).includes(task);
  // OTTAVA_TASK says which task a function is. The signing tasks run their own entry point, the only
  // bundle with the certificate code; every other task runs lambda.ts.
  const functions = Object.fromEntries(
    FLOW_TASKS.map((task) => [
      task,
      new sst.aws.Function(`Task${pascal(task)}`, {
        handler: signs(task) ? "packages/controller/src/lambda-signing.handler" : "packages/controller/src/lambda.handler",
        runtime: RUNTIME,
        nodejs: NODEJS,
        timeout: "2 minutes", // The ASL gives each Task 120 s.
        memory: "512 MB",
        link: [table],
        environment: {
          ...sharedEnvironment(),
          ...(signs(task) ? ca : {}),
          OTTAVA_TASK: task,
          OTTAVA_TABLE_NAME: table.name,
        },
      }),
    ]),
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

    // The /aws/vendedlogs/ prefix keeps the log group's resource policy small when there are many.
    const logGroup = new aws.cloudwatch.LogGroup(`Flow${pascal(flow)}Logs`, {
      name: `/aws/vendedlogs/states/${name}`,
      retentionInDays: 30,
    });

    const arns = $resolve(Object.fromEntries(tasks.map((t) => [t, functions[t]!.arn])));
    return new aws.sfn.StateMachine(`Flow${pascal(flow)}`, {
      name,
      type: "STANDARD", // Standard workflows: execution names are idempotency keys, and runs may last an hour.
      roleArn: role.arn,
      definition: arns.apply((a) => JSON.stringify(definitionOf(flow, (task) => a[task]!))),
      // Errors only, without inputs or outputs: the state already lives in the table.
      loggingConfiguration: { logDestination: $interpolate`${logGroup.arn}:*`, level: "ERROR", includeExecutionData: false },
    }, { dependsOn: [policy] }); // Creating it checks that the role may already write the logs.
  });

  return { functions, machines };
}

export type Flows = ReturnType<typeof createFlows>;
