// The WorkflowEngine port in process: the very ASL that deploys to AWS, run by aws-local-stepfunctions,
// each Task state calling the same handler its Lambda would. Idempotent by execution name, as
// Step Functions Standard workflows are; at most `concurrency` executions run at once.
//
// Durable as Step Functions is, through a journal (the ExecutionJournal port; `npm start` keeps it in
// the table): every execution is recorded when it starts (flow, name, input, RUNNING) and when it
// ends, and every task invocation it completes is recorded with its outcome (output, or the error it
// threw), keyed by state name, a hash of the task's input and how many times that (state, input) had
// been invoked before in the execution. aws-local-stepfunctions cannot resume a run, so a restarted
// runner (`resume()`) runs each RUNNING execution's ASL again from the start, with the same input and
// Execution context, and answers every task invocation the journal holds from the journal without
// running it (deterministic replay): the run takes the very path it took, Retry, Catch, Choice and Map
// iterations included, up to where the process stopped; only what was in flight then really runs
// again, which is safe because every task is idempotent (packages/controller/test/idempotency.test.ts).
//
// One file, long as it is: recording to the journal and replaying from it are woven into the run of an
// execution (each Task handler answers from the journal or runs and records), so they live with the engine.
import "./polyfill";
import { createHash } from "node:crypto";
import { StateMachine } from "aws-local-stepfunctions";
import type {
  ExecutionDescription,
  ExecutionJournal,
  ExecutionStatus,
  JournaledExecution,
  JournaledTask,
  Logger,
  WorkflowEngine,
} from "@ottava/core";
import { FLOW_NAMES, definitionOf, localTaskArn, runTask, taskOfArn, taskStates, type TaskContext } from "@ottava/controller";
import { MemoryExecutionJournal } from "./journal-memory";

type JSONValue = Parameters<StateMachine["run"]>[0];

/** One task invocation as the state machine makes it: the state's input in, the task's result out. */
export type TaskInvoke = (input: JSONValue) => Promise<JSONValue>;

/** Which task invocation a TaskDecorator wraps. */
export interface TaskCall {
  flow: string;
  /** The execution's name. */
  execution: string;
  /** The ASL state (unique in its state machine, Map iterations included). */
  state: string;
  /** The task (handler) the state runs. */
  task: string;
}

/** Wraps the real invocation of a task (tests only: run it twice, fail after it, count it). */
export type TaskDecorator = (call: TaskCall, invoke: TaskInvoke) => TaskInvoke;

export interface LocalWorkflowEngineOptions {
  /** Executions running at once (the rest queue). */
  concurrency?: number;
  /** Where executions and their task outcomes are recorded; in memory (nothing outlives the process) unless given. */
  journal?: ExecutionJournal;
  /** Tests only: wraps each task invocation below the journal, as a duplicate Lambda delivery would happen. `npm start` passes none. */
  decorateTask?: TaskDecorator;
  /** Tests only: milliseconds between a Task's retries instead of its Retry's IntervalSeconds and BackoffRate. */
  retryIntervalMs?: number;
}

/** How long an ended execution stays described (and its name taken), as Step Functions keeps closed executions. */
export const ENDED_EXECUTION_RETENTION_SECONDS = 7 * 24 * 3600;

interface Execution extends ExecutionDescription {
  flow: string;
  inputJson: string;
  done: Promise<void>;
  /** Settles once the start (its journal write) is over. */
  registered: Promise<void>;
}

interface Machine {
  machine: StateMachine;
  /** Task state name → task. */
  tasks: Map<string, string>;
}

export class ExecutionAlreadyExists extends Error {
  constructor(name: string) {
    super(`Execution Already Exists: '${name}'`);
    this.name = "ExecutionAlreadyExists";
  }
}

const ARN_PREFIX = "arn:aws:states:local:000000000000:execution:ottava-";
/** The longest execution output (JSON characters) the journal keeps. */
const OUTPUT_KEPT = 64 * 1024;

/** The hash of a task's input that keys its journal records. */
const inputHash = (input: unknown) =>
  createHash("sha256")
    .update(JSON.stringify(input ?? null))
    .digest("base64url")
    .slice(0, 22);

/** An error as the journal recorded it: the same name (what Retry and Catch match) and message. */
function recordedError(e: { name: string; message: string }): Error {
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}

