// Every flow by name, and its ASL. Pure (no task code): the deployment (stacks/) imports this module as
// `@ottava/controller/flows` to deploy the same ASL, with each task function's timeout and secrets.
import { buildDefinition, type FlowSpec, type MapStep, type Step, type TaskArn } from "./builder";
import { loadBalancerCreate } from "./loadbalancer-create";
import { loadBalancerDelete } from "./loadbalancer-delete";
import { loadBalancerFailover } from "./loadbalancer-failover";
import { loadBalancerUpdate } from "./loadbalancer-update";
import { CHILD_FLOWS } from "./children";
import { amphoraConfig, amphoraDelete, amphoraFailover, amphoraVipPromote } from "./amphora";
import { memberCrossPoolUpdate } from "./member-cross-pool";
import { loadBalancerResize } from "./loadbalancer-resize";
import { healthManagerRefresh } from "./healthmanager-refresh";
import { amphoraCertRotate } from "./amphora-cert-rotate";

export { TASK_FUNCTION_TIMEOUT_SECONDS } from "./builder";
export * from "./task-secrets";
export * from "./notifying";

export const FLOWS: Record<string, FlowSpec> = {
  "loadbalancer-create": loadBalancerCreate,
  "loadbalancer-update": loadBalancerUpdate,
  "loadbalancer-delete": loadBalancerDelete,
  "loadbalancer-failover": loadBalancerFailover,
  "amphora-failover": amphoraFailover,
  "amphora-config": amphoraConfig,
  "amphora-delete": amphoraDelete,
  "amphora-vip-promote": amphoraVipPromote,
  ...CHILD_FLOWS,
  "member-cross-pool-update": memberCrossPoolUpdate,
  "loadbalancer-resize": loadBalancerResize,
  "healthmanager-refresh": healthManagerRefresh,
  "amphora-cert-rotate": amphoraCertRotate,
};
export type FlowName = string;
export const FLOW_NAMES = Object.keys(FLOWS) as FlowName[];

/** The ASL of a flow, with each task's Lambda ARN filled in by `arn`. */
export function definitionOf(flow: FlowName, arn: TaskArn): Record<string, unknown> {
  const spec = FLOWS[flow];
  if (!spec) throw new Error(`unknown flow ${flow}`);
  return buildDefinition(spec, arn);
}

/** Every task a flow calls (its steps, reverts and failure handler). */
export function tasksOf(flow: FlowName): string[] {
  const spec = FLOWS[flow]!;
  const out = new Set<string>([spec.onFailure]);
  const walk = (steps: (Step | MapStep)[]) => {
    for (const s of steps) {
      if ("itemsPath" in s) walk(s.steps);
      else {
        out.add(s.task);
        if (s.revert) out.add(s.revert);
      }
    }
  };
  walk(spec.steps);
  return [...out];
}

/** Tasks that undo work (reverts and failure handlers): a stale execution skips them instead of failing. */
export const COMPENSATION_TASKS = new Set(
  FLOW_NAMES.flatMap((flow) => {
    const out = [FLOWS[flow]!.onFailure];
    const walk = (steps: (Step | MapStep)[]) => steps.forEach((s) => ("itemsPath" in s ? walk(s.steps) : s.revert && out.push(s.revert)));
    walk(FLOWS[flow]!.steps);
    return out;
  }),
);

/**
 * Tasks that end a flow (each flow's last step): in a locked flow they release the lock. Run again
 * once they have (a retry after a failure that came after their writes, a duplicate delivery, or the
 * local runner continuing an execution whose last task was in flight), they find the lock released by
 * their own execution and have nothing left to do (run-task.ts).
 */
export const FINISHING_TASKS = new Set(
  FLOW_NAMES.flatMap((flow) => {
    const last = FLOWS[flow]!.steps.at(-1);
    return last && !("itemsPath" in last) ? [last.task] : [];
  }),
);

/** Every task any flow calls: one Lambda function each. */
export const FLOW_TASKS = [...new Set(FLOW_NAMES.flatMap(tasksOf))].sort();

/** Function name of a task's Lambda, and the placeholder ARNs the local runner resolves. */
export const taskFunctionName = (task: string) => `task-${task}`;
export const localTaskArn: TaskArn = (task) => `arn:aws:lambda:us-east-1:000000000000:function:${taskFunctionName(task)}`;
