import { describe, expect, it } from "vitest";
import { LoadBalancerPost, LoadBalancerPut, loadConfig, parseRoot } from "@ottava/core";
import { faultOf } from "./support";

const SUBNET = "5e6b7c5a-0b7e-4a0e-9d36-1f5b2f3a6a11";
describe("request bodies, answered as Octavia (wsme) answers them", () => {
  it("applies Octavia's defaults and canonical UUIDs", () => {
    const lb = parseRoot("load_balancer", "loadbalancer", LoadBalancerPost, {
      loadbalancer: { vip_subnet_id: SUBNET.toUpperCase().replace(/-/g, "") },
    });
    expect(lb.admin_state_up).toBe(true);
    expect(lb.vip_subnet_id).toBe(SUBNET);
    expect(lb.additional_vips).toEqual([]);
  });

  it("refuses unknown and read-only attributes", () => {
    expect(
      faultOf(() => parseRoot("load_balancer", "loadbalancer", LoadBalancerPost, { loadbalancer: { vip_subnet_id: SUBNET, bogus: 1 } })),
    ).toEqual([400, "Unknown attribute for argument load_balancer.loadbalancer: bogus"]);
    expect(
      faultOf(() =>
        parseRoot("load_balancer", "loadbalancer", LoadBalancerPut, { loadbalancer: { provisioning_status: "ACTIVE", id: "x" } }),
      ),
    ).toEqual([400, "Unknown attributes for argument load_balancer.loadbalancer: provisioning_status, id"]);
    expect(faultOf(() => parseRoot("load_balancer", "loadbalancer", LoadBalancerPut, { lb: {} }))).toEqual([
      400,
      "Unknown attribute for argument load_balancer: lb",
    ]);
  });

  it("refuses wrong types and out-of-range values with the field named", () => {
    expect(
      faultOf(() => parseRoot("load_balancer", "loadbalancer", LoadBalancerPost, { loadbalancer: { vip_subnet_id: "nope" } })),
    ).toEqual([400, "Invalid input for field/attribute vip_subnet_id. Value: 'nope'. Value should be UUID format"]);
    expect(
      faultOf(() => parseRoot("load_balancer", "loadbalancer", LoadBalancerPut, { loadbalancer: { name: "x".repeat(256) } }))?.[1],
    ).toMatch(/^Invalid input for field\/attribute name\. .*Value should have a maximum character requirement of 255$/);
    expect(
      faultOf(() => parseRoot("load_balancer", "loadbalancer", LoadBalancerPut, { loadbalancer: { admin_state_up: "maybe" } })),
    ).toEqual([400, "Invalid input for field/attribute admin_state_up. Value: 'maybe'. Value not an unambiguous boolean: maybe"]);
    expect(
      faultOf(() =>
        parseRoot("load_balancer", "loadbalancer", LoadBalancerPost, { loadbalancer: { vip_subnet_id: SUBNET, vip_address: "300.1.1.1" } }),
      )?.[1],
    ).toContain("Value should be IPv4 or IPv6 format");
    expect(faultOf(() => parseRoot("load_balancer", "loadbalancer", LoadBalancerPut, { loadbalancer: { tags: "a" } }))?.[0]).toBe(400);
    expect(faultOf(() => parseRoot("load_balancer", "loadbalancer", LoadBalancerPut, { loadbalancer: { name: 5 } }))?.[1]).toContain(
      "Value should be string",
    );
  });

  it("names missing mandatory fields and unknown attributes of nested objects", () => {
    expect(
      faultOf(() =>
        parseRoot("load_balancer", "loadbalancer", LoadBalancerPost, { loadbalancer: { vip_subnet_id: SUBNET, additional_vips: [{}] } }),
      ),
    ).toEqual([400, "Invalid input for field/attribute subnet_id. Value: 'None'. Mandatory field missing."]);
    expect(
      faultOf(() =>
        parseRoot("load_balancer", "loadbalancer", LoadBalancerPost, {
          loadbalancer: { vip_subnet_id: SUBNET, additional_vips: [{ subnet_id: SUBNET, x: 1 }] },
        }),
      ),
    ).toEqual([400, "Unknown attribute for argument load_balancer.loadbalancer.additional_vips: x"]);
  });

  it("accepts wsme's unambiguous booleans", () => {
    expect(parseRoot("load_balancer", "loadbalancer", LoadBalancerPut, { loadbalancer: { admin_state_up: "False" } }).admin_state_up).toBe(
      false,
    );
    expect(parseRoot("load_balancer", "loadbalancer", LoadBalancerPut, { loadbalancer: { admin_state_up: 1 } }).admin_state_up).toBe(true);
  });
});

