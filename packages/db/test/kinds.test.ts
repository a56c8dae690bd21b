// The kinds the store keeps in an LB's partition come from @ottava/core's registry (CHILD_KINDS,
// NESTED_KINDS), with the store's own sort-key prefixes: the same table it wrote by hand before.
import { describe, expect, it } from "vitest";
import { TREE_KINDS, kindOfSk } from "../src/items";

describe("TREE_KINDS", () => {
  it("is the amphora and the six kinds of an LB's tree, with their prefixes, status fields and nesting", () => {
    const p = "provisioning_status";
    expect(TREE_KINDS).toEqual({
      amphora: { kind: "amphora", prefix: "AMP", statusField: "status" },
      listener: { kind: "listener", prefix: "LISTENER", statusField: p },
      pool: { kind: "pool", prefix: "POOL", statusField: p },
      member: { kind: "member", prefix: "MEMBER", statusField: p, nested: true },
      healthmonitor: { kind: "healthmonitor", prefix: "HM", statusField: p },
      l7policy: { kind: "l7policy", prefix: "L7POLICY", statusField: p },
      l7rule: { kind: "l7rule", prefix: "L7RULE", statusField: p, nested: true },
    });
    expect(kindOfSk("MEMBER#pool#m")?.kind).toBe("member");
    expect(kindOfSk("MEMBERADDR#pool#10.0.0.1#80")).toBeUndefined();
  });
});
