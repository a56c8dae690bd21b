// The vpc network driver against moto through the test proxy (which refuses what EC2 refuses and moto
// does not, and records which ENI each address was last assigned to), its ids in DynamoDB Local.
import {
  AssignPrivateIpAddressesCommand,
  AttachNetworkInterfaceCommand,
  CreateNetworkInterfaceCommand,
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateTagsCommand,
  CreateVpcCommand,
  DescribeNetworkInterfacesCommand,
  DescribeSecurityGroupsCommand,
  EC2Client,
  RunInstancesCommand,
  type NetworkInterface,
} from "@aws-sdk/client-ec2";
import { DriverError, Fault, type Amphora, type LoadBalancer, type Vip, type VipRequest } from "@ottava/core";
import { freshTable } from "@ottava/db/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  AMPHORA_TAG_KEY,
  ENI_ROLE_TAG_KEY,
  LOAD_BALANCER_TAG_KEY,
  PROJECT_TAG_KEY,
  SHARED_TAG_KEY,
  STAGE_TAG_KEY,
  lbSecurityGroupName,
} from "../src";
import { AwsIds, awsUuid, type VpcNetworkSettings } from "../src/network";
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

const STAGE = "vpc-test";
const PROJECT = "project-p";
const OTHER = "project-q";
const REGION = MOTO_CLIENT.region;

let moto: Moto;
let proxy: Ec2Proxy;
let ec2: EC2Client;
let fx: Ec2Fixture;
let ids: AwsIds;
/** The user's VPC (tagged PROJECT) and its subnets. */
let vpc: string;
let subnets: { mine: string; mineB: string; noZone: string; other: string; shared: string; untagged: string };
let ami: string;

const tag = (key: string, value: string) => ({ Key: key, Value: value });

beforeAll(async () => {
  moto = await startMoto();
  proxy = await startEc2Proxy(moto.endpoint);
  ec2 = new EC2Client({ ...MOTO_CLIENT, endpoint: proxy.endpoint });
  fx = await ec2Fixture(ec2, "198.18.32.0/20");
  ami = fx.publicAmi;
  const { cloudIds } = await freshTable();
  ids = new AwsIds(REGION, cloudIds);
  vpc = (await ec2.send(new CreateVpcCommand({ CidrBlock: "198.18.64.0/20" }))).Vpc!.VpcId!;
  await ec2.send(new CreateTagsCommand({ Resources: [vpc], Tags: [tag(PROJECT_TAG_KEY, PROJECT)] }));
  const subnet = async (third: number, zone: string, tags: { Key: string; Value: string }[]) => {
    const id = (await ec2.send(new CreateSubnetCommand({ VpcId: vpc, CidrBlock: `198.18.${third}.0/24`, AvailabilityZone: zone }))).Subnet!
      .SubnetId!;
    if (tags.length) await ec2.send(new CreateTagsCommand({ Resources: [id], Tags: tags }));
    return id;
  };
  subnets = {
    mine: await subnet(64, "us-east-1a", [tag(PROJECT_TAG_KEY, PROJECT)]),
    mineB: await subnet(65, "us-east-1b", [tag(PROJECT_TAG_KEY, PROJECT)]),
    noZone: await subnet(66, "us-east-1c", [tag(PROJECT_TAG_KEY, PROJECT)]),
    other: await subnet(67, "us-east-1a", [tag(PROJECT_TAG_KEY, OTHER)]),
    shared: await subnet(68, "us-east-1a", [tag(SHARED_TAG_KEY, "true")]),
    untagged: await subnet(69, "us-east-1a", []),
  };
  // What the look-ups answered before (the API takes UUIDs only).
  for (const id of [vpc, ...Object.values(subnets), ...Object.values(fx.subnets)]) await ids.uuid(id);
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

const uuid = (awsId: string) => awsUuid(REGION, awsId);
const request = (over: Partial<VipRequest> = {}): VipRequest => ({
  lbId: crypto.randomUUID(),
  projectId: PROJECT,
  vip_qos_policy_id: null,
  zone: {},
  vip_address: null,
  vip_port_id: null,
  vip_subnet_id: uuid(subnets.mine),
  vip_network_id: null,
  additional_vips: [],
  vip_sg_ids: [],
  vip_vnic_type: "normal",
  ...over,
});
const loadBalancer = (req: VipRequest, vip: Vip): LoadBalancer =>
  ({ id: req.lbId, project_id: req.projectId, vip_sg_ids: req.vip_sg_ids, ...vip }) as unknown as LoadBalancer;
/** An amphora instance booted in a management subnet (another VPC: a multi-VPC attachment), in `zone`. */
const amphora = async (lb: LoadBalancer, zone = "us-east-1a"): Promise<Amphora> => {
  const run = await ec2.send(
    new RunInstancesCommand({ ImageId: ami, InstanceType: "t3.micro", MinCount: 1, MaxCount: 1, SubnetId: fx.subnets[zone] }),
  );
  return {
    id: crypto.randomUUID(),
    loadbalancer_id: lb.id,
    project_id: lb.project_id,
    compute_id: run.Instances![0]!.InstanceId!,
  } as Amphora;
};

const tagged = async (lbId: string) => {
  const filters = [
    { Name: `tag:${STAGE_TAG_KEY}`, Values: [STAGE] },
    { Name: `tag:${LOAD_BALANCER_TAG_KEY}`, Values: [lbId] },
  ];
  const enis = (await ec2.send(new DescribeNetworkInterfacesCommand({ Filters: filters }))).NetworkInterfaces!;
  const groups = (await ec2.send(new DescribeSecurityGroupsCommand({ Filters: filters }))).SecurityGroups!;
  return { enis, groups };
};
const eniOf = async (id: string) =>
  (await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] }))).NetworkInterfaces![0]!;
