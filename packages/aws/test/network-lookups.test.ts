// The Neutron look-ups answered from the VPC (OTTAVA_NETWORK_DRIVER=vpc) against moto, their UUIDs
// remembered in DynamoDB Local: a subnet, network, port or group found by UUID, AWS id or Name; each
// project answered only its own and the shared (tags), the management subnets never; an admin
// everything else; allow_invisible_resource_usage lifting the rule.
import {
  AuthorizeSecurityGroupIngressCommand,
  CreateNetworkInterfaceCommand,
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateTagsCommand,
  CreateVpcCommand,
  EC2Client,
} from "@aws-sdk/client-ec2";
import { freshTable } from "@ottava/db/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AwsIds, NeutronLookups, awsUuid, neutronNotFound, type LookupCaller, type LookupSettings } from "../src/network";
import { ec2QueryClient } from "../src/profiles";
import { MOTO_CLIENT, ec2Fixture, startMoto, type Moto } from "./support";

const REGION = MOTO_CLIENT.region;
const A: LookupCaller = { projectId: "project-a", isAdmin: false };
const B: LookupCaller = { projectId: "project-b", isAdmin: false };
const ADMIN: LookupCaller = { projectId: "admin-project", isAdmin: true };

let moto: Moto;
let ec2: EC2Client;
let ids: AwsIds;
let settings: LookupSettings;
/** The look-ups of `over` settings. */
let lookups: (over?: Partial<LookupSettings>) => NeutronLookups;
const aws: Record<string, string> = {};
const uuid = (awsId: string) => awsUuid(REGION, awsId);
const tag = (id: string, tags: Record<string, string>) =>
  ec2.send(new CreateTagsCommand({ Resources: [id], Tags: Object.entries(tags).map(([Key, Value]) => ({ Key, Value })) }));

beforeAll(async () => {
  moto = await startMoto();
  vi.stubEnv("AWS_REGION", REGION);
  vi.stubEnv("AWS_ACCESS_KEY_ID", MOTO_CLIENT.credentials.accessKeyId);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", MOTO_CLIENT.credentials.secretAccessKey);
  ec2 = new EC2Client({ ...MOTO_CLIENT, endpoint: moto.endpoint });
  const fixture = await ec2Fixture(ec2, "198.18.48.0/20");
  aws.management = fixture.subnets["us-east-1a"]!;
  // Tagged for project A too: a management subnet is never answered all the same.
  await tag(aws.management, { "ottava:project": "project-a", Name: "mgmt" });

  // A shared VPC with a subnet of each project, a shared one and one nobody was given.
  aws.vpc = (await ec2.send(new CreateVpcCommand({ CidrBlock: "198.18.64.0/20" }))).Vpc!.VpcId!;
  await tag(aws.vpc, { Name: "users-vpc", "ottava:shared": "true" });
  const subnet = async (key: string, cidr: string, tags: Record<string, string>) => {
    aws[key] = (
      await ec2.send(new CreateSubnetCommand({ VpcId: aws.vpc, CidrBlock: cidr, AvailabilityZone: "us-east-1a" }))
    ).Subnet!.SubnetId!;
    await tag(aws[key], tags);
  };
  await subnet("a", "198.18.64.0/24", { Name: "a-net", "ottava:project": "project-a" });
  await subnet("b", "198.18.65.0/24", { Name: "b-net", "ottava:project": "project-b" });
  await subnet("shared", "198.18.66.0/24", { Name: "shared-net", "ottava:shared": "true" });
  await subnet("nobody", "198.18.67.0/24", { Name: "nobody-net" });
  // A VPC of project B alone.
  aws.bVpc = (await ec2.send(new CreateVpcCommand({ CidrBlock: "198.18.80.0/20" }))).Vpc!.VpcId!;
  await tag(aws.bVpc, { Name: "b-vpc", "ottava:project": "project-b" });

  const eni = (await ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: aws.a, Description: "a port" }))).NetworkInterface!;
  aws.eni = eni.NetworkInterfaceId!;
  aws.eniIp = eni.PrivateIpAddress!;
  aws.eniMac = eni.MacAddress!;
  await tag(aws.eni, { Name: "a-port", "ottava:project": "project-a" });

  aws.sg = (await ec2.send(new CreateSecurityGroupCommand({ VpcId: aws.vpc, GroupName: "a-group", Description: "web" }))).GroupId!;
  await tag(aws.sg, { "ottava:project": "project-a" });
  await ec2.send(
    new AuthorizeSecurityGroupIngressCommand({
      GroupId: aws.sg,
      IpPermissions: [{ IpProtocol: "tcp", FromPort: 80, ToPort: 80, IpRanges: [{ CidrIp: "203.0.113.0/24" }] }],
    }),
  );

  const { cloudIds } = await freshTable();
  ids = new AwsIds(REGION, cloudIds);
  settings = { allowInvisibleResourceUsage: false, ampBootNetworkList: Object.values(fixture.subnets) };
  const client = ec2QueryClient({ ec2Endpoint: moto.endpoint });
  lookups = (over = {}) => new NeutronLookups(client, ids, { ...settings, ...over });
}, 120_000);
afterAll(async () => {
  vi.unstubAllEnvs();
  ec2?.destroy();
  await moto?.stop();
});

