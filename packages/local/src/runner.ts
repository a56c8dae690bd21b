// The WorkflowEngine port in process: the very ASL that deploys to AWS, run by aws-local-stepfunctions,
// each Task state calling the same handler its Lambda would. Idempotent by execution name, as
// Step Functions Standard workflows are; at most `concurrency` executions run at once.
import "./polyfill";
import { StateMachine } from "aws-local-stepfunctions";
import type { ExecutionDescription, Logger, WorkflowEngine } from "@ottava/core";
import { FLOW_NAMES, definitionOf, localTaskArn, runTask, taskOfArn, taskStates, type TaskContext } from "@ottava/controller";

type JSONValue = Parameters<StateMachine["run"]>[0];

interface Execution extends ExecutionDescription {
  inputJson: string;
  done: Promise<void>;
}

export class ExecutionAlreadyExists extends Error {
  constructor(name: string) {
    super(`Execution Already Exists: '${name}'`);
    this.name = "ExecutionAlreadyExists";
  }
}

export class LocalWorkflowEngine implements WorkflowEngine {
  private readonly machines = new Map<string, { machine: StateMachine; handlers: Record<string, (i: JSONValue) => Promise<JSONValue>> }>();
  private readonly executions = new Map<string, Execution>();
  private running = 0;
  private readonly queue: (() => void)[] = [];

  constructor(
    private readonly ctx: TaskContext,
    private readonly log: Logger,
    private readonly concurrency = 16,
  ) {}

  /** A flow's state machine, built on first use (constructing one validates the ASL: ~100 ms). */
  private machine(flow: string) {
    let m = this.machines.get(flow);
    if (!m) {
      if (!FLOW_NAMES.includes(flow)) throw new Error(`unknown flow ${flow}`);
      const definition = definitionOf(flow, localTaskArn);
      const handlers: Record<string, (i: JSONValue) => Promise<JSONValue>> = {};
      for (const [state, task] of taskStates(definition, taskOfArn)) {
        handlers[state] = async (input) => ((await runTask(task, input as never, this.ctx)) ?? null) as JSONValue;
      }
      m = { machine: new StateMachine(definition as never, { validationOptions: { checkArn: true } }), handlers };
      this.machines.set(flow, m);
    }
    return m;
  }

  executionArn(flow: string, name: string): string {
    return `arn:aws:states:local:000000000000:execution:ottava-${flow}:${name}`;
  }

  async start(flow: string, name: string, input: Record<string, unknown>) {
    const executionArn = this.executionArn(flow, name);
    const inputJson = JSON.stringify(input);
    const existing = this.executions.get(executionArn);
    if (existing) {
      if (existing.inputJson !== inputJson) throw new ExecutionAlreadyExists(name);
      return { executionArn };
    }
    const m = this.machine(flow);
    const exec: Execution = { executionArn, name, status: "RUNNING", input, inputJson, startDate: new Date(), done: Promise.resolve() };
    this.executions.set(executionArn, exec);
    exec.done = this.run(flow, exec, m);
    return { executionArn };
  }

  async describe(executionArn: string): Promise<ExecutionDescription | undefined> {
    const e = this.executions.get(executionArn);
    if (!e) return undefined;
    const { inputJson: _i, done: _d, ...description } = e;
    return { ...description };
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

  private async run(flow: string, exec: Execution, m: { machine: StateMachine; handlers: Record<string, (i: JSONValue) => Promise<JSONValue>> }) {
    await this.acquire();
    const log = this.log.child({ flow, execution: exec.name });
    log.info("execution started");
    try {
      const run = m.machine.run(exec.input as JSONValue, {
        overrides: { taskResourceLocalHandlers: m.handlers },
        context: {
          Execution: { Id: exec.executionArn, Name: exec.name, Input: exec.input as never, StartTime: exec.startDate.toISOString() },
        } as never,
      });
      exec.output = await run.result;
      exec.status = "SUCCEEDED";
      log.info("execution succeeded", { ms: Date.now() - exec.startDate.getTime() });
    } catch (e) {
      const err = e as Error & { cause?: unknown };
      exec.status = err.name === "ExecutionTimeoutError" ? "TIMED_OUT" : err.name === "ExecutionAbortedError" ? "ABORTED" : "FAILED";
      exec.error = err.name;
      exec.cause = err.message;
      log.warn("execution failed", { status: exec.status, error: err.name, cause: err.message });
    } finally {
      exec.stopDate = new Date();
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