describe("settings", () => {
  it("reads OTTAVA_* with Octavia's defaults and refuses nonsense", () => {
    const c = loadConfig({});
    expect(c.bindPort).toBe(9876);
    expect(c.loadbalancerTopology).toBe("SINGLE");
    expect(loadConfig({ OTTAVA_LOADBALANCER_TOPOLOGY: "ACTIVE_STANDBY" }).loadbalancerTopology).toBe("ACTIVE_STANDBY");
    expect(() => loadConfig({ OTTAVA_LOADBALANCER_TOPOLOGY: "TRIPLE" })).toThrow(/SINGLE, ACTIVE_STANDBY/);
    expect(() => loadConfig({ OTTAVA_BIND_PORT: "x" })).toThrow(/OTTAVA_BIND_PORT/);
  });

  it("reads the EC2 compute driver's settings: Octavia's defaults, AWS ids checked", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      stage: "local",
      ec2Endpoint: undefined,
      ampImageTag: undefined,
      ampBaseImageId: undefined,
      ampFlavorId: undefined,
      ampBootNetworkList: [],
      ampSecgroupList: [],
      enableAntiAffinity: false,
      ampActiveRetries: 30,
      ampActiveWaitSec: 10,
      allowInvisibleResourceUsage: false,
      vpcRulesPerSecurityGroup: 60,
      vpcSecurityGroupsPerInterface: 5,
    });
    const set = loadConfig({
      OTTAVA_COMPUTE_DRIVER: "ec2",
      OTTAVA_AMP_BOOT_NETWORK_LIST: " subnet-0123456789abcdef0 , subnet-89abcdef ",
      OTTAVA_AMP_SECGROUP_LIST: "sg-0123456789abcdef0",
      OTTAVA_AMP_BASE_IMAGE_ID: "ami-0123456789abcdef0",
      OTTAVA_ENABLE_ANTI_AFFINITY: "true",
    });
    expect(set).toMatchObject({
      computeDriver: "ec2",
      ampBootNetworkList: ["subnet-0123456789abcdef0", "subnet-89abcdef"],
      ampSecgroupList: ["sg-0123456789abcdef0"],
      ampBaseImageId: "ami-0123456789abcdef0",
      enableAntiAffinity: true,
    });
    expect(() => loadConfig({ OTTAVA_AMP_BOOT_NETWORK_LIST: "net-1" })).toThrow("OTTAVA_AMP_BOOT_NETWORK_LIST must be subnet ids");
    expect(() => loadConfig({ OTTAVA_AMP_SECGROUP_LIST: "default" })).toThrow(/OTTAVA_AMP_SECGROUP_LIST must be sg ids/);
    expect(() => loadConfig({ OTTAVA_AMP_BASE_IMAGE_ID: "debian-12" })).toThrow(/OTTAVA_AMP_BASE_IMAGE_ID must be an ami id/);
    expect(() => loadConfig({ OTTAVA_AMP_ACTIVE_RETRIES: "0" })).toThrow(/OTTAVA_AMP_ACTIVE_RETRIES must be an integer >= 1/);
    expect(() => loadConfig({ OTTAVA_COMPUTE_DRIVER: "nova" })).toThrow(/noop, local, ec2/);
  });
});
