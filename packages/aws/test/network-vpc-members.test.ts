// The vpc network driver's member networks (members.ts) against moto through the test proxy (which
// refuses what EC2 refuses and moto does not: an attached ENI's delete, an attach across zones or at a
// device index in use), its ids in DynamoDB Local. The amphorae's management subnets are in one VPC, the
// VIP's in a second, members in others: each member ENI is a multi-VPC attachment.
import {
  AssociateVpcCidrBlockCommand,
  CreateSubnetCommand,
  CreateTagsCommand,
  CreateVpcCommand,
  DescribeNetworkInterfacesCommand,
  DescribeSecurityGroupsCommand,
  EC2Client,
  RunInstancesCommand,
  type NetworkInterface,
  type SecurityGroup,
} from "@aws-sdk/client-ec2";
import { DriverError, NetworkRefused, type Amphora, type LoadBalancer, type NetworkPort, type VipRequest } from "@ottava/core";
import { freshTable } from "@ottava/db/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  AMPHORA_TAG_KEY,
  CREATED_AT_TAG_KEY,
  ENI_ROLE_TAG_KEY,
  LOAD_BALANCER_TAG_KEY,
  PROJECT_TAG_KEY,
  SHARED_TAG_KEY,
  STAGE_TAG_KEY,
  memberSecurityGroupName,
} from "../src";
import { AwsIds, awsUuid, type VpcNetworkSettings } from "../src/network";
import { Ec2OrphanSweeper, NETWORK_INTERFACE, SECURITY_GROUP } from "../src/sweeper";
import { secretsManagerClient } from "../src/secretsmanager-client";
import {
  MOTO_CLIENT,
  ec2Fixture,
  proxyWrites,
  startEc2Proxy,
  startMoto,
  tagsOf,
  vpcTestDriver,
  type Ec2Fixture,
  type Ec2Proxy,
  type Moto,
} from "./support";

const STAGE = "members-test";
const PROJECT = "project-p";
const OTHER = "project-q";
const REGION = MOTO_CLIENT.region;

let moto: Moto;
let proxy: Ec2Proxy;
let ec2: EC2Client;
let fx: Ec2Fixture;
let ids: AwsIds;
/** The VPCs (each tagged PROJECT) and their subnets. */
const vpcs = { vip: "", second: "", third: "", overlapping: "", elsewhere: "" };
let subnets: {
  vip: string;
  vipB: string;
  /** The second VPC's: in us-east-1b, us-east-1a, us-east-1a of another project, us-east-1a shared. */
  secondB: string;
  secondA: string;
  secondOther: string;
  secondShared: string;
  third: string;
  overlapping: string;
  /** The only subnet of its VPC, in a zone without amphorae. */
  elsewhere: string;
};

const tag = (key: string, value: string) => ({ Key: key, Value: value });
const uuid = (awsId: string) => awsUuid(REGION, awsId);

