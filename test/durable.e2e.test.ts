// The local runner is as durable as Step Functions: `npm start` killed with SIGKILL (its whole process
// group, DynamoDB Local's Java too) in the middle of flows of every kind, and started again on the
// same data directory, continues every execution that was running (from its journal in the table),
// Map iterations included, and each ends where an uninterrupted run would: nothing lost, nothing
// duplicated, no ERROR, nothing PENDING, and housekeeping's stuck-state repair never fires for them.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { javaFor, startStack, waitSettled, type Stack } from "./support/stack";
import { SUBNET } from "@ottava/core/testing";

const LBS = "/v2/lbaas/loadbalancers";
// Slow enough that every flow is in flight when the stack is killed; the same after the restart.
const ENV = {
  OTTAVA_NOOP_LATENCY: "compute.build:1500,compute.delete:3000,amphora.update:6000",
  OTTAVA_LOADBALANCER_TOPOLOGY: "ACTIVE_STANDBY",
  // Housekeeping's repair runs every second (and at start): it must leave the continued executions alone.
  OTTAVA_CLEANUP_INTERVAL: "1",
  OTTAVA_LOG_LEVEL: "info",
};

const ok = async (stack: Stack, method: string, path: string, body?: unknown) => {
  const res = await stack.call(method, path, body);
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
};

