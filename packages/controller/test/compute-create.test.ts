// computeCreate (Octavia's CertComputeCreate): what it hands the compute driver for a new amphora, through
// the real create flow on DynamoDB Local. The server PEM and amphora-agent.conf, rendered as the agent
// configuration refresh renders it, with the heartbeat key; neither in an execution's state nor a log line.
import { describe, expect, it, onTestFinished } from "vitest";
import type { ComputeBuildRequest } from "@ottava/core";
import { TASKS, createLocalCa } from "@ottava/controller";
import { inProcessApp } from "@ottava/local/testing";
import { activeLb } from "@ottava/db/testing";
import { captureOutput } from "@ottava/edge/testing";

const HEARTBEAT_KEY = "computecreate-heartbeat-key-7f3a";

describe("computeCreate", () => {
  it("hands the compute driver the amphora's server PEM and its amphora-agent.conf, with the heartbeat key, and keeps both out of states and logs", async () => {
    const ca = await createLocalCa();
    const lines = captureOutput();
    const t = await inProcessApp({
      OTTAVA_CA_CERTIFICATE: ca.certificate,
      OTTAVA_CA_PRIVATE_KEY: ca.privateKey,
      OTTAVA_HEARTBEAT_KEY: HEARTBEAT_KEY,
      OTTAVA_CONTROLLER_IP_PORT_LIST: "198.18.0.1:5555,198.18.0.2:5555",
      OTTAVA_HEARTBEAT_INTERVAL: "7",
      OTTAVA_LOG_LEVEL: "debug",
    });
    // The no-op compute driver, its build requests kept.
    const builds: ComputeBuildRequest[] = [];
    const noop = t.tasks.drivers.compute;
    t.tasks.drivers.compute = { ...noop, build: (req) => (builds.push(req), noop.build(req)) };
    // Every task's input and output: what an execution's history would record (TASKS wrapped; the registry
    // is the worker's, shared with the files it runs next: put back when the test ends).
    const states: string[] = [];
    const original = { ...TASKS };
    onTestFinished(() => void Object.assign(TASKS, original));
    for (const [name, handler] of Object.entries(TASKS)) {
      TASKS[name] = async (input, ctx) => {
        const output = await handler(input, ctx);
        states.push(JSON.stringify({ name, input, output }));
        return output;
      };
    }
    const { amphora } = await activeLb(t);

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
    expect(lines.length).toBeGreaterThan(0);
    for (const text of [...states, ...lines]) {
      expect(text).not.toContain(HEARTBEAT_KEY);
      expect(text).not.toMatch(/PRIVATE KEY/);
    }
  });

  it("records the generation of the configuration the build carried; postVipPlug pushes a newer one an admin set meanwhile", async () => {
    const t = await inProcessApp({ OTTAVA_CONTROLLER_IP_PORT_LIST: "198.18.0.1:5555" });
    const noop = { ...t.tasks.drivers };
    const pushed: { amphoraId: string; conf: string }[] = [];
    t.tasks.drivers.amphora = {
      ...noop.amphora,
      updateAgentConfig: async (a, conf) => (pushed.push({ amphoraId: a.id, conf }), noop.amphora.updateAgentConfig(a, conf)),
    };
    // While the instance is built, the addresses change: generation 1 (stored directly: no refresh flow runs).
    const build = noop.compute.build.bind(noop.compute);
    t.tasks.drivers.compute = {
      ...noop.compute,
      build: async (req) => {
        const id = await build(req);
        expect(req.agentConfig).toContain("controller_ip_port_list = 198.18.0.1:5555");
        expect(await t.healthManagerConfig.putHealthManagerConfig(["198.18.0.9:5555"], 0)).toBe(true);
        return id;
      },
    };
    const { amphora } = await activeLb(t);
    expect(pushed.map((p) => p.amphoraId)).toEqual([amphora.id]);
    expect(pushed[0]!.conf).toContain("controller_ip_port_list = 198.18.0.9:5555");
    expect((await t.store.getAmphora(amphora.id)) as unknown).toMatchObject({ agent_generation: 1 });

    // Without a change meanwhile, the build's generation is the one recorded, and nothing more is pushed.
    t.tasks.drivers.compute = noop.compute;
    const again = await activeLb(t);
    expect(pushed).toHaveLength(1);
    expect((await t.store.getAmphora(again.amphora.id)) as unknown).toMatchObject({ agent_generation: 1 });
  });
});
