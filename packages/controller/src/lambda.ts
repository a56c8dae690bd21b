// The Lambda entry of every task function: stacks/ deploys one function per task, OTTAVA_TASK naming it.
import { loadConfig } from "@ottava/core";
import { createTaskContext } from "./deps";
import { runTask } from "./run-task";
import type { FlowInput } from "./tasks/context";

const config = loadConfig();
const ctx = createTaskContext(config);

export const handler = (event: FlowInput & Record<string, unknown>) => runTask(process.env.OTTAVA_TASK ?? "", event, ctx);