beforeAll(async () => {
  moto = await startMoto();
  proxy = await startEc2Proxy(moto.endpoint);
  ec2 = new EC2Client({ ...MOTO_CLIENT, endpoint: proxy.endpoint });
  fx = await ec2Fixture(ec2, "198.18.0.0/20");
  const { cloudIds } = await freshTable();
  ids = new AwsIds(REGION, cloudIds);
  const vpc = async (cidr: string) => {
    const id = (await ec2.send(new CreateVpcCommand({ CidrBlock: cidr }))).Vpc!.VpcId!;
    await ec2.send(new CreateTagsCommand({ Resources: [id], Tags: [tag(PROJECT_TAG_KEY, PROJECT)] }));
    return id;
  };
  const subnet = async (vpcId: string, cidr: string, zone: string, tags = [tag(PROJECT_TAG_KEY, PROJECT)]) => {
    const id = (await ec2.send(new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: cidr, AvailabilityZone: zone }))).Subnet!.SubnetId!;
    await ec2.send(new CreateTagsCommand({ Resources: [id], Tags: tags }));
    return id;
  };
  vpcs.vip = await vpc("198.18.16.0/20");
  vpcs.second = await vpc("198.18.32.0/20");
  // A second range of the second VPC: its members there are reached through the same ENI.
  await ec2.send(new AssociateVpcCidrBlockCommand({ VpcId: vpcs.second, CidrBlock: "198.19.0.0/16" }));
  vpcs.third = await vpc("198.18.48.0/20");
  vpcs.overlapping = await vpc("198.18.20.0/22");
  vpcs.elsewhere = await vpc("198.18.64.0/20");
  subnets = {
    vip: await subnet(vpcs.vip, "198.18.16.0/24", "us-east-1a"),
    vipB: await subnet(vpcs.vip, "198.18.17.0/24", "us-east-1b"),
    secondB: await subnet(vpcs.second, "198.18.32.0/24", "us-east-1b"),
    secondA: await subnet(vpcs.second, "198.18.33.0/24", "us-east-1a"),
    secondOther: await subnet(vpcs.second, "198.18.34.0/24", "us-east-1a", [tag(PROJECT_TAG_KEY, OTHER)]),
    secondShared: await subnet(vpcs.second, "198.18.35.0/24", "us-east-1a", [tag(SHARED_TAG_KEY, "true")]),
    third: await subnet(vpcs.third, "198.18.48.0/24", "us-east-1a"),
    overlapping: await subnet(vpcs.overlapping, "198.18.20.0/24", "us-east-1a"),
    elsewhere: await subnet(vpcs.elsewhere, "198.18.64.0/24", "us-east-1b"),
  };
  // What the look-ups answered before (the API takes UUIDs only).
  for (const id of [...Object.values(vpcs), ...Object.values(subnets), ...Object.values(fx.subnets)]) await ids.uuid(id);
});
afterAll(async () => {
  ec2?.destroy();
  await proxy?.stop();
  await moto?.stop();
});
beforeEach(() => proxy.reset());

const settings = (over: Partial<VpcNetworkSettings> = {}): VpcNetworkSettings => ({
  stage: STAGE,
  ampBootNetworkList: [fx.subnets["us-east-1a"]!, fx.subnets["us-east-1b"]!],
  allowInvisibleResourceUsage: false,
  ampFlavorId: "t3.micro",
  ...over,
});
const driver = (over: Partial<VpcNetworkSettings> = {}) => vpcTestDriver(proxy, ids, settings(over));

const request = (): VipRequest => ({
  lbId: crypto.randomUUID(),
  projectId: PROJECT,
  vip_qos_policy_id: null,
  zone: {},
  vip_address: null,
  vip_port_id: null,
  vip_subnet_id: uuid(subnets.vip),
  vip_network_id: null,
  additional_vips: [],
  vip_sg_ids: [],
  vip_vnic_type: "normal",
});
/** A load balancer with its VIP allocated in the VIP subnet (us-east-1a). */
const loadBalancer = async (): Promise<LoadBalancer> => {
  const req = request();
  const vip = await driver().allocateVip(req);
  return { id: req.lbId, project_id: req.projectId, vip_sg_ids: [], ...vip } as unknown as LoadBalancer;
};
/** An amphora of `lb` booted in a management subnet of `zone` (another VPC), tagged as the EC2 compute driver tags it. */
const amphora = async (lb: LoadBalancer, over: { zone?: string; type?: string; cached?: boolean } = {}): Promise<Amphora> => {
  const zone = over.zone ?? "us-east-1a";
  const id = crypto.randomUUID();
  const run = await ec2.send(
    new RunInstancesCommand({
      ImageId: fx.publicAmi,
      InstanceType: (over.type ?? "c5.xlarge") as "c5.xlarge",
      MinCount: 1,
      MaxCount: 1,
      SubnetId: fx.subnets[zone],
      TagSpecifications: [
        { ResourceType: "instance", Tags: [tag(STAGE_TAG_KEY, STAGE), tag(AMPHORA_TAG_KEY, id), tag(LOAD_BALANCER_TAG_KEY, lb.id)] },
      ],
    }),
  );
  return {
    id,
    loadbalancer_id: lb.id,
    project_id: lb.project_id,
    compute_id: run.Instances![0]!.InstanceId!,
    cached_zone: over.cached === false ? null : zone,
  } as Amphora;
};
/** An amphora with its VIP plugged (its "vrrp" ENI at device index 1). */
const pluggedAmphora = async (lb: LoadBalancer, over: Parameters<typeof amphora>[1] = {}) => {
  const amp = await amphora(lb, over);
  const ports = await driver().plugVip(lb, amp, true);
  return { ...amp, vrrp_port_id: ports.vrrp_port_id, vrrp_ip: ports.vrrp_ip };
};

