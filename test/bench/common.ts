// What the benchmarks share: their command-line options (after `npm run bench:<name> --`), a pause, percentiles, the checks they print, and how much slower this machine is than the one their time budgets were set on.
// They run under plain node (tsx): nothing here loads vitest (@ottava/*/testing does).
import { subscribe } from "node:diagnostics_channel";
import type { TaskDecorator } from "@ottava/local";

/** The VIP subnet of the benchmarks' load balancers (the tests' SUBNET, @ottava/core/testing; the noop network driver takes any). */
export const SUBNET = "5e6b7c5a-0b7e-4a0e-9d36-1f5b2f3a6a11";

/** `npm start --in-memory`'s settings for a bench's stack in process, but for a free port, errors only, and the background jobs' timers an hour and more away. */
export const benchStackSettings = (dynamodbEndpoint: string): Record<string, string> => ({
  OTTAVA_DYNAMODB_ENDPOINT: dynamodbEndpoint,
  OTTAVA_BIND_PORT: "0",
  OTTAVA_HEARTBEAT_PORT: "0",
  OTTAVA_LOG_LEVEL: "error",
  OTTAVA_HEALTH_CHECK_INTERVAL: "3600",
  OTTAVA_CLEANUP_INTERVAL: "3600",
  OTTAVA_CERT_INTERVAL: "86400",
});

/** The value of `--name value` or `--name=value`; undefined when not given. */
export function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i >= 0) return process.argv[i + 1];
  const eq = process.argv.find((a) => a.startsWith(`--${name}=`));
  return eq?.slice(name.length + 3);
}

/** Whether `--name` is given. */
export const flag = (name: string) => process.argv.includes(`--${name}`);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The listeners of a fully populated load balancer create: `pools` HTTP listener/pool pairs (listener-i
 * on port 8000 + i, its default pool pool-i, round robin), pool i with the members `membersOf(i)`.
 */
