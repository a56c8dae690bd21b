// The registry of kinds (resources/kinds.ts): each table derived from the descriptors equals the
// table it replaced, which restated the same facts by hand.
import { describe, expect, it } from "vitest";
import { CHILD_KINDS, displayName, NESTED_KINDS, QUOTA_FIELD, QUOTA_FIELDS, QUOTA_RESOURCE, quotaFault, QuotaExceeded } from "../src";

describe("the registry of kinds", () => {
  it("names the objects of an LB's tree in Octavia's order (the child flows' kinds)", () => {
    expect(CHILD_KINDS).toEqual(["listener", "pool", "member", "healthmonitor", "l7policy", "l7rule"]);
  });

  it("lists members and L7 rules only under their parent", () => {
    expect([...NESTED_KINDS].sort()).toEqual(["l7rule", "member"]);
  });

  it("gives each kind the name Octavia uses in its messages (services/children.ts DISPLAY)", () => {
    const DISPLAY = {
      loadbalancer: "Load Balancer",
      listener: "Listener",
      pool: "Pool",
      member: "Member",
      healthmonitor: "Health Monitor",
      l7policy: "L7 Policy",
      l7rule: "L7 Rule",
    };
    for (const [kind, name] of Object.entries(DISPLAY)) expect(displayName(kind), kind).toBe(name);
    // Any other kind is named as it is.
    expect(displayName("amphora")).toBe("amphora");
  });

  it("counts each kind against its quota field (services/quota.ts QUOTA_FIELD)", () => {
    expect(QUOTA_FIELD).toEqual({
      loadbalancer: "load_balancer",
      listener: "listener",
      pool: "pool",
      member: "member",
      healthmonitor: "health_monitor",
      l7policy: "l7policy",
      l7rule: "l7rule",
    });
  });

  it("names each quota field's resource as Octavia's 'Quota has been met' does (services/quota.ts RESOURCE), every field once", () => {
    expect(QUOTA_RESOURCE).toEqual({
      load_balancer: "Load Balancer",
      listener: "Listener",
      pool: "Pool",
      member: "Member",
      health_monitor: "Health Monitor",
      l7policy: "L7 Policy",
      l7rule: "L7 Rule",
    });
    expect(Object.keys(QUOTA_RESOURCE).sort()).toEqual([...QUOTA_FIELDS].sort());
    expect(quotaFault(new QuotaExceeded(["health_monitor"]))).toMatchObject({
      status: 403,
      message: "Quota has been met for resources: Health Monitor",
    });
  });
});
