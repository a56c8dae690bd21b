// Octavia's CalculateAmphoraDelta (controller/worker/v2/tasks/network_tasks.py), case by case: networks
// to plug and unplug, fixed IPs to add to a port the amphora has (the VRRP port among them) and to
// remove, and the routed subnets of a VPC (subnetsRouted), where only networks count.
import { describe, expect, it } from "vitest";
import { calculateAmphoraDelta, deltaIsEmpty, desiredSubnets, memberSubnets, type LoadBalancer, type NetworkPort } from "@ottava/core";

const lb = { id: "lb", vip_subnet_id: "vip-subnet", vip_network_id: "vip-net" } as LoadBalancer;
const subnet = { cidr: "192.0.2.0/24", gateway_ip: null, host_routes: [] };
const port = (id: string, network_id: string, subnets: string[]): NetworkPort => ({
  id,
  network_id,
  mac_address: "fa:16:3e:00:00:01",
  mtu: 1500,
  vnic_type: "normal",
  fixed_ips: subnets.map((subnet_id) => ({ subnet_id, ip_address: "192.0.2.9", subnet })),
});
const vrrp = port("vrrp", "vip-net", ["vip-subnet"]);
const networks = new Map([
  ["s1", "n1"],
  ["s1b", "n1"],
  ["s2", "n2"],
  ["vip-other", "vip-net"],
]);
const active = (subnet_id: string | null, extra: Record<string, unknown> = {}) => ({ subnet_id, provisioning_status: "ACTIVE", ...extra });
const desired = (members: ReturnType<typeof active>[]) => desiredSubnets(lb, members, networks);

describe("network deltas", () => {
  it("only the VIP: nothing to do on an amphora with its VRRP port", () => {
    const d = calculateAmphoraDelta("a", desired([active(null), active("vip-subnet")]), [vrrp]);
    expect(deltaIsEmpty(d)).toBe(true);
  });

  it("a member on a new network: a port with a fixed IP on each of its subnets", () => {
    const d = calculateAmphoraDelta("a", desired([active("s1"), active("s1b"), active("s2", { vnic_type: "direct" })]), [vrrp]);
    expect(d.add_nics.sort((x, y) => x.network_id.localeCompare(y.network_id))).toEqual([
      { network_id: "n1", subnet_ids: ["s1", "s1b"], vnic_type: "normal" },
      { network_id: "n2", subnet_ids: ["s2"], vnic_type: "direct" },
    ]);
    // As Octavia's: the new ports' subnets are listed with no port (HandleNetworkDelta skips those the new port has).
    expect(d.add_subnets).toEqual([
      { subnet_id: "s1", network_id: "n1", port_id: null },
      { subnet_id: "s1b", network_id: "n1", port_id: null },
      { subnet_id: "s2", network_id: "n2", port_id: null },
    ]);
    expect(d.delete_nics).toEqual([]);
  });

  it("a member on another subnet of a network the amphora is on: a fixed IP on its port (the VRRP port's for the VIP's network)", () => {
    const d = calculateAmphoraDelta("a", desired([active("s1b"), active("vip-other")]), [vrrp, port("p1", "n1", ["s1"])]);
    expect(d.add_nics).toEqual([]);
    expect(d.add_subnets).toEqual([
      { subnet_id: "s1b", network_id: "n1", port_id: "p1" },
      { subnet_id: "vip-other", network_id: "vip-net", port_id: "vrrp" },
    ]);
    expect(d.delete_subnets).toEqual([{ subnet_id: "s1", network_id: "n1", port_id: "p1" }]);
  });

  it("the last member of a network gone, or being deleted: its port goes, with its fixed IPs", () => {
    const d = calculateAmphoraDelta("a", desired([active("s1", { provisioning_status: "PENDING_DELETE" })]), [
      vrrp,
      port("p1", "n1", ["s1"]),
    ]);
    expect(d.delete_nics).toEqual([{ network_id: "n1", port_id: "p1" }]);
    expect(d.delete_subnets).toEqual([]);
    expect(d.add_nics).toEqual([]);
  });

  it("subnetsRouted (a VPC): networks alone count; a new port is given its network's subnets, sorted", () => {
    const plugged = [vrrp, port("p2", "n2", ["s2"])];
    const d = calculateAmphoraDelta("a", desired([active("s1b"), active("s1"), active("vip-other")]), plugged, true);
    expect(d).toEqual({
      amphora_id: "a",
      add_nics: [{ network_id: "n1", subnet_ids: ["s1", "s1b"], vnic_type: "normal" }],
      delete_nics: [{ network_id: "n2", port_id: "p2" }],
      add_subnets: [],
      delete_subnets: [],
    });
  });

  it("memberSubnets: the subnets to look up, the VIP's and those of members being deleted left out", () => {
    expect(
      memberSubnets(lb, [
        active("s1"),
        active("s1"),
        active("vip-subnet"),
        active(null),
        active("s2", { provisioning_status: "PENDING_DELETE" }),
      ]),
    ).toEqual(["s1"]);
  });
});