export class LocalWorkflowEngine implements WorkflowEngine {
  private readonly machines = new Map<string, Machine>();
  private readonly executions = new Map<string, Execution>();
  private running = 0;
  private readonly queue: (() => void)[] = [];
  private readonly concurrency: number;
  private readonly journal: ExecutionJournal;
  private readonly opts: LocalWorkflowEngineOptions;
  /** Task invocations under way (running or being recorded). */
  private inFlight = 0;
  private paused = false;
  private readonly idle: (() => void)[] = [];

  constructor(
    private readonly ctx: TaskContext,
    private readonly log: Logger,
    options: number | LocalWorkflowEngineOptions = {},
  ) {
    this.opts = typeof options === "number" ? { concurrency: options } : options;
    this.concurrency = this.opts.concurrency ?? 16;
    this.journal = this.opts.journal ?? new MemoryExecutionJournal();
  }

  /** A flow's state machine, built on first use (constructing one validates the ASL: ~100 ms). */
  private machine(flow: string): Machine {
    let m = this.machines.get(flow);
    if (!m) {
      if (!FLOW_NAMES.includes(flow)) throw new Error(`unknown flow ${flow}`);
      const definition = definitionOf(flow, localTaskArn);
      m = {
        machine: new StateMachine(definition as never, { validationOptions: { checkArn: true } }),
        tasks: taskStates(definition, taskOfArn),
      };
      this.machines.set(flow, m);
    }
    return m;
  }

  executionArn(flow: string, name: string): string {
    return `${ARN_PREFIX}${flow}:${name}`;
  }

  async start(flow: string, name: string, input: Record<string, unknown>) {
    const executionArn = this.executionArn(flow, name);
    const inputJson = JSON.stringify(input);
    for (;;) {
      const existing = this.executions.get(executionArn);
      if (existing) {
        await existing.registered;
        if (this.executions.get(executionArn) !== existing) continue; // that start failed: try ours
        if (existing.inputJson !== inputJson) throw new ExecutionAlreadyExists(name);
        return { executionArn };
      }
      this.machine(flow);
      let registered!: () => void;
      const exec: Execution = {
        executionArn,
        flow,
        name,
        status: "RUNNING",
        input,
        inputJson,
        startDate: new Date(),
        done: Promise.resolve(),
        registered: new Promise((ok) => (registered = ok)),
      };
      this.executions.set(executionArn, exec);
      try {
        // Recorded before the start is answered: once the caller has it, the execution outlives this process.
        const prior = await this.journal.begin({
          flow,
          name,
          input: inputJson,
          status: "RUNNING",
          startDate: exec.startDate.toISOString(),
        });
        if (prior) {
          // Started before a restart: the same execution if the input is the same (Step Functions' rule).
          if (prior.input !== inputJson) throw new ExecutionAlreadyExists(name);
          Object.assign(exec, this.fromJournal(prior));
          if (prior.status === "RUNNING") exec.done = this.run(exec, await this.journal.tasks(flow, name));
        } else {
          exec.done = this.run(exec, undefined);
        }
      } catch (e) {
        this.executions.delete(executionArn);
        throw e;
      } finally {
        registered();
      }
      return { executionArn };
    }
  }

  async describe(executionArn: string): Promise<ExecutionDescription | undefined> {
    const e = this.executions.get(executionArn);
    if (e) {
      const { inputJson: _i, done: _d, registered: _r, flow: _f, ...description } = e;
      return { ...description };
    }
    // An execution of a previous run of this process (or of another runner on the same journal).
    if (!executionArn.startsWith(ARN_PREFIX)) return undefined;
    const rest = executionArn.slice(ARN_PREFIX.length);
    const colon = rest.indexOf(":");
    if (colon < 0) return undefined;
    const journaled = await this.journal.get(rest.slice(0, colon), rest.slice(colon + 1));
    if (!journaled) return undefined;
    const { inputJson: _i, flow: _f, ...description } = this.fromJournal(journaled);
    return description;
  }

  /** Resolves when the execution has ended (for the runtime's shutdown and for callers that wait). */
  async wait(executionArn: string): Promise<ExecutionDescription | undefined> {
    await this.executions.get(executionArn)?.done;
    return this.describe(executionArn);
  }

  /** Waits for every execution to end. */
  async drain(): Promise<void> {
    await Promise.all([...this.executions.values()].map((e) => e.done));
  }

