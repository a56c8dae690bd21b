// The EC2 compute driver against moto (its own moto_server, AMI and instance-type validation on): what
// RunInstances is asked (moto's recorder for what it ignores), the image, type, subnet and tags it
// boots with, getInstance's answers and delete.
import {
  CreateImageCommand,
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  DescribeImagesCommand,
  DescribeInstancesCommand,
  EC2Client,
  RunInstancesCommand,
  TerminateInstancesCommand,
  type Instance,
} from "@aws-sdk/client-ec2";
import { ComputeBuildError, ComputeWaitTimeout, loadConfig, type ComputeBuildRequest } from "@ottava/core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AMP_IMAGE_TAG_KEY, AMPHORA_TAG_KEY, Ec2ComputeDriver, LOAD_BALANCER_TAG_KEY, STAGE_TAG_KEY, ec2Client } from "../src";
import { MOTO_CLIENT, createInstanceProfile, startMoto, type Moto } from "./support/moto";
import { TEST_CONTROLLER_CA, buildRequest, ec2DriverOptions } from "./support/secrets";

let moto: Moto;
let ec2: EC2Client;
/** The management subnets: one in us-east-1a, one in us-east-1b, of this file's /20 of 198.18.0.0/15; and a second in us-east-1a. */
const subnets: Record<string, string> = {};
let securityGroup: string;
let publicAmi: string;
/** Two self-owned AMIs tagged "amphora": the older one and the newer one. */
let olderAmi: string;
let newerAmi: string;
/** An AMI tagged "other". */
let otherAmi: string;

const SERVER_PEM = "-----BEGIN PRIVATE KEY-----\nTHIS-IS-THE-AGENT-KEY\n-----END PRIVATE KEY-----\n";
const AGENT_CONFIG = "[health_manager]\nheartbeat_key = THIS-IS-THE-HEARTBEAT-KEY\n";
/** The amphorae's instance profile (the stacks make it; here, the emulator). */
const INSTANCE_PROFILE = "ottava-test-stage-amphora";

const settings = () => ({
  stage: "test-stage",
  ampImageTag: "amphora",
  ampBaseImageId: undefined as string | undefined,
  ampFlavorId: "t3.micro",
  ampBootNetworkList: [subnets["us-east-1a"]!, subnets["us-east-1b"]!],
  ampSecgroupList: [securityGroup],
  secretsmanagerEndpoint: moto.endpoint,
  ampInstanceProfile: INSTANCE_PROFILE,
});
const request = (over: Partial<ComputeBuildRequest> = {}) => buildRequest({ serverPem: SERVER_PEM, agentConfig: AGENT_CONFIG, ...over });
const describeInstance = async (id: string): Promise<Instance> =>
  (await ec2.send(new DescribeInstancesCommand({ InstanceIds: [id] }))).Reservations![0]!.Instances![0]!;
const tagsOf = (i: { Tags?: { Key?: string; Value?: string }[] }) => Object.fromEntries((i.Tags ?? []).map((t) => [t.Key, t.Value]));

/** A self-owned AMI made from an instance of the public one (RegisterImage would drop its tags). */
async function taggedImage(tag: string, name: string): Promise<string> {
  const run = await ec2.send(new RunInstancesCommand({ ImageId: publicAmi, InstanceType: "t3.micro", MinCount: 1, MaxCount: 1 }));
  const out = await ec2.send(
    new CreateImageCommand({
      InstanceId: run.Instances![0]!.InstanceId!,
      Name: name,
      TagSpecifications: [{ ResourceType: "image", Tags: [{ Key: AMP_IMAGE_TAG_KEY, Value: tag }] }],
    }),
  );
  await ec2.send(new TerminateInstancesCommand({ InstanceIds: [run.Instances![0]!.InstanceId!] }));
  return out.ImageId!;
}

