// The Lambda entry of the task functions that sign amphora certificates (CA_TASKS: stacks/flows.ts
// gives only them this entry and the CA), OTTAVA_TASK naming the task. Every other task runs lambda.ts,
// whose bundle has no certificate code. The X.509 library is still loaded on the first signature
// only (certs/x509.ts), not when the function starts. Its settings are made on the first invocation
// (configLoader), reading the CA's key from its SSM parameter once per cold start.
import { configLoader } from "@ottava/core";
import { ssmSecretReader } from "@ottava/edge";
import { createTaskContext } from "./deps";
import { runTask } from "./run-task";
import type { FlowInput, TaskContext } from "./tasks/context";

const config = configLoader(process.env, ssmSecretReader());
let ctx: TaskContext | undefined;

export const handler = async (event: FlowInput & Record<string, unknown>) => {
  ctx ??= createTaskContext(await config());
  return runTask(process.env.OTTAVA_TASK ?? "", event, ctx);
};
