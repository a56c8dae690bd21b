// Two stacks on one machine, each started as `npm start` starts it: every port and address range a stack
// takes is a flag (--port, --heartbeat-port, --vip-range, --data-dir) or picked free, so a second stack
// beside the first starts and serves cleanly; a port another stack holds stops the start with the flag
// to give.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startStack, waitSettled, type Stack } from "./support/stack";
import { startHttpBackend, tally, waitFor, type HttpBackend } from "./support/backends";
import { SUBNET } from "@ottava/core/testing";
import { webListener } from "@ottava/db/testing";

// Ranges no other test file uses (the data-plane test has 127.0.102.0/24).
const RANGES = ["127.0.104.0/24", "127.0.105.0/24"];

const stacks: Stack[] = [];
const dirs: string[] = [];
let backend: HttpBackend | undefined;

afterAll(async () => {
  for (const s of stacks) await s.stop();
  await backend?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A stack with its own data directory, VIP range, and free API and heartbeat ports (as flags, not settings). */
async function start(range: string, heartbeatPort = "0"): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), "ottava-two-stacks-"));
  dirs.push(dir);
  return startStack(["--data-dir", dir, "--dataplane", "haproxy", "--vip-range", range, "--heartbeat-port", heartbeatPort], {
    OTTAVA_HEARTBEAT_PORT: "5555",
  });
}

/** The heartbeat port a stack printed (the line may come in a later chunk of its output than the API's). */
const heartbeatPortOf = (s: Stack) =>
  waitFor(
    "the heartbeat port printed",
    async () => Number(/Receiving amphora heartbeats on udp 127\.0\.0\.1:(\d+)/.exec(s.output())?.[1]) || undefined,
    5_000,
  );

describe("two stacks on one machine", () => {
  it("each serves its own load balancer, with its own ports and VIP range; a taken port stops a third with the flag to give", async () => {
    backend = await startHttpBackend("web");
    stacks.push(await start(RANGES[0]!), await start(RANGES[1]!));
    const [a, b] = stacks as [Stack, Stack];
    expect(a.url).not.toBe(b.url);
    const ports = await Promise.all(stacks.map(heartbeatPortOf));
    expect(
      ports.every((p) => p > 0 && p !== 5555),
      a.output(),
    ).toBe(true);
    expect(ports[0]).not.toBe(ports[1]);

    // The same request to both: each builds its own load balancer, on its own range, and carries traffic.
    const lbs = await Promise.all(
      stacks.map(async (s) => {
        const r = await s.call("POST", "/v2/lbaas/loadbalancers", {
          loadbalancer: {
            vip_subnet_id: SUBNET,
            listeners: [webListener({ members: [{ address: "127.0.0.1", protocol_port: backend!.port }] }, { protocol_port: 8080 })],
          },
        });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        const lb = (await waitSettled(s, r.body.loadbalancer.id, 40_000)).body.loadbalancer;
        expect(lb.provisioning_status, s.output().slice(-2000)).toBe("ACTIVE");
        return lb as { id: string; vip_address: string };
      }),
    );
    expect(lbs[0]!.vip_address).toMatch(/^127\.0\.104\.\d+$/);
    expect(lbs[1]!.vip_address).toMatch(/^127\.0\.105\.\d+$/);
    for (const lb of lbs) expect(await tally(lb.vip_address, 8080, 5)).toEqual({ web: 5 });
    // Neither sees the other's load balancer.
    expect((await a.call("GET", `/v2/lbaas/loadbalancers/${lbs[1]!.id}`)).status).toBe(404);
    expect((await b.call("GET", `/v2/lbaas/loadbalancers/${lbs[0]!.id}`)).status).toBe(404);

    // A third on the first one's heartbeat port does not start, and says which flag gives it another.
    const clash = await start("127.0.106.0/24", String(ports[0])).then(
      (s) => (stacks.push(s), "started"),
      (e: Error) => e.message,
    );
    expect(clash).toContain(
      `the heartbeat port 127.0.0.1:${ports[0]}/udp is taken (another Ottava?): give this one another with --heartbeat-port (OTTAVA_HEARTBEAT_PORT); 0 picks a free one`,
    );
  });
});
