// The tasks that send event notifications (their events: tasks/notifications.ts). Pure, as the rest of
// flows/: the deployment (stacks/events.ts) gives only these tasks' functions the bus and
// events:PutEvents on it.
export const NOTIFYING_TASKS = [
  "finishLoadBalancerCreate",
  "finishLoadBalancerUpdate",
  "finishLoadBalancerDelete",
  "resizeStart",
  "finishResize",
  "resizeFail",
  "finishCrossPoolChange",
] as const;
export type NotifyingTask = (typeof NOTIFYING_TASKS)[number];
export const notifies = (task: string): task is NotifyingTask => (NOTIFYING_TASKS as readonly string[]).includes(task);