const secondaries = (eni: NetworkInterface) => eni.PrivateIpAddresses!.filter((a) => !a.Primary).map((a) => a.PrivateIpAddress!);
const faultOf = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: unknown) => (e instanceof Fault ? `${e.status} ${e.message}` : `${(e as Error).name}: ${(e as Error).message}`),
  );
const writes = () => proxyWrites(proxy);

describe("allocateVip", () => {
  it("in a subnet: a reservation ENI holding the VIP as a secondary IP, in the LB's group; UUIDs answered; again: the same", async () => {
    const req = request();
    const vip = await driver().allocateVip(req);
    const { enis, groups } = await tagged(req.lbId);
    expect(enis).toHaveLength(1);
    expect(groups.map((g) => [g.GroupName, g.VpcId])).toEqual([[lbSecurityGroupName(STAGE, req.lbId), vpc]]);
    const eni = enis[0]!;
    expect(tagsOf(eni)).toMatchObject({
      [STAGE_TAG_KEY]: STAGE,
      [LOAD_BALANCER_TAG_KEY]: req.lbId,
      [PROJECT_TAG_KEY]: PROJECT,
      [ENI_ROLE_TAG_KEY]: "vip",
    });
    expect(tagsOf(groups[0]!)).toMatchObject({ [STAGE_TAG_KEY]: STAGE, [LOAD_BALANCER_TAG_KEY]: req.lbId, [PROJECT_TAG_KEY]: PROJECT });
    expect(eni.SubnetId).toBe(subnets.mine);
    expect(eni.Groups!.map((g) => g.GroupId)).toEqual([groups[0]!.GroupId]);
    expect(secondaries(eni)).toEqual([vip.vip_address]);
    expect(vip).toEqual({
      vip_address: vip.vip_address,
      vip_port_id: uuid(eni.NetworkInterfaceId!),
      vip_subnet_id: uuid(subnets.mine),
      vip_network_id: uuid(vpc),
      additional_vips: [],
    });
    expect(proxy.vipHolder(vip.vip_address)).toBe(eni.NetworkInterfaceId);
    expect(await driver().allocateVip(req)).toEqual(vip);
    expect((await tagged(req.lbId)).enis).toHaveLength(1);
  });

  it("a given vip_address is kept; one another ENI holds is Octavia's 409, and nothing is left allocated", async () => {
    const first = request({ vip_address: "198.18.64.50" });
    expect((await driver().allocateVip(first)).vip_address).toBe("198.18.64.50");
    const second = request({ vip_address: "198.18.64.50" });
    expect(await faultOf(driver().allocateVip(second))).toBe(
      `409 The VIP IP address is already in use: IP address 198.18.64.50 already allocated in subnet ${uuid(subnets.mine)}.`,
    );
    expect(await tagged(second.lbId)).toEqual({ enis: [], groups: [] });
    expect(proxy.vipHolder("198.18.64.50")).toBe((await tagged(first.lbId)).enis[0]!.NetworkInterfaceId);
  });

  it("an address outside the subnet, or one AWS reserves, is a 400 before anything is made", async () => {
    for (const address of ["198.18.65.10", "198.18.64.1", "198.18.64.255"]) {
      const req = request({ vip_address: address });
      expect(await faultOf(driver().allocateVip(req))).toBe(`400 IP address ${address} is not a valid IP for the specified subnet.`);
      expect(await tagged(req.lbId)).toEqual({ enis: [], groups: [] });
    }
  });

  it("vip_network_id alone: a subnet of the VPC the project may use, in a zone with a management subnet; with an address, the subnet holding it", async () => {
    const req = request({ vip_subnet_id: null, vip_network_id: uuid(vpc) });
    const vip = await driver().allocateVip(req);
    // The project's own and the shared subnets of zones with a management subnet (not us-east-1c's), the first by id.
    expect(vip.vip_subnet_id).toBe(uuid([subnets.mine, subnets.mineB, subnets.shared].sort()[0]!));
    expect(vip.vip_network_id).toBe(uuid(vpc));
    const inB = request({ vip_subnet_id: null, vip_network_id: uuid(vpc), vip_address: "198.18.65.20" });
    expect(await driver().allocateVip(inB)).toMatchObject({ vip_subnet_id: uuid(subnets.mineB), vip_address: "198.18.65.20" });
    const nowhere = request({ vip_subnet_id: null, vip_network_id: uuid(vpc), vip_address: "198.18.67.20" });
    expect(await faultOf(driver().allocateVip(nowhere))).toBe(
      "400 Validation failure: Supplied network does not contain a subnet for VIP address specified.",
    );
    // A subnet named with a network it is not in.
    const elsewhere = request({ vip_network_id: uuid(vpc), vip_subnet_id: uuid(fx.subnets["us-east-1a"]!) });
    expect(await faultOf(driver().allocateVip(elsewhere))).toBe(`400 Subnet ${uuid(fx.subnets["us-east-1a"]!)} not found.`);
  });

  it("the user's port: its secondary IP is the VIP, or a given one of them, or a new one; it is never deleted", async () => {
    const eni = async (secondary: number) => {
      const id = (
        await ec2.send(
          new CreateNetworkInterfaceCommand({
            SubnetId: subnets.mine,
            SecondaryPrivateIpAddressCount: secondary || undefined,
            TagSpecifications: [{ ResourceType: "network-interface", Tags: [tag(PROJECT_TAG_KEY, PROJECT)] }],
          }),
        )
      ).NetworkInterface!.NetworkInterfaceId!;
      return { id, uuid: await ids.uuid(id) };
    };
    const withOne = await eni(1);
    const req = request({ vip_subnet_id: null, vip_port_id: withOne.uuid });
    const vip = await driver().allocateVip(req);
    expect(vip).toMatchObject({
      vip_address: secondaries(await eniOf(withOne.id))[0],
      vip_port_id: withOne.uuid,
      vip_subnet_id: uuid(subnets.mine),
    });
    const withTwo = await eni(2);
    const [, b] = secondaries(await eniOf(withTwo.id));
    expect((await driver().allocateVip(request({ vip_subnet_id: null, vip_port_id: withTwo.uuid, vip_address: b! }))).vip_address).toBe(b);
    const bare = await eni(0);
    const fresh = await driver().allocateVip(request({ vip_subnet_id: null, vip_port_id: bare.uuid }));
    expect(secondaries(await eniOf(bare.id))).toEqual([fresh.vip_address]);
    // Refused: an address not on it, its primary, another subnet named, an attached port.
    const primary = (await eniOf(bare.id)).PrivateIpAddress!;
    expect(await faultOf(driver().allocateVip(request({ vip_subnet_id: null, vip_port_id: bare.uuid, vip_address: "198.18.64.99" })))).toBe(
      "400 Validation failure: Specified VIP address not found on the specified VIP port.",
    );
    expect(await faultOf(driver().allocateVip(request({ vip_subnet_id: null, vip_port_id: bare.uuid, vip_address: primary })))).toMatch(
      /^400 IP address .* is the primary address of port/,
    );
    expect(await faultOf(driver().allocateVip(request({ vip_subnet_id: uuid(subnets.mineB), vip_port_id: bare.uuid })))).toBe(
      "400 Validation failure: No VIP address found on the specified VIP port within the specified subnet.",
    );
    const attached = await eni(1);
    const lb = loadBalancer(req, vip);
    const amp = await amphora(lb);
    await ec2.send(new AttachNetworkInterfaceCommand({ NetworkInterfaceId: attached.id, InstanceId: amp.compute_id!, DeviceIndex: 1 }));
    expect(await faultOf(driver().allocateVip(request({ vip_subnet_id: null, vip_port_id: attached.uuid })))).toBe(
      `400 Validation failure: Port ${attached.uuid} is already used by device ${amp.compute_id} `,
    );
    // Another LB's reservation port is in use by that LB.
    expect(
      await faultOf(
        driver().allocateVip(request({ vip_subnet_id: null, vip_port_id: (await driver().allocateVip(request())).vip_port_id })),
      ),
    ).toMatch(/^400 Validation failure: Port .* is already used by device lb-/);
    // Deallocated: the VIP is back on the user's port, which stays; what Ottava made is gone.
    const plugged = await driver().plugVip(lb, await amphora(lb), true);
    expect(proxy.vipHolder(vip.vip_address)).toBe(await ids.awsId(plugged.vrrp_port_id, "eni"));
    await driver().deallocateVip(lb);
    expect(await tagged(req.lbId)).toEqual({ enis: [], groups: [] });
    expect(secondaries(await eniOf(withOne.id))).toEqual([vip.vip_address]);
    expect(proxy.vipHolder(vip.vip_address)).toBe(withOne.id);
  });

  it("each refusal is a 400 with its message, and leaves nothing tagged with the load balancer", async () => {
    const group = (await ec2.send(new CreateSecurityGroupCommand({ VpcId: vpc, GroupName: "user-group", Description: "user" }))).GroupId!;
    const groupUuid = await ids.uuid(group);
    const unknown = crypto.randomUUID();
    const cases: [Partial<VipRequest>, string][] = [
      [{ vip_subnet_id: uuid(subnets.other) }, `400 Subnet ${uuid(subnets.other)} not found.`],
      [{ vip_subnet_id: uuid(subnets.untagged) }, `400 Subnet ${uuid(subnets.untagged)} not found.`],
      [{ vip_subnet_id: uuid(fx.subnets["us-east-1a"]!) }, `400 Subnet ${uuid(fx.subnets["us-east-1a"]!)} not found.`],
      [{ vip_subnet_id: unknown }, `400 Subnet ${unknown} not found.`],
      [{ vip_subnet_id: null, vip_network_id: unknown }, `400 Network ${unknown} not found.`],
      [{ vip_subnet_id: null, vip_port_id: unknown }, `400 Port ${unknown} not found.`],
      [{ vip_qos_policy_id: unknown }, "400 The vpc network driver has no QoS policies: vip_qos_policy_id cannot be set."],
      [
        { additional_vips: [{ subnet_id: uuid(subnets.mineB) }] },
        expect.stringMatching(/^400 The vpc network driver does not support additional_vips/) as unknown as string,
      ],
      [
        { vip_address: "2001:db8::5" },
        "400 The vpc network driver does not support IPv6 VIPs yet: AWS cannot move an IPv6 address between network interfaces.",
      ],
      [
        { vip_subnet_id: uuid(subnets.noZone) },
        `400 VIP subnet ${uuid(subnets.noZone)} is in availability zone us-east-1c, where the amphorae have no management subnet: the amphorae must boot in the VIP subnet's zone.`,
      ],
      [
        { zone: { compute_zone: "us-east-1b" } },
        `400 VIP subnet ${uuid(subnets.mine)} is in availability zone us-east-1a, not in the availability zone's compute_zone us-east-1b: the amphorae must boot in the VIP subnet's zone.`,
      ],
      [
        { zone: { management_network: fx.subnets["us-east-1b"] } },
        `400 VIP subnet ${uuid(subnets.mine)} is in availability zone us-east-1a, where the amphorae have no management subnet: the amphorae must boot in the VIP subnet's zone.`,
      ],
      [{ vip_sg_ids: [unknown] }, `400 Security Group ${unknown} not found.`],
    ];
    for (const [over, expected] of cases) {
      const req = request(over);
      expect(await faultOf(driver().allocateVip(req))).toEqual(expected);
      expect(await tagged(req.lbId)).toEqual({ enis: [], groups: [] });
    }
    // What the zone allows is accepted (its valid_vip_networks are core's to check: createLoadBalancer).
    expect((await driver().allocateVip(request({ zone: { compute_zone: "us-east-1a" } }))).vip_network_id).toBe(uuid(vpc));
    expect((await driver().allocateVip(request({ vip_sg_ids: [groupUuid] }))).vip_address).toBeDefined();
  });

  it("tenancy: a shared subnet is accepted; OTTAVA_ALLOW_INVISIBLE_RESOURCE_USAGE lifts the rule, but not for management subnets", async () => {
    expect((await driver().allocateVip(request({ vip_subnet_id: uuid(subnets.shared) }))).vip_subnet_id).toBe(uuid(subnets.shared));
    const open = driver({ allowInvisibleResourceUsage: true });
    expect((await open.allocateVip(request({ vip_subnet_id: uuid(subnets.other) }))).vip_subnet_id).toBe(uuid(subnets.other));
    expect((await open.allocateVip(request({ vip_subnet_id: uuid(subnets.untagged) }))).vip_subnet_id).toBe(uuid(subnets.untagged));
    expect(await faultOf(open.allocateVip(request({ vip_subnet_id: uuid(fx.subnets["us-east-1a"]!) })))).toBe(
      `400 Subnet ${uuid(fx.subnets["us-east-1a"]!)} not found.`,
    );
  });
});

