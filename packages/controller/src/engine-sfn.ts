// The WorkflowEngine port on AWS Step Functions (Standard workflows: idempotent by execution name).
// The SDK's Step Functions client is loaded on the first call: a process that starts and describes no
// flow (the API answering a GET) never loads it; in a split bundle it is a chunk of its own.
import type { ExecutionDescription, WorkflowEngine } from "@ottava/core";
import { classifyUnavailable } from "@ottava/edge";

type Sfn = typeof import("./sfn-client");

export class StepFunctionsEngine implements WorkflowEngine {
  #sfn: Promise<{ sdk: Sfn; client: InstanceType<Sfn["SFNClient"]> }> | undefined;

  constructor(
    /** e.g. arn:aws:states:eu-west-1:123456789012:stateMachine:ottava-prod- ; the flow name is appended. */
    private readonly stateMachineArnPrefix: string,
  ) {}

  private sfn() {
    // Its errors that are Step Functions unavailable, once the SDK's retries are spent, marked as such.
    return (this.#sfn ??= import("./sfn-client").then((sdk) => ({ sdk, client: classifyUnavailable(new sdk.SFNClient({})) })));
  }

  private stateMachineArn(flow: string) {
    return `${this.stateMachineArnPrefix}${flow}`;
  }

  executionArn(flow: string, name: string): string {
    return `${this.stateMachineArn(flow).replace(":stateMachine:", ":execution:")}:${name}`;
  }

  async start(flow: string, name: string, input: Record<string, unknown>) {
    const { sdk, client } = await this.sfn();
    const out = await client.send(
      new sdk.StartExecutionCommand({ stateMachineArn: this.stateMachineArn(flow), name, input: JSON.stringify(input) }),
    );
    return { executionArn: out.executionArn! };
  }

  async describe(executionArn: string): Promise<ExecutionDescription | undefined> {
    const { sdk, client } = await this.sfn();
    try {
      const d = await client.send(new sdk.DescribeExecutionCommand({ executionArn }));
      return {
        executionArn,
        name: d.name!,
        status: d.status as ExecutionDescription["status"],
        input: d.input ? JSON.parse(d.input) : undefined,
        output: d.output ? JSON.parse(d.output) : undefined,
        error: d.error,
        cause: d.cause,
        startDate: d.startDate!,
        stopDate: d.stopDate,
      };
    } catch (e) {
      if (e instanceof sdk.ExecutionDoesNotExist) return undefined;
      throw e;
    }
  }
}