const eniOf = async (id: string) =>
  (await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] }))).NetworkInterfaces![0]!;
const enisOf = async (filters: Record<string, string>) =>
  (await ec2.send(new DescribeNetworkInterfacesCommand({ Filters: Object.entries(filters).map(([Name, v]) => ({ Name, Values: [v] })) })))
    .NetworkInterfaces!;
const memberEnis = (amp: Amphora) => enisOf({ [`tag:${AMPHORA_TAG_KEY}`]: amp.id, [`tag:${ENI_ROLE_TAG_KEY}`]: "member" });
const groupsOf = async (lbId: string): Promise<SecurityGroup[]> =>
  (
    await ec2.send(
      new DescribeSecurityGroupsCommand({
        Filters: [
          { Name: `tag:${STAGE_TAG_KEY}`, Values: [STAGE] },
          { Name: `tag:${LOAD_BALANCER_TAG_KEY}`, Values: [lbId] },
        ],
      }),
    )
  ).SecurityGroups!;
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => "accepted",
    (e: unknown) => (e instanceof NetworkRefused ? e.message : `${(e as Error).name}: ${(e as Error).message}`),
  );
const writes = () => proxyWrites(proxy);

/** The port the driver answers for an ENI of the second VPC in its us-east-1a subnet. */
const secondVpcPort = (eni: NetworkInterface): NetworkPort => ({
  id: uuid(eni.NetworkInterfaceId!),
  network_id: uuid(vpcs.second),
  mac_address: eni.MacAddress!,
  mtu: 9001,
  vnic_type: "normal",
  fixed_ips: [
    {
      subnet_id: uuid(subnets.secondA),
      ip_address: eni.PrivateIpAddress!,
      subnet: {
        cidr: "198.18.33.0/24",
        gateway_ip: "198.18.33.1",
        host_routes: [
          { destination: "198.18.32.0/20", nexthop: "198.18.33.1" },
          { destination: "198.19.0.0/16", nexthop: "198.18.33.1" },
        ],
      },
    },
  ],
});

describe("getSubnet", () => {
  it("answers the subnet's VPC as its network, remembered; a subnet that is not there is NetworkRefused", async () => {
    const d = driver();
    expect(await d.getSubnet(uuid(subnets.secondB))).toEqual({ id: uuid(subnets.secondB), network_id: uuid(vpcs.second) });
    proxy.reset();
    expect(await d.getSubnet(uuid(subnets.secondB))).toEqual({ id: uuid(subnets.secondB), network_id: uuid(vpcs.second) });
    expect(proxy.calls).toEqual([]);
    const unknown = crypto.randomUUID();
    expect(await refusal(d.getSubnet(unknown))).toBe(`Subnet ${unknown} not found.`);
  });

  it("says a VPC routes between its subnets (subnetsRouted); plugFixedIp and unplugFixedIp answer the port as it is", async () => {
    const d = driver();
    expect(d.subnetsRouted).toBe(true);
    const port = { id: "p", network_id: "n", mac_address: "m", mtu: 9001, vnic_type: "normal", fixed_ips: [] };
    const lb = {} as LoadBalancer;
    expect(await d.plugFixedIp(lb, {} as Amphora, port, uuid(subnets.secondB))).toBe(port);
    expect(await d.unplugFixedIp(lb, {} as Amphora, port, uuid(subnets.secondB))).toBe(port);
    expect(proxy.calls).toEqual([]);
  });
});