const names = (items: Record<string, unknown>[]) => items.map((i) => i.name).sort();

describe("subnets", () => {
  it("are found by AWS id, by UUID and by Name tag, Neutron-shaped with UUIDs", async () => {
    const byAwsId = await lookups().get("subnets", A, aws.a!);
    expect(byAwsId).toMatchObject({
      id: uuid(aws.a!),
      name: "a-net",
      network_id: uuid(aws.vpc!),
      project_id: "project-a",
      tenant_id: "project-a",
      ip_version: 4,
      cidr: "198.18.64.0/24",
      gateway_ip: "198.18.64.1",
      allocation_pools: [{ start: "198.18.64.4", end: "198.18.64.254" }],
      enable_dhcp: true,
      tags: expect.arrayContaining(["Name=a-net", "ottava:project=project-a"]),
    });
    // The UUID it answered was remembered: it names the subnet from now on.
    expect(await lookups().get("subnets", A, uuid(aws.a!))).toEqual(byAwsId);
    expect(await lookups().get("subnets", A, uuid(aws.a!).toUpperCase())).toEqual(byAwsId);
    expect(await lookups().get("subnets", A, "a-net")).toEqual(byAwsId);
    // As python-octaviaclient asks: a list by id, then by name.
    expect(await lookups().list("subnets", A, [["id", uuid(aws.a!)]])).toEqual([byAwsId]);
    expect(await lookups().list("subnets", A, [["id", aws.a!]])).toEqual([byAwsId]);
    expect(await lookups().list("subnets", A, [["name", "a-net"]])).toEqual([byAwsId]);
    expect(await lookups().list("subnets", A, [["name", aws.a!]])).toEqual([]);
  });

  it("of another project are not found; shared ones are, by every project", async () => {
    expect(await lookups().get("subnets", A, aws.b!)).toBeUndefined();
    expect(await lookups().get("subnets", A, "b-net")).toBeUndefined();
    expect(await lookups().list("subnets", A, [["id", aws.b!]])).toEqual([]);
    expect(await lookups().list("subnets", A, [["name", "b-net"]])).toEqual([]);
    expect(await lookups().get("subnets", A, aws.nobody!)).toBeUndefined();
    for (const caller of [A, B]) {
      expect(await lookups().get("subnets", caller, "shared-net"), caller.projectId).toMatchObject({ id: uuid(aws.shared!) });
    }
  });

  it("list each project only its own and the shared ones; an admin every subnet but the management ones", async () => {
    expect(names(await lookups().list("subnets", A, []))).toEqual(["a-net", "shared-net"]);
    expect(names(await lookups().list("subnets", B, []))).toEqual(["b-net", "shared-net"]);
    const all = names(await lookups().list("subnets", ADMIN, []));
    expect(all).toEqual(expect.arrayContaining(["a-net", "b-net", "nobody-net", "shared-net"]));
    expect(all).not.toContain("mgmt");
    // Filtered on a field, as Neutron filters.
    expect(names(await lookups().list("subnets", ADMIN, [["network_id", uuid(aws.vpc!)]]))).toEqual([
      "a-net",
      "b-net",
      "nobody-net",
      "shared-net",
    ]);
    expect(names(await lookups().list("subnets", ADMIN, [["project_id", "project-b"]]))).toEqual(["b-net"]);
  });

  it("never answer a management subnet, to anyone, even tagged for the project or with allow_invisible_resource_usage", async () => {
    for (const caller of [A, ADMIN]) {
      for (const over of [{}, { allowInvisibleResourceUsage: true }]) {
        expect(await lookups(over).get("subnets", caller, aws.management!)).toBeUndefined();
        expect(await lookups(over).get("subnets", caller, "mgmt")).toBeUndefined();
        expect(await lookups(over).list("subnets", caller, [["id", aws.management!]])).toEqual([]);
      }
    }
  });

  it("are all usable with allow_invisible_resource_usage", async () => {
    expect(await lookups({ allowInvisibleResourceUsage: true }).get("subnets", A, "b-net")).toMatchObject({ id: uuid(aws.b!) });
    expect(names(await lookups({ allowInvisibleResourceUsage: true }).list("subnets", A, [["network_id", uuid(aws.vpc!)]]))).toEqual([
      "a-net",
      "b-net",
      "nobody-net",
      "shared-net",
    ]);
  });

  it("find nothing for an id that names nothing (never every subnet), and keep fields=", async () => {
    const unknown = "0b7e2f4c-1d2a-4c3b-9e8f-7a6b5c4d3e2f";
    expect(await lookups().get("subnets", ADMIN, unknown)).toBeUndefined();
    expect(await lookups().list("subnets", ADMIN, [["id", unknown]])).toEqual([]);
    expect(await lookups().list("subnets", ADMIN, [["id", "subnet-00000000000000000"]])).toEqual([]);
    // A UUID of another kind does not name a subnet.
    expect(await lookups().get("subnets", ADMIN, uuid(aws.vpc!))).toBeUndefined();
    expect(
      await lookups().list("subnets", A, [
        ["name", "a-net"],
        ["fields", "id"],
        ["fields", "cidr"],
      ]),
    ).toEqual([{ id: uuid(aws.a!), cidr: "198.18.64.0/24" }]);
    expect(neutronNotFound("subnets", unknown)).toEqual({
      NeutronError: { type: "SubnetNotFound", message: `Subnet ${unknown} could not be found.`, detail: "" },
    });
  });
});

