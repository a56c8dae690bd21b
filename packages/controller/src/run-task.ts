// Runs one task with its structured log lines (task, LB, execution), the same on Lambda and locally.
import { TASKS } from "./registry";
import type { FlowInput, TaskContext } from "./tasks/context";

export async function runTask(task: string, input: FlowInput & Record<string, unknown>, ctx: TaskContext): Promise<unknown> {
  const handler = TASKS[task];
  if (!handler) throw new Error(`unknown task ${task}`);
  const log = ctx.log.child({ task, lbId: input.lbId, execution: input.owner });
  const started = Date.now();
  try {
    const out = await handler(input, { ...ctx, log });
    log.debug("task done", { ms: Date.now() - started });
    return out;
  } catch (e) {
    const err = e as Error;
    log.warn("task failed", { error: err.name, cause: err.message, ms: Date.now() - started });
    throw e;
  }
}