describe("plugNetwork, getPluggedNetworks, unplugNetwork", () => {
  it("plugs a second VPC: an ENI in its subnet of the amphora's zone, tagged, in the LB's member group, attached at index 2; again: the same ENI", async () => {
    const lb = await loadBalancer();
    // No zone recorded: the VIP subnet's (us-east-1a).
    const amp = await pluggedAmphora(lb, { cached: false });
    proxy.reset();
    // The first subnet named is in us-east-1b, where the amphora is not: the next one, in us-east-1a.
    const port = await driver().plugNetwork(lb, amp, uuid(vpcs.second), [uuid(subnets.secondB), uuid(subnets.secondA)], "normal");
    const [eni, ...more] = await memberEnis(amp);
    expect(more).toEqual([]);
    expect(port).toEqual(secondVpcPort(eni!));
    expect(eni).toMatchObject({
      SubnetId: subnets.secondA,
      VpcId: vpcs.second,
      AvailabilityZone: "us-east-1a",
      SourceDestCheck: true,
      Attachment: expect.objectContaining({ InstanceId: amp.compute_id, DeviceIndex: 2 }),
    });
    expect(tagsOf(eni!)).toMatchObject({
      [STAGE_TAG_KEY]: STAGE,
      [LOAD_BALANCER_TAG_KEY]: lb.id,
      [PROJECT_TAG_KEY]: PROJECT,
      [AMPHORA_TAG_KEY]: amp.id,
      [ENI_ROLE_TAG_KEY]: "member",
      Name: `octavia-lb-member-${amp.id}`,
    });
    expect(Date.now() - Date.parse(tagsOf(eni!)[CREATED_AT_TAG_KEY]!)).toBeLessThan(60_000);
    // Its group: the LB's member group of that VPC, admitting nothing, letting everything out.
    const group = (await groupsOf(lb.id)).find((g) => g.VpcId === vpcs.second)!;
    expect(eni!.Groups!.map((g) => g.GroupId)).toEqual([group.GroupId]);
    expect(group.GroupName).toBe(memberSecurityGroupName(STAGE, lb.id));
    expect(tagsOf(group)).toMatchObject({ [STAGE_TAG_KEY]: STAGE, [LOAD_BALANCER_TAG_KEY]: lb.id, [PROJECT_TAG_KEY]: PROJECT });
    expect(group.IpPermissions).toEqual([]);
    expect(group.IpPermissionsEgress).toEqual([
      expect.objectContaining({ IpProtocol: "-1", IpRanges: [expect.objectContaining({ CidrIp: "0.0.0.0/0" })] }),
    ]);
    expect(writes()).toEqual([
      "CreateSecurityGroup 200",
      "CreateNetworkInterface 200",
      `AttachNetworkInterface ${eni!.NetworkInterfaceId} 200`,
    ]);
    // Again (a retried task): the same port, nothing made.
    proxy.reset();
    expect(await driver().plugNetwork(lb, amp, uuid(vpcs.second), [uuid(subnets.secondA)], "normal")).toEqual(port);
    expect(writes()).toEqual([]);
    // Another amphora of the LB: its own ENI, in the same group.
    const other = await pluggedAmphora(lb);
    const otherPort = await driver().plugNetwork(lb, other, uuid(vpcs.second), [uuid(subnets.secondA)], "normal");
    expect(otherPort.id).not.toBe(port.id);
    expect((await memberEnis(other))[0]!.Groups!.map((g) => g.GroupId)).toEqual([group.GroupId]);
    expect((await groupsOf(lb.id)).filter((g) => g.VpcId === vpcs.second)).toHaveLength(1);
  });

  it("getPluggedNetworks: the VRRP port on the VIP's VPC and each member port with its VPC's routes, never the management interface", async () => {
    const lb = await loadBalancer();
    const amp = await pluggedAmphora(lb);
    const vrrp = await eniOf((await ids.awsId(amp.vrrp_port_id!, "eni"))!);
    const vrrpPort: NetworkPort = {
      id: amp.vrrp_port_id!,
      network_id: uuid(vpcs.vip),
      mac_address: vrrp.MacAddress!,
      mtu: 9001,
      vnic_type: "normal",
      fixed_ips: [
        {
          subnet_id: uuid(subnets.vip),
          ip_address: amp.vrrp_ip!,
          subnet: {
            cidr: "198.18.16.0/24",
            gateway_ip: "198.18.16.1",
            host_routes: [{ destination: "198.18.16.0/20", nexthop: "198.18.16.1" }],
          },
        },
      ],
    };
    expect(await driver().getPluggedNetworks(lb, amp)).toEqual([vrrpPort]);
    await driver().plugNetwork(lb, amp, uuid(vpcs.second), [uuid(subnets.secondA)], "normal");
    const third = await driver().plugNetwork(lb, amp, uuid(vpcs.third), [uuid(subnets.third)], "normal");
    const [second] = await enisOf({ [`tag:${AMPHORA_TAG_KEY}`]: amp.id, "vpc-id": vpcs.second });
    expect(await driver().getPluggedNetworks(lb, amp)).toEqual([vrrpPort, secondVpcPort(second!), third]);
    expect(third.fixed_ips[0]!.subnet.host_routes).toEqual([{ destination: "198.18.48.0/20", nexthop: "198.18.48.1" }]);
    expect((await eniOf((await ids.awsId(third.id, "eni"))!)).Attachment!.DeviceIndex).toBe(3);
    // An amphora without an instance has nothing plugged.
    expect(await driver().getPluggedNetworks(lb, { ...amp, compute_id: null })).toEqual([]);
  });

  it("an amphora in another zone: the ENI in the VPC's subnet of that zone, whichever subnet was named", async () => {
    const lb = await loadBalancer();
    const amp = await amphora(lb, { zone: "us-east-1b" });
    const port = await driver().plugNetwork(lb, amp, uuid(vpcs.second), [uuid(subnets.secondA)], "normal");
    expect(port.fixed_ips[0]!.subnet_id).toBe(uuid(subnets.secondB));
    expect((await memberEnis(amp))[0]).toMatchObject({
      AvailabilityZone: "us-east-1b",
      Attachment: expect.objectContaining({ DeviceIndex: 2 }),
    });
    // No subnet of the VPC in the amphora's zone: a DriverError (the API's check refuses this first).
    const e = await driver()
      .plugNetwork(lb, await amphora(lb, { zone: "us-east-1a" }), uuid(vpcs.elsewhere), [uuid(subnets.elsewhere)], "normal")
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DriverError);
    expect((e as Error).message).toMatch(/has no subnet in zone us-east-1a/);
  });

  it("a retry attaches the ENI a failed attach left, and deletes the extra ENIs a create whose answers were lost made", async () => {
    const lb = await loadBalancer();
    const amp = await pluggedAmphora(lb);
    // EC2 made the ENI each time, and each answer was lost (the client tried three times).
    proxy.fail("CreateNetworkInterface", { code: "InternalError", status: 500, message: "lost" }, { after: true, times: 3 });
    await expect(driver().plugNetwork(lb, amp, uuid(vpcs.second), [uuid(subnets.secondA)], "normal")).rejects.toThrow(/InternalError/);
    expect(await memberEnis(amp)).toHaveLength(3);
    proxy.reset();
    proxy.fail("AttachNetworkInterface", { code: "IncorrectState", status: 400, message: "not now" });
    await expect(driver().plugNetwork(lb, amp, uuid(vpcs.second), [uuid(subnets.secondA)], "normal")).rejects.toThrow(DriverError);
    // One ENI is left, not attached; the retry attaches it and makes nothing.
    const [left, ...none] = await memberEnis(amp);
    expect(none).toEqual([]);
    expect(left!.Attachment).toBeUndefined();
    proxy.reset();
    const port = await driver().plugNetwork(lb, amp, uuid(vpcs.second), [uuid(subnets.secondA)], "normal");
    expect(port.id).toBe(uuid(left!.NetworkInterfaceId!));
    expect(writes()).toEqual([`AttachNetworkInterface ${left!.NetworkInterfaceId} 200`]);
  });

  it("an instance type's interfaces are all in use: EC2 refuses the attach (AttachmentLimitExceeded), a DriverError", async () => {
    const lb = await loadBalancer();
    // A t3.small takes 3: management, VRRP, and one member VPC.
    const amp = await pluggedAmphora(lb, { type: "t3.small" });
    await driver().plugNetwork(lb, amp, uuid(vpcs.second), [uuid(subnets.secondA)], "normal");
    const e = await driver()
      .plugNetwork(lb, amp, uuid(vpcs.third), [uuid(subnets.third)], "normal")
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DriverError);
    expect((e as Error).message).toMatch(/AttachmentLimitExceeded/);
    // What the API refuses before: the same count.
    expect(await refusal(driver().checkMemberSubnets(lb, [uuid(subnets.secondA), uuid(subnets.third)]))).toMatch(
      /instance type t3\.small has at most 3 network interfaces/,
    );
  });

  it("an index taken meanwhile: the next free one", async () => {
    const lb = await loadBalancer();
    const amp = await pluggedAmphora(lb);
    proxy.reset();
    proxy.fail("AttachNetworkInterface", {
      code: "InvalidParameterValue",
      status: 400,
      message: `Instance '${amp.compute_id}' already has an interface attached at device index '2'.`,
    });
    await driver().plugNetwork(lb, amp, uuid(vpcs.second), [uuid(subnets.secondA)], "normal");
    expect(proxy.params("AttachNetworkInterface").map((p) => p.DeviceIndex)).toEqual(["2", "2"]);
    expect((await memberEnis(amp))[0]!.Attachment).toMatchObject({ DeviceIndex: 2 });
  });

  it("unplugNetwork: detached, then deleted; gone: done; the network can be plugged again (a new ENI); never another ENI", async () => {
    const lb = await loadBalancer();
    const amp = await pluggedAmphora(lb);
    const port = await driver().plugNetwork(lb, amp, uuid(vpcs.second), [uuid(subnets.secondA)], "normal");
    const eniId = (await ids.awsId(port.id, "eni"))!;
    const attachment = (await eniOf(eniId)).Attachment!.AttachmentId!;
    proxy.reset();
    await driver().unplugNetwork(amp, port);
    expect(writes()).toEqual([`DetachNetworkInterface ${attachment} 200`, `DeleteNetworkInterface ${eniId} 200`]);
    expect(await memberEnis(amp)).toEqual([]);
    expect(await driver().getPluggedNetworks(lb, amp)).toEqual([expect.objectContaining({ id: amp.vrrp_port_id })]);
    proxy.reset();
    await driver().unplugNetwork(amp, port);
    expect(writes()).toEqual([]);
    // Plugged again (a member on that VPC again): a new ENI.
    const again = await driver().plugNetwork(lb, amp, uuid(vpcs.second), [uuid(subnets.secondA)], "normal");
    expect(again.id).not.toBe(port.id);
    expect(await memberEnis(amp)).toHaveLength(1);
    // The VRRP port is no member port: refused, left plugged.
    const e = await driver()
      .unplugNetwork(amp, { id: amp.vrrp_port_id!, network_id: uuid(vpcs.vip) })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DriverError);
    expect((await eniOf((await ids.awsId(amp.vrrp_port_id!, "eni"))!)).Attachment).toBeDefined();
  });

  it("unplugNetwork: an ENI not yet detached after the waits is a DriverError, for the flow to retry", async () => {
    const lb = await loadBalancer();
    const amp = await pluggedAmphora(lb);
    const port = await driver().plugNetwork(lb, amp, uuid(vpcs.second), [uuid(subnets.secondA)], "normal");
    proxy.fail("DetachNetworkInterface", { code: "IncorrectState", status: 400, message: "busy" });
    await expect(driver().unplugNetwork(amp, port)).rejects.toThrow(DriverError);
    proxy.fail("DeleteNetworkInterface", { code: "InvalidNetworkInterface.InUse", status: 400, message: "in use" }, { times: 10 });
    await expect(driver().unplugNetwork(amp, port)).rejects.toThrow(/still InvalidNetworkInterface.InUse after 4 attempts/);
    proxy.clearFaults();
    await driver().unplugNetwork(amp, port);
    expect(await memberEnis(amp)).toEqual([]);
  });

  it("deallocateVip removes the member ENIs and the member groups with the load balancer's own", async () => {
    const lb = await loadBalancer();
    const amp = await pluggedAmphora(lb);
    await driver().plugNetwork(lb, amp, uuid(vpcs.second), [uuid(subnets.secondA)], "normal");
    await driver().plugNetwork(lb, amp, uuid(vpcs.third), [uuid(subnets.third)], "normal");
    expect((await groupsOf(lb.id)).map((g) => g.VpcId).sort()).toEqual([vpcs.vip, vpcs.second, vpcs.third].sort());
    await driver().deallocateVip(lb);
    expect(await enisOf({ [`tag:${LOAD_BALANCER_TAG_KEY}`]: lb.id })).toEqual([]);
    expect(await groupsOf(lb.id)).toEqual([]);
  });

  it("the orphan sweep lists a member ENI with its amphora and a member group with its load balancer, and removes them", async () => {
    const lb = await loadBalancer();
    const amp = await pluggedAmphora(lb);
    const port = await driver().plugNetwork(lb, amp, uuid(vpcs.second), [uuid(subnets.secondA)], "normal");
    const eniId = (await ids.awsId(port.id, "eni"))!;
    const group = (await groupsOf(lb.id)).find((g) => g.VpcId === vpcs.second)!;
    const sweeper = new Ec2OrphanSweeper(
      ec2,
      secretsManagerClient({ secretsmanagerEndpoint: moto.endpoint }, { region: REGION, credentials: async () => MOTO_CLIENT.credentials }),
      STAGE,
    );
    const listed = [];
    for await (const r of sweeper.resources()) listed.push(r);
    expect(listed).toEqual(
      expect.arrayContaining([
        { kind: NETWORK_INTERFACE, id: eniId, amphoraId: amp.id },
        { kind: SECURITY_GROUP, id: group.GroupId, loadBalancerId: lb.id, createdAt: tagsOf(group)[CREATED_AT_TAG_KEY] },
      ]),
    );
    // As the sweep removes them: the ENI detached first, deleted by the next pass; then its group.
    const eni = { kind: NETWORK_INTERFACE, id: eniId, amphoraId: amp.id };
    await sweeper.remove(eni);
    expect((await eniOf(eniId)).Attachment?.Status ?? "detached").toBe("detached");
    await sweeper.remove(eni);
    expect(await memberEnis(amp)).toEqual([]);
    await sweeper.remove({ kind: SECURITY_GROUP, id: group.GroupId!, loadBalancerId: lb.id });
    expect((await groupsOf(lb.id)).map((g) => g.VpcId)).toEqual([vpcs.vip]);
  });
});

