// The local network driver (packages/amphora/src/local/network.ts, as Octavia's allowed_address_pairs driver's allocate_vip, deallocate_vip, plug_vip, unplug_vip) over the real table (packages/db's DynamoVipStore on DynamoDB Local).
//
// Addresses come from a small range: the first free one in order, a requested one when it is in
// the range and free (Neutron's 400 and 409 otherwise, passed on as Octavia's API does), never one
// address to two owners even when allocations race, and back to the range on release.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Fault, type Amphora, type LoadBalancer, type VipRequest } from "@ottava/core";
import { DynamoVipStore, createClients } from "@ottava/db";
import { freshTable } from "@ottava/db/testing";
import { AddressRange, LocalNetworkDriver } from "../src/local/network";

async function driver(cidr: string) {
  const { config } = await freshTable();
  const vips = new DynamoVipStore(createClients(config.dynamodbEndpoint).doc, config.tableName);
  return { network: new LocalNetworkDriver(new AddressRange(cidr), vips), vips };
}

const request = (extra: Partial<VipRequest> = {}): VipRequest => ({
  lbId: randomUUID(),
  projectId: "p1",
  vip_address: null,
  vip_port_id: null,
  vip_subnet_id: null,
  vip_network_id: null,
  additional_vips: [],
  vip_sg_ids: [],
  vip_vnic_type: "normal",
  ...extra,
});

const lbOf = (req: VipRequest, vip: { vip_address: string; vip_port_id: string; additional_vips: { ip_address: string }[] }) =>
  ({
    id: req.lbId,
    vip_address: vip.vip_address,
    vip_port_id: vip.vip_port_id,
    additional_vips: vip.additional_vips,
  }) as unknown as LoadBalancer;

const fault = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => (e instanceof Fault ? { status: e.status, message: e.message } : e),
  );

describe("AddressRange", () => {
  it("hands out the addresses between the network and broadcast addresses, with fixed network and subnet ids", () => {
    const range = new AddressRange("127.0.100.0/30");
    expect([...range.addresses()]).toEqual(["127.0.100.1", "127.0.100.2"]);
    expect(range.contains("127.0.100.0")).toBe(false);
    expect(range.contains("127.0.100.3")).toBe(false);
    expect(new AddressRange("127.0.100.0/30").subnetId).toBe(range.subnetId);
    expect(new AddressRange("127.0.101.0/30").subnetId).not.toBe(range.subnetId);
  });
});

describe("LocalNetworkDriver", () => {
  it("allocates the first free address, a requested one, refuses what Neutron refuses, and releases", async () => {
    const { network, vips } = await driver("127.0.110.0/29");
    const range = new AddressRange("127.0.110.0/29");
    const a = request();
    const va = await network.allocateVip(a);
    expect(va).toMatchObject({ vip_address: "127.0.110.1", vip_subnet_id: range.subnetId, vip_network_id: range.networkId });
    // The request's own ids are kept.
    const b = request({ vip_address: "127.0.110.5", vip_subnet_id: "5e6b7c5a-0b7e-4a0e-9d36-1f5b2f3a6a11" });
    expect(await network.allocateVip(b)).toMatchObject({
      vip_address: "127.0.110.5",
      vip_subnet_id: "5e6b7c5a-0b7e-4a0e-9d36-1f5b2f3a6a11",
    });
    expect(await fault(network.allocateVip(request({ vip_address: "127.0.110.5" })))).toEqual({
      status: 409,
      message: `IP address 127.0.110.5 already allocated in subnet ${range.subnetId}.`,
    });
    expect(await fault(network.allocateVip(request({ vip_address: "10.0.0.5" })))).toEqual({
      status: 400,
      message: "IP address 10.0.0.5 is not a valid IP for the specified subnet.",
    });
    expect((await vips.allocated()).map((x) => [x.address, x.owner]).sort()).toEqual([
      ["127.0.110.1", a.lbId],
      ["127.0.110.5", b.lbId],
    ]);
    // Released, the first address is the next one handed out.
    await network.deallocateVip(lbOf(a, va));
    await network.deallocateVip(lbOf(a, va)); // a second release changes nothing
    expect((await network.allocateVip(request())).vip_address).toBe("127.0.110.1");
  });

  it("allocating a load balancer's VIP again answers the addresses it holds: nothing more is claimed", async () => {
    const { network, vips } = await driver("127.0.113.0/28");
    const req = request({ additional_vips: [{ subnet_id: randomUUID() }, { subnet_id: randomUUID() }] });
    const first = await network.allocateVip(req);
    const again = await network.allocateVip(req);
    expect(again).toEqual(first);
    expect([first.vip_address, ...first.additional_vips.map((v) => v.ip_address)]).toEqual(["127.0.113.1", "127.0.113.2", "127.0.113.3"]);
    expect((await vips.allocated()).map((a) => a.address).sort()).toEqual(["127.0.113.1", "127.0.113.2", "127.0.113.3"]);
    // Another load balancer gets the next free address.
    expect((await network.allocateVip(request())).vip_address).toBe("127.0.113.4");
  });

  it("never gives one address to two load balancers, however many allocate at once, and says when the range is full", async () => {
    const { network } = await driver("127.0.111.0/28"); // 14 addresses
    const results = await Promise.allSettled(Array.from({ length: 16 }, () => network.allocateVip(request())));
    const addresses = results.flatMap((r) => (r.status === "fulfilled" ? [r.value.vip_address] : []));
    expect(addresses).toHaveLength(14);
    expect(new Set(addresses).size).toBe(14);
    const refused = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
    expect(refused).toHaveLength(2);
    for (const e of refused)
      expect(e).toMatchObject({ status: 409, message: expect.stringMatching(/^No more IP addresses available on network /) });
  });

  it("gives each amphora a VRRP address of its own (the same one again on a retried plug) and takes it back on unplug", async () => {
    const { network, vips } = await driver("127.0.112.0/29");
    const req = request({ additional_vips: [{ subnet_id: randomUUID() }] });
    const vip = await network.allocateVip(req);
    expect(vip.additional_vips).toEqual([
      { subnet_id: req.additional_vips[0]!.subnet_id, ip_address: "127.0.112.2", network_id: vip.vip_network_id, port_id: vip.vip_port_id },
    ]);
    const lb = lbOf(req, vip);
    const amphora = { id: randomUUID() } as Amphora;
    const ports = await network.plugVip(lb, amphora);
    expect(ports).toMatchObject({ vrrp_ip: "127.0.112.3", ha_ip: vip.vip_address, ha_port_id: vip.vip_port_id });
    expect(await network.plugVip(lb, amphora)).toEqual(ports);
    await network.unplugVip(lb, { ...amphora, vrrp_ip: ports.vrrp_ip });
    await network.deallocateVip(lb);
    expect(await vips.allocated()).toEqual([]);
  });
});
