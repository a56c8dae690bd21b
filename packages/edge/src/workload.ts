// Which part of Ottava a request to AWS is made for: a task function (its OTTAVA_TASK name), the API
// ("api"), a housekeeping job (its schedule's name: "SweepOrphans", ...) or the health manager
// ("health-manager"). Every AWS call the product signs carries it in its User-Agent (`ottava/<workload>`),
// which CloudTrail shows as the event's userAgent: an operator sees which function made a call, and the
// test bed attributes each recorded call to its workload (test/support/aws-calls.ts) to check the IAM
// grants against. One process may run several (npm start runs the API, every task and the jobs), and
// they share their AWS clients: so the workload is the asynchronous context's, not the client's.
import { AsyncLocalStorage } from "node:async_hooks";

const current = new AsyncLocalStorage<string>();

/** Runs `fn` as `workload`: the AWS calls it makes, however deep, say so. */
export const asWorkload = <T>(workload: string, fn: () => T): T => current.run(workload, fn);

/** The workload of the running code, if any. */
export const workload = (): string | undefined => current.getStore();

/** The User-Agent product token of the running workload: `ottava/<workload>`, or `ottava` outside any. */
export const workloadUserAgent = (): string => {
  const w = workload();
  return w ? `ottava/${w}` : "ottava";
};
