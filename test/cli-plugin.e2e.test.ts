// Ottava's client additions (clients/python: the `openstack loadbalancer resize`, `resize cancel` and
// `member batch set` commands, and the openstacksdk functions), as .ci/run installs them into Debian's
// python3, against the stack as `npm start` runs it. The real `openstack` CLI names everything by name.
//
// One stack for the file. Its no-op compute driver takes 4 s to build an amphora
// (OTTAVA_NOOP_LATENCY), so a resize of an ACTIVE_STANDBY load balancer (two builds, one after the
// other) is still running when the next CLI process, a second or two later, asks to cancel it. Its
// log is at info: each API request is a "request" line, which shows when the CLI sent none.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual, promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStandIn, type StandIn } from "@ottava/local";
import { SUBNET } from "@ottava/core/testing";
import { makeCli, type Cli } from "./support/cli/openstack";
import { startStack, waitSettled, type Stack } from "./support/stack";

const run = promisify(execFile);
const PLUGIN = fileURLToPath(new URL("../clients/python", import.meta.url));
const INSTALL = "/usr/bin/python3 -m pip install --no-index --no-build-isolation --break-system-packages ./clients/python";

let stack: Stack;
let standIn: StandIn;
let os: Cli;
let work: string;
const flavors: Record<string, string> = {};
const lbs: Record<string, string> = {};
const pools: Record<string, string> = {};

/** What the `openstack` CLI's python3 has installed of ottava-client: its modules' text and its commands. */
const INSTALLED = `
import importlib.metadata as md, json
try:
    d = md.distribution("ottava-client")
except md.PackageNotFoundError:
    print("null")
else:
    print(json.dumps({
        "modules": {f.name: f.read_text() for f in d.files if f.parts[0] == "ottavaclient" and f.suffix == ".py"},
        "commands": {e.name: e.value for e in d.entry_points if e.group == "openstack.load_balancer.v2"},
    }))
`;

/**
 * The plugin the `openstack` CLI's python3 runs must be this checkout's (its modules and the commands
 * of its pyproject.toml): when it is not installed, or installed from another checkout, the test says
 * what to run.
 */