beforeAll(async () => {
  moto = await startMoto();
  ec2 = new EC2Client({ ...MOTO_CLIENT, endpoint: moto.endpoint });
  const vpc = (await ec2.send(new CreateVpcCommand({ CidrBlock: "198.18.0.0/20" }))).Vpc!.VpcId!;
  for (const [zone, cidr] of [
    ["us-east-1a", "198.18.0.0/24"],
    ["us-east-1b", "198.18.1.0/24"],
  ] as const)
    subnets[zone] = (await ec2.send(new CreateSubnetCommand({ VpcId: vpc, CidrBlock: cidr, AvailabilityZone: zone }))).Subnet!.SubnetId!;
  subnets.second = (
    await ec2.send(new CreateSubnetCommand({ VpcId: vpc, CidrBlock: "198.18.2.0/24", AvailabilityZone: "us-east-1a" }))
  ).Subnet!.SubnetId!;
  await createInstanceProfile(moto, INSTANCE_PROFILE);
  securityGroup = (await ec2.send(new CreateSecurityGroupCommand({ VpcId: vpc, GroupName: "lb-mgmt-sec-grp", Description: "amphorae" })))
    .GroupId!;
  publicAmi = (await ec2.send(new DescribeImagesCommand({ Owners: ["amazon"], Filters: [{ Name: "architecture", Values: ["x86_64"] }] })))
    .Images![0]!.ImageId!;
  olderAmi = await taggedImage("amphora", "amphora-older");
  // moto answers CreationDate in whole seconds (AWS in milliseconds): the second image is a second newer.
  await new Promise((r) => setTimeout(r, 1100));
  newerAmi = await taggedImage("amphora", "amphora-newer");
  otherAmi = await taggedImage("other", "other");
});
afterAll(async () => {
  ec2?.destroy();
  await moto?.stop();
});

