import { describe, expect, it } from "vitest";
import {
  AGENT_TASKS,
  CA_TASKS,
  CERT_TASKS,
  COMPUTE_TASKS,
  FLOW_NAMES,
  FLOW_TASKS,
  HEARTBEAT_KEY_TASKS,
  TASK_FUNCTION_TIMEOUT_SECONDS,
  TASK_TIMEOUT_SECONDS,
  TASKS,
  definitionOf,
  localTaskArn,
  taskSecrets,
} from "@ottava/controller";

// On AWS each task function gets only the secrets of its lists (stacks/flows.ts): a task missing from a
// list it needs fails on AWS alone (no CA, no client certificate, "None" as the heartbeat key). The
// handlers' own code says what they touch; helpers they call are not seen, so the lists may hold more.
const source = (task: string) => String(TASKS[task]);
const touching = (pattern: RegExp) => FLOW_TASKS.filter((t) => pattern.test(source(t)));

describe("the task functions' secrets", () => {
  it("are lists of tasks that exist", () => {
    for (const task of [...CA_TASKS, ...AGENT_TASKS, ...HEARTBEAT_KEY_TASKS, ...COMPUTE_TASKS, ...CERT_TASKS]) {
      expect(FLOW_TASKS, task).toContain(task);
      expect(TASKS[task], task).toBeTypeOf("function");
    }
  });

  it("give the CA to every task that signs a certificate", () => {
    const signing = touching(/\.generateServerPem\b/);
    expect(signing.length).toBeGreaterThan(0);
    expect(CA_TASKS).toEqual(expect.arrayContaining(signing));
  });

  it("give the client certificate to every task that calls the amphora driver", () => {
    const calling = touching(/\.drivers\.amphora\b/);
    expect(calling.length).toBeGreaterThan(3);
    expect(AGENT_TASKS).toEqual(expect.arrayContaining(calling));
  });

  it("give the heartbeat key to every task that renders the agent's configuration; those call the agent, or boot the amphora with it", () => {
    const rendering = touching(/\brenderAmphoraAgentConfig\b|\.heartbeatKey\b/);
    expect(rendering.length).toBeGreaterThan(0);
    expect(HEARTBEAT_KEY_TASKS).toEqual(expect.arrayContaining(rendering));
    expect(rendering).toContain("computeCreate");
    expect(AGENT_TASKS).toEqual(expect.arrayContaining(HEARTBEAT_KEY_TASKS.filter((t) => t !== "computeCreate")));
  });

  it("let exactly the tasks that push the listeners' configuration read certificates; those call the agents", () => {
    const pushing = touching(/\.drivers\.amphora\.update\(|\bpushConfig\(/);
    expect([...CERT_TASKS].sort()).toEqual(pushing.sort());
    expect(AGENT_TASKS).toEqual(expect.arrayContaining([...CERT_TASKS]));
  });

  it("let every task that calls the compute driver call EC2 (stacks/compute.ts), and no other", () => {
    const calling = touching(/\.drivers\.compute\b/);
    expect(calling).toContain("computeCreate");
    expect([...COMPUTE_TASKS].sort()).toEqual(calling.sort());
  });

  it("are nothing for a task that only writes the table", () => {
    expect(taskSecrets("finishChange")).toEqual({ ca: false, agent: false, heartbeatKey: false, certificates: false });
    expect(taskSecrets("uploadAmphoraCert")).toEqual({ ca: true, agent: true, heartbeatKey: false, certificates: false });
    expect(taskSecrets("refreshAgentConfigPage")).toEqual({ ca: false, agent: true, heartbeatKey: true, certificates: false });
    expect(taskSecrets("updateListeners")).toEqual({ ca: false, agent: true, heartbeatKey: false, certificates: true });
  });
});

describe("task timeouts", () => {
  it("every Task state waits TASK_TIMEOUT_SECONDS, longer than its Lambda may run", () => {
    expect(TASK_FUNCTION_TIMEOUT_SECONDS).toBeLessThan(TASK_TIMEOUT_SECONDS);
    type S = { Type: string; TimeoutSeconds?: number; ItemProcessor?: { States: Record<string, S> } };
    let tasks = 0;
    const check = (states: Record<string, S>) => {
      for (const [name, st] of Object.entries(states)) {
        if (st.ItemProcessor) check(st.ItemProcessor.States);
        if (st.Type !== "Task") continue;
        tasks++;
        expect(st.TimeoutSeconds, name).toBe(TASK_TIMEOUT_SECONDS);
      }
    };
    for (const flow of FLOW_NAMES) check((definitionOf(flow, localTaskArn) as { States: Record<string, S> }).States);
    expect(tasks).toBeGreaterThan(FLOW_NAMES.length);
  });
});