describe("security groups", () => {
  it("getSecurityGroup: a group the project may use; another project's or an unknown one fails; invisible use lifts it", async () => {
    const make = async (name: string, tags: { Key: string; Value: string }[]) =>
      ids.uuid(
        (
          await ec2.send(
            new CreateSecurityGroupCommand({
              VpcId: vpc,
              GroupName: name,
              Description: name,
              TagSpecifications: tags.length ? [{ ResourceType: "security-group", Tags: tags }] : undefined,
            }),
          )
        ).GroupId!,
      );
    const mine = await make("sg-mine", [tag(PROJECT_TAG_KEY, PROJECT)]);
    const theirs = await make("sg-theirs", [tag(PROJECT_TAG_KEY, OTHER)]);
    expect(await driver().getSecurityGroup(mine, PROJECT)).toEqual({ id: mine });
    expect(await faultOf(driver().getSecurityGroup(theirs, PROJECT))).toBe(`400 Security Group ${theirs} not found.`);
    expect(await faultOf(driver().getSecurityGroup(crypto.randomUUID(), PROJECT))).toMatch(/^400 Security Group .* not found\.$/);
    expect(await driver({ allowInvisibleResourceUsage: true }).getSecurityGroup(theirs, PROJECT)).toEqual({ id: theirs });
  });

  it("updateVipSecurityGroups: the LB's ENIs carry its group and vip_sg_ids' groups", async () => {
    const user = (await ec2.send(new CreateSecurityGroupCommand({ VpcId: vpc, GroupName: "sg-update", Description: "u" }))).GroupId!;
    const req = request();
    const vip = await driver().allocateVip(req);
    const lb = loadBalancer(req, vip);
    await driver().plugVip(lb, await amphora(lb));
    const lbGroup = (await tagged(req.lbId)).groups[0]!.GroupId!;
    await driver().updateVipSecurityGroups({ ...lb, vip_sg_ids: [await ids.uuid(user)] });
    for (const eni of (await tagged(req.lbId)).enis) expect(eni.Groups!.map((g) => g.GroupId).sort()).toEqual([lbGroup, user].sort());
    await driver().updateVipSecurityGroups({ ...lb, vip_sg_ids: [] });
    for (const eni of (await tagged(req.lbId)).enis) expect(eni.Groups!.map((g) => g.GroupId)).toEqual([lbGroup]);
  });
});

