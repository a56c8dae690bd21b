// The load balancer's security group made to hold Octavia's rules (syncSecurityGroupRules over
// vipSecurityGroupRules), against moto: each case's rules land as EC2 holds them, what is no longer wanted
// is revoked, egress is left alone, and a second sync only reads.
import { CreateSecurityGroupCommand, CreateVpcCommand, DescribeSecurityGroupRulesCommand, EC2Client } from "@aws-sdk/client-ec2";
import { vipSecurityGroupRules, type Listener, type LoadBalancer } from "@ottava/core";
import { awsQueryClient, type AwsQueryCall } from "@ottava/edge/aws-query";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EC2_API_VERSION } from "../src";
import { syncSecurityGroupRules } from "../src/network";
import { MOTO_CLIENT, startMoto, type Moto } from "./support";

let moto: Moto;
let ec2: EC2Client;
let vpc: string;
const actions: string[] = [];
let query: AwsQueryCall;

beforeAll(async () => {
  moto = await startMoto();
  ec2 = new EC2Client({ ...MOTO_CLIENT, endpoint: moto.endpoint });
  vpc = (await ec2.send(new CreateVpcCommand({ CidrBlock: "198.18.112.0/20" }))).Vpc!.VpcId!;
  const call = awsQueryClient(
    { signingName: "ec2", version: EC2_API_VERSION },
    { endpoint: moto.endpoint, region: MOTO_CLIENT.region, credentials: async () => MOTO_CLIENT.credentials },
  );
  query = (action, params, label) => (actions.push(action), call(action, params, label));
});
afterAll(async () => {
  ec2?.destroy();
  await moto?.stop();
});

const group = async (name: string) =>
  (await ec2.send(new CreateSecurityGroupCommand({ GroupName: name, Description: "test", VpcId: vpc }))).GroupId!;

/** The group's ingress rules as EC2 describes them, as text. */
async function ingress(groupId: string): Promise<string[]> {
  const rules = (await ec2.send(new DescribeSecurityGroupRulesCommand({ Filters: [{ Name: "group-id", Values: [groupId] }] })))
    .SecurityGroupRules!;
  return rules
    .filter((r) => !r.IsEgress)
    .map(
      (r) =>
        `${r.IpProtocol} ${r.FromPort}-${r.ToPort} ${r.CidrIpv4 ?? r.CidrIpv6 ?? (r.ReferencedGroupInfo?.GroupId === groupId ? "self" : r.ReferencedGroupInfo?.GroupId)}`,
    )
    .sort();
}

const lb = (over: Partial<LoadBalancer> = {}) =>
  ({ topology: "SINGLE", vip_address: "198.18.112.10", vip_sg_ids: [], additional_vips: [], ...over }) as unknown as LoadBalancer;
const listener = (over: Partial<Listener>) =>
  ({ provisioning_status: "ACTIVE", protocol: "HTTP", allowed_cidrs: [], ...over }) as unknown as Listener;

describe("syncSecurityGroupRules: the load balancer's group holds exactly Octavia's rules", () => {
  it("an HTTP listener, then allowed_cidrs, then a second listener removed: what is not wanted is revoked, egress kept", async () => {
    const g = await group("lb-one");
    const http = listener({ protocol_port: 80, peer_port: 1025 });
    await syncSecurityGroupRules(query, g, vipSecurityGroupRules(lb(), [http]));
    expect(await ingress(g)).toEqual(["tcp 1025-1025 0.0.0.0/0", "tcp 80-80 0.0.0.0/0"]);

    const narrowed = listener({ protocol_port: 80, peer_port: 1025, allowed_cidrs: ["192.0.2.0/24", "198.51.100.0/24"] });
    const udp = listener({ protocol: "UDP", protocol_port: 53, peer_port: 1026 });
    await syncSecurityGroupRules(query, g, vipSecurityGroupRules(lb(), [narrowed, udp]));
    expect(await ingress(g)).toEqual([
      "tcp 1025-1025 0.0.0.0/0",
      "tcp 1026-1026 0.0.0.0/0",
      "tcp 80-80 192.0.2.0/24",
      "tcp 80-80 198.51.100.0/24",
      "udp 53-53 0.0.0.0/0",
    ]);

    // The UDP listener removed: its port's and its peer port's rules go.
    await syncSecurityGroupRules(query, g, vipSecurityGroupRules(lb(), [narrowed]));
    expect(await ingress(g)).toEqual(["tcp 1025-1025 0.0.0.0/0", "tcp 80-80 192.0.2.0/24", "tcp 80-80 198.51.100.0/24"]);
    // Egress is not the driver's.
    const egress = (
      await ec2.send(new DescribeSecurityGroupRulesCommand({ Filters: [{ Name: "group-id", Values: [g] }] }))
    ).SecurityGroupRules!.filter((r) => r.IsEgress);
    expect(egress.length).toBeGreaterThan(0);

    // A second sync with the same rules only reads.
    actions.length = 0;
    await syncSecurityGroupRules(query, g, vipSecurityGroupRules(lb(), [narrowed]));
    expect(actions).toEqual(["DescribeSecurityGroupRules"]);
  });

  it("ACTIVE_STANDBY: VRRP (112) and AH (51) from the group itself, ports -1; with vip_sg_ids only the peer port and those", async () => {
    const g = await group("lb-pair");
    const http = listener({ protocol_port: 80, peer_port: 1025 });
    await syncSecurityGroupRules(query, g, vipSecurityGroupRules(lb({ topology: "ACTIVE_STANDBY" }), [http]));
    expect(await ingress(g)).toEqual(["112 -1--1 self", "51 -1--1 self", "tcp 1025-1025 0.0.0.0/0", "tcp 80-80 0.0.0.0/0"]);
    await syncSecurityGroupRules(query, g, vipSecurityGroupRules(lb({ topology: "ACTIVE_STANDBY", vip_sg_ids: ["x"] }), [http]));
    expect(await ingress(g)).toEqual(["112 -1--1 self", "51 -1--1 self", "tcp 1025-1025 0.0.0.0/0"]);
    actions.length = 0;
    await syncSecurityGroupRules(query, g, vipSecurityGroupRules(lb({ topology: "ACTIVE_STANDBY", vip_sg_ids: ["x"] }), [http]));
    expect(actions).toEqual(["DescribeSecurityGroupRules"]);
  });
});
