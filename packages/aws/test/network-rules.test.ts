// The load balancer's security group made to hold Octavia's rules (syncSecurityGroupRules over
// vipSecurityGroupRules), against moto: each case's rules land as EC2 holds them, what is no longer wanted
// is revoked, egress is left alone, a second sync only reads, and a rule another writer authorized or
// revoked meanwhile is taken as done.
import {
  AuthorizeSecurityGroupIngressCommand,
  CreateSecurityGroupCommand,
  CreateVpcCommand,
  DescribeSecurityGroupRulesCommand,
  EC2Client,
} from "@aws-sdk/client-ec2";
import { vipSecurityGroupRules, type Listener, type LoadBalancer } from "@ottava/core";
import { loadBalancerRecord } from "@ottava/core/testing";
import { awsQueryClient, type AwsQueryCall } from "@ottava/edge/aws-query";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EC2_API_VERSION } from "../src";
import { syncSecurityGroupRules } from "../src/network";
import { MOTO_CLIENT, startMoto, type Moto } from "./support";

let moto: Moto;
let sdk: EC2Client;
let vpc: string;
/** The API's client, counting its calls by action. */
let calls: string[] = [];
let ec2: AwsQueryCall;

beforeAll(async () => {
  moto = await startMoto();
  sdk = new EC2Client({ ...MOTO_CLIENT, endpoint: moto.endpoint });
  vpc = (await sdk.send(new CreateVpcCommand({ CidrBlock: "198.18.112.0/20" }))).Vpc!.VpcId!;
  const client = awsQueryClient(
    { signingName: "ec2", version: EC2_API_VERSION },
    { endpoint: moto.endpoint, region: MOTO_CLIENT.region, credentials: async () => MOTO_CLIENT.credentials },
  );
  ec2 = (action, params, label) => (calls.push(action), client(action, params, label));
}, 120_000);
afterAll(async () => {
  sdk?.destroy();
  await moto?.stop();
});

let groups = 0;
const newGroup = async () =>
  (await sdk.send(new CreateSecurityGroupCommand({ VpcId: vpc, GroupName: `lb-${++groups}`, Description: "a load balancer's" }))).GroupId!;

/** The group's rules as text: "in|out protocol from-to source". */
async function held(group: string): Promise<string[]> {
  const out = await sdk.send(new DescribeSecurityGroupRulesCommand({ Filters: [{ Name: "group-id", Values: [group] }] }));
  return out
    .SecurityGroupRules!.map(
      (r) =>
        `${r.IsEgress ? "out" : "in"} ${r.IpProtocol} ${r.FromPort}-${r.ToPort} ${
          r.ReferencedGroupInfo?.GroupId === group ? "self" : (r.CidrIpv4 ?? r.CidrIpv6 ?? r.ReferencedGroupInfo?.GroupId)
        }`,
    )
    .sort();
}

let nextPeer = 1025;
const listener = (protocol: string, protocol_port: number, over: Partial<Listener> = {}): Listener =>
  ({ protocol, protocol_port, allowed_cidrs: [], provisioning_status: "ACTIVE", peer_port: nextPeer++, ...over }) as Listener;
const EGRESS = "out -1 -1--1 0.0.0.0/0";

async function sync(group: string, lb: Partial<LoadBalancer>, listeners: Listener[]) {
  calls = [];
  await syncSecurityGroupRules(ec2, group, vipSecurityGroupRules(loadBalancerRecord(lb), listeners));
  return calls;
}