async function requireInstalledPlugin() {
  const installed = JSON.parse((await run("/usr/bin/python3", ["-c", INSTALLED], { timeout: 30_000 })).stdout);
  const dir = join(PLUGIN, "ottavaclient");
  const modules = Object.fromEntries(
    readdirSync(dir)
      .filter((f) => f.endsWith(".py"))
      .map((f) => [f, readFileSync(join(dir, f), "utf8")]),
  );
  const section = /^\[project\.entry-points\."openstack\.load_balancer\.v2"\]\n((?:[^[\n].*\n)*)/m.exec(
    readFileSync(join(PLUGIN, "pyproject.toml"), "utf8"),
  );
  const commands = Object.fromEntries([...(section?.[1] ?? "").matchAll(/^(\w+) = "(.+)"$/gm)].map((m) => [m[1], m[2]]));
  expect(Object.keys(commands).length, "pyproject.toml's openstack.load_balancer.v2 entry points").toBeGreaterThan(0);
  let differs = "";
  if (!installed) differs = "it is not installed";
  else if (!isDeepStrictEqual(installed.modules, modules)) differs = "its modules differ";
  else if (!isDeepStrictEqual(installed.commands, commands)) differs = "its commands differ";
  if (differs) {
    throw new Error(
      `the openstack CLI's python3 lacks this checkout's clients/python (${differs}); install it as .ci/run does: ${INSTALL}`,
    );
  }
}

async function api(method: string, path: string, body?: unknown) {
  const res = await stack.call(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

async function flavor(name: string, data: Record<string, unknown>) {
  const fp = await api("POST", "/v2/lbaas/flavorprofiles", {
    flavorprofile: { name: `${name}-fp`, provider_name: "amphora", flavor_data: JSON.stringify(data) },
  });
  const f = await api("POST", "/v2/lbaas/flavors", { flavor: { name, flavor_profile_id: fp.flavorprofile.id } });
  flavors[name] = f.flavor.id;
}

/** The API requests the stack has logged so far, as "METHOD path". */
function requests(): string[] {
  return stack
    .output()
    .split("\n")
    .flatMap((l) => {
      if (!l.startsWith("{")) return [];
      try {
        const line = JSON.parse(l);
        return line.message === "request" ? [`${line.method} ${line.path}`] : [];
      } catch {
        return [];
      }
    });
}

const members = async (pool: string) =>
  ((await api("GET", `/v2/lbaas/pools/${pools[pool]}/members`)).members as any[])
    .map((m) => `${m.address}:${m.protocol_port} w${m.weight}`)
    .sort();

/** The message OSC prints for a failed command (under --debug, also on cliff's "clean_up <Command>: " line after the traceback). */
const failure = (stderr: string) => /^clean_up \w+: (.*)$/m.exec(stderr)?.[1];

describe("Ottava's openstack CLI commands and openstacksdk functions", { timeout: 180_000 }, () => {
  beforeAll(async () => {
    await requireInstalledPlugin();
    work = mkdtempSync(join(tmpdir(), "ottava-plugin-"));
    [stack, standIn] = await Promise.all([
      startStack(["--in-memory"], { OTTAVA_LOG_LEVEL: "info", OTTAVA_NOOP_LATENCY: "compute.build:4000" }),
      startStandIn(),
    ]);
    os = makeCli(standIn.url, stack.url, { timeoutMs: 90_000, pollSeconds: 0.2 });
    await flavor("plugin-small", { loadbalancer_topology: "SINGLE", compute_flavor: "m1.small" });
    await flavor("plugin-large", { loadbalancer_topology: "SINGLE", compute_flavor: "m1.large" });
    await flavor("plugin-ha-small", { loadbalancer_topology: "ACTIVE_STANDBY", compute_flavor: "m1.small" });
    await flavor("plugin-ha-large", { loadbalancer_topology: "ACTIVE_STANDBY", compute_flavor: "m1.large" });
    const pool = (name: string, ms: { address: string; weight?: number }[]) => ({
      name,
      protocol: "HTTP",
      lb_algorithm: "ROUND_ROBIN",
      members: ms.map((m) => ({ ...m, protocol_port: 80, subnet_id: SUBNET })),
    });
    const made = await Promise.all([
      api("POST", "/v2/lbaas/loadbalancers", {
        loadbalancer: { name: "plugin-resize", vip_subnet_id: SUBNET, flavor_id: flavors["plugin-small"] },
      }),
      api("POST", "/v2/lbaas/loadbalancers", {
        loadbalancer: { name: "plugin-cancel", vip_subnet_id: SUBNET, flavor_id: flavors["plugin-ha-small"] },
      }),
      // Three pools, each the default pool of a listener, in one fully populated create.
      api("POST", "/v2/lbaas/loadbalancers", {
        loadbalancer: {
          name: "plugin-pools",
          vip_subnet_id: SUBNET,
          listeners: [
            { protocol: "HTTP", protocol_port: 80, default_pool: pool("plugin-pool-a", [{ address: "10.0.0.1" }]) },
            { protocol: "HTTP", protocol_port: 81, default_pool: pool("plugin-pool-b", [{ address: "10.0.1.1", weight: 1 }]) },
            {
              protocol: "HTTP",
              protocol_port: 82,
              default_pool: pool("plugin-pool-c", [{ address: "10.0.2.1" }, { address: "10.0.2.2" }]),
            },
          ],
        },
      }),
    ]);
    for (const { loadbalancer } of made) {
      lbs[loadbalancer.name] = loadbalancer.id;
      expect((await waitSettled(stack, loadbalancer.id, 30_000)).body.loadbalancer.provisioning_status).toBe("ACTIVE");
    }
    for (const p of (await api("GET", `/v2/lbaas/pools?loadbalancer_id=${lbs["plugin-pools"]}`)).pools) pools[p.name] = p.id;
  }, 120_000);

  afterAll(async () => {
    await Promise.all([stack?.stop(), standIn?.close()]);
    os?.dispose();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("resize --flavor <name> --wait <name>: polls until ACTIVE, then the load balancer has the new flavor_id", async () => {
    const r = await os.run(["loadbalancer", "resize", "--flavor", "plugin-large", "--wait", "plugin-resize"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    // The names were resolved through the list endpoints, as python-octaviaclient resolves them.
    expect(r.stderr).toMatch(/REQ: curl -g -i -X GET .*\/v2\.0\/lbaas\/loadbalancers\?name=plugin-resize/);
    expect(r.stderr).toMatch(/REQ: curl -g -i -X GET .*\/v2\.0\/lbaas\/flavors\?name=plugin-large/);
    expect(r.stderr).toContain(`"new_flavor_id": "${flavors["plugin-large"]}"`);
    // --wait polled the load balancer while it was PENDING_UPDATE (the build alone takes 4 s).
    expect(r.stderr).toMatch(/^RESP BODY: .*"provisioning_status": ?"PENDING_UPDATE"/m);
    const lb = (await api("GET", `/v2/lbaas/loadbalancers/${lbs["plugin-resize"]}`)).loadbalancer;
    expect(lb).toMatchObject({ provisioning_status: "ACTIVE", flavor_id: flavors["plugin-large"] });
  });

  it("resize to another topology is refused with the API's message, formatted as python-octaviaclient formats it", async () => {
    const r = await os.run(["loadbalancer", "resize", "--flavor", "plugin-ha-large", "plugin-resize"]);
    expect(r.code).toBe(1);
    const [lb, f] = [lbs["plugin-resize"], flavors["plugin-ha-large"]];
    expect(failure(r.stderr)).toMatch(
      new RegExp(
        `^Validation failure: Flavor ${f} has topology ACTIVE_STANDBY; a resize cannot change the topology of Load Balancer ${lb} \\(SINGLE\\)\\. \\(HTTP 400\\) \\(Request-ID: req-[0-9a-f-]+\\)$`,
      ),
    );
  });

  it("resize cancel <name> --wait while a resize runs: the load balancer keeps its flavor", async () => {
    await os.ok(["loadbalancer", "resize", "--flavor", "plugin-ha-large", "plugin-cancel"]);
    const r = await os.run(["loadbalancer", "resize", "cancel", "--wait", "plugin-cancel"]);
    // A 409 here ("... is committed and can no longer be cancelled") is a cancel later than the two builds' 8 s.
    expect(r.code, failure(r.stderr)).toBe(0);
    expect(r.stderr).toMatch(/RESP: \[202\]/);
    const lb = (await api("GET", `/v2/lbaas/loadbalancers/${lbs["plugin-cancel"]}`)).loadbalancer;
    expect(lb).toMatchObject({ provisioning_status: "ACTIVE", flavor_id: flavors["plugin-ha-small"] });
  });

  it("member batch set <yaml> --wait: adds, changes and removes members across three pools named by name and id", async () => {
    const file = join(work, "members.yaml");
    writeFileSync(
      file,
      [
        "# pool a gains 10.0.0.2, pool b's member changes weight, pool c loses 10.0.2.2",
        "members:",
        "  - {pool_id: plugin-pool-a, address: 10.0.0.1, protocol_port: 80}",
        "  - {pool_id: plugin-pool-a, address: 10.0.0.2, protocol_port: 80, name: added}",
        "  - pool_id: plugin-pool-b",
        "    address: 10.0.1.1",
        "    protocol_port: 80",
        "    weight: 7",
        `  - {pool_id: ${pools["plugin-pool-c"]}, address: 10.0.2.1, protocol_port: 80}`,
        "",
      ].join("\n"),
    );
    const r = await os.run(["loadbalancer", "member", "batch", "set", "--wait", file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/REQ: curl -g -i -X PUT .*\/v2\.0\/lbaas\/pools\/members /);
    // The stack's log has it (the next test reads the log for requests that must not be there).
    expect(requests()).toContain("PUT /v2.0/lbaas/pools/members");
    expect((await api("GET", `/v2/lbaas/loadbalancers/${lbs["plugin-pools"]}`)).loadbalancer.provisioning_status).toBe("ACTIVE");
    expect(await members("plugin-pool-a")).toEqual(["10.0.0.1:80 w1", "10.0.0.2:80 w1"]);
    expect(await members("plugin-pool-b")).toEqual(["10.0.1.1:80 w7"]);
    expect(await members("plugin-pool-c")).toEqual(["10.0.2.1:80 w1"]);
  });

  it("member batch set refuses a malformed file, and sends no request", async () => {
    // (The check of the body's shape, which the SDK shares, is the openstacksdk test's.)
    const broken = join(work, "broken.json");
    writeFileSync(broken, '{"members": [{"pool_id": "plugin-pool-a", "address": "10.0.0.9", "protocol_port": 80}\n');
    const before = requests().length;
    const r = await os.run(["loadbalancer", "member", "batch", "set", broken]);
    expect(r.code).toBe(1);
    expect(failure(r.stderr)).toBe(
      `Unable to parse ${broken} as JSON or YAML: expected ',' or ']', but got '<stream end>' (line 2, column 1)`,
    );
    expect(r.stderr).not.toMatch(/^REQ: /m);
    expect(requests().slice(before)).toEqual([]);
    expect(await members("plugin-pool-a")).toEqual(["10.0.0.1:80 w1", "10.0.0.2:80 w1"]);
  });

  it("openstacksdk: resize, cancel, the cross-pool update and the wait helper", async () => {
    const script = fileURLToPath(new URL("./support/clients/ottava-sdk.py", import.meta.url));
    const { stdout } = await run(
      "/usr/bin/python3",
      [script, stack.url, "plugin-resize", "plugin-small", "plugin-pool-a", "plugin-pool-b", "plugin-pool-c"],
      { timeout: 120_000, env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", NO_PROXY: "127.0.0.1,localhost" } },
    );
    const seen = JSON.parse(stdout);
    expect(seen).toEqual({
      flavor_before: flavors["plugin-large"],
      after_cancel: flavors["plugin-large"],
      after_resize: ["ACTIVE", flavors["plugin-small"]],
      idle_cancel: [409, `Load Balancer ${lbs["plugin-resize"]} has no resize in progress.`],
      bad_member: 'members[0] must name its pool (by name or ID) in "pool_id".',
      cross_pool_lb: lbs["plugin-pools"],
      members: {
        "plugin-pool-a": ["10.0.0.1:80", "10.0.0.2:80", "10.9.0.1:8080"],
        "plugin-pool-b": ["10.0.1.1:80", "10.9.0.2:8080"],
        "plugin-pool-c": ["10.0.2.1:80", "10.9.0.3:8080"],
      },
    });
  });
});
