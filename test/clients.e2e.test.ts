// The client libraries that Kubernetes, Terraform and Ansible users run against Octavia, against the
// stack as `npm start` runs it: gophercloud (Debian's 0.12, built with Debian's Go) and openstacksdk
// (Debian's 0.101). Each creates a load balancer tree through its own API calls, then finds it again
// through the list filters it sends (`healthmonitors?pool_id=`, `listeners?load_balancer_id=`,
// `l7policies/<id>/rules?l7policy_id=`, ...), which Octavia accepts as data-model attributes. And Ottava's
// own gophercloud package (clients/gophercloud): its gophercloud 0.12 copy, derived from the v2 source by
// clients/gophercloud/scripts/derive-v0.12.mjs, passes its unit tests and resizes, cancels a resize and
// updates members across pools. The no-op compute driver's builds take a second
// (OTTAVA_NOOP_LATENCY), so a cancel arrives while a resize runs.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "./support/stack";
import { SUBNET } from "@ottava/core/testing";

const run = promisify(execFile);
const source = (f: string) => fileURLToPath(new URL(`./support/clients/${f}`, import.meta.url));
const ottavaGophercloud = fileURLToPath(new URL("../clients/gophercloud", import.meta.url));

let stack: Stack;
let work: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "ottava-clients-"));
  stack = await startStack(["--in-memory"], { OTTAVA_NOOP_LATENCY: "compute.build:1000" });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** Debian's Go in GOPATH mode, with Debian's gophercloud and the derived copy; one build cache for the file. */
const goEnv = () => ({
  ...process.env,
  GO111MODULE: "off",
  GOPATH: `${join(work, "gopath")}:/usr/share/gocode`,
  GOCACHE: join(work, "gocache"),
  GOFLAGS: "",
});

/** A flavor of the amphora provider whose profile says `data`. */
async function flavor(name: string, data: Record<string, unknown>): Promise<string> {
  const profile = await stack.call("POST", "/v2/lbaas/flavorprofiles", {
    flavorprofile: { name, provider_name: "amphora", flavor_data: JSON.stringify(data) },
  });
  expect(profile.status).toBe(201);
  const f = await stack.call("POST", "/v2/lbaas/flavors", { flavor: { name, flavor_profile_id: profile.body.flavorprofile.id } });
  expect(f.status).toBe(201);
  return f.body.flavor.id as string;
}

/** The objects a client made, and what its filtered lists found. */
interface Made {
  loadbalancer: string;
  listener: string;
  pool: string;
  monitor: string;
  l7policy: string;
  rule?: string;
  found: Record<string, string[] | string>;
}

describe("client libraries", () => {
  it("gophercloud: creates a tree and finds it by pool_id, loadbalancer_id, listener_id and rule type", async () => {
    const binary = join(work, "gophercloud-client");
    await run("go", ["build", "-o", binary, source("gophercloud.go")], { env: goEnv(), timeout: 180_000 });
    const { stdout } = await run(binary, [stack.url, SUBNET, "gophercloud-project"], { timeout: 60_000 });
    const made = JSON.parse(stdout) as Made;
    expect(made.found).toEqual({
      "monitors?pool_id": [made.monitor],
      "listeners?loadbalancer_id": [made.listener],
      "pools?loadbalancer_id": [made.pool],
      "l7policies?listener_id": [made.l7policy],
      "rules?type": [expect.any(String)],
    });
    const lb = await stack.call("GET", `/v2/lbaas/loadbalancers/${made.loadbalancer}`);
    expect(lb.body.loadbalancer).toMatchObject({
      project_id: "gophercloud-project",
      provisioning_status: "ACTIVE",
      listeners: [{ id: made.listener }],
    });
  }, 240_000);

  it("Ottava's gophercloud package: the derived 0.12 copy passes its unit tests, resizes, cancels and updates members across pools", async () => {
    // The v2 source cannot be built here (it needs a newer Go than Debian's); gofmt still parses it.
    const unformatted = await run("gofmt", ["-l", ottavaGophercloud]);
    expect(unformatted.stdout).toBe("");
    const derived = (
      await run(process.execPath, [join(ottavaGophercloud, "scripts/derive-v0.12.mjs"), join(work, "gopath")])
    ).stdout.trim();
    expect((await run("gofmt", ["-l", derived])).stdout).toBe("");
    const env = goEnv();
    const unit = await run("go", ["test", "-count=1", "ottava/clients/gophercloud/ottava/..."], { env, timeout: 180_000 });
    expect(unit.stdout).toMatch(/^ok\s+ottava\/clients\/gophercloud\/ottava\/testing/m);

    const small = await flavor("gophercloud-small", { loadbalancer_topology: "SINGLE", compute_flavor: "m1.small" });
    const large = await flavor("gophercloud-large", { loadbalancer_topology: "SINGLE", compute_flavor: "m1.large" });
    const binary = join(work, "gophercloud-ottava");
    await run("go", ["build", "-o", binary, source("gophercloud-ottava.go")], { env, timeout: 180_000 });
    const { stdout } = await run(binary, [stack.url, SUBNET, "gophercloud-project", small, large], { timeout: 120_000 });
    const seen = JSON.parse(stdout);
    const lb = seen.loadbalancer as string;
    expect(seen).toEqual({
      loadbalancer: lb,
      resized_flavor: large,
      resize_while_pending: `409 Load Balancer ${lb} is immutable and cannot be updated.`,
      cancelled_flavor: large,
      cancel_when_idle: `409 Load Balancer ${lb} has no resize in progress.`,
      resize_without_flavor_is_fault: false,
      unknown_pool: `404 Pool ${lb} not found.`,
      member_without_pool_is_missing_input: true,
      members: {
        "0": ["192.0.2.1:30080 5"],
        "1": ["192.0.2.1:30443 1", "192.0.2.3:30443 1"],
        "2": ["192.0.2.1:30808 1", "192.0.2.4:30808 1"],
      },
    });
    const amphorae = await stack.call("GET", `/v2/octavia/amphorae?loadbalancer_id=${lb}`);
    expect(amphorae.body.amphorae.map((a: { status: string }) => a.status)).toEqual(["ALLOCATED"]);
  }, 300_000);

  it("openstacksdk: creates a tree and finds it by load_balancer_id, pool_id, l7policy_id and name", async () => {
    const { stdout } = await run("/usr/bin/python3", [source("openstacksdk.py"), stack.url, SUBNET, "sdk-project"], { timeout: 120_000 });
    const made = JSON.parse(stdout) as Made;
    expect(made.found).toEqual({
      "listeners?load_balancer_id": [made.listener],
      find_listener: made.listener,
      "health_monitors?pool_id": [made.monitor],
      "l7_rules?l7policy_id": [made.rule],
      "pools?loadbalancer_id": [made.pool],
    });
  }, 180_000);
});
