// The Lambda entry of every task function: stacks/ deploys one function per task, OTTAVA_TASK naming it.
// Its settings are made on the first invocation (configLoader), reading the secrets this task's function
// was given as SSM parameters (the CA key, the agents' client certificate, the heartbeat key) once per
// cold start.
import { configLoader } from "@ottava/core";
import { createTaskContext } from "./deps";
import { runTask } from "./run-task";
import type { FlowInput, TaskContext } from "./tasks/context";

const config = configLoader();
let ctx: TaskContext | undefined;

export const handler = async (event: FlowInput & Record<string, unknown>) => {
  ctx ??= createTaskContext(await config());
  return runTask(process.env.OTTAVA_TASK ?? "", event, ctx);
};
