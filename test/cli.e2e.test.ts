// End to end with the real `openstack` CLI (python-openstackclient + python-octaviaclient) against
// the stack as `npm start` runs it. Under `auth_type: none` the client resolves subnets, QoS
// policies and projects through Neutron and Keystone at the cloud's one `auth.endpoint`: a stand-in
// (test/support/cli/standin.ts) answers those, and `load_balancer_endpoint_override` points at Ottava.
//
// One stack and one load balancer for the whole file; the steps run in order and a step whose
// objects an earlier step failed to make is skipped (the earlier failure is the one to read).
// Each CLI run costs about a second and a half of Python start-up, so the steps on objects outside
// the load balancer (quotas, providers, flavors, availability zones) run in a second lane beside it.
// Every CLI run uses --debug: a failure shows what the client sent and what it was answered.
import { execFileSync } from "node:child_process";
import { afterAll, afterEach, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { makeCli, type Cli } from "./support/cli/openstack";
import { startStandIn, type StandIn } from "@ottava/local";
import { startStack, waitSettled, type Stack } from "./support/stack";
import { SUBNET } from "@ottava/core/testing";

const MEMBER_SUBNET = "8a1f4c2e-6d3b-4e5a-9f7c-0b2d4e6f8a13";
const QOS_POLICY = "c3d9e1f2-4a5b-4c6d-8e7f-9a0b1c2d3e4f";
const PROJECT = "cli-project";
const QUOTA_PROJECT = "cli-quota-project";

let stack: Stack;
let standIn: StandIn;
let os: Cli;

/** Ids made by earlier steps. */
const made: Record<string, string> = {};

function needs(ctx: TestContext, ...keys: string[]) {
  const missing = keys.filter((k) => !made[k]);
  if (missing.length) ctx.skip(`needs ${missing.join(", ")} from an earlier step`);
}

/**
 * A show or list whose failure should not hide what the rest of the step finds: the error is kept,
 * the step goes on (the caller checks the answer only when there is one) and fails at its end.
 */
const deferred: Error[] = [];
async function soft<T>(run: Promise<T>): Promise<T | undefined> {
  try {
    return await run;
  } catch (e) {
    deferred.push(e as Error);
    return undefined;
  }
}

/** The CLI prints a list of ids as one string, one id a line. */
const lines = (s: unknown): string[] => (typeof s === "string" && s !== "" ? s.split("\n") : Array.isArray(s) ? s : []);

/** A field a `*unset` cleared: Octavia renders it null, or "" for names and descriptions. */
const cleared = (v: unknown) => v === null || v === "";

async function api(path: string) {
  return stack.call("GET", path);
}

/**
 * The catalog lane: steps run one after the other (each whether or not the one before it failed),
 * beside the load balancer's steps; each step's promise is awaited by its test.
 */
let catalog: Record<string, Promise<void>> | undefined;
function startCatalogLane(steps: Record<string, () => Promise<void>>) {
  const started: Record<string, Promise<void>> = {};
  let previous: Promise<unknown> = Promise.resolve();
  for (const [name, step] of Object.entries(steps)) {
    const run = previous.catch(() => undefined).then(step);
    run.catch(() => undefined); // awaited later by its test; not an unhandled rejection meanwhile
    started[name] = run;
    previous = run;
  }
  catalog = started;
}
async function catalogStep(name: string) {
  if (!catalog?.[name]) throw new Error(`the catalog lane did not start (see the beforeAll failure)`);
  await catalog[name];
}

async function quotaSteps() {
  const [defaults, initial] = await Promise.all([
    os.json(["loadbalancer", "quota", "defaults", "show"]),
    os.json(["loadbalancer", "quota", "show", QUOTA_PROJECT]),
  ]);
  const kinds = ["load_balancer", "listener", "pool", "health_monitor", "member", "l7policy", "l7rule"];
  expect(Object.keys(defaults).sort()).toEqual([...kinds].sort());
  for (const k of kinds) expect(typeof defaults[k]).toBe("number");
  // A project without quotas of its own has the defaults.
  expect(initial).toMatchObject(defaults);
  expect(standIn.requests).toContain(`GET /projects/${QUOTA_PROJECT}`);

  const set = await os.json([
    "loadbalancer",
    "quota",
    "set",
    "--loadbalancer",
    "5",
    "--listener",
    "7",
    "--pool",
    "9",
    "--member",
    "11",
    "--healthmonitor",
    "13",
    "--l7policy",
    "15",
    "--l7rule",
    "17",
    QUOTA_PROJECT,
  ]);
  const wanted = { load_balancer: 5, listener: 7, pool: 9, member: 11, health_monitor: 13, l7policy: 15, l7rule: 17 };
  expect(set).toMatchObject(wanted);
  expect(await os.json(["loadbalancer", "quota", "show", QUOTA_PROJECT])).toMatchObject(wanted);
  expect(await os.json(["loadbalancer", "quota", "list"])).toContainEqual(
    expect.objectContaining({ project_id: QUOTA_PROJECT, ...wanted }),
  );

  await os.ok(["loadbalancer", "quota", "reset", QUOTA_PROJECT]);
  expect(await os.json(["loadbalancer", "quota", "show", QUOTA_PROJECT])).toMatchObject(defaults);
}

async function providerSteps() {
  const [providers, flavorCaps, azCaps] = await Promise.all([
    os.json(["loadbalancer", "provider", "list"]),
    os.json(["loadbalancer", "provider", "capability", "list", "--flavor", "amphora"]),
    os.json(["loadbalancer", "provider", "capability", "list", "--availability-zone", "amphora"]),
  ]);
  expect(providers).toContainEqual(expect.objectContaining({ name: "amphora", description: expect.any(String) }));
  expect(providers).toContainEqual(expect.objectContaining({ name: "octavia" }));
  expect(flavorCaps).toContainEqual(
    expect.objectContaining({ type: "flavor", name: "loadbalancer_topology", description: expect.any(String) }),
  );
  expect(azCaps).toContainEqual(
    expect.objectContaining({ type: "availability_zone", name: "compute_zone", description: expect.any(String) }),
  );
}

async function flavorSteps() {
  const fp = await os.json([
    "loadbalancer",
    "flavorprofile",
    "create",
    "--name",
    "cli-fp",
    "--provider",
    "amphora",
    "--flavor-data",
    '{"loadbalancer_topology": "SINGLE"}',
  ]);
  expect(fp).toMatchObject({ name: "cli-fp", provider_name: "amphora" });
  expect(JSON.parse(fp.flavor_data)).toEqual({ loadbalancer_topology: "SINGLE" });

  const f = await os.json([
    "loadbalancer",
    "flavor",
    "create",
    "--name",
    "cli-flavor",
    "--flavorprofile",
    "cli-fp",
    "--description",
    "single",
    "--enable",
  ]);
  expect(f).toMatchObject({ name: "cli-flavor", flavor_profile_id: fp.id, enabled: true, description: "single" });

  const [profiles, flavors] = await Promise.all([
    os.json(["loadbalancer", "flavorprofile", "list"]),
    os.json(["loadbalancer", "flavor", "list"]),
  ]);
  expect(profiles).toContainEqual(expect.objectContaining({ id: fp.id, name: "cli-fp", provider_name: "amphora" }));
  expect(flavors).toContainEqual(expect.objectContaining({ id: f.id, name: "cli-flavor", flavor_profile_id: fp.id, enabled: true }));

  await os.ok(["loadbalancer", "flavor", "delete", "cli-flavor"]);
  await os.ok(["loadbalancer", "flavorprofile", "delete", "cli-fp"]);
  expect((await api(`/v2/lbaas/flavors/${f.id}`)).status).toBe(404);
  expect((await api(`/v2/lbaas/flavorprofiles/${fp.id}`)).status).toBe(404);
}

async function availabilityZoneSteps() {
  const azp = await os.json([
    "loadbalancer",
    "availabilityzoneprofile",
    "create",
    "--name",
    "cli-azp",
    "--provider",
    "amphora",
    "--availability-zone-data",
    '{"compute_zone": "nova"}',
  ]);
  expect(azp).toMatchObject({ name: "cli-azp", provider_name: "amphora" });
  expect(JSON.parse(azp.availability_zone_data)).toEqual({ compute_zone: "nova" });

  const az = await os.json([
    "loadbalancer",
    "availabilityzone",
    "create",
    "--name",
    "cli-az",
    "--availabilityzoneprofile",
    "cli-azp",
    "--description",
    "the nova zone",
    "--enable",
  ]);
  expect(az).toMatchObject({ name: "cli-az", availability_zone_profile_id: azp.id, enabled: true, description: "the nova zone" });

  const [profiles, zones] = await Promise.all([
    os.json(["loadbalancer", "availabilityzoneprofile", "list"]),
    os.json(["loadbalancer", "availabilityzone", "list"]),
  ]);
  expect(profiles).toContainEqual(expect.objectContaining({ id: azp.id, name: "cli-azp", provider_name: "amphora" }));
  expect(zones).toContainEqual(expect.objectContaining({ name: "cli-az", availability_zone_profile_id: azp.id, enabled: true }));

  await os.ok(["loadbalancer", "availabilityzone", "delete", "cli-az"]);
  await os.ok(["loadbalancer", "availabilityzoneprofile", "delete", "cli-azp"]);
  expect((await api("/v2/lbaas/availabilityzones/cli-az")).status).toBe(404);
  expect((await api(`/v2/lbaas/availabilityzoneprofiles/${azp.id}`)).status).toBe(404);
}

describe("the openstack CLI against the local stack", { timeout: 300_000 }, () => {
  beforeAll(async () => {
    try {
      execFileSync("openstack", ["--version"], { stdio: "ignore", timeout: 30_000 });
    } catch (e) {
      throw new Error(
        `the openstack CLI does not run (${(e as Error).message}); install it: apt-get install -y python3-openstackclient python3-octaviaclient`,
      );
    }
    [stack, standIn] = await Promise.all([startStack(["--in-memory"]), startStandIn()]);
    // A CLI run takes 1.5–2 s on an idle machine; the generous limit is for loaded CI machines
    // (and --wait has no limit of its own: it polls until the object leaves PENDING_*).
    os = makeCli(standIn.url, stack.url, { timeoutMs: 90_000, pollSeconds: 0.2 });
    startCatalogLane({ quota: quotaSteps, provider: providerSteps, flavor: flavorSteps, availabilityZone: availabilityZoneSteps });
  });
  afterEach(() => {
    const errors = deferred.splice(0);
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new Error(errors.map((e, i) => `(${i + 1}/${errors.length}) ${e.message}`).join("\n\n"));
  });
  afterAll(async () => {
    await Promise.all([stack?.stop(), standIn?.close()]);
    os?.dispose();
  });

  it("loadbalancer create --wait, show, list, set, unset", async () => {
    const lb = await os.json([
      "loadbalancer",
      "create",
      "--name",
      "cli-lb",
      "--description",
      "made by the CLI",
      "--vip-subnet-id",
      SUBNET,
      "--project",
      PROJECT,
      "--wait",
    ]);
    made.lb = lb.id;
    expect(lb).toMatchObject({
      name: "cli-lb",
      description: "made by the CLI",
      provisioning_status: "ACTIVE",
      operating_status: "OFFLINE",
      project_id: PROJECT,
      vip_subnet_id: SUBNET,
      vip_address: "198.51.100.1",
      provider: "amphora",
      admin_state_up: true,
    });
    expect(lb.id).toMatch(/^[0-9a-f-]{36}$/);
    // The client resolved the subnet through Neutron and the project through Keystone.
    expect(standIn.requests).toContain(`GET /v2.0/subnets?id=${SUBNET}`);
    expect(standIn.requests).toContain(`GET /projects/${PROJECT}`);

    const [shown, listed] = await Promise.all([soft(os.json(["loadbalancer", "show", "cli-lb"])), soft(os.json(["loadbalancer", "list"]))]);
    if (shown)
      expect(shown).toMatchObject({
        id: lb.id,
        name: "cli-lb",
        provisioning_status: "ACTIVE",
        vip_port_id: lb.vip_port_id,
        vip_network_id: lb.vip_network_id,
      });
    if (listed)
      expect(listed).toContainEqual(
        expect.objectContaining({
          id: lb.id,
          name: "cli-lb",
          project_id: PROJECT,
          vip_address: "198.51.100.1",
          provisioning_status: "ACTIVE",
          provider: "amphora",
        }),
      );

    await os.ok(["loadbalancer", "set", "--description", "changed by the CLI", "--vip-qos-policy-id", QOS_POLICY, "--wait", lb.id]);
    expect(standIn.requests).toContain(`GET /v2.0/qos/policies?id=${QOS_POLICY}`);
    expect((await api(`/v2/lbaas/loadbalancers/${lb.id}`)).body.loadbalancer).toMatchObject({
      description: "changed by the CLI",
      vip_qos_policy_id: QOS_POLICY,
      provisioning_status: "ACTIVE",
    });

    await os.ok(["loadbalancer", "unset", "--description", "--vip-qos-policy-id", "--wait", lb.id]);
    const after = (await api(`/v2/lbaas/loadbalancers/${lb.id}`)).body.loadbalancer;
    expect(after).toMatchObject({ name: "cli-lb", vip_qos_policy_id: null, provisioning_status: "ACTIVE" });
    expect(cleared(after.description)).toBe(true);
  });

  it("listener create --wait, show, list, set, unset", async (ctx) => {
    needs(ctx, "lb");
    // The client sends connection_limit as a string ("1000"); Octavia's WSME types turn numeric
    // strings into integers, so an Octavia-compatible API has to accept it.
    const l = await os.json([
      "loadbalancer",
      "listener",
      "create",
      "--name",
      "cli-listener",
      "--description",
      "port 80",
      "--protocol",
      "HTTP",
      "--protocol-port",
      "80",
      "--connection-limit",
      "1000",
      "--wait",
      made.lb!,
    ]);
    made.listener = l.id;
    expect(l).toMatchObject({
      name: "cli-listener",
      description: "port 80",
      protocol: "HTTP",
      protocol_port: 80,
      connection_limit: 1000,
      project_id: PROJECT,
      admin_state_up: true,
    });
    expect(lines(l.loadbalancers)).toEqual([made.lb]);

    const [shown, listed] = await Promise.all([
      soft(os.json(["loadbalancer", "listener", "show", "cli-listener"])),
      soft(os.json(["loadbalancer", "listener", "list", "--loadbalancer", made.lb!])),
    ]);
    if (shown) expect(shown).toMatchObject({ id: l.id, provisioning_status: "ACTIVE", operating_status: "OFFLINE", protocol_port: 80 });
    if (listed)
      expect(listed).toEqual([
        expect.objectContaining({
          id: l.id,
          name: "cli-listener",
          protocol: "HTTP",
          protocol_port: 80,
          project_id: PROJECT,
          admin_state_up: true,
        }),
      ]);

    await os.ok([
      "loadbalancer",
      "listener",
      "set",
      "--description",
      "changed",
      "--connection-limit",
      "500",
      "--timeout-client-data",
      "20000",
      "--wait",
      l.id,
    ]);
    expect((await api(`/v2/lbaas/listeners/${l.id}`)).body.listener).toMatchObject({
      description: "changed",
      connection_limit: 500,
      timeout_client_data: 20000,
      provisioning_status: "ACTIVE",
    });

    await os.ok(["loadbalancer", "listener", "unset", "--description", "--connection-limit", "--timeout-client-data", "--wait", l.id]);
    const after = (await api(`/v2/lbaas/listeners/${l.id}`)).body.listener;
    // Octavia resets these to their defaults: connection_limit -1, timeout_client_data 50000.
    expect(after).toMatchObject({ connection_limit: -1, timeout_client_data: 50000, provisioning_status: "ACTIVE" });
    expect(cleared(after.description)).toBe(true);
  });

  it("pool create --wait, show, list, set, unset", async (ctx) => {
    needs(ctx, "listener");
    const p = await os.json([
      "loadbalancer",
      "pool",
      "create",
      "--name",
      "cli-pool",
      "--protocol",
      "HTTP",
      "--lb-algorithm",
      "ROUND_ROBIN",
      "--listener",
      "cli-listener",
      "--session-persistence",
      "type=SOURCE_IP",
      "--wait",
    ]);
    made.pool = p.id;
    expect(p).toMatchObject({ name: "cli-pool", protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", project_id: PROJECT, admin_state_up: true });
    expect(lines(p.listeners)).toEqual([made.listener]);
    expect(lines(p.loadbalancers)).toEqual([made.lb]);
    expect((await api(`/v2/lbaas/listeners/${made.listener}`)).body.listener.default_pool_id).toBe(p.id);

    // A second pool, on the load balancer only: the L7 policy's redirect target, deleted later.
    const p2 = await os.json([
      "loadbalancer",
      "pool",
      "create",
      "--name",
      "cli-pool-2",
      "--protocol",
      "HTTP",
      "--lb-algorithm",
      "ROUND_ROBIN",
      "--loadbalancer",
      made.lb!,
      "--wait",
    ]);
    made.pool2 = p2.id;
    expect(p2).toMatchObject({ name: "cli-pool-2", provisioning_status: "ACTIVE" });
    expect(lines(p2.listeners)).toEqual([]);
    expect(lines(p2.loadbalancers)).toEqual([made.lb]);

    const [shown, listed] = await Promise.all([
      soft(os.json(["loadbalancer", "pool", "show", "cli-pool"])),
      soft(os.json(["loadbalancer", "pool", "list", "--loadbalancer", made.lb!])),
    ]);
    if (shown) expect(shown).toMatchObject({ id: p.id, provisioning_status: "ACTIVE", operating_status: "OFFLINE" });
    if (shown) expect(String(shown.session_persistence)).toContain("SOURCE_IP");
    if (listed) expect(listed).toHaveLength(2);
    if (listed)
      expect(listed).toContainEqual(
        expect.objectContaining({
          id: p.id,
          name: "cli-pool",
          protocol: "HTTP",
          lb_algorithm: "ROUND_ROBIN",
          provisioning_status: "ACTIVE",
        }),
      );

    await os.ok(["loadbalancer", "pool", "set", "--lb-algorithm", "LEAST_CONNECTIONS", "--description", "changed", "--wait", p.id]);
    expect((await api(`/v2/lbaas/pools/${p.id}`)).body.pool).toMatchObject({
      lb_algorithm: "LEAST_CONNECTIONS",
      description: "changed",
      provisioning_status: "ACTIVE",
    });

    await os.ok(["loadbalancer", "pool", "unset", "--description", "--session-persistence", "--wait", p.id]);
    const after = (await api(`/v2/lbaas/pools/${p.id}`)).body.pool;
    expect(after).toMatchObject({ session_persistence: null, lb_algorithm: "LEAST_CONNECTIONS", provisioning_status: "ACTIVE" });
    expect(cleared(after.description)).toBe(true);
  });

  it("member create --wait, show, list, set, unset", async (ctx) => {
    needs(ctx, "pool");
    const m = await os.json([
      "loadbalancer",
      "member",
      "create",
      "--name",
      "cli-member",
      "--address",
      "192.0.2.10",
      "--protocol-port",
      "8080",
      "--subnet-id",
      MEMBER_SUBNET,
      "--weight",
      "5",
      "--wait",
      "cli-pool",
    ]);
    made.member = m.id;
    expect(m).toMatchObject({
      name: "cli-member",
      address: "192.0.2.10",
      protocol_port: 8080,
      subnet_id: MEMBER_SUBNET,
      weight: 5,
      backup: false,
      project_id: PROJECT,
      admin_state_up: true,
    });
    expect(standIn.requests).toContain(`GET /v2.0/subnets?id=${MEMBER_SUBNET}`);

    const [shown, listed] = await Promise.all([
      soft(os.json(["loadbalancer", "member", "show", "cli-pool", "cli-member"])),
      soft(os.json(["loadbalancer", "member", "list", "cli-pool"])),
    ]);
    // No health monitor yet: NO_MONITOR.
    if (shown) expect(shown).toMatchObject({ id: m.id, provisioning_status: "ACTIVE", operating_status: "NO_MONITOR", weight: 5 });
    if (listed)
      expect(listed).toEqual([
        expect.objectContaining({
          id: m.id,
          name: "cli-member",
          address: "192.0.2.10",
          protocol_port: 8080,
          weight: 5,
          provisioning_status: "ACTIVE",
        }),
      ]);

    await os.ok([
      "loadbalancer",
      "member",
      "set",
      "--weight",
      "10",
      "--enable-backup",
      "--monitor-port",
      "9090",
      "--wait",
      "cli-pool",
      m.id,
    ]);
    expect((await api(`/v2/lbaas/pools/${made.pool}/members/${m.id}`)).body.member).toMatchObject({
      weight: 10,
      backup: true,
      monitor_port: 9090,
      provisioning_status: "ACTIVE",
    });

    await os.ok(["loadbalancer", "member", "unset", "--weight", "--backup", "--monitor-port", "--wait", "cli-pool", m.id]);
    // Octavia resets weight to 1 and backup to false; monitor_port goes to null.
    expect((await api(`/v2/lbaas/pools/${made.pool}/members/${m.id}`)).body.member).toMatchObject({
      weight: 1,
      backup: false,
      monitor_port: null,
      provisioning_status: "ACTIVE",
    });

    // A second member, left for the cascade delete.
    const m2 = await os.json([
      "loadbalancer",
      "member",
      "create",
      "--address",
      "192.0.2.11",
      "--protocol-port",
      "8080",
      "--wait",
      made.pool!,
    ]);
    made.member2 = m2.id;
    expect(m2).toMatchObject({ address: "192.0.2.11", protocol_port: 8080, weight: 1, provisioning_status: "ACTIVE" });
  });

  it("healthmonitor create --wait, show, list, set, unset", async (ctx) => {
    needs(ctx, "pool");
    const hm = await os.json([
      "loadbalancer",
      "healthmonitor",
      "create",
      "--name",
      "cli-hm",
      "--delay",
      "5",
      "--timeout",
      "3",
      "--max-retries",
      "3",
      "--type",
      "HTTP",
      "--url-path",
      "/healthz",
      "--expected-codes",
      "200,202",
      "--http-method",
      "GET",
      "--wait",
      "cli-pool",
    ]);
    made.hm = hm.id;
    expect(hm).toMatchObject({
      name: "cli-hm",
      type: "HTTP",
      delay: 5,
      timeout: 3,
      max_retries: 3,
      url_path: "/healthz",
      expected_codes: "200,202",
      http_method: "GET",
      project_id: PROJECT,
    });
    expect(lines(hm.pools)).toEqual([made.pool]);
    expect((await api(`/v2/lbaas/pools/${made.pool}`)).body.pool.healthmonitor_id).toBe(hm.id);

    const [shown, listed] = await Promise.all([
      soft(os.json(["loadbalancer", "healthmonitor", "show", "cli-hm"])),
      soft(os.json(["loadbalancer", "healthmonitor", "list"])),
    ]);
    if (shown) expect(shown).toMatchObject({ id: hm.id, provisioning_status: "ACTIVE", max_retries_down: 3 });
    if (listed)
      expect(listed).toContainEqual(
        expect.objectContaining({ id: hm.id, name: "cli-hm", type: "HTTP", project_id: PROJECT, admin_state_up: true }),
      );

    await os.ok([
      "loadbalancer",
      "healthmonitor",
      "set",
      "--delay",
      "10",
      "--max-retries-down",
      "5",
      "--http-method",
      "HEAD",
      "--wait",
      hm.id,
    ]);
    expect((await api(`/v2/lbaas/healthmonitors/${hm.id}`)).body.healthmonitor).toMatchObject({
      delay: 10,
      max_retries_down: 5,
      http_method: "HEAD",
      provisioning_status: "ACTIVE",
    });

    await os.ok([
      "loadbalancer",
      "healthmonitor",
      "unset",
      "--url-path",
      "--expected-codes",
      "--http-method",
      "--max-retries-down",
      "--wait",
      hm.id,
    ]);
    // Octavia resets the HTTP fields to their defaults.
    expect((await api(`/v2/lbaas/healthmonitors/${hm.id}`)).body.healthmonitor).toMatchObject({
      url_path: "/",
      expected_codes: "200",
      http_method: "GET",
      max_retries_down: 3,
      delay: 10,
      provisioning_status: "ACTIVE",
    });
  });

  it("l7policy create --wait, show, list, set, unset", async (ctx) => {
    needs(ctx, "listener", "pool2");
    const p = await os.json([
      "loadbalancer",
      "l7policy",
      "create",
      "--name",
      "cli-l7policy",
      "--description",
      "to pool 2",
      "--action",
      "REDIRECT_TO_POOL",
      "--redirect-pool",
      "cli-pool-2",
      "--position",
      "1",
      "--wait",
      "cli-listener",
    ]);
    made.l7policy = p.id;
    expect(p).toMatchObject({
      name: "cli-l7policy",
      action: "REDIRECT_TO_POOL",
      redirect_pool_id: made.pool2,
      listener_id: made.listener,
      position: 1,
      project_id: PROJECT,
      admin_state_up: true,
    });

    const [shown, listed] = await Promise.all([
      soft(os.json(["loadbalancer", "l7policy", "show", "cli-l7policy"])),
      soft(os.json(["loadbalancer", "l7policy", "list", "--listener", made.listener!])),
    ]);
    if (shown) expect(shown).toMatchObject({ id: p.id, provisioning_status: "ACTIVE", redirect_url: null });
    if (listed)
      expect(listed).toEqual([
        expect.objectContaining({ id: p.id, name: "cli-l7policy", action: "REDIRECT_TO_POOL", position: 1, provisioning_status: "ACTIVE" }),
      ]);

    await os.ok([
      "loadbalancer",
      "l7policy",
      "set",
      "--action",
      "REDIRECT_TO_URL",
      "--redirect-url",
      "http://example.com/",
      "--redirect-http-code",
      "301",
      "--wait",
      p.id,
    ]);
    // Redirecting to a URL drops the redirect pool.
    expect((await api(`/v2/lbaas/l7policies/${p.id}`)).body.l7policy).toMatchObject({
      action: "REDIRECT_TO_URL",
      redirect_url: "http://example.com/",
      redirect_http_code: 301,
      redirect_pool_id: null,
      provisioning_status: "ACTIVE",
    });

    await os.ok(["loadbalancer", "l7policy", "unset", "--description", "--name", "--wait", p.id]);
    const after = (await api(`/v2/lbaas/l7policies/${p.id}`)).body.l7policy;
    expect(after).toMatchObject({ action: "REDIRECT_TO_URL", provisioning_status: "ACTIVE" });
    expect(cleared(after.name)).toBe(true);
    expect(cleared(after.description)).toBe(true);
  });

  it("l7rule create --wait, show, list, set, unset", async (ctx) => {
    needs(ctx, "l7policy");
    // No --wait here: python-octaviaclient 3.1.0's `l7rule create --wait` waits for the load balancer,
    // then re-reads the rule with l7rule_show(l7policy_id, rule_id), arguments swapped (the method
    // takes the rule first), so it asks GET /l7policies/<rule id>/rules/<policy id> and fails with
    // 404 against any Octavia. The rule's load balancer is awaited through the API instead.
    const r = await os.json([
      "loadbalancer",
      "l7rule",
      "create",
      "--type",
      "PATH",
      "--compare-type",
      "STARTS_WITH",
      "--value",
      "/api",
      made.l7policy!,
    ]);
    made.l7rule = r.id;
    expect(r).toMatchObject({
      type: "PATH",
      compare_type: "STARTS_WITH",
      value: "/api",
      invert: false,
      key: null,
      provisioning_status: "PENDING_CREATE",
      project_id: PROJECT,
      admin_state_up: true,
    });
    expect((await waitSettled(stack, made.lb!)).body.loadbalancer.provisioning_status).toBe("ACTIVE");

    const [shown, listed] = await Promise.all([
      soft(os.json(["loadbalancer", "l7rule", "show", made.l7policy!, r.id])),
      soft(os.json(["loadbalancer", "l7rule", "list", made.l7policy!])),
    ]);
    if (shown) expect(shown).toMatchObject({ id: r.id, provisioning_status: "ACTIVE", value: "/api" });
    if (listed)
      expect(listed).toEqual([
        expect.objectContaining({ id: r.id, type: "PATH", compare_type: "STARTS_WITH", value: "/api", provisioning_status: "ACTIVE" }),
      ]);

    await os.ok([
      "loadbalancer",
      "l7rule",
      "set",
      "--type",
      "HEADER",
      "--key",
      "X-Version",
      "--compare-type",
      "EQUAL_TO",
      "--value",
      "2",
      "--invert",
      "--wait",
      made.l7policy!,
      r.id,
    ]);
    expect((await api(`/v2/lbaas/l7policies/${made.l7policy}/rules/${r.id}`)).body.rule).toMatchObject({
      type: "HEADER",
      key: "X-Version",
      compare_type: "EQUAL_TO",
      value: "2",
      invert: true,
      provisioning_status: "ACTIVE",
    });

    await os.ok(["loadbalancer", "l7rule", "unset", "--invert", "--wait", made.l7policy!, r.id]);
    // Octavia turns a null invert into false.
    expect((await api(`/v2/lbaas/l7policies/${made.l7policy}/rules/${r.id}`)).body.rule).toMatchObject({
      invert: false,
      key: "X-Version",
      provisioning_status: "ACTIVE",
    });
  });

  // Octavia's status tree: loadbalancer → listeners → pools → health_monitor and members (no L7 policies).
  it("loadbalancer status show and stats show", async (ctx) => {
    needs(ctx, "lb");
    const [statusOut, stats] = await Promise.all([
      os.ok(["loadbalancer", "status", "show", made.lb!]),
      os.json(["loadbalancer", "stats", "show", made.lb!]),
    ]);
    const status = JSON.parse(statusOut);
    expect(status.loadbalancer).toMatchObject({ id: made.lb, name: "cli-lb", provisioning_status: "ACTIVE", operating_status: "OFFLINE" });
    if (made.listener) {
      const listener = status.loadbalancer.listeners.find((l: { id: string }) => l.id === made.listener);
      expect(listener).toMatchObject({ name: "cli-listener", provisioning_status: "ACTIVE" });
      if (made.pool) {
        const pool = listener.pools.find((p: { id: string }) => p.id === made.pool);
        expect(pool).toMatchObject({ name: "cli-pool", provisioning_status: "ACTIVE" });
        if (made.hm)
          expect(pool.health_monitor).toMatchObject({
            id: made.hm,
            name: "cli-hm",
            type: "HTTP",
            provisioning_status: "ACTIVE",
            operating_status: expect.any(String),
          });
        if (made.member) {
          expect(pool.members.map((m: { id: string }) => m.id).sort()).toEqual([made.member, made.member2].filter(Boolean).sort());
          expect(pool.members.find((m: { id: string }) => m.id === made.member)).toMatchObject({
            name: "cli-member",
            address: "192.0.2.10",
            protocol_port: 8080,
            provisioning_status: "ACTIVE",
          });
        }
      }
    }
    // No traffic through no-op amphorae: every counter is 0.
    expect(stats).toEqual({ active_connections: 0, bytes_in: 0, bytes_out: 0, request_errors: 0, total_connections: 0 });
  });

  it("amphora list, show, configure --wait, failover --wait", async (ctx) => {
    needs(ctx, "lb");
    const amps = await os.json(["loadbalancer", "amphora", "list", "--loadbalancer", made.lb!]);
    expect(amps).toEqual([
      expect.objectContaining({
        loadbalancer_id: made.lb,
        status: "ALLOCATED",
        role: "STANDALONE",
        lb_network_ip: "192.0.2.1",
        ha_ip: "198.51.100.1",
      }),
    ]);
    const ampId: string = amps[0].id;

    const amp = await os.json(["loadbalancer", "amphora", "show", ampId]);
    expect(amp).toMatchObject({
      id: ampId,
      loadbalancer_id: made.lb,
      status: "ALLOCATED",
      role: "STANDALONE",
      lb_network_ip: "192.0.2.1",
      ha_ip: "198.51.100.1",
    });
    expect(amp.compute_id).toBeTruthy();

    await os.ok(["loadbalancer", "amphora", "configure", "--wait", ampId]);
    expect((await api(`/v2/lbaas/loadbalancers/${made.lb}`)).body.loadbalancer.provisioning_status).toBe("ACTIVE");

    await os.ok(["loadbalancer", "amphora", "failover", "--wait", ampId]);
    const after = await os.json(["loadbalancer", "amphora", "list", "--loadbalancer", made.lb!]);
    expect(after).toEqual([expect.objectContaining({ loadbalancer_id: made.lb, status: "ALLOCATED", role: "STANDALONE" })]);
    expect(after[0].id).not.toBe(ampId);
    made.amphora = after[0].id;
    expect((await api(`/v2/lbaas/loadbalancers/${made.lb}`)).body.loadbalancer.provisioning_status).toBe("ACTIVE");
  });

  it("loadbalancer failover --wait", async (ctx) => {
    needs(ctx, "lb", "amphora");
    await os.ok(["loadbalancer", "failover", "--wait", made.lb!]);
    const after = (await api(`/v2/octavia/amphorae?loadbalancer_id=${made.lb}`)).body.amphorae;
    expect(after).toEqual([expect.objectContaining({ loadbalancer_id: made.lb, status: "ALLOCATED", role: "STANDALONE" })]);
    expect(after[0].id).not.toBe(made.amphora);
    expect((await api(`/v2/lbaas/loadbalancers/${made.lb}`)).body.loadbalancer).toMatchObject({
      provisioning_status: "ACTIVE",
      operating_status: "OFFLINE",
    });
  });

  // Quotas, providers, flavors and availability zones touch nothing of the load balancer's: their
  // steps run in a second lane, one after the other, beside the load balancer's steps (started with
  // the stack in beforeAll); these tests, in the scenario's order, report how each went.
  it("quota defaults show, show, set, reset", () => catalogStep("quota"));
  it("provider list, provider capability list", () => catalogStep("provider"));
  it("flavorprofile and flavor create, list, delete", () => catalogStep("flavor"));
  it("availabilityzoneprofile and availabilityzone create, list, delete", () => catalogStep("availabilityZone"));

  it("l7rule, l7policy, healthmonitor, member, pool, listener delete --wait", async (ctx) => {
    needs(ctx, "lb");
    const gone = async (path: string) => expect((await api(path)).status, path).toBe(404);
    if (made.l7rule) {
      await os.ok(["loadbalancer", "l7rule", "delete", "--wait", made.l7policy!, made.l7rule]);
      await gone(`/v2/lbaas/l7policies/${made.l7policy}/rules/${made.l7rule}`);
    }
    if (made.l7policy) {
      await os.ok(["loadbalancer", "l7policy", "delete", "--wait", made.l7policy]);
      await gone(`/v2/lbaas/l7policies/${made.l7policy}`);
    }
    if (made.hm) {
      await os.ok(["loadbalancer", "healthmonitor", "delete", "--wait", made.hm]);
      await gone(`/v2/lbaas/healthmonitors/${made.hm}`);
      expect((await api(`/v2/lbaas/pools/${made.pool}`)).body.pool.healthmonitor_id).toBeNull();
    }
    if (made.member) {
      await os.ok(["loadbalancer", "member", "delete", "--wait", made.pool!, made.member]);
      await gone(`/v2/lbaas/pools/${made.pool}/members/${made.member}`);
    }
    if (made.pool2) {
      await os.ok(["loadbalancer", "pool", "delete", "--wait", made.pool2]);
      await gone(`/v2/lbaas/pools/${made.pool2}`);
    }
    // A listener of its own to delete; cli-listener stays for the cascade.
    const l2 = await os.json([
      "loadbalancer",
      "listener",
      "create",
      "--name",
      "cli-listener-2",
      "--protocol",
      "TCP",
      "--protocol-port",
      "8443",
      "--wait",
      made.lb!,
    ]);
    expect(l2).toMatchObject({ protocol: "TCP", protocol_port: 8443 });
    await os.ok(["loadbalancer", "listener", "delete", "--wait", l2.id]);
    await gone(`/v2/lbaas/listeners/${l2.id}`);
    expect((await api(`/v2/lbaas/loadbalancers/${made.lb}`)).body.loadbalancer.provisioning_status).toBe("ACTIVE");
  });

  it("loadbalancer delete --cascade --wait", async (ctx) => {
    needs(ctx, "lb");
    await os.ok(["loadbalancer", "delete", "--cascade", "--wait", made.lb!]);
    expect((await api(`/v2/lbaas/loadbalancers/${made.lb}`)).status).toBe(404);
    // Everything that was left under it went with it.
    if (made.listener) expect((await api(`/v2/lbaas/listeners/${made.listener}`)).status).toBe(404);
    if (made.pool) expect((await api(`/v2/lbaas/pools/${made.pool}`)).status).toBe(404);
    if (made.member2) expect((await api(`/v2/lbaas/pools/${made.pool}/members/${made.member2}`)).status).toBe(404);
    expect((await api(`/v2/octavia/amphorae?loadbalancer_id=${made.lb}`)).body.amphorae).toEqual([]);
    const shown = await os.run(["loadbalancer", "show", made.lb!]);
    expect(shown.code).not.toBe(0);
    expect(shown.stderr).toContain(`Unable to locate ${made.lb} in loadbalancers`);
    expect(await os.json(["loadbalancer", "list"])).not.toContainEqual(expect.objectContaining({ id: made.lb }));
  });
});
