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
