// Octavia's list filters, resource by resource: each descriptor's table against what Octavia's own
// PaginationHelper.apply accepts and refuses, recorded in fixtures/octavia-filters.json by
// fixtures/octavia-filters.py (Octavia's current source, API v2.30).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  Fault,
  amphoraDescriptor,
  availabilityZoneProfileCatalog,
  availabilityZoneCatalog,
  flavorProfileCatalog,
  flavorCatalog,
  healthMonitorDescriptor,
  l7PolicyDescriptor,
  l7RuleDescriptor,
  listenerDescriptor,
  loadBalancerDescriptor,
  memberDescriptor,
  parseListQuery,
  poolDescriptor,
  quotaCatalog,
  type ResourceDescriptor,
} from "@ottava/core";

interface Fixture {
  octavia: string;
  collections: Record<string, { accepted: Record<string, string>; refused: Record<string, "invalid" | "relationship"> }>;
}
const fixture = JSON.parse(readFileSync(new URL("./fixtures/octavia-filters.json", import.meta.url), "utf8")) as Fixture;

const DESCRIPTORS: ResourceDescriptor<never>[] = [
  loadBalancerDescriptor,
  listenerDescriptor,
  poolDescriptor,
  memberDescriptor,
  healthMonitorDescriptor,
  l7PolicyDescriptor,
  l7RuleDescriptor,
  amphoraDescriptor,
  flavorCatalog,
  flavorProfileCatalog,
  availabilityZoneCatalog,
  availabilityZoneProfileCatalog,
  quotaCatalog,
] as ResourceDescriptor<never>[];

const parse = (d: ResourceDescriptor<never>, key: string) => parseListQuery([[key, "x"]], d.attributes, d.filters, 1000);

describe("list filters are Octavia's", () => {
  it("covers every list Octavia serves, from its current source", () => {
    expect(fixture.octavia).toMatch(/^source [0-9a-f]{40}$/);
    expect(DESCRIPTORS.map((d) => d.collection).sort()).toEqual(Object.keys(fixture.collections).sort());
  });

  for (const d of DESCRIPTORS) {
    describe(d.collection, () => {
      const { accepted, refused } = fixture.collections[d.collection]!;

      it("accepts exactly Octavia's keys, each on its data-model attribute", () => {
        expect(d.filters).toEqual(accepted);
        for (const [key, attribute] of Object.entries(accepted)) expect(parse(d, key).filters).toEqual({ [attribute]: ["x"] });
      });

      it("refuses the other names with the 400, relationships included", () => {
        expect(Object.keys(refused).length).toBeGreaterThan(0);
        for (const key of [...Object.keys(refused), "no_such_attribute"]) {
          let fault: unknown;
          try {
            parse(d, key);
          } catch (e) {
            fault = e;
          }
          expect(fault, key).toBeInstanceOf(Fault);
          expect([(fault as Fault).status, (fault as Fault).message]).toEqual([
            400,
            "One or more arguments are either duplicate or invalid",
          ]);
        }
      });
    });
  }

  it("knows the client calls that found the gap", () => {
    expect(healthMonitorDescriptor.filters.pool_id).toBe("pool_id");
    expect(listenerDescriptor.filters.load_balancer_id).toBe("load_balancer_id");
    expect(l7RuleDescriptor.filters.l7policy_id).toBe("l7policy_id");
    // Response fields that are not data-model attributes: refused by Octavia, refused here.
    expect(fixture.collections.healthmonitors!.refused).toMatchObject({ pools: "invalid", tenant_id: "invalid" });
    expect(fixture.collections.listeners!.refused).toMatchObject({
      stats: "relationship",
      l7policies: "relationship",
      load_balancer: "relationship",
    });
  });
});
