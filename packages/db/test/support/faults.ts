// Injected DynamoDB faults (npm start's OTTAVA_DYNAMODB_FAULTS; @ottava/db/testing/faults), for tests
// and demonstrations, in the style of OTTAVA_NOOP_FAULTS: chosen requests are answered as DynamoDB
// answers when it throttles or fails, or lose their connection, BELOW the SDK's retry layer — a
// request handler wrapping the SDK's own (NodeHttpHandler), so the SDK's retry strategy sees real HTTP
// answers and socket errors and retries them as it does on AWS (each attempt is a request here).
// `addFaults` installs it on a client (a ClientDecorator of createClients and createStores); a client
// without it keeps the SDK's handler untouched. Nothing of the product imports this file: no Lambda
// bundle carries it, and it loads no vitest (npm start loads it when the setting is given).
//
// The setting: comma-separated rules `<Operation|*>[@<task>]:<fault>[:<N>|:<from>-<to>|:<rate>]`.
// - Operation: DynamoDB's (GetItem, Query, TransactWriteItems, …) or `*` for any.
// - @task: only requests made while a flow task of that name runs (the local runner labels them,
//   `withFaultLabel`); without it, every request of the operation (the API's and the flows').
// - fault: `throttle` (400 ProvisionedThroughputExceededException), `throttling` (400
//   ThrottlingException), `internal` (500 InternalServerError), each with the JSON body DynamoDB
//   sends; `drop` (the connection reset before any answer: ECONNRESET, the request never reaches DynamoDB).
// - which requests: `N` the first N the rule matches, `from-to` the from-th to the to-th (1-based,
//   both included), a rate 0<r<1 that share at random; nothing: every one.
// Counts are per DynamoFaults (npm start makes one, for its stores' client).
import { AsyncLocalStorage } from "node:async_hooks";
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";

export const DYNAMODB_FAULTS = ["throttle", "throttling", "internal", "drop"] as const;
export type DynamoFault = (typeof DYNAMODB_FAULTS)[number];

/** The operations a rule may name (the data plane, and what ensureTable calls). */
const OPERATIONS = new Set([
  "GetItem",
  "PutItem",
  "UpdateItem",
  "DeleteItem",
  "Query",
  "Scan",
  "BatchGetItem",
  "BatchWriteItem",
  "TransactGetItems",
  "TransactWriteItems",
  "DescribeTable",
  "CreateTable",
  "UpdateTable",
  "DescribeTimeToLive",
  "UpdateTimeToLive",
]);

export interface FaultRule {
  /** The operation, or "*". */
  op: string;
  /** Only requests made under this label (a flow task's name). */
  label: string | undefined;
  fault: DynamoFault;
  /** The matching requests that fail, by their 1-based number (from..to), or a share at random. */
  from: number;
  to: number;
  rate: number | undefined;
}

/** Parses OTTAVA_DYNAMODB_FAULTS; throws on anything it does not understand, naming the rule. */
export function parseDynamoFaults(spec: string): FaultRule[] {
  const rules: FaultRule[] = [];
  for (const part of spec
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^(\*|[A-Za-z]+)(?:@([A-Za-z][\w-]*))?:([a-z]+)(?::(.+))?$/.exec(part);
    const bad = (why: string) => new Error(`OTTAVA_DYNAMODB_FAULTS: '${part}' ${why}`);
    if (!m) throw bad("is not <Operation|*>[@<task>]:<fault>[:<N>|:<from>-<to>|:<rate>]");
    const [, op, label, fault, which] = m as unknown as [string, string, string | undefined, string, string | undefined];
    if (op !== "*" && !OPERATIONS.has(op)) throw bad(`names no DynamoDB operation (one of *, ${[...OPERATIONS].join(", ")})`);
    if (!(DYNAMODB_FAULTS as readonly string[]).includes(fault)) throw bad(`names no fault (one of ${DYNAMODB_FAULTS.join(", ")})`);
    const rule: FaultRule = { op, label, fault: fault as DynamoFault, from: 1, to: Infinity, rate: undefined };
    if (which !== undefined) {
      const range = /^(\d+)(?:-(\d+))?$/.exec(which);
      if (range) {
        rule.from = range[2] === undefined ? 1 : Number(range[1]);
        rule.to = Number(range[2] ?? range[1]);
        if (rule.from < 1 || rule.to < rule.from) throw bad("counts no request (N >= 1, or from-to with 1 <= from <= to)");
      } else if (/^0?\.\d+$/.test(which) && Number(which) > 0) {
        rule.rate = Number(which);
      } else throw bad("ends in neither a count N, a range from-to nor a rate 0<r<1");
    }
    rules.push(rule);
  }
  return rules;
}

const labels = new AsyncLocalStorage<string>();

