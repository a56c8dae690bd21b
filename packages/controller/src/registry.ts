// Task handlers by name: what each task Lambda (and the local runner) runs.
import * as amphorae from "./tasks/amphorae";
import type { TaskHandler } from "./tasks/context";
import * as changes from "./tasks/changes";
import * as loadbalancers from "./tasks/loadbalancers";
// TASK-IMPORT:crosspool
// TASK-IMPORT:resize
// TASK-IMPORT:healthmanager

export const TASKS: Record<string, TaskHandler> = {
  ...amphorae,
  ...loadbalancers,
  ...changes,
  // TASKS:crosspool
  // TASKS:resize
  // TASKS:healthmanager
};

export const taskOfArn = (arn: string) => {
  const m = /:function:task-([A-Za-z]+)$/.exec(arn);
  if (!m || !(m[1]! in TASKS)) throw new Error(`no task for resource ${arn}`);
  return m[1]!;
};