describe("networks", () => {
  it("are the VPCs, each with the subnets the caller may see", async () => {
    const forA = await lookups().get("networks", A, "users-vpc");
    expect(forA).toMatchObject({
      id: uuid(aws.vpc!),
      name: "users-vpc",
      status: "ACTIVE",
      admin_state_up: true,
      shared: true,
      mtu: 9001,
      availability_zones: ["us-east-1a"],
    });
    expect((forA!.subnets as string[]).sort()).toEqual([uuid(aws.a!), uuid(aws.shared!)].sort());
    expect(((await lookups().get("networks", B, uuid(aws.vpc!)))!.subnets as string[]).sort()).toEqual(
      [uuid(aws.b!), uuid(aws.shared!)].sort(),
    );
    expect(await lookups().get("networks", A, aws.bVpc!)).toBeUndefined();
    expect(await lookups().get("networks", B, aws.bVpc!)).toMatchObject({
      id: uuid(aws.bVpc!),
      shared: false,
      project_id: "project-b",
      subnets: [],
    });
    expect(names(await lookups().list("networks", A, []))).toEqual(["users-vpc"]);
    expect(names(await lookups().list("networks", B, []))).toEqual(["b-vpc", "users-vpc"]);
  });
});

describe("ports", () => {
  it("are the ENIs: found by Name, AWS id or UUID by their project, not by another", async () => {
    const port = await lookups().get("ports", A, "a-port");
    expect(port).toMatchObject({
      id: uuid(aws.eni!),
      name: "a-port",
      network_id: uuid(aws.vpc!),
      fixed_ips: [{ subnet_id: uuid(aws.a!), ip_address: aws.eniIp }],
      mac_address: aws.eniMac,
      device_id: "",
      status: "DOWN",
      description: "a port",
      project_id: "project-a",
    });
    expect(await lookups().get("ports", A, aws.eni!)).toEqual(port);
    expect(await lookups().get("ports", A, uuid(aws.eni!))).toEqual(port);
    expect(await lookups().get("ports", B, aws.eni!)).toBeUndefined();
    expect(await lookups().list("ports", B, [["name", "a-port"]])).toEqual([]);
  });
});

describe("security groups", () => {
  it("are found by group name, with their rules", async () => {
    const group = await lookups().get("security-groups", A, "a-group");
    expect(group).toMatchObject({ id: uuid(aws.sg!), name: "a-group", description: "web", project_id: "project-a" });
    const rules = group!.security_group_rules as Record<string, unknown>[];
    expect(rules).toContainEqual(
      expect.objectContaining({
        security_group_id: uuid(aws.sg!),
        direction: "ingress",
        ethertype: "IPv4",
        protocol: "tcp",
        port_range_min: 80,
        port_range_max: 80,
        remote_ip_prefix: "203.0.113.0/24",
        remote_group_id: null,
      }),
    );
    // A new group's egress rule: everything, anywhere.
    expect(rules).toContainEqual(
      expect.objectContaining({ direction: "egress", protocol: null, port_range_min: null, remote_ip_prefix: "0.0.0.0/0" }),
    );
    expect(await lookups().get("security-groups", A, uuid(aws.sg!))).toEqual(group);
    expect(await lookups().get("security-groups", B, aws.sg!)).toBeUndefined();
    expect(neutronNotFound("security-groups", "x").NeutronError.message).toBe("Security group x does not exist");
  });
});