describe("plug, unplug, take", () => {
  const allocated = async () => {
    const req = request();
    const vip = await driver().allocateVip(req);
    const lb = loadBalancer(req, vip);
    const reservation = (await ids.awsId(vip.vip_port_id, "eni"))!;
    return { lb, reservation };
  };

  it("plugVip: the amphora's ENI in the VIP subnet, attached at index 1, the VIP moved to it with AllowReassignment; again: nothing new", async () => {
    const { lb } = await allocated();
    const amp = await amphora(lb);
    proxy.reset();
    const ports = await driver().plugVip(lb, amp, true);
    const eniId = (await ids.awsId(ports.vrrp_port_id, "eni"))!;
    const eni = await eniOf(eniId);
    expect(ports).toEqual({ vrrp_ip: eni.PrivateIpAddress, vrrp_port_id: uuid(eniId), ha_ip: lb.vip_address, ha_port_id: lb.vip_port_id });
    expect(eni.SubnetId).toBe(subnets.mine);
    expect(eni.Attachment).toMatchObject({ InstanceId: amp.compute_id, DeviceIndex: 1 });
    expect(eni.SourceDestCheck).toBe(true);
    expect(tagsOf(eni)).toMatchObject({
      [STAGE_TAG_KEY]: STAGE,
      [LOAD_BALANCER_TAG_KEY]: lb.id,
      [AMPHORA_TAG_KEY]: amp.id,
      [ENI_ROLE_TAG_KEY]: "vrrp",
    });
    expect(secondaries(eni)).toEqual([lb.vip_address]);
    expect(proxy.vipHolder(lb.vip_address)).toBe(eniId);
    expect(proxy.params("AssignPrivateIpAddresses")).toEqual([
      expect.objectContaining({ NetworkInterfaceId: eniId, "PrivateIpAddress.1": lb.vip_address, AllowReassignment: "true" }),
    ]);
    expect(proxy.params("CreateNetworkInterface")[0]).toMatchObject({ ClientToken: `vrrp-${amp.id}` });
    proxy.reset();
    expect(await driver().plugVip(lb, amp, true)).toEqual(ports);
    expect(writes()).toEqual([]);
  });

  it("an amphora in another zone than the VIP subnet cannot take its ENI: EC2's refusal is a DriverError", async () => {
    const { lb } = await allocated();
    const amp = await amphora(lb, "us-east-1b");
    const e = await driver()
      .plugVip(lb, amp)
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(DriverError);
    expect((e as Error).message).toMatch(/InvalidParameterCombination/);
    expect(await driver().vipZone(lb)).toBe("us-east-1a");
  });

  it("unplugVip: the VIP back on the reservation ENI first, then detach, then delete (InvalidNetworkInterface.InUse retried)", async () => {
    const { lb, reservation } = await allocated();
    const amp = await amphora(lb);
    const ports = await driver().plugVip(lb, amp, true);
    const eniId = (await ids.awsId(ports.vrrp_port_id, "eni"))!;
    const attachment = (await eniOf(eniId)).Attachment!.AttachmentId!;
    proxy.reset();
    proxy.fail("DeleteNetworkInterface", {
      code: "InvalidNetworkInterface.InUse",
      status: 400,
      message: `The network interface '${eniId}' is currently in use.`,
    });
    await driver().unplugVip(lb, { ...amp, vrrp_port_id: ports.vrrp_port_id });
    expect(writes()).toEqual([
      `AssignPrivateIpAddresses ${reservation} 200`,
      `DetachNetworkInterface ${attachment} 200`,
      `DeleteNetworkInterface ${eniId} 400`,
      `DeleteNetworkInterface ${eniId} 200`,
    ]);
    expect(proxy.params("AssignPrivateIpAddresses")[0]).toMatchObject({ "PrivateIpAddress.1": lb.vip_address, AllowReassignment: "true" });
    expect(proxy.vipHolder(lb.vip_address)).toBe(reservation);
    expect((await tagged(lb.id)).enis.map((e) => e.NetworkInterfaceId)).toEqual([reservation]);
    // Gone already: done.
    proxy.reset();
    await driver().unplugVip(lb, amp);
    expect(writes()).toEqual([]);
  });

  it("an ENI still InUse after the retries: a DriverError, for the flow to retry", async () => {
    const { lb } = await allocated();
    const amp = await amphora(lb);
    await driver().plugVip(lb, amp);
    proxy.fail("DeleteNetworkInterface", { code: "InvalidNetworkInterface.InUse", status: 400, message: "in use" }, { times: 10 });
    await expect(driver().unplugVip(lb, amp)).rejects.toThrow(DriverError);
    proxy.clearFaults();
    await driver().unplugVip(lb, amp);
    expect((await tagged(lb.id)).enis).toHaveLength(1);
  });

  it("failover: the new amphora's ENI takes the VIP before the old one is unplugged; the VIP is never unassigned", async () => {
    const { lb } = await allocated();
    const holder = () => proxy.vipHolder(lb.vip_address);
    const oldAmp = await amphora(lb);
    const oldPorts = await driver().plugVip(lb, oldAmp, true);
    const oldEni = (await ids.awsId(oldPorts.vrrp_port_id, "eni"))!;
    expect(holder()).toBe(oldEni);
    const newAmp = await amphora(lb);
    const newPorts = await driver().plugVip(lb, newAmp, false);
    const newEni = (await ids.awsId(newPorts.vrrp_port_id, "eni"))!;
    expect(holder()).toBe(oldEni);
    proxy.reset();
    expect(await driver().takeVip(lb, newAmp)).toBe(true);
    expect(proxy.params("AssignPrivateIpAddresses")).toEqual([
      expect.objectContaining({ NetworkInterfaceId: newEni, "PrivateIpAddress.1": lb.vip_address, AllowReassignment: "true" }),
    ]);
    expect(holder()).toBe(newEni);
    expect([secondaries(await eniOf(oldEni)), secondaries(await eniOf(newEni))]).toEqual([[], [lb.vip_address]]);
    expect(await driver().takeVip(lb, newAmp)).toBe(false);
    await driver().unplugVip(lb, oldAmp);
    expect(holder()).toBe(newEni);
    expect(proxy.params("UnassignPrivateIpAddresses")).toEqual([]);
    // ACTIVE_STANDBY promotion and back: the VIP follows each take.
    const backup = await amphora(lb);
    await driver().plugVip(lb, backup);
    expect(await driver().takeVip(lb, backup)).toBe(true);
    expect(holder()).toBe((await tagged(lb.id)).enis.find((e) => tagsOf(e)[AMPHORA_TAG_KEY] === backup.id)!.NetworkInterfaceId);
    expect(await driver().takeVip(lb, newAmp)).toBe(true);
    expect(holder()).toBe(newEni);
  });

  it("getNetworkConfigs: the ENI's MAC, the subnet's CIDR and router, a VPC's MTU", async () => {
    const { lb } = await allocated();
    const amp = await amphora(lb);
    const ports = await driver().plugVip(lb, amp, true);
    const eni = await eniOf((await ids.awsId(ports.vrrp_port_id, "eni"))!);
    expect(await driver().getNetworkConfigs(lb, { ...amp, vrrp_port_id: ports.vrrp_port_id })).toEqual({
      vrrp_port: { mac_address: eni.MacAddress, mtu: 9001 },
      vip_subnet: { cidr: "198.18.64.0/24", gateway_ip: "198.18.64.1", host_routes: [] },
      additional_vip_data: [],
    });
  });
});

