// The real `openstack` CLI naming a VPC subnet by its Name tag: with OTTAVA_NETWORK_DRIVER=vpc the stack
// (as `npm start` runs it, EC2 in moto) answers the Neutron look-ups at /network, which the clouds.yaml
// names as the endpoint `auth_type: none` sends them to; python-octaviaclient resolves
// `--vip-subnet-id <name>` there (`subnets?name=`), and the load balancer is made on that subnet's UUID.
// Under `auth_type: none` the client sends Keystone's look-ups (`--project`) to the same endpoint: a small
// front sends /v2.0/… to the stack's /network and the rest to the stand-in (Keystone).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startStandIn, type StandIn } from "@ottava/local";
import { CreateSubnetCommand, CreateTagsCommand, CreateVpcCommand, EC2Client } from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { awsUuid } from "@ottava/aws/network";
import { MOTO_CLIENT, awsCallsMissingFromRecord, ec2Fixture, recordedAwsCalls, startMoto, type Moto } from "@ottava/aws/testing";
import { makeCli, type Cli } from "./support/cli/openstack";
import { startStack, type Stack } from "./support/stack";

const PROJECT = "cli-vpc-project";
let moto: Moto;
let ec2: EC2Client;
let stack: Stack;
let os: Cli;
let standIn: StandIn;
let front: Server;
const aws: Record<string, string> = {};

beforeAll(async () => {
  moto = await startMoto();
  // The stack's EC2 calls, by workload, for the IAM record (recordedAwsCalls).
  await moto.record();
  ec2 = new EC2Client({ ...MOTO_CLIENT, endpoint: moto.endpoint });
  const fixture = await ec2Fixture(ec2, "198.18.128.0/20");
  aws.vpc = (await ec2.send(new CreateVpcCommand({ CidrBlock: "198.18.144.0/20" }))).Vpc!.VpcId!;
  aws.subnet = (
    await ec2.send(new CreateSubnetCommand({ VpcId: aws.vpc, CidrBlock: "198.18.144.0/24", AvailabilityZone: "us-east-1a" }))
  ).Subnet!.SubnetId!;
  await ec2.send(
    new CreateTagsCommand({
      Resources: [aws.vpc, aws.subnet],
      Tags: [
        { Key: "Name", Value: "cli-web-net" },
        { Key: "ottava:project", Value: PROJECT },
      ],
    }),
  );
  stack = await startStack(["--in-memory"], {
    OTTAVA_NETWORK_DRIVER: "vpc",
    OTTAVA_EC2_ENDPOINT: moto.endpoint,
    OTTAVA_AMP_BOOT_NETWORK_LIST: Object.values(fixture.subnets).join(","),
    AWS_REGION: MOTO_CLIENT.region,
    AWS_ACCESS_KEY_ID: MOTO_CLIENT.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: MOTO_CLIENT.credentials.secretAccessKey,
  });
  standIn = await startStandIn();
  front = createServer((req, res) => {
    const to = req.url!.startsWith("/v2.0") ? `${stack.url}/network${req.url}` : `${standIn.url}${req.url}`;
    void fetch(to, { method: req.method, headers: { "x-auth-token": String(req.headers["x-auth-token"] ?? "") } }).then(async (r) => {
      res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "application/json" });
      res.end(Buffer.from(await r.arrayBuffer()));
    });
  });
  await new Promise<void>((ok) => front.listen(0, "127.0.0.1", ok));
  os = makeCli(`http://127.0.0.1:${(front.address() as AddressInfo).port}`, stack.url);
}, 120_000);
afterAll(async () => {
  os?.dispose();
  front?.close();
  await standIn?.close();
  await stack?.stop();
  ec2?.destroy();
  await moto?.stop();
});

describe("the openstack CLI with the vpc network driver", () => {
  it("resolves --vip-subnet-id <Name tag> through /network and creates the load balancer on that subnet", async () => {
    const lb = await os.json(["loadbalancer", "create", "--project", PROJECT, "--name", "cli-vpc", "--vip-subnet-id", "cli-web-net"]);
    expect(lb).toMatchObject({
      vip_subnet_id: awsUuid(MOTO_CLIENT.region, aws.subnet!),
      vip_network_id: awsUuid(MOTO_CLIENT.region, aws.vpc!),
    });
    expect(lb.vip_address).toMatch(/^198\.18\.144\./);
    // An unknown name: the client's own message, from an empty list.
    const missing = await os.run(["loadbalancer", "create", "--project", PROJECT, "--vip-subnet-id", "no-such-net"]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("Unable to locate no-such-net in subnets");
  });
});

it("called only the EC2 actions the IAM record holds for each workload (test/fixtures/aws-calls.json)", async () => {
  expect(awsCallsMissingFromRecord(await recordedAwsCalls({ moto }))).toEqual([]);
});
