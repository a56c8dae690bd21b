// The catalog's bodies (flavor profiles, flavors, availability zone profiles and zones, quotas), read directly as the API reads them.
import { describe, expect, it } from "vitest";
import {
  AvailabilityZonePost,
  AvailabilityZoneProfilePost,
  AvailabilityZonePut,
  FlavorPost,
  FlavorProfilePost,
  FlavorPut,
  noArguments,
  parseQuotaPut,
  parseRoot,
} from "@ottava/core";
import { faultOf } from "./support";

const PROFILE = "5e6b7c5a-0b7e-4a0e-9d36-1f5b2f3a6a11";
const missing = (field: string) => `Invalid input for field/attribute ${field}. Value: 'None'. Mandatory field missing.`;

describe("flavor profiles and flavors", () => {
  it("refuse what wsme refuses, with its messages", () => {
    const profile = (flavorprofile: unknown) => parseRoot("flavor_profile_", "flavorprofile", FlavorProfilePost, { flavorprofile });
    const flavor = (body: unknown, schema: typeof FlavorPost | typeof FlavorPut = FlavorPost) =>
      parseRoot("flavor_", "flavor", schema, { flavor: body });
    const cases: [() => unknown, string][] = [
      [() => profile({ name: "x", provider_name: "amphora" }), missing("flavor_data")],
      [() => profile({ provider_name: "amphora", flavor_data: "{}" }), missing("name")],
      [
        () => profile({ name: "x", provider_name: "amphora", flavor_data: "{}", id: "abc" }),
        "Unknown attribute for argument flavor_profile_.flavorprofile: id",
      ],
      [() => flavor({ flavor_profile_id: PROFILE }), missing("name")],
      [() => flavor({ name: "xyz" }), missing("flavor_profile_id")],
      [
        () => flavor({ name: "xyz", flavor_profile_id: "bogus" }),
        "Invalid input for field/attribute flavor_profile_id. Value: 'bogus'. Value should be UUID format",
      ],
      [() => flavor({ name: 5, flavor_profile_id: PROFILE }), "Invalid input for field/attribute name. Value: '5'. Value should be string"],
      [() => flavor({ name: "xyz", flavor_profile_id: PROFILE, id: "x" }), "Unknown attribute for argument flavor_.flavor: id"],
      [() => flavor({ flavor_profile_id: PROFILE }, FlavorPut), "Unknown attribute for argument flavor_.flavor: flavor_profile_id"],
    ];
    for (const [fn, message] of cases) expect(faultOf(fn), message).toEqual([400, message]);
    expect(flavor({ name: "xyz", flavor_profile_id: PROFILE })).toMatchObject({ name: "xyz", flavor_profile_id: PROFILE });
  });
});

describe("availability zone profiles and zones", () => {
  it("refuse what wsme refuses, with its messages", () => {
    const profile = (availability_zone_profile: unknown) =>
      parseRoot("availability_zone_profile_", "availability_zone_profile", AvailabilityZoneProfilePost, { availability_zone_profile });
    const zone = (availability_zone: unknown, schema: typeof AvailabilityZonePost | typeof AvailabilityZonePut = AvailabilityZonePost) =>
      parseRoot("availability_zone_", "availability_zone", schema, { availability_zone });
    const cases: [() => unknown, string][] = [
      [
        () => profile({ name: "p", provider_name: "amphora", availability_zone_data: "{}", x: 1 }),
        "Unknown attribute for argument availability_zone_profile_.availability_zone_profile: x",
      ],
      [() => zone({ availability_zone_profile_id: PROFILE }), missing("name")],
      [() => zone({ name: "z" }, AvailabilityZonePut), "Unknown attribute for argument availability_zone_.availability_zone: name"],
      [
        () => zone({ availability_zone_profile_id: PROFILE }, AvailabilityZonePut),
        "Unknown attribute for argument availability_zone_.availability_zone: availability_zone_profile_id",
      ],
    ];
    for (const [fn, message] of cases) expect(faultOf(fn), message).toEqual([400, message]);
  });
});

describe("a quota PUT", () => {
  it("takes integers in wsme's range, null as the default, and the preferred name over its alias", () => {
    expect(parseQuotaPut({ quota: { listener: 5, member: "8", pool: null } })).toEqual({ listener: 5, member: 8, pool: null });
    // "loadbalancer" and "healthmonitor" are the current spellings: given with the old ones, they win (QuotaBase.to_dict).
    expect(parseQuotaPut({ quota: { loadbalancer: 1, load_balancer: 2, health_monitor: 3, healthmonitor: 4 } })).toEqual({
      load_balancer: 1,
      health_monitor: 4,
    });
  });

  it("refuses values out of range or not integers, and unknown attributes, with wsme's messages", () => {
    const cases: [unknown, string][] = [
      [{ quota: { listener: -2 } }, "Invalid input for field/attribute listener. Value: '-2'. Value should be greater or equal to -1"],
      [
        { quota: { listener: 2000000001 } },
        "Invalid input for field/attribute listener. Value: '2000000001'. Value should be lower or equal to 2000000000",
      ],
      [
        { quota: { listener: "x" } },
        "Invalid input for field/attribute quotas. Value: '{'quota': {'listener': 'x'}}'. invalid literal for int() with base 10: 'x'",
      ],
      [
        { quota: { listener: "9.5" } },
        "Invalid input for field/attribute quotas. Value: '{'quota': {'listener': '9.5'}}'. invalid literal for int() with base 10: '9.5'",
      ],
      [{ quota: { bogus: 1 } }, "Unknown attribute for argument quotas.quota: bogus"],
    ];
    for (const [body, message] of cases)
      expect(
        faultOf(() => parseQuotaPut(body)),
        message,
      ).toEqual([400, message]);
  });

  it("takes no query arguments", () => {
    expect(faultOf(() => noArguments([["fields", "listener"]]))).toEqual([400, 'Unknown argument: "fields"']);
    expect(faultOf(() => noArguments([]))).toBeUndefined();
  });
});