  /**
   * Stops running tasks (for the process's stop): no task invocation starts from now on, and every
   * execution stays as far as its journal records it, to be continued by the next start (`resume()`).
   * Resolves once the invocations under way have ended and been recorded.
   */
  pause(): Promise<void> {
    this.paused = true;
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((ok) => this.idle.push(ok));
  }

  /**
   * Continues every execution the journal holds as RUNNING that this runner does not run (those of
   * a process that stopped): each is run again from the start with the same input, its recorded task
   * outcomes answered from the journal. Answers their names. Call it once at start, before anything
   * judges executions by describe() (housekeeping's stuck-state repair).
   */
  async resume(): Promise<string[]> {
    const resumed: string[] = [];
    for (const j of await this.journal.running()) {
      const executionArn = this.executionArn(j.flow, j.name);
      if (this.executions.has(executionArn)) continue;
      const exec: Execution = { ...this.fromJournal(j), executionArn, done: Promise.resolve(), registered: Promise.resolve() };
      this.executions.set(executionArn, exec);
      if (!FLOW_NAMES.includes(j.flow)) {
        this.log.error("execution of an unknown flow not resumed", { flow: j.flow, execution: j.name });
        exec.status = "FAILED";
        exec.error = "States.Runtime";
        exec.cause = `unknown flow ${j.flow}`;
        exec.stopDate = new Date();
        await this.journal.end(j.flow, j.name, this.endOf(exec), ENDED_EXECUTION_RETENTION_SECONDS, [
          ...(await this.journal.tasks(j.flow, j.name)).keys(),
        ]);
        continue;
      }
      exec.done = this.run(exec, await this.journal.tasks(j.flow, j.name));
      resumed.push(j.name);
    }
    if (resumed.length > 0) this.log.info("executions resumed", { count: resumed.length, executions: resumed });
    return resumed;
  }

  private fromJournal(j: JournaledExecution): Omit<Execution, "done" | "registered"> {
    const e: Omit<Execution, "done" | "registered"> = {
      executionArn: this.executionArn(j.flow, j.name),
      flow: j.flow,
      name: j.name,
      status: j.status,
      input: JSON.parse(j.input),
      inputJson: j.input,
      startDate: new Date(j.startDate),
    };
    if (j.stopDate !== undefined) e.stopDate = new Date(j.stopDate);
    if (j.output !== undefined) e.output = JSON.parse(j.output);
    if (j.error !== undefined) e.error = j.error;
    if (j.cause !== undefined) e.cause = j.cause;
    return e;
  }

  private endOf(exec: Execution): Pick<JournaledExecution, "status" | "stopDate" | "output" | "error" | "cause"> {
    const end: Pick<JournaledExecution, "status" | "stopDate" | "output" | "error" | "cause"> = {
      status: exec.status,
      stopDate: (exec.stopDate ?? new Date()).toISOString(),
    };
    // The output is kept while it is small: with the input it must fit one item (400 KB), and nothing reads it but describe().
    const output = exec.status === "SUCCEEDED" ? JSON.stringify(exec.output ?? null) : undefined;
    if (output !== undefined && output.length <= OUTPUT_KEPT) end.output = output;
    if (exec.error !== undefined) end.error = exec.error;
    if (exec.cause !== undefined) end.cause = exec.cause;
    return end;
  }

  /**
   * The Task states' handlers of one run of an execution: each answers from `recorded` (the journal,
   * when the run continues a previous one) or invokes the task and records its outcome before
   * answering it.
   */
  private handlers(
    exec: Execution,
    m: Machine,
    recorded: Map<string, JournaledTask>,
    counts: { replayed: number; keys: Set<string> },
  ): Record<string, TaskInvoke> {
    const seen = new Map<string, number>();
    const out: Record<string, TaskInvoke> = {};
    for (const [state, task] of m.tasks) {
      const real: TaskInvoke = async (input) => ((await runTask(task, input as never, this.ctx)) ?? null) as JSONValue;
      const invoke = this.opts.decorateTask ? this.opts.decorateTask({ flow: exec.flow, execution: exec.name, state, task }, real) : real;
      out[state] = async (input) => {
        // The n-th invocation of this state with this input in the execution (retries and loops repeat one).
        const base = `${state}#${inputHash(input)}`;
        const n = seen.get(base) ?? 0;
        seen.set(base, n + 1);
        const key = `${base}#${n}`;
        const prior = recorded.get(key);
        if (prior) {
          counts.replayed++;
          if ("output" in prior) return JSON.parse(prior.output) as JSONValue;
          throw recordedError(prior.error);
        }
        if (this.paused) return new Promise<JSONValue>(() => {}); // stopping: the next start continues from here
        this.inFlight++;
        try {
          return await this.invokeAndRecord(exec, key, invoke, input, counts.keys);
        } finally {
          if (--this.inFlight === 0 && this.paused) for (const ok of this.idle.splice(0)) ok();
        }
      };
    }
    return out;
  }