describe("deallocateVip", () => {
  it("removes every ENI tagged with the LB (attached ones detached first) and its group (DependencyViolation retried)", async () => {
    const req = request();
    const vip = await driver().allocateVip(req);
    const lb = loadBalancer(req, vip);
    const amps = [await amphora(lb), await amphora(lb)];
    await driver().plugVip(lb, amps[0]!, true);
    await driver().plugVip(lb, amps[1]!);
    const group = (await tagged(lb.id)).groups[0]!.GroupId!;
    proxy.reset();
    proxy.fail(
      "DeleteSecurityGroup",
      { code: "DependencyViolation", status: 400, message: `resource ${group} has a dependent object` },
      { times: 2 },
    );
    await driver().deallocateVip(lb);
    expect(await tagged(lb.id)).toEqual({ enis: [], groups: [] });
    expect(proxy.calls.filter((c) => c.action === "DeleteSecurityGroup").map((c) => c.status)).toEqual([400, 400, 200]);
    // Every delete of an ENI came after its detach (the proxy refuses the others).
    expect(proxy.calls.filter((c) => c.action === "DeleteNetworkInterface").map((c) => c.status)).toEqual([200, 200, 200]);
    expect(proxy.calls.filter((c) => c.action === "DetachNetworkInterface")).toHaveLength(2);
    // Gone already: done.
    proxy.reset();
    await driver().deallocateVip(lb);
    expect(writes()).toEqual([]);
  });
});
