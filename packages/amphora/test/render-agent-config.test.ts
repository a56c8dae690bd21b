// renderAgentConfig (amphora-agent.conf) against Octavia 11's AgentJinjaTemplater (amphorae/backends/agent/agent_jinja_cfg.py): the cases fixtures/octavia-renderers.py generated with Octavia's own code; and the controller's tasks that push it (Octavia's AmphoraConfigUpdate).
import { describe, expect, it } from "vitest";
import { normalize, readFixture } from "./octavia-fixtures";
import { amphora as amphoraRecord, loadBalancer } from "./support/tree";
import { loadConfig, type Amphora, type Drivers, type LoadBalancer, type Logger } from "@ottava/core";
import { AGENT_CONFIG_DEFAULTS, renderAgentConfig, type AgentConfigInput, type AgentConfigSettings } from "@ottava/amphora";
import { TASKS, type TaskContext } from "@ottava/controller";

interface Case {
  name: string;
  input: AgentConfigInput;
  settings: Partial<AgentConfigSettings>;
  octavia: string;
  wrong?: string;
  expected?: string;
}

const fixture = readFixture<{
  defaults: AgentConfigSettings;
  cases: Case[];
}>("octavia-agent-config.json");

describe("renderAgentConfig equals Octavia 11's AgentJinjaTemplater.build_agent_config", () => {
  it("has the generated cases: random and hand-picked, and the outputs marked wrong", () => {
    expect(fixture.cases.length).toBeGreaterThanOrEqual(130);
    expect(fixture.cases.filter((c) => !c.name.startsWith("random")).length).toBeGreaterThanOrEqual(20);
    expect(fixture.cases.filter((c) => c.wrong).length).toBeGreaterThan(0);
  });

  it("has Octavia's defaults", () => {
    expect(AGENT_CONFIG_DEFAULTS).toEqual(fixture.defaults);
  });

  for (const c of fixture.cases.filter((c) => !c.wrong)) {
    it(c.name, () => {
      expect(normalize(renderAgentConfig(c.input, c.settings))).toBe(normalize(c.octavia));
    });
  }

  // "expected" is what oslo.config, with Octavia's own options, reads back as the rendered values (the generator checked).
  for (const c of fixture.cases.filter((c) => c.wrong)) {
    it(`${c.name}: differs where Octavia is wrong (${c.wrong})`, () => {
      const ours = normalize(renderAgentConfig(c.input, c.settings));
      expect(ours).toBe(normalize(c.expected!));
      expect(ours).not.toBe(normalize(c.octavia));
    });
  }
});

describe("renderAgentConfig", () => {
  const input: AgentConfigInput = {
    amphora: { id: "amp-1" },
    topology: "SINGLE",
    controllerIpPortList: ["192.0.2.10:5555"],
    heartbeatKey: "k",
  };

  it("writes an unset heartbeat key as Octavia does (None)", () => {
    expect(renderAgentConfig({ ...input, heartbeatKey: null })).toContain("\nheartbeat_key = None\n");
  });

  it("refuses what no amphora-agent.conf can carry, without naming the key", () => {
    for (const key of ["k3y-one\nk3y-two", "k3y-three\rk3y-four", "k3y-five\\$k3y-six"]) {
      let message = "";
      try {
        renderAgentConfig({ ...input, heartbeatKey: key });
      } catch (e) {
        message = String(e);
      }
      expect(message).toMatch(/the heartbeat key cannot be written/);
      expect(message).not.toMatch(/k3y/);
    }
    expect(() => renderAgentConfig({ ...input, controllerIpPortList: ["192.0.2.10:5555, 192.0.2.11:5555"] })).toThrow(
      /health manager address/,
    );
    expect(() => renderAgentConfig(input, { administrativeLogFacility: 8 })).toThrow(/0\.\.7/);
    expect(() => renderAgentConfig(input, { bindPort: 1.5 })).toThrow(/integer/);
  });
});

// --- The controller's agent configuration push (Octavia's AmphoraConfigUpdate) ------------------------

const KEY = "s3cret-heartbeat-key";
/** The agent settings the controller takes from its own: OTTAVA_HEARTBEAT_INTERVAL, OTTAVA_AMPHORA_AGENT_PORT (set so below). */
const SETTINGS: Partial<AgentConfigSettings> = { heartbeatInterval: 7, bindPort: 9444 };

const amphora = (id: string, lbId: string): Amphora =>
  amphoraRecord(loadBalancer({ id: lbId, project_id: "p" }), {
    id,
    compute_id: "c",
    lb_network_ip: "192.0.2.9",
    vrrp_ip: null,
    ha_ip: null,
    vrrp_port_id: null,
    ha_port_id: null,
    created_at: "2024-06-11T10:00:00",
  });

