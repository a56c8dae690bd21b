// The member's rules (MembersController.post, _validate_create_member, the wsme types), called directly.
import { describe, expect, it } from "vitest";
import { memberAddressNotReserved, memberResource } from "@ottava/core";
import { bad, create, faultOf, item, tree, uuid } from "./support";

const POOL = uuid(1);
const withPool = (members: ReturnType<typeof item>[] = []) =>
  tree([item("pool", { id: POOL, protocol: "HTTP", listener_ids: [], member_ids: [] }), ...members]);
const add = (body: unknown, on = withPool(), flavor: Record<string, unknown> = {}) =>
  create(memberResource, body, on, { pool_id: POOL }, flavor);

describe("a member create", () => {
  it("takes Octavia's defaults, NO_MONITOR without a health monitor", () => {
    expect(add({ address: "192.0.2.1", protocol_port: 80 })).toMatchObject({
      pool_id: POOL,
      address: "192.0.2.1",
      protocol_port: 80,
      weight: 1,
      backup: false,
      admin_state_up: true,
      monitor_address: null,
      monitor_port: null,
      provisioning_status: "PENDING_CREATE",
      operating_status: "NO_MONITOR",
    });
  });

  it("refuses bad input with wsme's messages", () => {
    const cases: [unknown, string][] = [
      [{ protocol_port: 80 }, bad("address", "None", "Mandatory field missing.")],
      [{ address: "192.0.2.1" }, bad("protocol_port", "None", "Mandatory field missing.")],
      [{ address: "192.0.2.300", protocol_port: 80 }, bad("address", "192.0.2.300", "Value should be IPv4 or IPv6 format")],
      [{ address: "192.0.2.1", protocol_port: 0 }, bad("protocol_port", "0", "Value should be greater or equal to 1")],
      [{ address: "192.0.2.1", protocol_port: "http" }, bad("protocol_port", "http", "invalid literal for int() with base 10: 'http'")],
      [{ address: "192.0.2.1", protocol_port: 80, weight: 257 }, bad("weight", "257", "Value should be lower or equal to 256")],
      [{ address: "192.0.2.1", protocol_port: 80, weight: -1 }, bad("weight", "-1", "Value should be greater or equal to 0")],
      [{ address: "192.0.2.1", protocol_port: 80, subnet_id: "x" }, bad("subnet_id", "x", "Value should be UUID format")],
      [{ address: "192.0.2.1", protocol_port: 80, backup: "maybe" }, bad("backup", "maybe", "Value not an unambiguous boolean: maybe")],
      [{ address: "192.0.2.1", protocol_port: 80, pool_id: POOL }, "Unknown attribute for argument member_.member: pool_id"],
      [{ address: "169.254.169.254", protocol_port: 80 }, "169.254.169.254 is not a valid option for member address"],
      [
        { address: "192.0.2.1", protocol_port: 80, request_sriov: "maybe" },
        bad("request_sriov", "maybe", "Value not an unambiguous boolean: maybe"),
      ],
    ];
    for (const [body, message] of cases)
      expect(
        faultOf(() => add(body)),
        message,
      ).toEqual([400, message]);
  });

  it("refuses an address and port another member of the pool holds, and SR-IOV a flavor does not allow", () => {
    const taken = withPool([item("member", { id: uuid(2), pool_id: POOL, address: "192.0.2.5", protocol_port: 80 })]);
    expect(faultOf(() => add({ address: "192.0.2.5", protocol_port: 80 }, taken))).toEqual([
      409,
      "Another member on this pool is already using ip 192.0.2.5 on protocol_port 80",
    ]);
    expect(faultOf(() => add({ address: "192.0.2.5", protocol_port: 81 }, taken))).toBeUndefined();
    expect(faultOf(() => add({ address: "192.0.2.6", protocol_port: 80, request_sriov: true }))).toEqual([
      400,
      "The load balancer flavor does not allow SR-IOV member ports.",
    ]);
  });
});

describe("a member's address", () => {
  it("may not be the metadata service's (reserved_ips)", () => {
    expect(faultOf(() => memberAddressNotReserved("169.254.169.254"))).toEqual([
      400,
      "169.254.169.254 is not a valid option for member address",
    ]);
    expect(faultOf(() => memberAddressNotReserved("192.0.2.1"))).toBeUndefined();
  });
});