describe("Ec2ComputeDriver.build", () => {
  it("runs one instance with the newest tagged AMI, the flavor's type, the zone's subnet, the groups, IMDSv2, tags and the amphora id as ClientToken", async () => {
    const driver = new Ec2ComputeDriver(ec2, settings(), ec2DriverOptions(moto));
    const req = request({ computeFlavor: "t3.small", availabilityZone: "us-east-1b" });
    await moto.record();
    const id = await driver.build(req);
    const recorded = await moto.recorded();

    const run = recorded.filter((r) => r.params.Action === "RunInstances");
    expect(run).toHaveLength(1);
    const p = run[0]!.params;
    expect(p).toMatchObject({
      ImageId: newerAmi,
      InstanceType: "t3.small",
      MinCount: "1",
      MaxCount: "1",
      ClientToken: req.amphoraId,
      SubnetId: subnets["us-east-1b"],
      "SecurityGroupId.1": securityGroup,
      "MetadataOptions.HttpEndpoint": "enabled",
      "MetadataOptions.HttpTokens": "required",
      "MetadataOptions.HttpPutResponseHopLimit": "1",
      "IamInstanceProfile.Name": INSTANCE_PROFILE,
    });
    expect(p["Placement.GroupName"]).toBeUndefined();
    // The user data of a tagged image: where the secret is, the CA, the configure step; no image scripts.
    const userData = Buffer.from(p.UserData!, "base64").toString("utf8");
    expect(userData).toMatch(/^#cloud-config\n/);
    expect(userData).toContain(`"secret_id":"ottava/test-stage/amphora/${req.amphoraId}"`);
    expect(userData).toContain(TEST_CONTROLLER_CA.split("\n")[1]);
    expect(userData).not.toContain("install.sh");
    // The image was looked up among this account's own, by the tag, available ones only.
    const images = recorded.find((r) => r.params.Action === "DescribeImages")!.params;
    expect(images).toMatchObject({ "Owner.1": "self", "Filter.1.Name": `tag:${AMP_IMAGE_TAG_KEY}`, "Filter.1.Value.1": "amphora" });
    // The agent's key and the heartbeat key are in no EC2 request (only Secrets Manager's CreateSecret has them).
    const ec2Requests = recorded.filter((r) => r.params.Action);
    expect(ec2Requests.length).toBeGreaterThan(1);
    for (const r of ec2Requests) {
      expect(r.body).not.toContain("THIS-IS-THE-AGENT-KEY");
      expect(r.body).not.toContain("THIS-IS-THE-HEARTBEAT-KEY");
    }

    const instance = await describeInstance(id);
    expect(instance).toMatchObject({ ImageId: newerAmi, InstanceType: "t3.small", SubnetId: subnets["us-east-1b"] });
    expect(instance.Placement?.AvailabilityZone).toBe("us-east-1b");
    expect(instance.SecurityGroups?.map((g) => g.GroupId)).toEqual([securityGroup]);
    expect(tagsOf(instance)).toEqual({
      Name: `amphora-${req.amphoraId}`,
      [STAGE_TAG_KEY]: "test-stage",
      [AMPHORA_TAG_KEY]: req.amphoraId,
      [LOAD_BALANCER_TAG_KEY]: req.loadBalancerId,
    });
  });

  it("takes the settings' type and image tag when the request has none, the flavor's image tag when it has one, and the first subnet without a zone", async () => {
    const driver = new Ec2ComputeDriver(ec2, settings(), ec2DriverOptions(moto));
    const byDefault = await describeInstance(await driver.build(request()));
    expect(byDefault).toMatchObject({ ImageId: newerAmi, InstanceType: "t3.micro", SubnetId: subnets["us-east-1a"] });
    const byFlavor = await describeInstance(await driver.build(request({ imageTag: "other", availabilityZone: "us-east-1a" })));
    expect(byFlavor).toMatchObject({ ImageId: otherAmi, SubnetId: subnets["us-east-1a"] });
  });

  it("boots in the AZ profile's management subnet when it names one", async () => {
    const driver = new Ec2ComputeDriver(ec2, settings(), ec2DriverOptions(moto));
    const id = await driver.build(request({ availabilityZone: "us-east-1a", managementNetwork: subnets["us-east-1b"]! }));
    expect((await describeInstance(id)).SubnetId).toBe(subnets["us-east-1b"]);
  });

  it("boots the base image when no image tag is set", async () => {
    const driver = new Ec2ComputeDriver(ec2, { ...settings(), ampImageTag: undefined, ampBaseImageId: publicAmi }, ec2DriverOptions(moto));
    expect((await describeInstance(await driver.build(request()))).ImageId).toBe(publicAmi);
  });

  it("puts the instance in the anti-affinity placement group it is given", async () => {
    const driver = new Ec2ComputeDriver(ec2, settings(), ec2DriverOptions(moto));
    await moto.record();
    await driver.build(request({ serverGroupId: "ottava-test-stage-lb-1" }));
    const p = (await moto.recorded()).find((r) => r.params.Action === "RunInstances")!.params;
    expect(p["Placement.GroupName"]).toBe("ottava-test-stage-lb-1");
  });

  it("fails with Octavia's messages: no image with the tag, an unknown instance type, a zone without a subnet, no setting", async () => {
    const driver = new Ec2ComputeDriver(ec2, settings(), ec2DriverOptions(moto));
    await expect(driver.build(request({ imageTag: "nothing-has-it" }))).rejects.toThrow(
      new ComputeBuildError("Failed to retrieve image with nothing-has-it tag."),
    );
    const badType = driver.build(request({ computeFlavor: "m9.nonexistent" }));
    await expect(badType).rejects.toBeInstanceOf(ComputeBuildError);
    await expect(badType).rejects.toThrow(/^Failed to build compute instance due to: .*m9\.nonexistent/);
    await expect(driver.build(request({ availabilityZone: "us-east-1c" }))).rejects.toThrow(
      "no subnet of OTTAVA_AMP_BOOT_NETWORK_LIST is in zone us-east-1c",
    );
    const bare = new Ec2ComputeDriver(
      ec2,
      { ...settings(), ampImageTag: undefined, ampFlavorId: undefined, ampBootNetworkList: [] },
      ec2DriverOptions(moto),
    );
    await expect(bare.build(request())).rejects.toThrow(/no image: set OTTAVA_AMP_IMAGE_TAG/);
    await expect(bare.build(request({ imageTag: "amphora" }))).rejects.toThrow(/no instance type: set OTTAVA_AMP_FLAVOR_ID/);
    await expect(bare.build(request({ imageTag: "amphora", computeFlavor: "t3.micro" }))).rejects.toThrow(
      /no management subnet: set OTTAVA_AMP_BOOT_NETWORK_LIST/,
    );
  });

  it("refuses two boot subnets in one zone", async () => {
    const driver = new Ec2ComputeDriver(
      ec2,
      { ...settings(), ampBootNetworkList: [subnets["us-east-1a"]!, subnets.second!] },
      ec2DriverOptions(moto),
    );
    await expect(driver.build(request({ availabilityZone: "us-east-1a" }))).rejects.toThrow(
      `OTTAVA_AMP_BOOT_NETWORK_LIST has two subnets in zone us-east-1a: ${subnets["us-east-1a"]}, ${subnets.second}`,
    );
  });
});

describe("Ec2ComputeDriver.getInstance", () => {
  it("answers a running instance's management address, image, type and zone", async () => {
    const driver = new Ec2ComputeDriver(ec2, settings(), ec2DriverOptions(moto));
    const id = await driver.build(request({ computeFlavor: "t3.small", availabilityZone: "us-east-1b" }));
    const vm = await driver.getInstance(id);
    expect(vm).toMatchObject({ compute_id: id, image_id: newerAmi, compute_flavor: "t3.small", cached_zone: "us-east-1b" });
    expect(vm.lb_network_ip).toMatch(/^198\.18\.1\.\d+$/);
  });

  it("throws ComputeWaitTimeout for an instance EC2 does not know (yet), ComputeBuildError for one that stopped for good", async () => {
    const driver = new Ec2ComputeDriver(ec2, settings(), ec2DriverOptions(moto));
    await expect(driver.getInstance("i-0123456789abcdef0")).rejects.toBeInstanceOf(ComputeWaitTimeout);
    const id = await driver.build(request());
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [id] }));
    const gone = driver.getInstance(id);
    await expect(gone).rejects.toBeInstanceOf(ComputeBuildError);
    await expect(gone).rejects.toThrow(new RegExp(`instance ${id} is (shutting-down|terminated): `));
  });
});

