// The test proxy in front of moto (support/ec2-proxy.ts), through the AWS SDK's EC2 client: it answers as
// AWS does where moto does not (ClientToken idempotency, placement groups, a new instance not found then
// pending, injected faults, what EC2 refuses of network interfaces and groups, an address that moves)
// and passes everything else through.
import {
  AssignPrivateIpAddressesCommand,
  AttachNetworkInterfaceCommand,
  CreateNetworkInterfaceCommand,
  CreatePlacementGroupCommand,
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  DeleteNetworkInterfaceCommand,
  DeleteSecurityGroupCommand,
  DescribeNetworkInterfacesCommand,
  DetachNetworkInterfaceCommand,
  UnassignPrivateIpAddressesCommand,
  DeletePlacementGroupCommand,
  DescribeImagesCommand,
  DescribeInstancesCommand,
  DescribePlacementGroupsCommand,
  EC2Client,
  RunInstancesCommand,
  TerminateInstancesCommand,
  type RunInstancesCommandInput,
} from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { INTERNAL_ERROR, MOTO_CLIENT, THROTTLED, startEc2Proxy, startMoto, type Ec2Proxy, type Moto } from "./support";

let moto: Moto;
let proxy: Ec2Proxy;
let ec2: EC2Client;
let ami: string;

beforeAll(async () => {
  moto = await startMoto();
  proxy = await startEc2Proxy(moto.endpoint);
  // No SDK retries: each call is one request, so what the proxy answers is what the test sees.
  ec2 = new EC2Client({ ...MOTO_CLIENT, endpoint: proxy.endpoint, maxAttempts: 1 });
  ami = (await ec2.send(new DescribeImagesCommand({ Owners: ["amazon"] }))).Images![0]!.ImageId!;
});
afterAll(async () => {
  ec2?.destroy();
  await proxy?.stop();
  await moto?.stop();
});
beforeEach(() => proxy.reset());

const run = (over: Partial<RunInstancesCommandInput> = {}) =>
  ec2.send(new RunInstancesCommand({ ImageId: ami, InstanceType: "t3.micro", MinCount: 1, MaxCount: 1, ...over }));
/** A tag to find a test's instances by (moto has no client-token filter). */
const tagged = (token: string) => ({
  ClientToken: token,
  TagSpecifications: [{ ResourceType: "instance" as const, Tags: [{ Key: "token", Value: token }] }],
});
const launchedWith = async (token: string) =>
  (await ec2.send(new DescribeInstancesCommand({ Filters: [{ Name: "tag:token", Values: [token] }] })))
    .Reservations!.flatMap((r) => r.Instances!)
    .map((i) => i.InstanceId);
const stateOf = async (id: string) =>
  (await ec2.send(new DescribeInstancesCommand({ InstanceIds: [id] }))).Reservations![0]!.Instances![0]!.State!.Name;
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: { name: string; $metadata?: { httpStatusCode?: number } }) => `${e.name} ${e.$metadata?.httpStatusCode}`,
  );

describe("ClientToken", () => {
  it("the same token and parameters answer the first reservation; other parameters IdempotentParameterMismatch", async () => {
    const token = crypto.randomUUID();
    const first = await run(tagged(token));
    const again = await run(tagged(token));
    expect(again.ReservationId).toBe(first.ReservationId);
    expect(again.Instances![0]!.InstanceId).toBe(first.Instances![0]!.InstanceId);
    expect(await codeOf(run({ ...tagged(token), InstanceType: "t3.small" }))).toBe("IdempotentParameterMismatch 400");
    // moto saw one RunInstances: one instance.
    expect(await launchedWith(token)).toEqual([first.Instances![0]!.InstanceId]);
    // Without a token each call launches.
    expect((await run()).Instances![0]!.InstanceId).not.toBe((await run()).Instances![0]!.InstanceId);
  });

  it("a call whose answer was lost (a 500 after moto launched) is answered the same instance on retry", async () => {
    const token = crypto.randomUUID();
    proxy.fail("RunInstances", INTERNAL_ERROR, { after: true });
    expect(await codeOf(run(tagged(token)))).toBe("InternalError 500");
    const retried = await run(tagged(token));
    expect(await launchedWith(token)).toEqual([retried.Instances![0]!.InstanceId]);
  });
});

