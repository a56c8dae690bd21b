// The Lambda entry of the task functions that sign nothing: stacks/ deploys one function per task,
// OTTAVA_TASK naming it. The tasks that sign amphora certificates (CA_TASKS) run lambda-signing.ts
// instead: this entry builds its context without a certificate generator (task-context.ts, which
// imports nothing of certs/), so its bundle carries none of the certificate code (@peculiar/x509 and
// its ASN.1 libraries).
import { createLogger, loadConfig } from "@ottava/core";
import { createStores } from "@ottava/db";
import { taskContextWith } from "./task-context";
import { runTask } from "./run-task";
import type { FlowInput } from "./tasks/context";

const config = loadConfig();
const ctx = taskContextWith(config, createStores(config), createLogger({ service: "ottava-controller" }, config.logLevel), undefined);

export const handler = (event: FlowInput & Record<string, unknown>) => runTask(process.env.OTTAVA_TASK ?? "", event, ctx);
