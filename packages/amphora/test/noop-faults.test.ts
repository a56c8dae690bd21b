// The no-op drivers' injected faults and latency (support/noop-faults.ts: npm start's OTTAVA_NOOP_FAULTS and OTTAVA_NOOP_LATENCY).
import { describe, expect, it } from "vitest";
import { noopDriversWith, parseFaults } from "./support/noop-faults";

describe("no-op driver faults (OTTAVA_NOOP_FAULTS)", () => {
  it("fail the named calls, the first N only when :N is given", async () => {
    const d = noopDriversWith("compute.build:1,network.plugVip");
    await expect(
      d.compute.build({ amphoraId: "a", computeFlavor: null, availabilityZone: null, serverPem: "", agentConfig: "" }),
    ).rejects.toThrow(/Injected fault: compute.build/);
    await expect(
      d.compute.build({ amphoraId: "a", computeFlavor: null, availabilityZone: null, serverPem: "", agentConfig: "" }),
    ).resolves.toMatch(/-/);
    for (let i = 0; i < 3; i++) await expect(d.network.plugVip({} as never, {} as never)).rejects.toMatchObject({ name: "DriverError" });
  });

  it("delay the named calls by OTTAVA_NOOP_LATENCY milliseconds", async () => {
    const d = noopDriversWith("", "amphora.update:200");
    const t0 = Date.now();
    await d.amphora.update({} as never, []);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
    expect(() => noopDriversWith("", "amphora.update")).not.toThrow();
  });

  it("refuse a name that is no driver method", () => {
    expect(() => parseFaults("compute.fly")).toThrow(/compute has no method 'fly'/);
    expect(() => parseFaults("nope")).toThrow(/driver.method/);
    expect(parseFaults("")).toEqual(new Map());
  });
});
