// The Lambda entry of the task functions that sign nothing: stacks/ deploys one function per task,
// OTTAVA_TASK naming it. The tasks that sign amphora certificates (CA_TASKS) run lambda-signing.ts
// instead: this entry builds its context without a certificate generator (task-context.ts, which
// imports nothing of certs/), so its bundle carries none of the certificate code (@peculiar/x509 and
// its ASN.1 libraries). Its settings are made on the first invocation (configLoader), reading the
// secrets this task's function was given as SSM parameters (the agents' client certificate, the
// heartbeat key) once per cold start.
import { configLoader } from "@ottava/core";
import { createLogger, ssmSecretReader } from "@ottava/edge";
import { createStores } from "@ottava/db";
import { taskContextWith } from "./task-context";
import { runTask } from "./run-task";
import type { FlowInput, TaskContext } from "./tasks/context";

const config = configLoader(process.env, ssmSecretReader());
let ctx: TaskContext | undefined;

export const handler = async (event: FlowInput & Record<string, unknown>) => {
  if (!ctx) {
    const c = await config();
    ctx = taskContextWith(c, createStores(c), createLogger({ service: "ottava-controller" }, c.logLevel), undefined);
  }
  return runTask(process.env.OTTAVA_TASK ?? "", event, ctx);
};