describe("syncSecurityGroupRules", () => {
  const http = listener("HTTP", 80, { peer_port: 1025 });
  const cidrs = listener("HTTP", 80, { peer_port: 1025, allowed_cidrs: ["192.0.2.0/24", "203.0.113.0/25"] });
  const udp = listener("UDP", 53, { peer_port: 1026 });
  const sctp = listener("SCTP", 9000, { peer_port: 1027 });
  const sctp2 = listener("SCTP", 9001, { peer_port: 1028 });

  it.each([
    { name: "an HTTP listener", lb: {}, listeners: [http], rules: ["in tcp 80-80 0.0.0.0/0", "in tcp 1025-1025 0.0.0.0/0"] },
    {
      name: "allowed_cidrs",
      lb: {},
      listeners: [cidrs],
      rules: ["in tcp 80-80 192.0.2.0/24", "in tcp 80-80 203.0.113.0/25", "in tcp 1025-1025 0.0.0.0/0"],
    },
    {
      name: "ACTIVE_STANDBY: VRRP (112) and AH (51) from the group itself",
      lb: { topology: "ACTIVE_STANDBY" },
      listeners: [http],
      rules: ["in 112 -1--1 self", "in 51 -1--1 self", "in tcp 1025-1025 0.0.0.0/0", "in tcp 80-80 0.0.0.0/0"],
    },
    {
      name: "vip_sg_ids: the peer port and VRRP/AH only",
      lb: { topology: "ACTIVE_STANDBY", vip_sg_ids: ["4ad2d4a4-9f5e-4d0b-8e7e-6a0a7a1d5c01"] },
      listeners: [http, udp],
      rules: ["in 112 -1--1 self", "in 51 -1--1 self", "in tcp 1025-1025 0.0.0.0/0", "in tcp 1026-1026 0.0.0.0/0"],
    },
    {
      name: "UDP, and SCTP (protocol 132, every port: EC2 has no SCTP ports) of two listeners as one rule",
      lb: {},
      listeners: [udp, sctp, sctp2],
      rules: [
        "in 132 -1--1 0.0.0.0/0",
        "in tcp 1026-1026 0.0.0.0/0",
        "in tcp 1027-1027 0.0.0.0/0",
        "in tcp 1028-1028 0.0.0.0/0",
        "in udp 53-53 0.0.0.0/0",
      ],
    },
    {
      name: "IPv6 (an IPv6 additional VIP; the vpc driver refuses them, the rules would not): ::/0 and IPv6 CIDRs in Ipv6Ranges",
      lb: { additional_vips: [{ subnet_id: "s", ip_address: "2001:db8::5", port_id: "p", network_id: "n" }] },
      listeners: [listener("TCP", 443, { peer_port: 1029, allowed_cidrs: ["192.0.2.0/24", "2001:db8:1::/64"] })],
      rules: ["in tcp 443-443 192.0.2.0/24", "in tcp 443-443 2001:db8:1::/64", "in tcp 1029-1029 0.0.0.0/0", "in tcp 1029-1029 ::/0"],
    },
    {
      name: "a PENDING_DELETE listener makes none",
      lb: {},
      listeners: [http, { ...udp, provisioning_status: "PENDING_DELETE" }],
      rules: ["in tcp 80-80 0.0.0.0/0", "in tcp 1025-1025 0.0.0.0/0"],
    },
  ])("$name: the rules land, egress untouched, and a second sync changes nothing", async ({ lb, listeners, rules }) => {
    const group = await newGroup();
    expect(await sync(group, lb, listeners)).toEqual(["DescribeSecurityGroupRules", "AuthorizeSecurityGroupIngress"]);
    expect(await held(group)).toEqual([...rules, EGRESS].sort());
    expect(await sync(group, lb, listeners)).toEqual(["DescribeSecurityGroupRules"]);
    expect(await held(group)).toEqual([...rules, EGRESS].sort());
  });

  it("follows listeners created, changed and deleted: their rules come and go, and what no listener made goes", async () => {
    const group = await newGroup();
    await sdk.send(
      new AuthorizeSecurityGroupIngressCommand({
        GroupId: group,
        IpPermissions: [{ IpProtocol: "tcp", FromPort: 22, ToPort: 22, IpRanges: [{ CidrIp: "0.0.0.0/0" }] }],
      }),
    );
    await sync(group, {}, [http, udp]);
    expect(await held(group)).toEqual(
      ["in tcp 80-80 0.0.0.0/0", "in tcp 1025-1025 0.0.0.0/0", "in udp 53-53 0.0.0.0/0", "in tcp 1026-1026 0.0.0.0/0", EGRESS].sort(),
    );
    expect(await sync(group, {}, [cidrs, udp])).toEqual([
      "DescribeSecurityGroupRules",
      "RevokeSecurityGroupIngress",
      "AuthorizeSecurityGroupIngress",
    ]);
    expect(await held(group)).toEqual(
      [
        "in tcp 80-80 192.0.2.0/24",
        "in tcp 80-80 203.0.113.0/25",
        "in tcp 1025-1025 0.0.0.0/0",
        "in udp 53-53 0.0.0.0/0",
        "in tcp 1026-1026 0.0.0.0/0",
        EGRESS,
      ].sort(),
    );
    expect(await sync(group, {}, [cidrs])).toEqual(["DescribeSecurityGroupRules", "RevokeSecurityGroupIngress"]);
    expect(await held(group)).toEqual(
      ["in tcp 80-80 192.0.2.0/24", "in tcp 80-80 203.0.113.0/25", "in tcp 1025-1025 0.0.0.0/0", EGRESS].sort(),
    );
    await sync(group, {}, []);
    expect(await held(group)).toEqual([EGRESS]);
  });

  it("takes a rule another writer authorized or revoked meanwhile as done", async () => {
    const group = await newGroup();
    await sync(group, {}, [http]);
    // Between this sync's describe and its calls, another writer adds one of the rules it adds and
    // removes one of those it removes: its batch is refused, and it goes on one rule at a time.
    const client = ec2;
    const racing: AwsQueryCall = async (action, params, label) => {
      if (action === "RevokeSecurityGroupIngress" && params["SecurityGroupRuleId.2"])
        await client(action, { GroupId: group, "SecurityGroupRuleId.1": params["SecurityGroupRuleId.1"]! }, "race");
      if (action === "AuthorizeSecurityGroupIngress" && params["IpPermissions.2.IpProtocol"]) {
        await sdk.send(
          new AuthorizeSecurityGroupIngressCommand({
            GroupId: group,
            IpPermissions: [{ IpProtocol: "udp", FromPort: 53, ToPort: 53, IpRanges: [{ CidrIp: "0.0.0.0/0" }] }],
          }),
        );
      }
      return client(action, params, label);
    };
    calls = [];
    await syncSecurityGroupRules(racing, group, vipSecurityGroupRules(loadBalancerRecord(), [listener("UDP", 53, { peer_port: 1030 })]));
    expect(await held(group)).toEqual(["in udp 53-53 0.0.0.0/0", "in tcp 1030-1030 0.0.0.0/0", EGRESS].sort());
    expect(calls.filter((c) => c === "RevokeSecurityGroupIngress").length).toBe(4); // the race's, the batch, one by one (2)
    expect(calls.filter((c) => c === "AuthorizeSecurityGroupIngress").length).toBe(3); // the batch, one by one (2)
  });

  it("sends IpPermissions as EC2 takes them: ports From=To, -1 for VRRP, AH and SCTP, the group itself as VRRP's source (UserIdGroupPairs: Groups on the wire)", async () => {
    const group = await newGroup();
    await moto.record();
    await sync(group, { topology: "ACTIVE_STANDBY" }, [listener("SCTP", 9000, { peer_port: 1040, allowed_cidrs: ["192.0.2.0/24"] })]);
    const authorize = (await moto.recorded()).find((r) => r.params.Action === "AuthorizeSecurityGroupIngress")!.params;
    const permissions = Object.entries(authorize).filter(([k]) => k.startsWith("IpPermissions."));
    expect(Object.fromEntries(permissions)).toEqual({
      "IpPermissions.1.IpProtocol": "132",
      "IpPermissions.1.FromPort": "-1",
      "IpPermissions.1.ToPort": "-1",
      "IpPermissions.1.IpRanges.1.CidrIp": "192.0.2.0/24",
      "IpPermissions.2.IpProtocol": "tcp",
      "IpPermissions.2.FromPort": "1040",
      "IpPermissions.2.ToPort": "1040",
      "IpPermissions.2.IpRanges.1.CidrIp": "0.0.0.0/0",
      "IpPermissions.3.IpProtocol": "112",
      "IpPermissions.3.FromPort": "-1",
      "IpPermissions.3.ToPort": "-1",
      "IpPermissions.3.Groups.1.GroupId": group,
      "IpPermissions.4.IpProtocol": "51",
      "IpPermissions.4.FromPort": "-1",
      "IpPermissions.4.ToPort": "-1",
      "IpPermissions.4.Groups.1.GroupId": group,
    });
  });
});
