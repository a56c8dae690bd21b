// Builds JSONPath ASL from flows written as Octavia writes them: an ordered list of small named
// tasks, each with its revert. A failing step runs the reverts of itself and of every step before
// it, newest first (as TaskFlow reverts), then the flow's failure task, then fails the execution.
//
// The failed step: each step's Catch puts {Error, Cause} at $.error and goes to a Pass state
// `Catch<Step>` that writes the step's state name at $.failedStep (a literal Result) before the
// reverts, so the failure handler can record which state failed (the flow trail). An iteration of a
// Map that fails ends in a Fail state whose Cause is the JSON of the iteration's {failedStep, error}
// (Error "IterationFailed"), so the innermost failed state and its error are not lost.

export interface Step {
  /** State name; unique in the whole state machine. */
  name: string;
  /** Task handler name (one Lambda function each). */
  task: string;
  /** The task that undoes this step's work (run also when this step itself failed part-way). */
  revert?: string;
  /** Where the result goes in the state; null (the default) keeps the state as it was. */
  resultPath?: string | null;
  /** A loop: the step runs again while this boolean JSONPath of the state (after its result) is true. */
  loopWhile?: string;
  /** With loopWhile: a Wait state of this many seconds (a JSONPath of the state, after the result) comes before each run again. */
  loopWaitSecondsPath?: string;
}

export interface MapStep {
  name: string;
  /** JSONPath of the array to iterate. */
  itemsPath: string;
  /** The iteration's input: the item is `$$.Map.Item.Value`. */
  itemSelector: Record<string, string>;
  /** 1 runs the iterations one after the other (fail over one amphora at a time). */
  maxConcurrency: number;
  steps: Step[];
  resultPath?: string | null;
}

export interface FlowSpec {
  comment: string;
  steps: (Step | MapStep)[];
  /** Runs last on failure: leaves the resource in ERROR, never in PENDING_*. */
  onFailure: string;
  timeoutSeconds?: number;
}

/**
 * A change under the LB's lock: its steps, then `finishChange` (which writes the change set's end
 * states and releases the lock; `task` names it for a flow that notifies, tasks/notifications.ts) as
 * the state `finish`; on failure `failChange` (ERROR, lock released).
 */
export function lockedChangeFlow(comment: string, steps: (Step | MapStep)[], finish = "FinishChange", task = "finishChange"): FlowSpec {
  return { comment, steps: [...steps, { name: finish, task }], onFailure: "failChange" };
}

export type TaskArn = (task: string) => string;
type State = Record<string, unknown>;

/** Faults retried before a step counts as failed: Lambda's transient errors and our own. */
export const RETRY = [
  {
    ErrorEquals: [
      "Lambda.ServiceException",
      "Lambda.AWSLambdaException",
      "Lambda.SdkClientException",
      "Lambda.TooManyRequestsException",
      "TransientError",
      "DriverError",
    ],
    IntervalSeconds: 1,
    MaxAttempts: 2,
    BackoffRate: 2,
  },
];
/** Every Task state's TimeoutSeconds. */
export const TASK_TIMEOUT_SECONDS = 120;
/**
 * How much sooner a task's Lambda times out than its state (stacks/flows.ts sets the function's timeout
 * to TASK_FUNCTION_TIMEOUT_SECONDS). A slow task so ends as the Lambda's own error, which the state's
 * Retry and Catch handle (the reverts run), never as a state timeout while the Lambda still runs and
 * writes under the flow's lock after the flow has moved on.
 */
export const TASK_TIMEOUT_MARGIN_SECONDS = 10;
export const TASK_FUNCTION_TIMEOUT_SECONDS = TASK_TIMEOUT_SECONDS - TASK_TIMEOUT_MARGIN_SECONDS;

const isMap = (s: Step | MapStep): s is MapStep => "itemsPath" in s;
const resultPath = (p: string | null | undefined) => (p === undefined || p === null ? null : p);

export function buildDefinition(spec: FlowSpec, arn: TaskArn): Record<string, unknown> {
  const states: Record<string, State> = {};
  const first = chain(spec.steps, arn, states, "OnFailure");
  states.OnFailure = {
    Type: "Task",
    Resource: arn(spec.onFailure),
    ResultPath: null,
    Retry: RETRY,
    TimeoutSeconds: TASK_TIMEOUT_SECONDS,
    Catch: [{ ErrorEquals: ["States.ALL"], ResultPath: "$.onFailureError", Next: "Failed" }],
    Next: "Failed",
  };
  states.Failed = { Type: "Fail", Error: "FlowFailed", Cause: "A step of the flow failed; its reverts ran." };
  return { Comment: spec.comment, StartAt: first, TimeoutSeconds: spec.timeoutSeconds ?? 3600, States: states };
}

