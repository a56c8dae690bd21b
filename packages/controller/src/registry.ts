// Every flow and every task, by name: what the local runner runs and what stacks/ deploys.
import { buildDefinition, type FlowSpec, type TaskArn } from "./flows/builder";
import { loadBalancerCreate } from "./flows/loadbalancer-create";
import { loadBalancerDelete } from "./flows/loadbalancer-delete";
import { loadBalancerFailover } from "./flows/loadbalancer-failover";
import { loadBalancerUpdate } from "./flows/loadbalancer-update";
import * as amphorae from "./tasks/amphorae";
import type { TaskHandler } from "./tasks/context";
import * as loadbalancers from "./tasks/loadbalancers";

export const FLOWS = {
  "loadbalancer-create": loadBalancerCreate,
  "loadbalancer-update": loadBalancerUpdate,
  "loadbalancer-delete": loadBalancerDelete,
  "loadbalancer-failover": loadBalancerFailover,
} satisfies Record<string, FlowSpec>;
export type FlowName = keyof typeof FLOWS;
export const FLOW_NAMES = Object.keys(FLOWS) as FlowName[];

export const TASKS: Record<string, TaskHandler> = { ...amphorae, ...loadbalancers };
export const TASK_NAMES = Object.keys(TASKS);

/** The ASL of a flow, with each task's Lambda ARN filled in by `arn`. */
export function definitionOf(flow: FlowName, arn: TaskArn): Record<string, unknown> {
  return buildDefinition(FLOWS[flow], arn);
}

/** Function names of the task Lambdas, and the placeholder ARNs the local runner resolves. */
export const taskFunctionName = (task: string) => `task-${task}`;
export const localTaskArn: TaskArn = (task) => `arn:aws:lambda:us-east-1:000000000000:function:${taskFunctionName(task)}`;
export const taskOfArn = (arn: string) => {
  const m = /:function:task-([A-Za-z]+)$/.exec(arn);
  if (!m || !(m[1]! in TASKS)) throw new Error(`no task for resource ${arn}`);
  return m[1]!;
};
