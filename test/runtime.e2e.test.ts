// npm start's promises: data kept in .ottava-style folders across restarts, a clean stop on
// SIGTERM or Ctrl-C (SIGINT) with no Java process left behind.
import { execFileSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startStack, waitSettled } from "./support/stack";

const SUBNET = "5e6b7c5a-0b7e-4a0e-9d36-1f5b2f3a6a11";

function javaFor(dataDir: string): string[] {
  try {
    return execFileSync("pgrep", ["-f", `DynamoDBLocal.jar .*${dataDir}`], { encoding: "utf8" })
      .trim()
      .split("\n")
      .filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

describe("npm start", () => {
  it("keeps load balancers across restarts and leaves no Java process on SIGTERM or SIGINT", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "ottava-data-"));
    const first = await startStack(["--data-dir", dataDir]);
    let id: string;
    try {
      expect(javaFor(dataDir)).toHaveLength(1);
      const created = await first.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { name: "kept", vip_subnet_id: SUBNET } });
      id = created.body.loadbalancer.id;
      await waitSettled(first, id);
    } finally {
      expect(await first.stop("SIGTERM")).toBe(0);
    }
    expect(javaFor(dataDir)).toEqual([]);

    const second = await startStack(["--data-dir", dataDir]);
    try {
      const shown = await second.call("GET", `/v2/lbaas/loadbalancers/${id}`);
      expect(shown.body.loadbalancer).toMatchObject({ id, name: "kept", provisioning_status: "ACTIVE" });
      expect((await second.call("GET", "/v2/lbaas/loadbalancers?name=kept")).body.loadbalancers).toHaveLength(1);
    } finally {
      expect(await second.stop("SIGINT")).toBe(0);
    }
    expect(javaFor(dataDir)).toEqual([]);
  });
});