/** Runs `fn` with the DynamoDB requests it makes labelled `label` (for rules with @label: the local runner labels each task's). */
export function withFaultLabel<T>(label: string, fn: () => T): T {
  return labels.run(label, fn);
}

/** The rules of one setting, with their counts, and what went through: every request and every fault injected. */
export class DynamoFaults {
  readonly rules: FaultRule[];
  private readonly matched: number[];
  /** Requests seen (each attempt of a retried call is one), by operation, and by `operation@label` for labelled ones. */
  readonly requests = new Map<string, number>();
  /** Faults injected, in order. */
  readonly injected: { op: string; label: string | undefined; fault: DynamoFault }[] = [];

  constructor(spec: string) {
    this.rules = parseDynamoFaults(spec);
    this.matched = this.rules.map(() => 0);
  }

  /** Counts a request and answers the fault to inject, if any (the first rule whose request this is). */
  decide(op: string, label: string | undefined): DynamoFault | undefined {
    this.requests.set(op, (this.requests.get(op) ?? 0) + 1);
    if (label !== undefined) this.requests.set(`${op}@${label}`, (this.requests.get(`${op}@${label}`) ?? 0) + 1);
    let chosen: DynamoFault | undefined;
    this.rules.forEach((r, i) => {
      if ((r.op !== "*" && r.op !== op) || (r.label !== undefined && r.label !== label)) return;
      const n = ++this.matched[i]!;
      const fires = r.rate !== undefined ? Math.random() < r.rate : n >= r.from && n <= r.to;
      if (fires && chosen === undefined) chosen = r.fault;
    });
    if (chosen) this.injected.push({ op, label, fault: chosen });
    return chosen;
  }

  /** Requests seen of an operation (of every one without it), or of an operation under a label. */
  attempts(op?: string, label?: string): number {
    if (op === undefined) return [...this.requests].reduce((n, [k, v]) => (k.includes("@") ? n : n + v), 0);
    return this.requests.get(label === undefined ? op : `${op}@${label}`) ?? 0;
  }
}

type Handler = DynamoDBClient["config"]["requestHandler"];
type WireRequest = { headers: Record<string, string> };

/** DynamoDB's own answers (status, __type, message), as its AWS JSON 1.0 protocol sends them. */
const ANSWERS: Record<Exclude<DynamoFault, "drop">, { status: number; type: string; message: string }> = {
  throttle: {
    status: 400,
    type: "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
    message:
      "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.",
  },
  throttling: {
    status: 400,
    type: "com.amazon.coral.availability#ThrottlingException",
    message: "Rate of requests exceeds the allowed throughput.",
  },
  internal: { status: 500, type: "com.amazonaws.dynamodb.v20120810#InternalServerError", message: "Internal server error" },
};

function answer(fault: Exclude<DynamoFault, "drop">) {
  const a = ANSWERS[fault];
  const body = Buffer.from(JSON.stringify({ __type: a.type, message: a.message }));
  return {
    statusCode: a.status,
    reason: a.status === 500 ? "Internal Server Error" : "Bad Request",
    headers: {
      "content-type": "application/x-amz-json-1.0",
      "content-length": String(body.length),
      "x-amzn-requestid": randomBytes(26).toString("hex").toUpperCase(),
    },
    body: Readable.from([body]),
  };
}

/** What Node's HTTP client rejects with when the server closes the connection before answering. */
function connectionReset(): Error {
  return Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
}

/** Injects `faults` into a client's requests, below its retries (the document client built on it shares them). */
export function addFaults(client: DynamoDBClient, faults: DynamoFaults): void {
  // The handler the SDK built, wrapped before the first request: each request reads it from the configuration.
  client.config.requestHandler = faultingHandler(client.config.requestHandler, faults);
}

/** The SDK's request handler `inner`, with `faults` injected before it: a faulted request never reaches DynamoDB. */
function faultingHandler(inner: Handler, faults: DynamoFaults): Handler {
  const h = inner as unknown as Record<string, (...a: unknown[]) => unknown>;
  const wrapped = {
    metadata: (inner as { metadata?: unknown }).metadata,
    async handle(request: WireRequest, options?: unknown) {
      const target = request.headers["x-amz-target"] ?? request.headers["X-Amz-Target"] ?? "";
      const fault = faults.decide(target.slice(target.indexOf(".") + 1), labels.getStore());
      if (fault === "drop") throw connectionReset();
      if (fault) return { response: answer(fault) };
      return h.handle!.call(inner, request, options);
    },
    updateHttpClientConfig: (key: unknown, value: unknown) => h.updateHttpClientConfig?.call(inner, key, value),
    httpHandlerConfigs: () => h.httpHandlerConfigs?.call(inner) ?? {},
    destroy: () => h.destroy?.call(inner),
  };
  return wrapped as unknown as Handler;
}