/** A task context with the store and health-manager configuration calls these tasks make, a driver that keeps what it is given and a logger that keeps every line. */
function context(opts: { amphorae: Amphora[]; topologies: Record<string, string>; heartbeatKey?: string; fail?: (a: Amphora) => boolean }) {
  const pushed = new Map<string, string>();
  const lines: unknown[] = [];
  const lbReads: string[] = [];
  const recorded: [string, number][] = [];
  const log: Logger = {
    debug: (m, f) => void lines.push([m, f]),
    info: (m, f) => void lines.push([m, f]),
    warn: (m, f) => void lines.push([m, f]),
    error: (m, f) => void lines.push([m, f]),
    child: () => log,
  };
  const store = {
    getAmphora: async (id: string) => opts.amphorae.find((a) => a.id === id),
    getLoadBalancer: async (id: string) => {
      lbReads.push(id);
      const topology = opts.topologies[id];
      return topology ? { record: { id, topology } as LoadBalancer, version: 1, lockOwner: undefined } : undefined;
    },
    amphorae: () =>
      async function* () {
        yield* opts.amphorae as never[];
      },
  };
  const healthManagerConfig = {
    getHealthManagerConfig: async () => ({
      controller_ip_port_list: ["192.0.2.10:5555", "[2001:db8::10]:5555"],
      generation: 3,
      refresh: { total: 0, done: 0, failed: 0 },
    }),
    recordAmphoraAgentGeneration: async (_lb: string, id: string, generation: number) => {
      recorded.push([id, generation]);
      return true;
    },
    addHealthManagerRefresh: async () => true,
  };
  const drivers = {
    amphora: {
      async updateAgentConfig(a: Amphora, agentConfig: string) {
        if (opts.fail?.(a)) throw new Error(`amphora ${a.id} refused its configuration`);
        pushed.set(a.id, agentConfig);
      },
    },
  } as unknown as Drivers;
  const config = {
    ...loadConfig({ OTTAVA_LOADBALANCER_TOPOLOGY: "ACTIVE_STANDBY", OTTAVA_HEARTBEAT_INTERVAL: "7", OTTAVA_AMPHORA_AGENT_PORT: "9444" }),
    heartbeatKey: opts.heartbeatKey ?? KEY,
  };
  const ctx = { store, healthManagerConfig, drivers, config, log } as unknown as TaskContext;
  return { ctx, pushed, lines, lbReads, recorded };
}

describe("the controller renders amphora-agent.conf for the driver", () => {
  const list = ["192.0.2.10:5555", "[2001:db8::10]:5555"];

  it("updateAmphoraAgentConfig pushes the file of the amphora, its LB's topology and the current health managers", async () => {
    const a = amphora("amp-1", "lb-1");
    const t = context({ amphorae: [a], topologies: { "lb-1": "SINGLE" } });
    const result = await TASKS.updateAmphoraAgentConfig!({ lbId: "", owner: "", amphoraId: a.id }, t.ctx);
    const file = t.pushed.get(a.id)!;
    expect(file).toBe(renderAgentConfig({ amphora: a, topology: "SINGLE", controllerIpPortList: list, heartbeatKey: KEY }, SETTINGS));
    expect(file).toContain(`\nheartbeat_key = ${KEY}\n`);
    expect(file).toContain("\ncontroller_ip_port_list = 192.0.2.10:5555, [2001:db8::10]:5555\n");
    expect(file).toContain("\namphora_id = amp-1\n");
    expect(file).toContain("\nheartbeat_interval = 7\n");
    expect(file).toContain("\nbind_port = 9444\n");
    expect(t.recorded).toEqual([["amp-1", 3]]);
    expect(JSON.stringify([result, t.lines])).not.toContain(KEY);
  });

  it("takes the settings' topology when the amphora's LB is gone", async () => {
    const a = amphora("amp-2", "lb-gone");
    const t = context({ amphorae: [a], topologies: {} });
    await TASKS.updateAmphoraAgentConfig!({ lbId: "", owner: "", amphoraId: a.id }, t.ctx);
    expect(t.pushed.get(a.id)).toContain("\nloadbalancer_topology = ACTIVE_STANDBY\n");
  });

  it("a health-manager refresh page renders each amphora's file, reading each LB once", async () => {
    const amps = [amphora("a1", "lb-1"), amphora("a2", "lb-1"), amphora("a3", "lb-2")];
    const t = context({ amphorae: amps, topologies: { "lb-1": "ACTIVE_STANDBY", "lb-2": "SINGLE" } });
    const result = await TASKS.refreshAgentConfigPage!({ lbId: "", owner: "", generation: 3 }, t.ctx);
    expect([...t.pushed.keys()].sort()).toEqual(["a1", "a2", "a3"]);
    expect(t.pushed.get("a1")).toContain("\nloadbalancer_topology = ACTIVE_STANDBY\n");
    expect(t.pushed.get("a3")).toBe(
      renderAgentConfig({ amphora: amps[2]!, topology: "SINGLE", controllerIpPortList: list, heartbeatKey: KEY }, SETTINGS),
    );
    expect(t.lbReads.sort()).toEqual(["lb-1", "lb-2"]);
    expect(t.recorded.map(([id, g]) => `${id}:${g}`).sort()).toEqual(["a1:3", "a2:3", "a3:3"]);
    expect(JSON.stringify([result, t.lines])).not.toContain(KEY);
  });

  it("logs a failed push, and a key no file can carry, without the key", async () => {
    const key = "multi\nline-key-material";
    const amps = [amphora("a1", "lb-1"), amphora("a2", "lb-1")];
    const t = context({ amphorae: amps, topologies: { "lb-1": "SINGLE" }, heartbeatKey: key });
    await TASKS.refreshAgentConfigPage!({ lbId: "", owner: "", generation: 3 }, t.ctx);
    expect(t.pushed.size).toBe(0);
    const logged = JSON.stringify(t.lines);
    expect(logged).toContain("amphorae whose agent configuration could not be refreshed");
    expect(logged).toContain("the heartbeat key cannot be written");
    expect(logged).not.toContain("line-key-material");

    const t2 = context({ amphorae: amps, topologies: { "lb-1": "SINGLE" }, fail: (a) => a.id === "a2" });
    await TASKS.refreshAgentConfigPage!({ lbId: "", owner: "", generation: 3 }, t2.ctx);
    expect([...t2.pushed.keys()]).toEqual(["a1"]);
    expect(JSON.stringify(t2.lines)).toContain("amphora a2 refused its configuration");
    expect(JSON.stringify(t2.lines)).not.toContain(KEY);
  });
});