describe("checkMemberSubnets", () => {
  it("accepts any subnet of the VIP's VPC (in any zone: its ENI reaches them), and a second VPC with a subnet in the amphorae's zone", async () => {
    const lb = await loadBalancer();
    await pluggedAmphora(lb);
    const d = driver();
    expect(await refusal(d.checkMemberSubnets(lb, [uuid(subnets.vip), uuid(subnets.vipB)]))).toBe("accepted");
    // The second VPC's us-east-1b subnet: its ENI goes in its us-east-1a subnet; shared subnets are anyone's.
    expect(await refusal(d.checkMemberSubnets(lb, [uuid(subnets.vipB), uuid(subnets.secondB), uuid(subnets.secondShared)]))).toBe(
      "accepted",
    );
    expect(await refusal(d.checkMemberSubnets(lb, []))).toBe("accepted");
  });

  it("refuses, in Octavia's words where Octavia has them, what no amphora can be plugged into", async () => {
    const lb = await loadBalancer();
    await pluggedAmphora(lb);
    const unknown = crypto.randomUUID();
    const cases: [string[], string][] = [
      [[unknown], `Subnet ${unknown} not found.`],
      [[uuid(subnets.vip), uuid(subnets.secondOther)], `Subnet ${uuid(subnets.secondOther)} not found.`],
      [[uuid(fx.subnets["us-east-1a"]!)], `Subnet ${uuid(fx.subnets["us-east-1a"]!)} not found.`],
      [
        [uuid(subnets.elsewhere)],
        `Subnet ${uuid(subnets.elsewhere)} is on network ${uuid(vpcs.elsewhere)}, which has no subnet in availability zone us-east-1a that the load balancer's amphorae can be plugged into: an amphora's network interface must be in the amphora's zone, the VIP subnet's.`,
      ],
      [
        [uuid(subnets.overlapping)],
        `Subnet ${uuid(subnets.overlapping)} is on network ${uuid(vpcs.overlapping)}, whose range 198.18.20.0/22 overlaps the range 198.18.16.0/20 of the VIP's network: an amphora could not route to both.`,
      ],
    ];
    for (const [subnetIds, expected] of cases) expect(await refusal(driver().checkMemberSubnets(lb, subnetIds))).toBe(expected);
    // The operator lifts tenancy: another project's subnet is accepted; a management subnet still not.
    const open = driver({ allowInvisibleResourceUsage: true });
    expect(await refusal(open.checkMemberSubnets(lb, [uuid(subnets.secondOther)]))).toBe("accepted");
    expect(await refusal(open.checkMemberSubnets(lb, [uuid(fx.subnets["us-east-1b"]!)]))).toBe(
      `Subnet ${uuid(fx.subnets["us-east-1b"]!)} not found.`,
    );
  });

  it("counts the network interfaces of the load balancer's instance type: management, VIP, and one per other VPC", async () => {
    const two = [uuid(subnets.secondA), uuid(subnets.third)];
    // c5.xlarge takes 4: two member VPCs fit.
    const large = await loadBalancer();
    await pluggedAmphora(large, { type: "c5.xlarge" });
    expect(await refusal(driver().checkMemberSubnets(large, two))).toBe("accepted");
    // t3.small takes 3: one fits, two do not.
    const small = await loadBalancer();
    await pluggedAmphora(small, { type: "t3.small" });
    expect(await refusal(driver().checkMemberSubnets(small, [uuid(subnets.secondA)]))).toBe("accepted");
    expect(await refusal(driver().checkMemberSubnets(small, two))).toBe(
      "The members' subnets are on 2 networks besides the VIP's, each needing a network interface on each amphora, but instance type t3.small has at most 3 network interfaces: one for the management network, one for the VIP's network, and 1 for members' networks.",
    );
    // No instance yet (a create with its members): OTTAVA_AMP_FLAVOR_ID's type, t3.micro, takes 2.
    const creating = await loadBalancer();
    expect(await refusal(driver().checkMemberSubnets(creating, [uuid(subnets.vipB)]))).toBe("accepted");
    expect(await refusal(driver().checkMemberSubnets(creating, [uuid(subnets.secondA)]))).toMatch(
      /^The members' subnets are on 1 networks besides the VIP's, .* instance type t3\.micro has at most 2 network interfaces: .* and 0 for members' networks\.$/,
    );
    expect(await refusal(driver({ ampFlavorId: "c5.xlarge" }).checkMemberSubnets(creating, two))).toBe("accepted");
  });
});
