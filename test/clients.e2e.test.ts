// The client libraries that Kubernetes, Terraform and Ansible users run against Octavia, against the
// stack as `npm start` runs it: gophercloud (Debian's 0.12, built with Debian's Go) and openstacksdk
// (Debian's 0.101). Each creates a load balancer tree through its own API calls, then finds it again
// through the list filters it sends (`healthmonitors?pool_id=`, `listeners?load_balancer_id=`,
// `l7policies/<id>/rules?l7policy_id=`, ...), which Octavia accepts as data-model attributes.
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

let stack: Stack;
let work: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "ottava-clients-"));
  stack = await startStack();
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  rmSync(work, { recursive: true, force: true });
});

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
    const env = { ...process.env, GO111MODULE: "off", GOPATH: "/usr/share/gocode", GOCACHE: join(work, "gocache"), GOFLAGS: "" };
    await run("go", ["build", "-o", binary, source("gophercloud.go")], { env, timeout: 180_000 });
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
