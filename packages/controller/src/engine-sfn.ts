// The WorkflowEngine port on AWS Step Functions (Standard workflows: idempotent by execution name).
import { DescribeExecutionCommand, ExecutionDoesNotExist, SFNClient, StartExecutionCommand } from "@aws-sdk/client-sfn";
import type { ExecutionDescription, WorkflowEngine } from "@ottava/core";

export class StepFunctionsEngine implements WorkflowEngine {
  constructor(
    /** e.g. arn:aws:states:eu-west-1:123456789012:stateMachine:ottava-prod- ; the flow name is appended. */
    private readonly stateMachineArnPrefix: string,
    private readonly client = new SFNClient({}),
  ) {}

  private stateMachineArn(flow: string) {
    return `${this.stateMachineArnPrefix}${flow}`;
  }

  executionArn(flow: string, name: string): string {
    return `${this.stateMachineArn(flow).replace(":stateMachine:", ":execution:")}:${name}`;
  }

  async start(flow: string, name: string, input: Record<string, unknown>) {
    const out = await this.client.send(
      new StartExecutionCommand({ stateMachineArn: this.stateMachineArn(flow), name, input: JSON.stringify(input) }),
    );
    return { executionArn: out.executionArn! };
  }

  async describe(executionArn: string): Promise<ExecutionDescription | undefined> {
    try {
      const d = await this.client.send(new DescribeExecutionCommand({ executionArn }));
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
      if (e instanceof ExecutionDoesNotExist) return undefined;
      throw e;
    }
  }
}