describe("placement groups", () => {
  it("are made, described, used by RunInstances and deleted once no instance in them runs", async () => {
    await ec2.send(
      new CreatePlacementGroupCommand({
        GroupName: "pg-a",
        Strategy: "spread",
        TagSpecifications: [{ ResourceType: "placement-group", Tags: [{ Key: "k", Value: "v" }] }],
      }),
    );
    expect(await codeOf(ec2.send(new CreatePlacementGroupCommand({ GroupName: "pg-a", Strategy: "spread" })))).toBe(
      "InvalidPlacementGroup.Duplicate 400",
    );
    const described = await ec2.send(new DescribePlacementGroupsCommand({ GroupNames: ["pg-a"] }));
    expect(described.PlacementGroups).toMatchObject([
      { GroupName: "pg-a", Strategy: "spread", State: "available", Tags: [{ Key: "k", Value: "v" }] },
    ]);
    expect(await codeOf(ec2.send(new DescribePlacementGroupsCommand({ GroupNames: ["pg-none"] })))).toBe(
      "InvalidPlacementGroup.Unknown 400",
    );

    expect(await codeOf(run({ Placement: { GroupName: "pg-none" } }))).toBe("InvalidPlacementGroup.Unknown 400");
    const id = (await run({ Placement: { GroupName: "pg-a" } })).Instances![0]!.InstanceId!;
    expect(proxy.params("RunInstances").at(-1)!["Placement.GroupName"]).toBe("pg-a");
    expect(proxy.placementGroups.get("pg-a")!.instances).toEqual([id]);

    expect(await codeOf(ec2.send(new DeletePlacementGroupCommand({ GroupName: "pg-a" })))).toBe("InvalidPlacementGroup.InUse 400");
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [id] }));
    await ec2.send(new DeletePlacementGroupCommand({ GroupName: "pg-a" }));
    expect(proxy.placementGroups.size).toBe(0);
    expect(await codeOf(ec2.send(new DeletePlacementGroupCommand({ GroupName: "pg-a" })))).toBe("InvalidPlacementGroup.Unknown 400");
    expect(proxy.calls.filter((c) => c.action.includes("PlacementGroup")).map((c) => c.action)).toEqual([
      "CreatePlacementGroup",
      "CreatePlacementGroup",
      "DescribePlacementGroups",
      "DescribePlacementGroups",
      "DeletePlacementGroup",
      "DeletePlacementGroup",
      "DeletePlacementGroup",
    ]);
  });
});

describe("booting", () => {
  it("a new instance is not found once, then pending for the describes asked, then running", async () => {
    proxy.boot({ notFoundOnce: true, pendingDescribes: 2 });
    const id = (await run()).Instances![0]!.InstanceId!;
    expect(await codeOf(stateOf(id))).toBe("InvalidInstanceID.NotFound 400");
    expect(await stateOf(id)).toBe("pending");
    expect(await stateOf(id)).toBe("pending");
    expect(await stateOf(id)).toBe("running");
    // A terminated instance is shown as moto has it.
    const never = (await run()).Instances![0]!.InstanceId!;
    proxy.boot({ notFoundOnce: false, pendingDescribes: Infinity });
    const stuck = (await run()).Instances![0]!.InstanceId!;
    for (let i = 0; i < 3; i++) expect(await stateOf(stuck)).toBe("pending");
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [stuck] }));
    expect(await stateOf(stuck)).toBe("terminated");
    // The instance launched before the change still follows the behaviour it was launched with.
    expect(await codeOf(stateOf(never))).toBe("InvalidInstanceID.NotFound 400");
  });
});

