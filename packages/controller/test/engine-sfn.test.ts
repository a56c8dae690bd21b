// The WorkflowEngine port on Step Functions (engine-sfn.ts) against a stand-in for Step Functions'
// endpoint: what it asks, and its errors as the callers see them: Step Functions unavailable (5xx,
// throttled) marked as unavailability once the SDK's retries are spent, its refusals not, each the
// SDK's own error (its class kept: a missing execution is `undefined`).
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { isUnavailable, unavailableReason } from "@ottava/core";
import { StepFunctionsEngine } from "@ottava/controller/engine-sfn";

const PREFIX = "arn:aws:states:us-east-1:123456789012:stateMachine:ottava-test-";
/** What the stand-in answers each operation (X-Amz-Target without its prefix), and what it was asked. */
const answers = new Map<string, { status: number; body: unknown }>();
const asked: { operation: string; input: Record<string, unknown> }[] = [];
const server = createServer(async (req, res) => {
  let body = "";
  for await (const c of req) body += c;
  const operation = String(req.headers["x-amz-target"]).replace(/^AWSStepFunctions\./, "");
  asked.push({ operation, input: JSON.parse(body) });
  const a = answers.get(operation) ?? { status: 400, body: { __type: "UnknownOperationException" } };
  res.writeHead(a.status, { "content-type": "application/x-amz-json-1.0" }).end(JSON.stringify(a.body));
});

beforeAll(async () => {
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  vi.stubEnv("AWS_ENDPOINT_URL_SFN", `http://127.0.0.1:${(server.address() as { port: number }).port}`);
  vi.stubEnv("AWS_REGION", "us-east-1");
  vi.stubEnv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE");
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await new Promise((ok) => server.close(ok));
});

/** Each case its own engine (its own client) and answers, what it asked counted from its start. */
function engine(given: Record<string, { status: number; body: unknown }>) {
  answers.clear();
  asked.length = 0;
  for (const [operation, answer] of Object.entries(given)) answers.set(operation, answer);
  return new StepFunctionsEngine(PREFIX);
}

describe("StepFunctionsEngine", () => {
  it("starts an execution of the flow's state machine, named, with its input", async () => {
    const e = engine({ StartExecution: { status: 200, body: { executionArn: `${PREFIX}x:run-1`, startDate: 1 } } });
    expect(await e.start("x", "run-1", { lbId: "lb" })).toEqual({ executionArn: `${PREFIX}x:run-1` });
    expect(asked).toEqual([
      { operation: "StartExecution", input: { stateMachineArn: `${PREFIX}x`, name: "run-1", input: '{"lbId":"lb"}' } },
    ]);
  });

  it("Step Functions failing or throttled, every attempt: its error, marked as unavailability, after the SDK's retries", async () => {
    for (const [status, type] of [
      [500, "ServiceUnavailable"],
      [400, "ThrottlingException"],
    ] as const) {
      const e = engine({ StartExecution: { status, body: { __type: type, message: "try later" } } });
      const err = (await e.start("x", "run-2", {}).catch((x: unknown) => x)) as Error & { $metadata?: { attempts?: number } };
      expect(err, type).toMatchObject({ name: type });
      expect(isUnavailable(err), type).toBe(true);
      expect(unavailableReason(err), type).toBe(type);
      expect(err.$metadata?.attempts, type).toBe(3);
      expect(asked, type).toHaveLength(3);
    }
  });

  it("a refusal is not unavailability; a missing execution is described as none", async () => {
    const e = engine({
      StartExecution: { status: 400, body: { __type: "ExecutionAlreadyExists", message: "Execution Already Exists: 'run-3'" } },
      DescribeExecution: { status: 400, body: { __type: "ExecutionDoesNotExist", message: "Execution Does Not Exist" } },
    });
    const err = await e.start("x", "run-3", {}).catch((x: unknown) => x);
    expect(err).toMatchObject({ name: "ExecutionAlreadyExists" });
    expect(isUnavailable(err)).toBe(false);
    expect(await e.describe(`${PREFIX.replace(":stateMachine:", ":execution:")}x:run-3`)).toBeUndefined();
    expect(asked.map((a) => a.operation)).toEqual(["StartExecution", "DescribeExecution"]);
  });
});