/** Adds the states of a step chain (and its revert chain) to `states`; answers the first state's name. */
function chain(steps: (Step | MapStep)[], arn: TaskArn, states: Record<string, State>, terminal: string): string {
  // revertTarget[i]: where a failure of step i goes: its own revert, else the nearest revert before it.
  const revertTarget: string[] = [];
  let below = terminal;
  steps.forEach((s, i) => {
    if (!isMap(s) && s.revert) {
      const name = `Revert${s.name}`;
      states[name] = {
        Type: "Task",
        Resource: arn(s.revert),
        ResultPath: null,
        Retry: RETRY,
        TimeoutSeconds: TASK_TIMEOUT_SECONDS,
        // A revert that fails is logged by its handler; the remaining reverts still run.
        Catch: [{ ErrorEquals: ["States.ALL"], ResultPath: "$.revertError", Next: below }],
        Next: below,
      };
      below = name;
    }
    revertTarget[i] = below;
  });
  steps.forEach((s, i) => {
    const next = steps[i + 1]?.name;
    const tail = next ? { Next: next } : { End: true };
    const caught = `Catch${s.name}`;
    if (states[caught]) throw new Error(`duplicate state name ${caught}`);
    states[caught] = { Type: "Pass", Result: s.name, ResultPath: "$.failedStep", Next: revertTarget[i] };
    const catcher = [{ ErrorEquals: ["States.ALL"], ResultPath: "$.error", Next: caught }];
    if (isMap(s)) {
      const inner: Record<string, State> = {};
      const start = chain(s.steps, arn, inner, `${s.name}IterationFailed`);
      // The iteration fails with Cause = JSON of {failedStep, error} (both set by the inner Catch path).
      inner[`${s.name}IterationFailed`] = {
        Type: "Pass",
        Parameters: { "failedStep.$": "$.failedStep", "error.$": "$.error" },
        ResultPath: "$.iterationFailure",
        Next: `${s.name}IterationCause`,
      };
      inner[`${s.name}IterationCause`] = {
        Type: "Pass",
        Parameters: { "cause.$": "States.JsonToString($.iterationFailure)" },
        ResultPath: "$.iterationFailure",
        Next: `${s.name}Failed`,
      };
      inner[`${s.name}Failed`] = { Type: "Fail", Error: "IterationFailed", CausePath: "$.iterationFailure.cause" };
      states[s.name] = {
        Type: "Map",
        ItemsPath: s.itemsPath,
        ItemSelector: s.itemSelector,
        MaxConcurrency: s.maxConcurrency,
        ItemProcessor: { ProcessorConfig: { Mode: "INLINE" }, StartAt: start, States: inner },
        ResultPath: resultPath(s.resultPath),
        Catch: catcher,
        ...tail,
      };
    } else {
      states[s.name] = {
        Type: "Task",
        Resource: arn(s.task),
        ResultPath: resultPath(s.resultPath),
        Retry: RETRY,
        TimeoutSeconds: TASK_TIMEOUT_SECONDS,
        Catch: catcher,
        ...(s.loopWhile ? { Next: `${s.name}Loop` } : tail),
      };
      if (s.loopWhile) {
        if (!next) states[`${s.name}Done`] = { Type: "Succeed" };
        states[`${s.name}Loop`] = {
          Type: "Choice",
          Choices: [{ Variable: s.loopWhile, BooleanEquals: true, Next: s.loopWaitSecondsPath ? `${s.name}Wait` : s.name }],
          Default: next ?? `${s.name}Done`,
        };
        if (s.loopWaitSecondsPath) states[`${s.name}Wait`] = { Type: "Wait", SecondsPath: s.loopWaitSecondsPath, Next: s.name };
      }
    }
  });
  return steps[0]!.name;
}

/** Every Task state's name and task, including those inside Map states. */
export function taskStates(definition: Record<string, unknown>, arnToTask: (arn: string) => string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (states: Record<string, State>) => {
    for (const [name, st] of Object.entries(states)) {
      if (st.Type === "Task") out.set(name, arnToTask(String(st.Resource)));
      const proc = (st.ItemProcessor ?? st.Iterator) as { States: Record<string, State> } | undefined;
      if (proc) walk(proc.States);
    }
  };
  walk(definition.States as Record<string, State>);
  return out;
}
