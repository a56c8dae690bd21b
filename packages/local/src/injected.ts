// npm start's injected faults and latency, for tests and demonstrations: OTTAVA_NOOP_FAULTS,
// OTTAVA_NOOP_LATENCY and OTTAVA_DYNAMODB_FAULTS. Settings of npm start only (and of the tests' in-process
// app): read here, not by loadConfig, so that no AWS workload is given them; the machinery they plug in
// comes from the testing side of amphora and db (@ottava/amphora/testing/noop-faults,
// @ottava/db/testing/faults), which no Lambda bundle carries.
import type { Drivers } from "@ottava/core";
import type { ClientDecorator } from "@ottava/db";
import { noopDriversWith } from "@ottava/amphora/testing/noop-faults";
import { DynamoFaults, addFaults, withFaultLabel } from "@ottava/db/testing/faults";
import type { TaskDecorator, TaskInvoke } from "./runner";

export interface Injected {
  /** OTTAVA_NOOP_FAULTS and OTTAVA_NOOP_LATENCY: the no-op drivers with them; undefined when neither is set. */
  noopDrivers: Drivers | undefined;
  /** OTTAVA_DYNAMODB_FAULTS: the faults the stores' DynamoDB client meets, with what went through; undefined when unset. */
  dynamoFaults: DynamoFaults | undefined;
}

/** Reads the three settings; one it does not understand throws, naming the setting and the rule (npm start does not start). */
export function readInjected(env: Record<string, string | undefined>): Injected {
  const noopFaults = env.OTTAVA_NOOP_FAULTS?.trim() ?? "";
  const noopLatency = env.OTTAVA_NOOP_LATENCY?.trim() ?? "";
  const dynamodbFaults = env.OTTAVA_DYNAMODB_FAULTS?.trim() ?? "";
  return {
    noopDrivers: noopFaults || noopLatency ? noopDriversWith(noopFaults, noopLatency) : undefined,
    dynamoFaults: dynamodbFaults ? new DynamoFaults(dynamodbFaults) : undefined,
  };
}

/** What the stores' client is given: the injected DynamoDB faults (if any), then `decorate` (a meter). */
export function storesDecorator(faults: DynamoFaults | undefined, decorate: ClientDecorator | undefined): ClientDecorator | undefined {
  if (!faults) return decorate;
  return (client) => {
    addFaults(client, faults);
    decorate?.(client);
  };
}

/**
 * What the runner is given: with injected DynamoDB faults, each task runs with its requests labelled
 * with its name (for the rules that name a task, `GetItem@finishChange:…`), then `decorate` (a test's).
 */
export function taskDecorator(faults: DynamoFaults | undefined, decorate: TaskDecorator | undefined): TaskDecorator | undefined {
  if (!faults) return decorate;
  return (call, invoke) => {
    const labelled: TaskInvoke = (input) => withFaultLabel(call.task, () => invoke(input));
    return decorate ? decorate(call, labelled) : labelled;
  };
}
