import { Fault } from "../../src";

/** The Fault `fn` throws, as [status, message]; undefined when it throws none (anything else it throws is thrown on). */
export function faultOf(fn: () => unknown): [number, string] | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof Fault) return [e.status, e.message];
    throw e;
  }
  return undefined;
}
