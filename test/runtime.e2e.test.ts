// npm start's promises: data kept in .ottava-style folders across restarts, a clean stop on
// SIGTERM or Ctrl-C (SIGINT) with no Java process left behind.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { javaFor, startStack, waitSettled } from "./support/stack";
import { SUBNET } from "@ottava/core/testing";

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
