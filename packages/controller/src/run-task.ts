// Runs one task with its structured log lines (task, LB, execution), the same on Lambda and locally.
// Before anything else it checks that the execution still holds the LB's lock: a stale or duplicate
// execution must not touch the cloud either, so its forward tasks fail and its reverts do nothing.
// An error of DynamoDB (or another service) being unavailable, once the SDK's own retries are spent,
// leaves as TransientError, which the flow's Retry retries (flows/builder.ts) before its Catch.
// A flow's finishing task run again after it released the lock (the LB's execution_arn still names
// this execution) has nothing left to do: it answers as it did, so a retried or duplicated finish
// cannot turn a finished flow into a failed one; a notifying task (tasks/notifications.ts) sends its
// events again then, with the same message ids, so none is lost to a failure after the release.
import { LockLost, TransientError, isUnavailable, unavailableReason } from "@ottava/core";
import { asWorkload } from "@ottava/edge";
import { COMPENSATION_TASKS, FINISHING_TASKS } from "./flows";
import { TASKS } from "./registry";
import { notifyingOf, sendEvents } from "./tasks/notifications";
import type { FlowInput, TaskContext } from "./tasks/context";

/** Runs `task` as its workload (@ottava/edge asWorkload): its AWS calls name the task in their User-Agent, in its own function or in npm start's one process. */
export const runTask = (task: string, input: FlowInput & Record<string, unknown>, ctx: TaskContext): Promise<unknown> =>
  asWorkload(task, () => runTaskAs(task, input, ctx));

async function runTaskAs(task: string, input: FlowInput & Record<string, unknown>, ctx: TaskContext): Promise<unknown> {
  const handler = TASKS[task];
  if (!handler) throw new Error(`unknown task ${task}`);
  const log = ctx.log.child({ task, lbId: input.lbId, execution: input.owner });
  const started = Date.now();
  try {
    // Flows that take no lock (amphora agent config, amphora delete) carry no owner.
    const lb = input.owner === undefined ? undefined : await ctx.store.getLoadBalancer(input.lbId);
    if (input.owner !== undefined && lb?.lockOwner !== input.owner) {
      const releasedByThis = lb && lb.lockOwner === undefined && lb.executionArn?.endsWith(`:${input.owner}`);
      if (releasedByThis && notifyingOf(task)?.afterRelease) {
        log.info("the flow has already ended: its lock was released by this execution; its events are sent again", {
          status: lb.record.provisioning_status,
        });
        await sendEvents(task, input, { ...ctx, log });
        return null;
      }
      if (COMPENSATION_TASKS.has(task)) {
        log.warn("execution does not hold the lock; nothing to undo", { holder: lb?.lockOwner ?? null });
        return null;
      }
      if (FINISHING_TASKS.has(task) && releasedByThis) {
        log.info("the flow has already ended: its lock was released by this execution; nothing to do", {
          status: lb.record.provisioning_status,
        });
        return null;
      }
      throw new LockLost(`load balancer ${input.lbId} is locked by ${lb?.lockOwner ?? "nobody"}`);
    }
    const out = await handler(input, { ...ctx, log });
    await sendEvents(task, input, { ...ctx, log });
    log.debug("task done", { ms: Date.now() - started });
    return out;
  } catch (e) {
    const err = e as Error & { $metadata?: { attempts?: number } };
    if (isUnavailable(e)) {
      const reason = unavailableReason(e);
      log.warn("task failed: service unavailable; the flow retries it", {
        error: reason,
        cause: err.message,
        attempts: err.$metadata?.attempts,
        ms: Date.now() - started,
      });
      throw new TransientError(`${reason}: ${err.message}`);
    }
    log.warn("task failed", { error: err.name, cause: err.message, ms: Date.now() - started });
    throw e;
  }
}