const tree = (name: string) => ({
  loadbalancer: {
    name,
    vip_subnet_id: SUBNET,
    listeners: [
      {
        name: `${name}-http`,
        protocol: "HTTP",
        protocol_port: 80,
        default_pool: {
          name: `${name}-web`,
          protocol: "HTTP",
          lb_algorithm: "ROUND_ROBIN",
          members: [
            { address: "192.0.2.10", protocol_port: 8080 },
            { address: "192.0.2.11", protocol_port: 8080 },
          ],
          healthmonitor: { type: "HTTP", delay: 5, timeout: 3, max_retries: 3 },
        },
        l7policies: [{ action: "REJECT", rules: [{ type: "PATH", compare_type: "STARTS_WITH", value: "/admin" }] }],
      },
    ],
    pools: [
      { name: `${name}-api`, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", members: [{ address: "192.0.2.20", protocol_port: 9000 }] },
    ],
  },
});

const members = async (stack: Stack, poolId: string) =>
  (
    (await ok(stack, "GET", `/v2/lbaas/pools/${poolId}/members`)).members as {
      address: string;
      protocol_port: number;
      weight: number;
      provisioning_status: string;
    }[]
  )
    .map((m) => `${m.address}:${m.protocol_port}/w${m.weight}/${m.provisioning_status}`)
    .sort();
const amphorae = async (stack: Stack, lbId: string) =>
  (await ok(stack, "GET", `/v2/octavia/amphorae?loadbalancer_id=${lbId}`)).amphorae as {
    id: string;
    role: string;
    status: string;
    compute_flavor?: string | null;
  }[];
const poolsOf = async (stack: Stack, lbId: string): Promise<Record<string, string>> =>
  Object.fromEntries(
    ((await ok(stack, "GET", `/v2/lbaas/pools?loadbalancer_id=${lbId}`)).pools as { id: string; name: string }[]).map((p) => [
      p.name,
      p.id,
    ]),
  );

describe("npm start killed with SIGKILL mid-flow", () => {
  it("continues every running flow when it comes back, each ending as an uninterrupted run", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ottava-durable-"));
    let stack = await startStack(["--data-dir", dataDir], ENV, { detached: true });
    const ids: Record<string, string> = {};
    const old: Record<string, string[]> = {};
    try {
      // The group is the stack's own (setsid), with DynamoDB Local's Java in it.
      expect(execFileSync("ps", ["-o", "pgid=", "-p", String(stack.proc.pid)], { encoding: "utf8" }).trim()).toBe(String(stack.pgid));
      expect(javaFor(dataDir)).toHaveLength(1);
      const fp = await ok(stack, "POST", "/v2/lbaas/flavorprofiles", {
        flavorprofile: {
          name: "large",
          provider_name: "amphora",
          flavor_data: JSON.stringify({ loadbalancer_topology: "ACTIVE_STANDBY", compute_flavor: "m1.large" }),
        },
      });
      const large = (await ok(stack, "POST", "/v2/lbaas/flavors", { flavor: { name: "large", flavor_profile_id: fp.flavorprofile.id } }))
        .flavor.id as string;

      // Five ACTIVE load balancers (two amphorae each) to run flows on.
      const setup = await Promise.all(
        ["batch", "cross", "resize", "failover", "delete"].map(async (name) => (await ok(stack, "POST", LBS, tree(name))).loadbalancer),
      );
      for (const lb of setup) {
        ids[lb.name] = lb.id;
        expect((await waitSettled(stack, lb.id, 30_000)).body.loadbalancer.provisioning_status).toBe("ACTIVE");
      }
      for (const name of ["resize", "failover"]) old[name] = (await amphorae(stack, ids[name]!)).map((a) => a.id).sort();
      const pools = { ...(await poolsOf(stack, ids.batch!)), ...(await poolsOf(stack, ids.cross!)) };

      // Every kind of flow at once.
      const [started] = await Promise.all([
        ok(stack, "POST", LBS, tree("create")),
        ok(stack, "PUT", `/v2/lbaas/pools/${pools["batch-web"]}/members`, {
          members: [
            { address: "192.0.2.10", protocol_port: 8080, weight: 3 },
            { address: "192.0.2.12", protocol_port: 8080 },
          ],
        }),
        ok(stack, "PUT", "/v2/lbaas/pools/members", {
          members: [
            { pool_id: pools["cross-web"], address: "192.0.2.11", protocol_port: 8080, weight: 9 },
            { pool_id: pools["cross-web"], address: "192.0.2.13", protocol_port: 8080 },
            { pool_id: pools["cross-api"], address: "192.0.2.21", protocol_port: 9000 },
          ],
        }),
        ok(stack, "PUT", `${LBS}/${ids.resize}/resize`, { new_flavor_id: large }),
        ok(stack, "PUT", `${LBS}/${ids.failover}/failover`),
        ok(stack, "DELETE", `${LBS}/${ids.delete}?cascade=true`),
      ]);
      ids.create = started.loadbalancer.id;
      // Killed once the resize and the failover have each built their first new amphora (a Map iteration
      // done, the next under way), every flow still in flight.
      const built = async (name: string) =>
        (await amphorae(stack, ids[name]!)).some((a) => !old[name]!.includes(a.id) && a.status === "ALLOCATED");
      for (let i = 0; !((await built("resize")) && (await built("failover"))); i++) {
        if (i > 200) throw new Error("the resize and the failover built no amphora in 20 s");
        await new Promise((r) => setTimeout(r, 100));
      }
      const states = await Promise.all(
        ["create", "batch", "cross", "resize", "failover", "delete"].map(
          async (name) => `${name}: ${(await stack.call("GET", `${LBS}/${ids[name]}`)).body.loadbalancer?.provisioning_status}`,
        ),
      );
      expect(states).toEqual(
        ["create", "batch", "cross", "resize", "failover", "delete"].map((name) => expect.stringMatching(new RegExp(`^${name}: PENDING_`))),
      );
      await stack.killGroup("SIGKILL");
      expect(javaFor(dataDir)).toEqual([]);

      stack = await startStack(["--data-dir", dataDir], ENV, { detached: true });
      for (const name of ["create", "batch", "cross", "resize", "failover"]) {
        expect((await waitSettled(stack, ids[name]!, 40_000)).body.loadbalancer.provisioning_status, name).toBe("ACTIVE");
      }
      expect((await waitSettled(stack, ids.delete!, 40_000)).status).toBe(404);
      const logs = stack.output();

      // The create: its whole tree ACTIVE, two amphorae, no more.
      const created = (await ok(stack, "GET", `${LBS}/${ids.create}`)).loadbalancer;
      const status = (await ok(stack, "GET", `${LBS}/${ids.create}/status`)).statuses.loadbalancer;
      expect(
        JSON.stringify(status)
          .match(/"provisioning_status":"(\w+)"/g)!
          .every((s: string) => s.includes("ACTIVE")),
      ).toBe(true);
      expect(status.listeners).toHaveLength(1);
      expect(status.listeners[0].pools.map((p: { members: unknown[] }) => p.members.length)).toEqual([2]);
      expect(created.pools).toHaveLength(2);
      expect((await amphorae(stack, ids.create!)).map((a) => `${a.role}/${a.status}`).sort()).toEqual([
        "BACKUP/ALLOCATED",
        "MASTER/ALLOCATED",
      ]);
      // The batch and the cross-pool update: exactly the member sets asked for.
      expect(await members(stack, pools["batch-web"]!)).toEqual(["192.0.2.10:8080/w3/ACTIVE", "192.0.2.12:8080/w1/ACTIVE"]);
      expect(await members(stack, pools["cross-web"]!)).toEqual(["192.0.2.11:8080/w9/ACTIVE", "192.0.2.13:8080/w1/ACTIVE"]);
      expect(await members(stack, pools["cross-api"]!)).toEqual(["192.0.2.21:9000/w1/ACTIVE"]);
      // The resize and the failover: two new amphorae each, the two old ones gone; the resize's on its new flavor.
      for (const name of ["resize", "failover"]) {
        const live = await amphorae(stack, ids[name]!);
        expect(live.map((a) => `${a.role}/${a.status}`).sort(), name).toEqual(["BACKUP/ALLOCATED", "MASTER/ALLOCATED"]);
        expect(
          live.filter((a) => old[name]!.includes(a.id)),
          name,
        ).toEqual([]);
        for (const id of old[name]!) expect((await stack.call("GET", `/v2/octavia/amphorae/${id}`)).status, name).toBe(404);
      }
      expect((await ok(stack, "GET", `${LBS}/${ids.resize}`)).loadbalancer.flavor_id).toBe(large);
      expect((await amphorae(stack, ids.resize!)).map((a) => a.compute_flavor)).toEqual(["m1.large", "m1.large"]);
      // The cascade delete: no amphora of it left.
      expect(await amphorae(stack, ids.delete!)).toEqual([]);

      // Every flow ran once to its end: SUCCEEDED, never REPAIRED or FAILED; nothing in ERROR or PENDING anywhere.
      for (const name of ["create", "batch", "cross", "resize", "failover"]) {
        const flows = (await ok(stack, "GET", `${LBS}/${ids[name]}/flows`)).flows as { flow: string; outcome: string }[];
        expect(
          flows.map((f) => f.outcome),
          name,
        ).toEqual(flows.map(() => "SUCCEEDED"));
      }
      const all = (await ok(stack, "GET", LBS)).loadbalancers as { provisioning_status: string }[];
      expect(all.filter((lb) => lb.provisioning_status !== "ACTIVE")).toEqual([]);
      expect(logs).not.toContain("stuck load balancer repaired");
      // Each was continued by the restarted runner; the failover and the resize from their journals
      // (their first iteration's tasks and more answered from it, not run again).
      const resumed = Object.fromEntries(
        logs
          .split("\n")
          .filter((l) => l.includes('"message":"execution resumed"'))
          .map((l) => JSON.parse(l) as { execution: string; recorded: number })
          .map((r) => [r.execution.replace(/-[0-9a-f-]{36}(-v\d+)?$/, ""), r.recorded]),
      );
      expect(Object.keys(resumed).sort()).toEqual([
        "create",
        "delete",
        "failover",
        "member-batch-update",
        "member-cross-pool-update",
        "resize",
      ]);
      expect(resumed.failover, JSON.stringify(resumed)).toBeGreaterThanOrEqual(8);
      expect(resumed.resize, JSON.stringify(resumed)).toBeGreaterThanOrEqual(8);
    } finally {
      await stack.stop("SIGTERM");
      rmSync(dataDir, { recursive: true, force: true });
    }
    expect(javaFor(dataDir)).toEqual([]);
  }, 180_000);
});
