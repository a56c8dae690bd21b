// Task handlers by name: what each task Lambda (and the local runner) runs.
import * as amphorae from "./tasks/amphorae";
import type { TaskHandler } from "./tasks/context";
import { failChange, finishChange } from "./tasks/changes";
import * as loadbalancers from "./tasks/loadbalancers";
import * as crossPool from "./tasks/member-cross-pool";
import * as resize from "./tasks/resize";
import { HEALTHMANAGER_TASKS } from "./tasks/healthmanager";
import * as certRotate from "./tasks/cert-rotate";
import * as serverGroup from "./tasks/server-group";
import { handleNetworkDeltas, revertNetworkDeltas } from "./tasks/networks";

export const TASKS: Record<string, TaskHandler> = {
  ...amphorae,
  ...loadbalancers,
  finishChange,
  failChange,
  // The finishing tasks that notify (tasks/notifications.ts): finishChange under their own names, so
  // that only their functions send events (and may, on AWS).
  finishLoadBalancerCreate: finishChange,
  finishLoadBalancerUpdate: finishChange,
  finishLoadBalancerDelete: finishChange,
  finishResize: finishChange,
  ...crossPool,
  ...resize,
  ...HEALTHMANAGER_TASKS,
  ...certRotate,
  ...serverGroup,
  handleNetworkDeltas,
  revertNetworkDeltas,
};

export const taskOfArn = (arn: string) => {
  const m = /:function:task-([A-Za-z]+)$/.exec(arn);
  if (!m || !(m[1]! in TASKS)) throw new Error(`no task for resource ${arn}`);
  return m[1]!;
};
