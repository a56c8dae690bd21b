// The load balancer's bodies (LoadBalancerPOST, LoadBalancerPUT), read directly as the API reads them.
import { describe, expect, it } from "vitest";
import { LoadBalancerPost, LoadBalancerPut, parseRoot } from "@ottava/core";
import { bad, faultOf } from "./support";

const SUBNET = "5e6b7c5a-0b7e-4a0e-9d36-1f5b2f3a6a11";
const post = (loadbalancer: unknown) => parseRoot("load_balancer", "loadbalancer", LoadBalancerPost, { loadbalancer });
const put = (loadbalancer: unknown) => parseRoot("load_balancer", "loadbalancer", LoadBalancerPut, { loadbalancer });

describe("a load balancer's bodies", () => {
  it("take Octavia's defaults and deduplicate tags", () => {
    expect(post({ vip_subnet_id: SUBNET, tags: ["a", "a", "b"] })).toMatchObject({
      vip_subnet_id: SUBNET,
      admin_state_up: true,
      additional_vips: [],
      tags: ["a", "b"],
    });
    expect(put({ name: "n" })).toEqual({ name: "n" });
  });

  it("refuse what wsme refuses, with its messages", () => {
    const cases: [() => unknown, string][] = [
      [() => post({ vip_subnet_id: SUBNET, bogus: 1 }), "Unknown attribute for argument load_balancer.loadbalancer: bogus"],
      [
        () => post({ vip_subnet_id: SUBNET, provisioning_status: "ACTIVE" }),
        "Unknown attribute for argument load_balancer.loadbalancer: provisioning_status",
      ],
      [() => put({ vip_address: "192.0.2.1" }), "Unknown attribute for argument load_balancer.loadbalancer: vip_address"],
      [() => post({ vip_subnet_id: "x" }), bad("vip_subnet_id", "x", "Value should be UUID format")],
      [
        () => post({ vip_subnet_id: SUBNET, admin_state_up: "perhaps" }),
        bad("admin_state_up", "perhaps", "Value not an unambiguous boolean: perhaps"),
      ],
      [() => post({ vip_subnet_id: SUBNET, vip_sg_ids: "x" }), bad("vip_sg_ids", "x", "Value not a valid list: x")],
      [() => parseRoot("load_balancer", "loadbalancer", LoadBalancerPost, { lb: {} }), "Unknown attribute for argument load_balancer: lb"],
    ];
    for (const [fn, message] of cases) expect(faultOf(fn), message).toEqual([400, message]);
  });
});