  /** Runs one task invocation and records its outcome before answering it. */
  private async invokeAndRecord(exec: Execution, key: string, invoke: TaskInvoke, input: JSONValue, keys: Set<string>): Promise<JSONValue> {
    let result: JSONValue = null;
    let failed = false;
    let failure: unknown;
    let outcome: JournaledTask;
    try {
      result = await invoke(input);
      outcome = { output: JSON.stringify(result ?? null) };
    } catch (e) {
      failed = true;
      failure = e;
      const err = e as Error;
      outcome = { error: { name: err?.name ?? "Error", message: err?.message ?? String(e) } };
    }
    try {
      await this.journal.recordTask(exec.flow, exec.name, key, outcome);
      keys.add(key);
    } catch (e) {
      if (failed) throw failure;
      // The task's work is done but not recorded: retried as a transient failure (tasks are idempotent).
      const err = new Error(`the task's outcome could not be journaled: ${e instanceof Error ? e.message : String(e)}`);
      err.name = "TransientError";
      throw err;
    }
    if (failed) throw failure;
    return result;
  }

  private async run(exec: Execution, recorded: Map<string, JournaledTask> | undefined) {
    await this.acquire();
    const log = this.log.child({ flow: exec.flow, execution: exec.name });
    // The task records of the execution (those read and those written), which its end removes.
    const counts = { replayed: 0, keys: new Set(recorded?.keys() ?? []) };
    if (recorded) log.info("execution resumed", { recorded: recorded.size, startedAt: exec.startDate.toISOString() });
    else log.info("execution started");
    try {
      const m = this.machine(exec.flow);
      const retryIntervalOverrides =
        this.opts.retryIntervalMs === undefined
          ? undefined
          : Object.fromEntries([...m.tasks.keys()].map((s) => [s, this.opts.retryIntervalMs!]));
      const run = m.machine.run(exec.input as JSONValue, {
        overrides: {
          taskResourceLocalHandlers: this.handlers(exec, m, recorded ?? new Map(), counts),
          ...(retryIntervalOverrides ? { retryIntervalOverrides } : {}),
        },
        context: {
          Execution: { Id: exec.executionArn, Name: exec.name, Input: exec.input as never, StartTime: exec.startDate.toISOString() },
        } as never,
      });
      exec.output = await run.result;
      exec.status = "SUCCEEDED";
      log.info("execution succeeded", { ms: Date.now() - exec.startDate.getTime(), ...(recorded ? { replayed: counts.replayed } : {}) });
    } catch (e) {
      const err = e as Error & { cause?: unknown };
      exec.status = (
        err.name === "ExecutionTimeoutError" ? "TIMED_OUT" : err.name === "ExecutionAbortedError" ? "ABORTED" : "FAILED"
      ) satisfies ExecutionStatus;
      exec.error = err.name;
      exec.cause = err.message;
      log.warn("execution failed", {
        status: exec.status,
        error: err.name,
        cause: err.message,
        ...(recorded ? { replayed: counts.replayed } : {}),
      });
    } finally {
      exec.stopDate = new Date();
      try {
        await this.journal.end(exec.flow, exec.name, this.endOf(exec), ENDED_EXECUTION_RETENTION_SECONDS, [...counts.keys]);
        // Ended and journaled: describe() and a start of the same name answer from the journal, so the
        // process holds only what runs (it would otherwise grow with every flow it ever ran).
        this.executions.delete(exec.executionArn);
      } catch (e) {
        // Still RUNNING in the journal: the next start runs it again, answered wholly from its records.
        log.error("execution end not journaled", { status: exec.status, error: String(e) });
      }
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.running < this.concurrency) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.queue.push(resolve));
  }

  private release() {
    const next = this.queue.shift();
    if (next) next();
    else this.running--;
  }
}
