// The Octavia v2 API: one Lambda (Hono) behind an API Gateway HTTP API, every route to it.
// Authentication is decided by the deploy (stacks/config.ts): keystone by default, the service user's
// password read from its SSM parameter; noauth only on a stage that opted in, and then the route takes
// AWS_IAM authorization, so no anonymous caller from the internet is ever an admin.
import { FLOW_NAMES } from "@ottava/controller/flows";
import { certificateReadPermissions } from "./certificates";
import type { AmphoraCompute } from "./compute";
import { callsOf, permissionsFor } from "./iam";
import { stateMachineName, type Flows } from "./flows";
import type { Network } from "./network";
import type { Secrets } from "./secrets";
import { LOG_RETENTION, NODEJS, RUNTIME, TRACING, deploy, sharedEnvironment, xrayPolicy } from "./settings";
import { tablePermissions, type Table } from "./table";

export function createApi(table: Table, flows: Flows, secrets: Secrets, compute: AmphoraCompute, network: Network) {
  const plan = deploy();
  const keystone = plan.authStrategy === "keystone";
  const region = aws.getRegionOutput().region;
  const accountId = aws.getCallerIdentityOutput().accountId;
  // StepFunctionsEngine appends the flow name to this prefix: the state machines are named to match.
  const stateMachineArnPrefix = $interpolate`arn:aws:states:${region}:${accountId}:stateMachine:${$app.name}-${$app.stage}-`;

  // An operator's policy file (OTTAVA_POLICY_FILE where `sst deploy` runs, relative to the app's root: config.ts) ships in the bundle.
  const policyFile = plan.policyFile;
  const fn = new sst.aws.Function("Api", {
    handler: "packages/api/src/lambda.handler",
    runtime: RUNTIME,
    nodejs: NODEJS,
    ...(policyFile ? { copyFiles: [{ from: policyFile, to: "policy-overrides" }] } : {}),
    environment: {
      ...sharedEnvironment(network),
      OTTAVA_AUTH_STRATEGY: plan.authStrategy,
      // Keystone: where tokens are validated and as whom; the password is a parameter the function reads.
      ...(keystone ? secrets.plain(["KeystoneUrl", "KeystoneUsername", "KeystoneProjectName"]) : {}),
      ...(keystone ? secrets.environment(["KeystonePassword"]) : {}),
      ...(policyFile ? { OTTAVA_POLICY_FILE: "/var/task/policy-overrides" } : {}),
      OTTAVA_TABLE_NAME: table.name,
      OTTAVA_STATE_MACHINE_ARN_PREFIX: stateMachineArnPrefix,
    },
    permissions: [
      ...tablePermissions(table),
      // Start flows, and read their executions back (status checks, housekeeping).
      { actions: ["states:StartExecution"], resources: flows.machines.map((m) => m.machine.arn) },
      {
        actions: ["states:DescribeExecution"],
        resources: FLOW_NAMES.map((flow) => $interpolate`arn:aws:states:${region}:${accountId}:execution:${stateMachineName(flow)}:*`),
      },
      ...secrets.permissions(keystone ? ["KeystonePassword"] : []),
      // The references listeners and pools name are checked against the certificate manager.
      ...certificateReadPermissions(plan),
      // The VIP allocation, the profile checks' and the look-ups' EC2 calls (stacks/iam.ts).
      ...permissionsFor(callsOf("api", plan), compute.role.arn),
    ],
    logging: { retention: LOG_RETENTION },
    policies: xrayPolicy().apply((arn) => [arn]),
    transform: { function: TRACING },
  });

  // SST component names are unique across components: the function is "Api", the gateway "ApiGateway".
  const api = new sst.aws.ApiGatewayV2("ApiGateway", { accessLog: { retention: LOG_RETENTION } });
  // noauth: only requests signed with AWS credentials the account allows execute-api:Invoke get through.
  api.route("$default", fn.arn, plan.apiIamAuth ? { auth: { iam: true } } : {});
  return { api, fn };
}

export type Api = ReturnType<typeof createApi>;
