import { describe, expect, it } from "vitest";
import { createRequire } from "node:module";
import { CHILD_KINDS } from "@ottava/core";
import { FLOW_NAMES, FLOW_TASKS, TASKS, definitionOf, localTaskArn, taskStates, taskOfArn } from "@ottava/controller";

// asl-validator is CommonJS: validator(definition, {checkPaths, checkArn}) → {isValid, errors}.
const aslValidator = createRequire(import.meta.url)("asl-validator") as (
  definition: unknown,
  opts: { checkPaths: boolean; checkArn: boolean },
) => { isValid: boolean; errors: unknown[] };

describe("flow definitions", () => {
  it("are valid JSONPath ASL (asl-validator)", () => {
    for (const flow of FLOW_NAMES) {
      const result = aslValidator(definitionOf(flow, localTaskArn), { checkPaths: true, checkArn: true });
      expect(result.errors, flow).toEqual([]);
      expect(result.isValid, flow).toBe(true);
    }
  });

  it("are refused by asl-validator when broken (the check is real)", () => {
    const broken = definitionOf("loadbalancer-create", localTaskArn) as { States: Record<string, { Next?: string }> };
    broken.States.PlanAmphorae!.Next = "NoSuchState";
    expect(aslValidator(broken, { checkPaths: true, checkArn: true }).isValid).toBe(false);
  });

  it("include the create, update and delete flow of every kind of an LB's tree (@ottava/core CHILD_KINDS), and no other", () => {
    const actions = ["create", "update", "delete"];
    // <kind>-<action>: every such flow but the load balancer's and the amphora's own.
    const childFlows = FLOW_NAMES.filter((f) => /^[a-z0-9]+-(create|update|delete)$/.test(f) && !/^(loadbalancer|amphora)-/.test(f));
    expect(childFlows.sort()).toEqual(CHILD_KINDS.flatMap((kind) => actions.map((a) => `${kind}-${a}`)).sort());
  });

  it("call only tasks that exist, with plain Lambda ARNs", () => {
    for (const t of FLOW_TASKS) expect(TASKS[t], t).toBeTypeOf("function");
    for (const flow of FLOW_NAMES) {
      for (const [, task] of taskStates(definitionOf(flow, localTaskArn), taskOfArn)) expect(FLOW_TASKS).toContain(task);
    }
  });

  it("revert newest first and end in the failure handler, never in success", () => {
    const d = definitionOf("loadbalancer-create", (t) => `arn:aws:lambda:us-east-1:000000000000:function:task-${t}`) as {
      States: Record<string, { Next?: string; Catch?: { Next: string }[]; Type: string }>;
    };
    // A failure of PlugVip records the failed state, reverts PlugVip, then ComputeCreate, then
    // CreateAmphoraeInDB, then marks the LB ERROR.
    const path: string[] = [];
    let at = d.States.PlugVip!.Catch![0]!.Next;
    while (at) {
      path.push(at);
      at = d.States[at]!.Next as string;
    }
    expect(path).toEqual([
      "CatchPlugVip",
      "RevertPlugVip",
      "RevertComputeCreate",
      "RevertCreateAmphoraeInDB",
      "RevertCreateServerGroup",
      "OnFailure",
      "Failed",
    ]);
    expect(d.States.Failed!.Type).toBe("Fail");
  });

  it("record the name of the state that failed at $.failedStep before the reverts (flow trail)", () => {
    type S = {
      Type: string;
      Next?: string;
      Catch?: { Next: string; ResultPath: string }[];
      Result?: unknown;
      ResultPath?: unknown;
      ItemProcessor?: { States: Record<string, S> };
    };
    const check = (states: Record<string, S>) => {
      for (const [name, st] of Object.entries(states)) {
        if (st.ItemProcessor) check(st.ItemProcessor.States);
        if (name.startsWith("Revert") || name === "OnFailure" || !st.Catch) continue;
        // Every step's Catch: {Error, Cause} at $.error, then a Pass that writes the step's own name.
        expect(st.Catch, name).toEqual([{ ErrorEquals: ["States.ALL"], ResultPath: "$.error", Next: `Catch${name}` }]);
        expect(states[`Catch${name}`], name).toMatchObject({ Type: "Pass", Result: name, ResultPath: "$.failedStep" });
      }
    };
    for (const flow of FLOW_NAMES) check((definitionOf(flow, localTaskArn) as { States: Record<string, S> }).States);
    // A failed iteration carries its own failed state and error out of the Map, in its Cause.
    const failover = (definitionOf("loadbalancer-failover", localTaskArn) as { States: Record<string, S> }).States.FailoverAmphorae!;
    const inner = failover.ItemProcessor!.States;
    expect(inner.FailoverAmphoraeIterationFailed).toMatchObject({
      Type: "Pass",
      Parameters: { "failedStep.$": "$.failedStep", "error.$": "$.error" },
    });
    expect(inner.FailoverAmphoraeIterationCause).toMatchObject({
      Type: "Pass",
      Parameters: { "cause.$": "States.JsonToString($.iterationFailure)" },
    });
    expect(inner.FailoverAmphoraeFailed).toEqual({ Type: "Fail", Error: "IterationFailed", CausePath: "$.iterationFailure.cause" });
  });

  it("fail over amphorae one at a time", () => {
    const d = definitionOf("loadbalancer-failover", localTaskArn) as { States: Record<string, { MaxConcurrency?: number }> };
    expect(d.States.FailoverAmphorae!.MaxConcurrency).toBe(1);
  });
});