export const listenersWithPools = (pools: number, membersOf: (i: number) => { address: string; protocol_port: number }[]) =>
  Array.from({ length: pools }, (_, i) => ({
    name: `listener-${i}`,
    protocol: "HTTP",
    protocol_port: 8000 + i,
    default_pool: { name: `pool-${i}`, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", members: membersOf(i) },
  }));

/** The q-th quantile (0..1) of `xs`, nearest rank; NaN for none. */
export const pct = (xs: number[] | undefined, q: number) => {
  if (!xs?.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
};

/**
 * A check a benchmark makes of its figures. A budget fails the run when it is missed; a retired target
 * (`retired`: why it is no longer enforced) is still measured and printed with its figure and ratio, but
 * never fails the run.
 */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  retired?: string;
}

/** The checks as lines (`PASS`, `FAIL`, or `INFO` for a retired target), then a summary; `missed` counts the budgets missed. */
export function checkLines(checks: Check[], noun = "budgets"): { lines: string[]; missed: number } {
  const lines = checks.map((c) =>
    c.retired
      ? `  INFO  ${c.name} (retired: ${c.retired}; ${c.ok ? "met" : "not met"}): ${c.detail}`
      : `  ${c.ok ? "PASS" : "FAIL"}  ${c.name}: ${c.detail}`,
  );
  const enforced = checks.filter((c) => !c.retired);
  const missed = enforced.filter((c) => !c.ok).length;
  lines.push("", missed ? `${missed} of ${enforced.length} ${noun} missed.` : `All ${enforced.length} ${noun} met.`);
  return { lines, missed };
}

/** DynamoDB Local's transactional write, ms, on the machine the benchmarks' time budgets were set on (docs/benchmarks.md). */
export const REFERENCE_WRITE_MS = 0.55;

const TRANSACTIONS_A_ROUND = 10;
const UPDATES_A_TRANSACTION = 100;

/**
 * What a transactional write costs DynamoDB Local on this machine, ms: on a DynamoDB Local of its own
 * with the table's indexes, transactions of 100 updates of small items (as the flows' change sets write),
 * five untimed rounds (DynamoDB Local's JIT warms up), then the median of 15 rounds of 10 transactions: a
 * round takes about a second here and varies by ±30% idle, so the median of a longer window resists a slow
 * spell (five rounds once answered 2.15 ms on a machine that answers 0.95–1.3 ms idle).
 */
async function transactionalWriteMs(): Promise<number> {
  // Imported here: a benchmark sets its environment (POWERTOOLS_METRICS_DISABLED) before the packages load.
  const [{ mkdtempSync, rmSync }, { tmpdir }, { join }, { TransactWriteCommand }, { createClients, ensureTable }, { startDynamoDbLocal }] =
    await Promise.all([
      import("node:fs"),
      import("node:os"),
      import("node:path"),
      import("@aws-sdk/lib-dynamodb"),
      import("@ottava/db"),
      import("@ottava/local/dynamodb-local"),
    ]);
  const dir = mkdtempSync(join(tmpdir(), "ottava-bench-calibration-"));
  const dynamo = await startDynamoDbLocal({ inMemory: true, dataDir: dir });
  try {
    const { client, doc } = createClients(dynamo.endpoint);
    await ensureTable(client, "calibration");
    const rounds: number[] = [];
    for (let round = -5; round < 15; round++) {
      const t0 = performance.now();
      for (let t = 0; t < TRANSACTIONS_A_ROUND; t++) {
        const TransactItems = Array.from({ length: UPDATES_A_TRANSACTION }, (_, k) => ({
          Update: {
            TableName: "calibration",
            Key: { pk: `CAL#${k}`, sk: "CAL" },
            UpdateExpression: "SET #v = :v",
            ExpressionAttributeNames: { "#v": "v" },
            ExpressionAttributeValues: { ":v": `${round}.${t}` },
          },
        }));
        await doc.send(new TransactWriteCommand({ TransactItems }));
      }
      if (round >= 0) rounds.push((performance.now() - t0) / (TRANSACTIONS_A_ROUND * UPDATES_A_TRANSACTION));
    }
    client.destroy();
    return pct(rounds, 0.5);
  } finally {
    await dynamo.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * How much slower this machine is than the one the time budgets were set on: its transactional write's
 * cost over REFERENCE_WRITE_MS. The benchmarks' absolute time budgets are multiplied by it, so that they
 * mean the same on a faster or a slower machine (what they time is mostly DynamoDB Local's and the SDK's
 * work); answers a line saying so, to print.
 */
export async function machineScale(): Promise<{ scale: number; line: string }> {
  const writeMs = await transactionalWriteMs();
  const scale = writeMs / REFERENCE_WRITE_MS;
  return {
    scale,
    line: `DynamoDB Local here: ${writeMs.toFixed(2)} ms a transactional write (${REFERENCE_WRITE_MS} ms where the time budgets were set): time budgets × ${scale.toFixed(2)}`,
  };
}

// ---- what the cost model counts besides DynamoDB: the API's server time, state transitions, task time ----

/** A flow's use of Step Functions and of the task Lambdas. */
export interface FlowUse {
  executions: number;
  /** State transitions as Step Functions Standard bills them: states entered, and retries. */
  transitions: number;
  /** Task invocations (each a Lambda invocation on AWS), their time and their time rounded up per invocation to the ms (as Lambda bills). */
  tasks: number;
  taskMs: number;
  taskBilledMs: number;
}

export const noFlowUse = (): FlowUse => ({ executions: 0, transitions: 0, tasks: 0, taskMs: 0, taskBilledMs: 0 });

/**
 * Times every request the process's HTTP servers answer (node:http's diagnostics channels), from its
 * arrival to the end of its response: an API Lambda's duration. Each is pushed into `into` while set;
 * with `port` set, only those of the server on that port (not a test proxy's in the same process).
 */
export function timeServer(): { into: number[] | undefined; port?: number } {
  const sink: { into: number[] | undefined; port?: number } = { into: undefined };
  const started = new WeakMap<object, bigint>();
  subscribe("http.server.request.start", (msg) => {
    const { response, server } = msg as { response: object; server?: { address(): unknown } };
    if (sink.port !== undefined && (server?.address() as { port?: number } | null)?.port !== sink.port) return;
    if (sink.into) started.set(response, process.hrtime.bigint());
  });
  subscribe("http.server.response.finish", (msg) => {
    const t0 = started.get((msg as { response: object }).response);
    if (t0 !== undefined && sink.into) sink.into.push(Number(process.hrtime.bigint() - t0) / 1e6);
  });
  return sink;
}

/**
 * Counts each flow execution of the local runner (the real ASL in aws-local-stepfunctions): the
 * states it enters and the retries, read from the execution's event log (a Map's iterations
 * included: they reach the root's log), and each Task's handler call and time (through the runner's
 * task decorator, below its journal: the journal is the local stand-in for Step Functions' history,
 * no Lambda's time). Only executions started while `into` is set are counted, into it; the
 * execution ends once its log is read. Answers the decorator, for startRuntime's decorateTask.
 */
export async function countFlows(): Promise<{ decorateTask: TaskDecorator; into: FlowUse | undefined }> {
  const { StateMachine } = await import("aws-local-stepfunctions");
  type RunFn = (
    this: unknown,
    input: unknown,
    options?: Record<string, any>,
  ) => { abort(): void; result: Promise<unknown>; eventLogs: AsyncGenerator<{ type: string }> };
  /** The counts each execution's tasks go to (by execution name). */
  const usesOf = new Map<string, FlowUse>();
  const counter: { decorateTask: TaskDecorator; into: FlowUse | undefined } = {
    into: undefined,
    decorateTask: (call, invoke) => async (input) => {
      const use = usesOf.get(call.execution);
      if (!use) return invoke(input);
      const t0 = process.hrtime.bigint();
      try {
        return await invoke(input);
      } finally {
        const taken = Number(process.hrtime.bigint() - t0) / 1e6;
        use.tasks++;
        use.taskMs += taken;
        use.taskBilledMs += Math.max(1, Math.ceil(taken));
      }
    },
  };
  const proto = StateMachine.prototype as unknown as { run: RunFn };
  const run = proto.run;
  proto.run = function (input, options) {
    const use = counter.into;
    // A Map iteration (run with its root's abort signal) is counted through its root's log.
    if (!use || options?._rootAbortSignal) return run.call(this, input, options);
    use.executions++;
    const name = (options?.context as { Execution?: { Name?: string } } | undefined)?.Execution?.Name;
    if (name) usesOf.set(name, use);
    const out = run.call(this, input, options);
    const read = (async () => {
      for await (const e of out.eventLogs) if (e.type === "StateEntered" || e.type === "StateRetried") use.transitions++;
    })();
    const result = out.result.then(
      (v) => read.then(() => v),
      (e) => read.then(() => Promise.reject(e)),
    );
    return { ...out, result };
  };
  return counter;
}
