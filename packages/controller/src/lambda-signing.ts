// The Lambda entry of the task functions that sign amphora certificates (CA_TASKS: stacks/flows.ts
// gives only them this entry and the CA), OTTAVA_TASK naming the task. Every other task runs lambda.ts,
// whose bundle has no certificate code. The X.509 library is still loaded on the first signature
// only (certs/x509.ts), not when the function starts.
import { loadConfig } from "@ottava/core";
import { createTaskContext } from "./deps";
import { runTask } from "./run-task";
import type { FlowInput } from "./tasks/context";

const config = loadConfig();
const ctx = createTaskContext(config);

export const handler = (event: FlowInput & Record<string, unknown>) => runTask(process.env.OTTAVA_TASK ?? "", event, ctx);