describe("Ec2ComputeDriver.delete", () => {
  it("terminates the instance, and an instance already gone is deleted", async () => {
    const driver = new Ec2ComputeDriver(ec2, settings(), ec2DriverOptions(moto));
    const req = request();
    const id = await driver.build(req);
    await driver.delete(id, req.amphoraId);
    expect(["shutting-down", "terminated"]).toContain((await describeInstance(id)).State?.Name);
    await expect(driver.delete("i-0123456789abcdef0", req.amphoraId)).resolves.toBeUndefined();
  });
});

describe("ec2Client", () => {
  it("reaches the endpoint of OTTAVA_EC2_ENDPOINT", async () => {
    const config = loadConfig({ OTTAVA_EC2_ENDPOINT: moto.endpoint, OTTAVA_AMP_BOOT_NETWORK_LIST: subnets["us-east-1a"] });
    expect(config.ampBootNetworkList).toEqual([subnets["us-east-1a"]]);
    // The Region and credentials come from the environment, as in a Lambda function.
    vi.stubEnv("AWS_REGION", MOTO_CLIENT.region);
    vi.stubEnv("AWS_ACCESS_KEY_ID", MOTO_CLIENT.credentials.accessKeyId);
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", MOTO_CLIENT.credentials.secretAccessKey);
    const decorated: unknown[] = [];
    const client = ec2Client(config, (c) => decorated.push(c));
    expect(decorated).toEqual([client]);
    const out = await client.send(new DescribeImagesCommand({ Owners: ["self"] }));
    expect(out.Images?.map((i) => i.ImageId)).toContain(newerAmi);
    client.destroy();
    vi.unstubAllEnvs();
  });
});
