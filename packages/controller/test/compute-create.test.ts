// computeCreate (Octavia's CertComputeCreate): what it hands the compute driver for a new amphora, through
// the real create flow on DynamoDB Local. The server PEM and amphora-agent.conf, rendered as the agent
// configuration refresh renders it, with the heartbeat key; neither in an execution's state nor a log line.
import { describe, expect, it } from "vitest";
import { createApp, createDeps } from "@ottava/api";
import { noopDrivers } from "@ottava/amphora";
import type { ComputeBuildRequest, ComputeDriver } from "@ottava/core";
import { createLogger } from "@ottava/edge";
import { TASKS, createLocalCa, createTaskContext } from "@ottava/controller";
import { LocalWorkflowEngine } from "@ottava/local/runner";
import { activeLb, freshTable, PROJECT } from "@ottava/db/testing";
import { captureOutput } from "@ottava/edge/testing";

const HEARTBEAT_KEY = "computecreate-heartbeat-key-7f3a";

describe("computeCreate", () => {
  it("hands the compute driver the amphora's server PEM and its amphora-agent.conf, with the heartbeat key, and keeps both out of states and logs", async () => {
    const ca = await createLocalCa();
    const { config, ...stores } = await freshTable({
      OTTAVA_CA_CERTIFICATE: ca.certificate,
      OTTAVA_CA_PRIVATE_KEY: ca.privateKey,
      OTTAVA_HEARTBEAT_KEY: HEARTBEAT_KEY,
      OTTAVA_CONTROLLER_IP_PORT_LIST: "198.18.0.1:5555,198.18.0.2:5555",
      OTTAVA_HEARTBEAT_INTERVAL: "7",
    });
    const builds: ComputeBuildRequest[] = [];
    const noop = noopDrivers();
    const compute: ComputeDriver = { ...noop.compute, build: (req) => (builds.push(req), noop.compute.build(req)) };
    const lines = captureOutput();
    const log = createLogger({ service: "test" }, "debug");
    const tasks = { ...createTaskContext(config, stores, { noop: { ...noop, compute } }), log };
    // Every task's input and output: what an execution's history would record (TASKS wrapped, in this file's registry).
    const states: string[] = [];
    for (const [name, handler] of Object.entries(TASKS)) {
      TASKS[name] = async (input, ctx) => {
        const output = await handler(input, ctx);
        states.push(JSON.stringify({ name, input, output }));
        return output;
      };
    }
    const engine = new LocalWorkflowEngine(tasks, log, config.flowConcurrency);
    const api = await createApp(createDeps(config, { stores, engine, drivers: tasks.drivers, log }));
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await api.request(path, {
        method,
        headers: { "content-type": "application/json", "x-project-id": PROJECT },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };
    const { amphora } = await activeLb({ call, settle: () => engine.drain(), store: stores.store });

    expect(builds).toHaveLength(1);
    const req = builds[0]!;
    expect(req.amphoraId).toBe(amphora.id);
    expect(req.serverPem).toMatch(/BEGIN PRIVATE KEY/);
    const conf = req.agentConfig;
    expect(conf).toContain(`amphora_id = ${amphora.id}`);
    expect(conf).toContain(`heartbeat_key = ${HEARTBEAT_KEY}`);
    expect(conf).toContain("controller_ip_port_list = 198.18.0.1:5555, 198.18.0.2:5555");
    expect(conf).toContain("heartbeat_interval = 7");
    expect(conf).toContain("loadbalancer_topology = SINGLE");
    expect(conf).toContain("agent_server_ca = /etc/octavia/certs/client_ca.pem");

    expect(states.some((s) => s.includes('"name":"computeCreate"'))).toBe(true);
    for (const text of [...states, ...lines]) {
      expect(text).not.toContain(HEARTBEAT_KEY);
      expect(text).not.toMatch(/PRIVATE KEY/);
    }
  });
});
