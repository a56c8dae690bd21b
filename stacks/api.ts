// The Octavia v2 API: one Lambda (Hono) behind an API Gateway HTTP API, every route to it.
import { FLOW_NAMES } from "../packages/controller/src/flows/index";
import { stateMachineName, type Flows } from "./flows";
import { NODEJS, RUNTIME, keystoneEnvironment, sharedEnvironment } from "./settings";
import type { Table } from "./table";

export function createApi(table: Table, flows: Flows) {
  const region = aws.getRegionOutput().region;
  const accountId = aws.getCallerIdentityOutput().accountId;
  // StepFunctionsEngine appends the flow name to this prefix: the state machines are named to match.
  const stateMachineArnPrefix = $interpolate`arn:aws:states:${region}:${accountId}:stateMachine:${$app.name}-${$app.stage}-`;

  // An operator's policy file (OTTAVA_POLICY_FILE where `sst deploy` runs) ships in the bundle.
  const policyFile = process.env.OTTAVA_POLICY_FILE;
  const fn = new sst.aws.Function("Api", {
    handler: "packages/api/src/lambda.handler",
    runtime: RUNTIME,
    nodejs: NODEJS,
    link: [table],
    ...(policyFile ? { copyFiles: [{ from: policyFile, to: "policy-overrides" }] } : {}),
    environment: {
      ...sharedEnvironment(),
      ...keystoneEnvironment(),
      ...(policyFile ? { OTTAVA_POLICY_FILE: "/var/task/policy-overrides" } : {}),
      OTTAVA_TABLE_NAME: table.name,
      OTTAVA_STATE_MACHINE_ARN_PREFIX: stateMachineArnPrefix,
    },
    permissions: [
      // Start flows, and read their executions back (status checks, housekeeping).
      { actions: ["states:StartExecution"], resources: flows.machines.map((m) => m.arn) },
      {
        actions: ["states:DescribeExecution"],
        resources: FLOW_NAMES.map((flow) => $interpolate`arn:aws:states:${region}:${accountId}:execution:${stateMachineName(flow)}:*`),
      },
    ],
  });

  const api = new sst.aws.ApiGatewayV2("Api");
  api.route("$default", fn.arn);
  return api;
}