describe("faults", () => {
  it("throttling is RequestLimitExceeded with HTTP 503, for the calls asked, of the action named only", async () => {
    proxy.fail("DescribeImages", THROTTLED, { times: 2 });
    expect(await codeOf(ec2.send(new DescribeImagesCommand({ Owners: ["self"] })))).toBe("RequestLimitExceeded 503");
    expect(await codeOf(ec2.send(new DescribeInstancesCommand({})))).toBe("ok");
    expect(await codeOf(ec2.send(new DescribeImagesCommand({ Owners: ["self"] })))).toBe("RequestLimitExceeded 503");
    expect(await codeOf(ec2.send(new DescribeImagesCommand({ Owners: ["self"] })))).toBe("ok");
    expect(proxy.calls.map((c) => `${c.action} ${c.status}`)).toEqual([
      "DescribeImages 503",
      "DescribeInstances 200",
      "DescribeImages 503",
      "DescribeImages 200",
    ]);
  });

  it("the SDK's own retries get past a fault that clears", async () => {
    const retrying = new EC2Client({ ...MOTO_CLIENT, endpoint: proxy.endpoint, maxAttempts: 3 });
    proxy.fail("DescribeInstances", INTERNAL_ERROR, { times: 2 });
    await expect(retrying.send(new DescribeInstancesCommand({}))).resolves.toBeDefined();
    expect(proxy.calls.map((c) => c.status)).toEqual([500, 500, 200]);
    retrying.destroy();
  });
});

