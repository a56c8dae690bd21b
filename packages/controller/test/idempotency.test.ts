// Every task is idempotent, proven. The flows retry a task that threw TransientError or DriverError
// (possibly after it had written), Lambda may deliver one invocation twice, and the local runner runs
// again the task that was in flight when its process stopped. So for every Task state of every flow
// (enumerated from the compiled ASL, reverts and failure handlers included), the flow is run through
// the real API, the real ASL in the local runner and DynamoDB Local:
//   (a) with that task's handler invoked twice in a row (the second result used), and
//   (b) with its first attempt throwing a TransientError after the handler's writes completed,
// and its end state (the LB's partition: tree, amphorae, flow trail, claims; the project's quota
// usage; the execution's status) must equal a clean run's. A scenario per flow builds the LB (a full
// tree), starts the flow and, for the compensation states, a second scenario fails it on purpose
// (a non-retryable error injected before a late step) so its reverts and failure handler run. The
// hook is a task decorator of the runner (a test-only option: `npm start` passes none).
// Each run tries two states of the scenario, one in each way: the i-th run runs the i-th state twice and
// makes the next one's first attempt fail after its writes (a ring over the states), so every state is
// tried both ways in half the runs a state and a way a run would take (building the tree is most of a run's
// cost). A run's end state differs from the clean run's if either state is not idempotent; the message
// names both.
import { createHash, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { AMPHORA_VIP_PROMOTE_FLOW, promotionExecutionName, type Logger } from "@ottava/core";
import { FLOW_NAMES, definitionOf, localTaskArn, taskOfArn, taskStates } from "@ottava/controller";
import { createClients } from "@ottava/db";
import type { TaskDecorator } from "@ottava/local/runner";
import { inProcessApp, SUBNET, webListener } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
/** What a run does to its scenario's states: runs `twice` twice in a row, fails `throwAfter`'s first attempt after its writes. */
interface Targets {
  twice?: string;
  throwAfter?: string;
}

/** One run of a scenario: what the decorator does to its flow's execution(s), and what it saw. */
interface Run {
  scenario: Scenario;
  targets: Targets;
  project: string;
  ids: Record<string, string>;
  executions: Set<string>;
  states: Set<string>;
  /** The states of `targets` the decorator tried as asked. */
  hits: Set<string>;
  thrown: Set<string>;
  hooked: Set<string>;
}

interface Scenario {
  name: string;
  flow: string;
  /** The table whose state is global (the health-manager refresh pushes to every amphora of it). */
  global?: boolean;
  /** Topology of the LB built (ACTIVE_STANDBY for the amphora flows: two amphorae, VRRP). */
  ha?: boolean;
  /** Builds what the flow works on (default: an ACTIVE LB with a full tree); fills run.ids. */
  setup?: (t: App, run: Run) => Promise<void>;
  /** Starts the flow (through the API, as clients do). */
  act: (t: App, run: Run) => Promise<void>;
  /** A non-retryable failure injected when this state is entered: the flow's compensation runs. */
  failAt?: string;
  /** Runs once before a state's task (e.g. a cancel request arriving mid-flow). */
  before?: Record<string, (t: App, run: Run) => Promise<void>>;
  /** The states tried twice / failing after their writes (default: those it runs that no earlier scenario of the flow covered). */
  targets?: string[];
}

const LBS = "/v2/lbaas/loadbalancers";
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const hashOf = (v: unknown) => createHash("sha256").update(JSON.stringify(v)).digest("hex");
const named = (name: string, message: string) => Object.assign(new Error(message), { name });

// ---- the apps: one table for every LB scenario, one for the global refresh; runs find their plan by project (or flow) ----

const byProject = new Map<string, Run>();
const byFlow = new Map<string, Run>();
const ofExecution = new Map<string, Run | null>();

function decorator(app: () => App): TaskDecorator {
  const runOf = async (call: { flow: string; execution: string }, input: Record<string, unknown>): Promise<Run | undefined> => {
    if (ofExecution.has(call.execution)) return ofExecution.get(call.execution) ?? undefined;
    let run: Run | undefined;
    if (typeof input.lbId === "string") {
      const lb = await app().store.getLoadBalancer(input.lbId);
      const r = lb && byProject.get(lb.record.project_id);
      if (r?.scenario.flow === call.flow) run = r;
    } else {
      run = byFlow.get(call.flow);
    }
    if (!ofExecution.has(call.execution)) ofExecution.set(call.execution, run ?? null);
    return ofExecution.get(call.execution) ?? undefined;
  };
  return (call, invoke) => async (input) => {
    const run = await runOf(call, input as Record<string, unknown>);
    if (!run) return invoke(input);
    run.executions.add(call.execution);
    run.states.add(call.state);
    const hook = run.scenario.before?.[call.state];
    if (hook && !run.hooked.has(call.state)) {
      run.hooked.add(call.state);
      await hook(app(), run);
    }
    if (run.scenario.failAt === call.state) throw named("InjectedFailure", `injected failure at ${call.state}`);
    if (run.targets.twice === call.state) {
      await invoke(input);
      run.hits.add(call.state);
      return invoke(input);
    }
    if (run.targets.throwAfter === call.state && !run.thrown.has(hashOf(input))) {
      run.thrown.add(hashOf(input));
      await invoke(input);
      run.hits.add(call.state);
      throw named("TransientError", `injected after ${call.state}'s writes`);
    }
    return invoke(input);
  };
}

let main: App;
let global: App;
const flavors: Record<string, string> = {};
let globalLb = "";
const apps = (async () => {
  const options = { durable: true, retryIntervalMs: 10, decorateTask: decorator(() => main) };
  main = await inProcessApp({}, options);
  global = await inProcessApp({ OTTAVA_HEALTHMANAGER_REFRESH_PAGE_SIZE: "1" }, { ...options, decorateTask: decorator(() => global) });
  // The failing scenarios' failure handlers log at ERROR, by design: not in this test's output.
  main.tasks.log = global.tasks.log = silent;
  watchCloud(main);
  const flavor = async (name: string, data: Record<string, unknown>) => {
    const fp = await main.call("POST", "/v2/lbaas/flavorprofiles", {
      flavorprofile: { name, provider_name: "amphora", flavor_data: JSON.stringify(data) },
    });
    const f = await main.call("POST", "/v2/lbaas/flavors", {
      flavor: { name, flavor_profile_id: fp.body.flavorprofile.id, enabled: true },
    });
    return f.body.flavor.id as string;
  };
  flavors.ha = await flavor("ha-small", { loadbalancer_topology: "ACTIVE_STANDBY", compute_flavor: "m1.small" });
  flavors.haLarge = await flavor("ha-large", { loadbalancer_topology: "ACTIVE_STANDBY", compute_flavor: "m1.large" });
  // The global table's one LB, whose amphorae every refresh run pushes to.
  const lb = await global.call("POST", LBS, { loadbalancer: { name: "refreshed", vip_subnet_id: SUBNET } }, { "x-project-id": "refresh" });
  await global.settle();
  globalLb = lb.body.loadbalancer.id;
})();

// ---- the cloud as the drivers left it: live instances and VRRP ports, so that a task that builds or plugs twice and keeps one is seen leaking the other; and which amphora holds each VIP (a network that moves VIPs itself, as vpc's takeVip) ----

const cloud = { instances: new Map<string, string>(), ports: new Map<string, string>(), vips: new Map<string, string>() };

function watchCloud(t: App) {
  const { compute, network } = t.tasks.drivers;
  t.tasks.drivers.compute = {
    ...compute,
    build: async (req) => {
      const id = await compute.build(req);
      cloud.instances.set(id, req.amphoraId);
      return id;
    },
    delete: async (id, amphoraId) => {
      await compute.delete(id, amphoraId);
      cloud.instances.delete(id);
    },
  };
  t.tasks.drivers.network = {
    ...network,
    plugVip: async (lb, a) => {
      const ports = await network.plugVip(lb, a);
      cloud.ports.set(ports.vrrp_port_id, a.id);
      return ports;
    },
    unplugVip: async (lb, a) => {
      await network.unplugVip(lb, a);
      if (a.vrrp_port_id) cloud.ports.delete(a.vrrp_port_id);
      if (cloud.vips.get(lb.id) === a.id) cloud.vips.delete(lb.id);
    },
    takeVip: async (lb, a) => {
      const moved = cloud.vips.get(lb.id) !== a.id;
      cloud.vips.set(lb.id, a.id);
      return moved;
    },
  };
}

/** The live instances and ports of these amphorae, as items of the snapshot. */
function cloudOf(amphorae: Set<string>): Record<string, unknown>[] {
  return [
    ...[...cloud.instances]
      .filter(([, a]) => amphorae.has(a))
      .map(([id, amphora_id]) => ({ kind: "cloud-instance", compute_id: id, amphora_id })),
    ...[...cloud.ports]
      .filter(([, a]) => amphorae.has(a))
      .map(([id, amphora_id]) => ({ kind: "cloud-vrrp-port", port_id: id, amphora_id })),
    ...[...cloud.vips].filter(([, a]) => amphorae.has(a)).map(([, amphora_id]) => ({ kind: "cloud-vip-holder", amphora_id })),
  ];
}

// ---- bounded concurrency: runs are independent (their own project and LB) ----

const LIMIT = 6;
let active = 0;
const waiting: (() => void)[] = [];
async function limited<T>(fn: () => Promise<T>): Promise<T> {
  if (active >= LIMIT) await new Promise<void>((ok) => waiting.push(ok));
  else active++;
  try {
    return await fn();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else active--;
  }
}

// ---- the LB every scenario but the create starts from ----

/**
 * Member subnets other than the VIP's (one network each with the no-op driver): the flows plug and unplug
 * their networks (the create plugs a, b and c; m10's delete unplugs a, the spare pool's delete c; the
 * member create and the batch updates plug d; failover and resize plug them into the new amphorae, the
 * LB's delete unplugs them all).
 */
const MEMBER_SUBNETS = {
  a: "5b0c6a3e-0a1d-4c7e-9a51-000000000a0a",
  b: "5b0c6a3e-0a1d-4c7e-9a51-000000000b0b",
  c: "5b0c6a3e-0a1d-4c7e-9a51-000000000c0c",
  d: "5b0c6a3e-0a1d-4c7e-9a51-000000000d0d",
};

const fullTree = (ha: boolean) => ({
  loadbalancer: {
    name: "full",
    vip_subnet_id: SUBNET,
    ...(ha ? { flavor_id: flavors.ha } : {}),
    listeners: [
      webListener(
        {
          members: [
            { name: "m10", address: "192.0.2.10", protocol_port: 8080, subnet_id: MEMBER_SUBNETS.a },
            { name: "m11", address: "192.0.2.11", protocol_port: 8080, weight: 5, subnet_id: SUBNET },
          ],
          healthmonitor: { name: "hm", type: "HTTP", delay: 5, timeout: 3, max_retries: 3, url_path: "/health" },
        },
        {
          name: "http",
          l7policies: [
            {
              name: "api",
              action: "REDIRECT_TO_POOL",
              redirect_pool: { name: "api" },
              rules: [{ type: "PATH", compare_type: "STARTS_WITH", value: "/api" }],
            },
            { name: "reject", action: "REJECT", rules: [{ type: "HEADER", compare_type: "EQUAL_TO", key: "X-Bad", value: "yes" }] },
          ],
        },
      ),
      { name: "tcp", protocol: "TCP", protocol_port: 443 },
    ],
    pools: [
      {
        name: "api",
        protocol: "HTTP",
        lb_algorithm: "LEAST_CONNECTIONS",
        members: [{ name: "m20", address: "192.0.2.20", protocol_port: 9000, subnet_id: MEMBER_SUBNETS.b }],
      },
      {
        name: "spare",
        protocol: "HTTP",
        lb_algorithm: "ROUND_ROBIN",
        members: [{ name: "m30", address: "192.0.2.30", protocol_port: 80, subnet_id: MEMBER_SUBNETS.c }],
      },
    ],
  },
});

const call = async (t: App, run: Run, method: string, path: string, body?: unknown) => {
  const res = await t.call(method, path, body, { "x-project-id": run.project });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res;
};

/** Waits for the LB's last execution to end. */
async function settled(t: App, lbId: string) {
  const lb = await t.store.getLoadBalancer(lbId);
  if (lb?.executionArn) await t.engine.wait(lb.executionArn);
}

async function createTree(t: App, run: Run) {
  const res = await call(t, run, "POST", LBS, fullTree(run.scenario.ha ?? false));
  run.ids.lb = res.body.loadbalancer.id;
}

/** The ids of the tree's objects, by name (rules by value, amphorae by role). */
async function readIds(t: App, run: Run) {
  const { items } = await t.store.tree(run.ids.lb!);
  for (const { kind, record: r } of items) {
    const label = kind === "amphora" ? String(r.role) : kind === "l7rule" ? String(r.value) : String(r.name ?? r.id);
    if (r.provisioning_status !== "DELETED" && r.status !== "DELETED") run.ids[`${kind}:${label}`] = r.id;
  }
}

async function treeSetup(t: App, run: Run) {
  await createTree(t, run);
  await settled(t, run.ids.lb!);
  await readIds(t, run);
}

// ---- the scenarios ----

const child = (flow: string, act: (t: App, run: Run, id: (k: string) => string) => Promise<unknown>): Scenario[] => [
  { name: flow, flow, act: (t, run) => act(t, run, (k) => run.ids[k]!).then(() => undefined) },
  { name: `${flow} failing`, flow, act: (t, run) => act(t, run, (k) => run.ids[k]!).then(() => undefined), failAt: "FinishChange" },
];

const SCENARIOS: Scenario[] = [
  // Load balancers.
  { name: "loadbalancer-create", flow: "loadbalancer-create", ha: true, setup: async () => {}, act: createTree },
  {
    name: "loadbalancer-create failing",
    flow: "loadbalancer-create",
    ha: true,
    setup: async () => {},
    act: createTree,
    failAt: "StartVrrp",
  },
  ...(["", " failing"] as const).map((f): Scenario => ({
    name: `loadbalancer-update${f}`,
    flow: "loadbalancer-update",
    act: async (t, run) =>
      void (await call(t, run, "PUT", `${LBS}/${run.ids.lb}`, { loadbalancer: { name: "renamed", description: "d" } })),
    ...(f ? { failAt: "MarkLoadBalancerActive" } : {}),
  })),
  ...(["", " failing"] as const).map((f): Scenario => ({
    name: `loadbalancer-delete${f}`,
    flow: "loadbalancer-delete",
    ha: true,
    act: async (t, run) => void (await call(t, run, "DELETE", `${LBS}/${run.ids.lb}?cascade=true`)),
    ...(f ? { failAt: "MarkLoadBalancerDeleted" } : {}),
  })),
  ...(["", " failing"] as const).map((f): Scenario => ({
    name: `loadbalancer-failover${f}`,
    flow: "loadbalancer-failover",
    ha: true,
    act: async (t, run) => void (await call(t, run, "PUT", `${LBS}/${run.ids.lb}/failover`)),
    ...(f ? { failAt: "RestartVrrp" } : {}),
  })),
  ...(["", " failing"] as const).map((f): Scenario => ({
    name: `loadbalancer-resize${f}`,
    flow: "loadbalancer-resize",
    ha: true,
    act: async (t, run) => void (await call(t, run, "PUT", `${LBS}/${run.ids.lb}/resize`, { new_flavor_id: flavors.haLarge })),
    ...(f ? { failAt: "ResizeMarkAmphoraeAllocated" } : {}),
  })),
  {
    // The cancel arrives before the commit: the new amphorae go, the LB ends ACTIVE on its old flavor.
    name: "loadbalancer-resize cancelled",
    flow: "loadbalancer-resize",
    ha: true,
    act: async (t, run) => void (await call(t, run, "PUT", `${LBS}/${run.ids.lb}/resize`, { new_flavor_id: flavors.haLarge })),
    before: { ResizeCommit: async (t, run) => void (await call(t, run, "DELETE", `${LBS}/${run.ids.lb}/resize`)) },
    targets: ["ResizeCommit", "ResizeRemoveOldAmphorae", "ResizeSetFlavor", "MarkLoadBalancerActive"],
  },
  // Amphorae.
  ...(["", " failing"] as const).map((f): Scenario => ({
    name: `amphora-failover${f}`,
    flow: "amphora-failover",
    ha: true,
    act: async (t, run) => void (await call(t, run, "PUT", `/v2/octavia/amphorae/${run.ids["amphora:MASTER"]}/failover`)),
    ...(f ? { failAt: "RestartVrrp" } : {}),
  })),
  ...(["", " failing"] as const).map((f): Scenario => ({
    name: `amphora-config${f}`,
    flow: "amphora-config",
    ha: true,
    act: async (t, run) => void (await call(t, run, "PUT", `/v2/octavia/amphorae/${run.ids["amphora:MASTER"]}/config`)),
    ...(f ? { failAt: "UpdateAmphoraAgentConfig" } : {}),
  })),
  ...(["", " failing"] as const).map((f): Scenario => ({
    // What the heartbeat receiver does with a BACKUP's VRRP promotion report: start the flow, no lock.
    name: `amphora-vip-promote${f}`,
    flow: "amphora-vip-promote",
    ha: true,
    act: async (t, run) => {
      const promotion = { id: run.ids["amphora:BACKUP"]!, ts: Date.now() };
      await t.engine.start(AMPHORA_VIP_PROMOTE_FLOW, promotionExecutionName(promotion), {
        lbId: run.ids.lb,
        amphoraId: promotion.id,
        promotedAt: promotion.ts,
      });
    },
    ...(f ? { failAt: "PromoteAmphoraVip" } : {}),
  })),
  ...(["", " failing"] as const).map((f): Scenario => ({
    name: `amphora-delete${f}`,
    flow: "amphora-delete",
    ha: true,
    setup: async (t, run) => {
      await treeSetup(t, run);
      expect(await t.store.updateAmphoraIf(run.ids.lb!, run.ids["amphora:BACKUP"]!, ["ALLOCATED"], { status: "ERROR" })).toBe(true);
    },
    act: async (t, run) => void (await call(t, run, "DELETE", `/v2/octavia/amphorae/${run.ids["amphora:BACKUP"]}`)),
    ...(f ? { failAt: "DeleteAmphora" } : {}),
  })),
  ...(["", " failing"] as const).map((f): Scenario => ({
    name: `amphora-cert-rotate${f}`,
    flow: "amphora-cert-rotate",
    ha: true,
    // What housekeeping's rotation does for one amphora: claim it, start its flow.
    act: async (t, run) => {
      const amphoraId = run.ids["amphora:MASTER"]!;
      const owner = `amphora-cert-rotate-${amphoraId}-test`;
      expect(await t.tasks.amphoraCerts.claimCertRotation(run.ids.lb!, amphoraId, owner, new Date().toISOString())).toBe(true);
      await t.engine.start("amphora-cert-rotate", owner, { lbId: run.ids.lb, amphoraId, rotation: owner });
    },
    ...(f ? { failAt: "UpdateAmphoraCertExpiration" } : {}),
  })),
  // The global refresh: every amphora of its table gets the new health-manager addresses (a page of one at a time).
  ...(["", " failing"] as const).map((f): Scenario => ({
    name: `healthmanager-refresh${f}`,
    flow: "healthmanager-refresh",
    global: true,
    setup: async (_t, run) => void (run.ids.lb = globalLb),
    act: async (t, run) =>
      void (await call(t, run, "PUT", "/v2/octavia/healthmanager", {
        controller_ip_port_list: ["192.0.2.200:5555", "[2001:db8::1]:5555"],
      })),
    ...(f ? { failAt: "RefreshAgentConfigPage" } : {}),
  })),
  // Members in bulk.
  ...(["", " failing"] as const).map((f): Scenario => ({
    name: `member-batch-update${f}`,
    flow: "member-batch-update",
    act: async (t, run) =>
      void (await call(t, run, "PUT", `/v2/lbaas/pools/${run.ids["pool:web"]}/members`, {
        members: [
          { address: "192.0.2.10", protocol_port: 8080, weight: 3 },
          { address: "192.0.2.12", protocol_port: 8080, name: "m12", subnet_id: MEMBER_SUBNETS.d },
        ],
      })),
    ...(f ? { failAt: "FinishChange" } : {}),
  })),
  ...(["", " failing"] as const).map((f): Scenario => ({
    name: `member-cross-pool-update${f}`,
    flow: "member-cross-pool-update",
    act: async (t, run) =>
      void (await call(t, run, "PUT", "/v2/lbaas/pools/members", {
        members: [
          { pool_id: run.ids["pool:web"], address: "192.0.2.10", protocol_port: 8080, weight: 4 },
          { pool_id: run.ids["pool:web"], address: "192.0.2.13", protocol_port: 8080, name: "m13", subnet_id: MEMBER_SUBNETS.d },
          { pool_id: run.ids["pool:api"], address: "192.0.2.21", protocol_port: 9000, name: "m21" },
        ],
      })),
    ...(f ? { failAt: "FinishCrossPoolChange" } : {}),
  })),
  // Every object of the tree: create, update, delete.
  ...child("listener-create", (t, run, id) =>
    call(t, run, "POST", "/v2/lbaas/listeners", {
      listener: { loadbalancer_id: id("lb"), name: "new", protocol: "HTTP", protocol_port: 8080 },
    }),
  ),
  ...child("listener-update", (t, run, id) =>
    call(t, run, "PUT", `/v2/lbaas/listeners/${id("listener:http")}`, { listener: { name: "renamed", connection_limit: 100 } }),
  ),
  ...child("listener-delete", (t, run, id) => call(t, run, "DELETE", `/v2/lbaas/listeners/${id("listener:tcp")}`)),
  ...child("pool-create", (t, run, id) =>
    call(t, run, "POST", "/v2/lbaas/pools", {
      pool: { loadbalancer_id: id("lb"), name: "new", protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" },
    }),
  ),
  ...child("pool-update", (t, run, id) =>
    call(t, run, "PUT", `/v2/lbaas/pools/${id("pool:api")}`, { pool: { name: "renamed", lb_algorithm: "SOURCE_IP" } }),
  ),
  ...child("pool-delete", (t, run, id) => call(t, run, "DELETE", `/v2/lbaas/pools/${id("pool:spare")}`)),
  ...child("member-create", (t, run, id) =>
    call(t, run, "POST", `/v2/lbaas/pools/${id("pool:web")}/members`, {
      member: { name: "m14", address: "192.0.2.14", protocol_port: 8080, subnet_id: MEMBER_SUBNETS.d },
    }),
  ),
  ...child("member-update", (t, run, id) =>
    call(t, run, "PUT", `/v2/lbaas/pools/${id("pool:web")}/members/${id("member:m10")}`, { member: { weight: 7 } }),
  ),
  ...child("member-delete", (t, run, id) => call(t, run, "DELETE", `/v2/lbaas/pools/${id("pool:web")}/members/${id("member:m10")}`)),
  ...child("healthmonitor-create", (t, run, id) =>
    call(t, run, "POST", "/v2/lbaas/healthmonitors", {
      healthmonitor: { pool_id: id("pool:api"), name: "new", type: "HTTP", delay: 5, timeout: 3, max_retries: 3 },
    }),
  ),
  ...child("healthmonitor-update", (t, run, id) =>
    call(t, run, "PUT", `/v2/lbaas/healthmonitors/${id("healthmonitor:hm")}`, { healthmonitor: { delay: 7 } }),
  ),
  ...child("healthmonitor-delete", (t, run, id) => call(t, run, "DELETE", `/v2/lbaas/healthmonitors/${id("healthmonitor:hm")}`)),
  ...child("l7policy-create", (t, run, id) =>
    call(t, run, "POST", "/v2/lbaas/l7policies", { l7policy: { listener_id: id("listener:http"), name: "new", action: "REJECT" } }),
  ),
  ...child("l7policy-update", (t, run, id) =>
    call(t, run, "PUT", `/v2/lbaas/l7policies/${id("l7policy:api")}`, { l7policy: { name: "renamed" } }),
  ),
  ...child("l7policy-delete", (t, run, id) => call(t, run, "DELETE", `/v2/lbaas/l7policies/${id("l7policy:reject")}`)),
  ...child("l7rule-create", (t, run, id) =>
    call(t, run, "POST", `/v2/lbaas/l7policies/${id("l7policy:reject")}/rules`, {
      rule: { type: "PATH", compare_type: "EQUAL_TO", value: "/x" },
    }),
  ),
  ...child("l7rule-update", (t, run, id) =>
    call(t, run, "PUT", `/v2/lbaas/l7policies/${id("l7policy:api")}/rules/${id("l7rule:/api")}`, { rule: { value: "/v2" } }),
  ),
  ...child("l7rule-delete", (t, run, id) =>
    call(t, run, "DELETE", `/v2/lbaas/l7policies/${id("l7policy:reject")}/rules/${id("l7rule:yes")}`),
  ),
];

// ---- the end state, comparable across runs ----

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIMESTAMP = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g;
/** A MAC address: the no-op driver derives its ports' from their ids (as derived ids, numbered in order of appearance). */
const MAC = /\b[0-9a-f]{2}(?::[0-9a-f]{2}){5}\b/g;
/** When things happened and which write came last: not what the end state is. */
const VOLATILE = new Set(["version", "created_at", "updated_at", "expires_at", "agent_config_at", "cert_busy_since"]);

/**
 * Every uuid (and MAC) replaced by a placeholder: the ids of records numbered in a canonical order of the
 * records (sorted by their content without ids and times), other uuids (derived ones) in order of
 * appearance; times replaced by "<ts>"; lists of ids sorted; the run's project named <project>.
 */
function normalize(items: Record<string, unknown>[], project: string): unknown[] {
  const blank = (v: unknown) =>
    JSON.stringify(v).replaceAll(project, "<project>").replace(UUID, "?").replace(MAC, "?").replace(TIMESTAMP, "<ts>");
  // Index shards are derived from ids (FNV-1a): "<kind>#<shard>" keeps its kind only.
  const unshard = ([k, v]: [string, unknown]) => [k, /^gsi[2-5]pk$/.test(k) && typeof v === "string" ? v.replace(/#\d+$/, "#<shard>") : v];
  const cleaned = items.map((i) =>
    Object.fromEntries(
      Object.entries(i)
        .filter(([k]) => !VOLATILE.has(k))
        .map(unshard),
    ),
  );
  cleaned.sort((a, b) => blank(a).localeCompare(blank(b)));
  const names = new Map<string, string>();
  const nameOf = (u: string) => {
    if (!names.has(u)) names.set(u, `#${names.size}`);
    return names.get(u)!;
  };
  for (const i of cleaned) if (typeof i.id === "string" && /^[0-9a-f-]{36}$/.test(i.id)) nameOf(i.id);
  const walk = (v: unknown): unknown => {
    if (typeof v === "string")
      return v.replaceAll(project, "<project>").replace(UUID, nameOf).replace(MAC, nameOf).replace(TIMESTAMP, "<ts>");
    if (v instanceof Set) return walk([...v]);
    if (Array.isArray(v)) {
      const out = v.map(walk);
      return out.every((x) => typeof x === "string" && /^#\d+$/.test(x)) ? out.sort() : out;
    }
    if (v && typeof v === "object")
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, walk((v as Record<string, unknown>)[k])]),
      );
    return v;
  };
  return cleaned.map(walk);
}

async function snapshot(t: App, run: Run) {
  const { doc } = createClients(t.config.dynamodbEndpoint);
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new QueryCommand({
        TableName: t.config.tableName,
        KeyConditionExpression: "pk = :pk",
        ExpressionAttributeValues: { ":pk": `LB#${run.ids.lb}` },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  items.push(...cloudOf(new Set(items.filter((i) => i.kind === "amphora").map((i) => String(i.id)))));
  if (run.scenario.global) {
    // The refresh's generation grows with every run: what counts is whether an amphora has the current one.
    const hm = (await doc.send(new GetCommand({ TableName: t.config.tableName, Key: { pk: "CONFIG#healthmanager", sk: "CONFIG" } }))).Item!;
    for (const i of items)
      if (i.agent_generation !== undefined) i.agent_generation = i.agent_generation === hm.generation ? "current" : "older";
    items.push({ ...hm, generation: "current" });
  }
  const executions = [];
  for (const name of [...run.executions].sort()) {
    const d = await t.engine.describe(t.engine.executionArn(run.scenario.flow, name));
    executions.push({ status: d?.status, error: d?.error ?? null });
  }
  return { items: normalize(items, run.project), usage: await t.store.quotaUsage(run.project), executions };
}

/** Runs a scenario once: builds its LB, starts its flow under the decorator, waits for it to end, reads the end state. */
async function execute(scenario: Scenario, targets: Targets = {}) {
  await apps;
  const t = scenario.global ? global : main;
  const run: Run = {
    scenario,
    targets,
    project: `p${randomUUID().replaceAll("-", "")}`,
    ids: {},
    executions: new Set(),
    states: new Set(),
    hits: new Set(),
    thrown: new Set(),
    hooked: new Set(),
  };
  const go = async () => {
    await (scenario.setup ?? treeSetup)(t, run);
    if (scenario.global) byFlow.set(scenario.flow, run);
    else byProject.set(run.project, run);
    try {
      await scenario.act(t, run);
      for (let i = 0; run.executions.size === 0; i++) {
        if (i > 3000) throw new Error(`${scenario.name}: no ${scenario.flow} execution ran`);
        await new Promise((r) => setTimeout(r, 10));
      }
      for (const name of run.executions) await t.engine.wait(t.engine.executionArn(scenario.flow, name));
      if (run.ids.lb) await settled(t, run.ids.lb);
    } finally {
      byProject.delete(run.project);
      if (byFlow.get(scenario.flow) === run) byFlow.delete(scenario.flow);
    }
    return { run, state: await snapshot(t, run) };
  };
  // The global table's runs share its amphorae: one at a time (they are few).
  return scenario.global ? go() : limited(go);
}

// ---- one test per flow: every Task state of its ASL, tried twice and failing after its writes ----

describe("every task is idempotent", () => {
  it("every flow has a scenario", () => {
    expect(FLOW_NAMES.filter((f) => !SCENARIOS.some((s) => s.flow === f))).toEqual([]);
  });

  for (const flow of FLOW_NAMES) {
    it.concurrent(
      `${flow}: each Task state run twice, or failing after its writes, ends as a clean run`,
      async () => {
        const all = [...taskStates(definitionOf(flow, localTaskArn), taskOfArn).keys()];
        const covered = new Set<string>();
        for (const scenario of SCENARIOS.filter((s) => s.flow === flow)) {
          const clean = await execute(scenario);
          // The clean run itself ended as it should.
          expect(
            clean.state.executions.map((e) => e.status),
            scenario.name,
          ).toEqual(clean.state.executions.map(() => (scenario.failAt ? "FAILED" : "SUCCEEDED")));
          const targets = (scenario.targets ?? [...clean.run.states].filter((s) => !covered.has(s))).filter((s) => s !== scenario.failAt);
          // The ring: run i runs state i twice and fails state i+1 after its writes (one state: both ways in one run each).
          const variants: Targets[] =
            targets.length === 1
              ? [{ twice: targets[0] }, { throwAfter: targets[0] }]
              : targets.map((state, i) => ({ twice: state, throwAfter: targets[(i + 1) % targets.length] }));
          // Global runs share one table's amphorae: one after the other; the others at once (bounded).
          const results = [];
          if (scenario.global) for (const v of variants) results.push(await execute(scenario, v));
          else results.push(...(await Promise.all(variants.map((v) => execute(scenario, v)))));
          results.forEach(({ run, state }) => {
            const tried = [
              ...(run.targets.twice ? [`${run.targets.twice} run twice`] : []),
              ...(run.targets.throwAfter ? [`${run.targets.throwAfter} failing after its writes`] : []),
            ].join(", ");
            for (const s of Object.values(run.targets)) expect(run.hits.has(s), `${scenario.name}: ${s} never ran (${tried})`).toBe(true);
            expect(state, `${scenario.name}: ${tried}`).toEqual(clean.state);
            for (const s of Object.values(run.targets)) covered.add(s);
          });
        }
        expect(
          all.filter((s) => !covered.has(s)),
          `${flow}: Task states no scenario ran`,
        ).toEqual([]);
      },
      240_000,
    );
  }
});