describe("network interfaces", () => {
  /** A VPC with a subnet in us-east-1a and one in us-east-1b, a group, and an instance in us-east-1a. */
  const network = async (third: number) => {
    const vpc = (await ec2.send(new CreateVpcCommand({ CidrBlock: `198.19.${third}.0/24` }))).Vpc!.VpcId!;
    const subnet = async (n: number, zone: string) =>
      (await ec2.send(new CreateSubnetCommand({ VpcId: vpc, CidrBlock: `198.19.${third}.${n * 64}/26`, AvailabilityZone: zone }))).Subnet!
        .SubnetId!;
    const a = await subnet(0, "us-east-1a");
    const b = await subnet(1, "us-east-1b");
    const group = (await ec2.send(new CreateSecurityGroupCommand({ VpcId: vpc, GroupName: `g-${third}`, Description: "test" }))).GroupId!;
    const instance = (await run({ SubnetId: a })).Instances![0]!.InstanceId!;
    const eni = async (subnetId: string, groups: string[] = []) =>
      (await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: subnetId, Groups: groups }))).NetworkInterface!;
    return { vpc, a, b, group, instance, eni };
  };
  const describeEni = async (id: string) =>
    (await ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [id] }))).NetworkInterfaces![0]!;
  const secondaries = async (id: string) =>
    (await describeEni(id)).PrivateIpAddresses!.filter((a) => !a.Primary).map((a) => a.PrivateIpAddress);

  it("an attached ENI is refused deletion (InvalidNetworkInterface.InUse) until detached", async () => {
    const n = await network(0);
    const eni = (await n.eni(n.a)).NetworkInterfaceId!;
    const attachment = (
      await ec2.send(new AttachNetworkInterfaceCommand({ NetworkInterfaceId: eni, InstanceId: n.instance, DeviceIndex: 1 }))
    ).AttachmentId!;
    expect(await codeOf(ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: eni })))).toBe(
      "InvalidNetworkInterface.InUse 400",
    );
    await ec2.send(new DetachNetworkInterfaceCommand({ AttachmentId: attachment }));
    expect(await codeOf(ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: eni })))).toBe("ok");
  });

  it("an ENI attached to an instance that terminated is detached by AWS: its delete succeeds", async () => {
    const n = await network(1);
    const eni = (await n.eni(n.a)).NetworkInterfaceId!;
    await ec2.send(new AttachNetworkInterfaceCommand({ NetworkInterfaceId: eni, InstanceId: n.instance, DeviceIndex: 1 }));
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [n.instance] }));
    expect(await codeOf(ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: eni })))).toBe("ok");
  });

  it("a group an ENI still uses is refused deletion (DependencyViolation) until the ENI is gone", async () => {
    const n = await network(2);
    const eni = (await n.eni(n.a, [n.group])).NetworkInterfaceId!;
    const group = n.group;
    expect(await codeOf(ec2.send(new DeleteSecurityGroupCommand({ GroupId: group })))).toBe("DependencyViolation 400");
    await ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: eni }));
    expect(await codeOf(ec2.send(new DeleteSecurityGroupCommand({ GroupId: group })))).toBe("ok");
  });

  it("an attach is refused for an ENI already attached, an ENI of another zone, a device index in use, and past the instance type's interfaces", async () => {
    const n = await network(3);
    const second = (await run({ SubnetId: n.a })).Instances![0]!.InstanceId!;
    const eni = (await n.eni(n.a)).NetworkInterfaceId!;
    const attach = (id: string, instance: string, index = 1) =>
      codeOf(ec2.send(new AttachNetworkInterfaceCommand({ NetworkInterfaceId: id, InstanceId: instance, DeviceIndex: index })));
    expect(await attach(eni, n.instance)).toBe("ok");
    expect(await attach(eni, second)).toBe("InvalidNetworkInterface.InUse 400");
    expect(await attach(eni, n.instance, 2)).toBe("InvalidNetworkInterface.InUse 400");
    expect(await attach((await n.eni(n.b)).NetworkInterfaceId!, second)).toBe("InvalidParameterCombination 400");
    expect(await attach((await n.eni(n.a)).NetworkInterfaceId!, n.instance)).toBe("InvalidParameterValue 400");
    // A t3.micro takes two: its own and one more.
    expect(await attach((await n.eni(n.a)).NetworkInterfaceId!, n.instance, 2)).toBe("AttachmentLimitExceeded 400");
    expect(await attach((await n.eni(n.a)).NetworkInterfaceId!, second)).toBe("ok");
  });

  it("AssignPrivateIpAddresses: an address held elsewhere is refused, moved with AllowReassignment; vipHolder follows", async () => {
    const n = await network(4);
    const [one, two] = [(await n.eni(n.a)).NetworkInterfaceId!, (await n.eni(n.a)).NetworkInterfaceId!];
    await ec2.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: one, SecondaryPrivateIpAddressCount: 1 }));
    const [vip] = await secondaries(one);
    expect(proxy.vipHolder(vip!)).toBe(one);
    const assign = (id: string, address: string, allow?: boolean) =>
      codeOf(
        ec2.send(new AssignPrivateIpAddressesCommand({ NetworkInterfaceId: id, PrivateIpAddresses: [address], AllowReassignment: allow })),
      );
    expect(await assign(two, vip!)).toBe("InvalidIPAddress.InUse 400");
    expect(await assign(two, (await describeEni(one)).PrivateIpAddress!, true)).toBe("InvalidIPAddress.InUse 400");
    expect(proxy.vipHolder(vip!)).toBe(one);
    expect(await assign(two, vip!, true)).toBe("ok");
    expect([await secondaries(one), await secondaries(two)]).toEqual([[], [vip]]);
    expect(proxy.vipHolder(vip!)).toBe(two);
    await ec2.send(new UnassignPrivateIpAddressesCommand({ NetworkInterfaceId: two, PrivateIpAddresses: [vip!] }));
    expect(proxy.vipHolder(vip!)).toBeUndefined();
    expect(await assign(one, vip!)).toBe("ok");
    await ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: one }));
    expect(proxy.vipHolder(vip!)).toBeUndefined();
  });
});
