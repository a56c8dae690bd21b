// The EC2 compute driver where moto alone cannot show it, through the test proxy: a build retried after
// a newer tagged AMI appeared (EC2 refuses the token: IdempotentParameterMismatch), and the anti-affinity
// placement group (moto has none).
import { DescribeInstancesCommand, EC2Client, TerminateInstancesCommand } from "@aws-sdk/client-ec2";
import { ComputeBuildError, type ComputeBuildRequest } from "@ottava/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AMPHORA_TAG_KEY, Ec2ComputeDriver, LOAD_BALANCER_TAG_KEY, STAGE_TAG_KEY } from "../src";
import { MOTO_CLIENT, ec2DriverOptions, ec2Fixture, startEc2Proxy, startMoto, type Ec2Fixture, type Ec2Proxy, type Moto } from "./support";

let moto: Moto;
let proxy: Ec2Proxy;
let ec2: EC2Client;
let fx: Ec2Fixture;

beforeAll(async () => {
  moto = await startMoto();
  proxy = await startEc2Proxy(moto.endpoint);
  ec2 = new EC2Client({ ...MOTO_CLIENT, endpoint: proxy.endpoint });
  fx = await ec2Fixture(ec2, "198.18.16.0/20");
});
afterAll(async () => {
  ec2?.destroy();
  await proxy?.stop();
  await moto?.stop();
});
beforeEach(() => proxy.reset());

const settings = (tag: string) => ({
  stage: "proxy-stage",
  ampImageTag: tag,
  ampBaseImageId: undefined,
  ampFlavorId: "t3.micro",
  ampBootNetworkList: [fx.subnets["us-east-1a"]!, fx.subnets["us-east-1b"]!],
  ampSecgroupList: [fx.securityGroup],
  secretsmanagerEndpoint: moto.endpoint,
  ampInstanceProfile: undefined,
});
const request = (over: Partial<ComputeBuildRequest> = {}): ComputeBuildRequest => ({
  amphoraId: crypto.randomUUID(),
  loadBalancerId: crypto.randomUUID(),
  computeFlavor: null,
  availabilityZone: null,
  serverPem: "unused",
  agentConfig: "unused",
  ...over,
});
/** The RunInstances calls of the driver (the fixture makes its images from instances of the public AMI). */
const builds = () => proxy.calls.filter((c) => c.action === "RunInstances" && c.params.ImageId !== fx.publicAmi);
const ofAmphora = async (amphoraId: string) =>
  (
    await ec2.send(new DescribeInstancesCommand({ Filters: [{ Name: `tag:${AMPHORA_TAG_KEY}`, Values: [amphoraId] }] }))
  ).Reservations!.flatMap((r) => r.Instances!);

describe("Ec2ComputeDriver.build, retried", () => {
  it("with the same parameters: EC2 answers the first instance", async () => {
    const tag = `same-${crypto.randomUUID()}`;
    await fx.taggedImage(tag, tag);
    const driver = new Ec2ComputeDriver(ec2, settings(tag), ec2DriverOptions(moto));
    const req = request();
    const first = await driver.build(req);
    expect(await driver.build(req)).toBe(first);
    expect(builds().map((c) => c.params.ClientToken)).toEqual([req.amphoraId, req.amphoraId]);
    expect((await ofAmphora(req.amphoraId)).map((i) => i.InstanceId)).toEqual([first]);
  });

  it("after a newer tagged AMI appeared: EC2 refuses the token, and the first attempt's instance is the answer", async () => {
    const tag = `newer-${crypto.randomUUID()}`;
    const older = await fx.taggedImage(tag, `${tag}-1`);
    const driver = new Ec2ComputeDriver(ec2, settings(tag), ec2DriverOptions(moto));
    const req = request();
    const first = await driver.build(req);
    const newer = await fx.taggedImage(tag, `${tag}-2`);
    expect(await driver.build(req)).toBe(first);
    expect(builds().map((c) => [c.params.ImageId, c.status])).toEqual([
      [older, 200],
      [newer, 400],
    ]);
    expect((await ofAmphora(req.amphoraId)).map((i) => [i.InstanceId, i.ImageId])).toEqual([[first, older]]);
    // The look-up named the amphora and the stage, and instances that are not terminated only.
    const look = proxy.params("DescribeInstances").find((p) => p["Filter.2.Name"])!;
    expect(look).toMatchObject({
      "Filter.1.Name": `tag:${AMPHORA_TAG_KEY}`,
      "Filter.1.Value.1": req.amphoraId,
      "Filter.2.Name": `tag:${STAGE_TAG_KEY}`,
      "Filter.2.Value.1": "proxy-stage",
      "Filter.3.Name": "instance-state-name",
    });
    expect(
      Object.entries(look)
        .filter(([k]) => k.startsWith("Filter.3.Value."))
        .map(([, v]) => v),
    ).not.toContain("terminated");

    // Once that instance is terminated the token cannot launch another: the build fails.
    await ec2.send(new TerminateInstancesCommand({ InstanceIds: [first] }));
    const again = driver.build(req);
    await expect(again).rejects.toBeInstanceOf(ComputeBuildError);
    await expect(again).rejects.toThrow(/IdempotentParameterMismatch/);
  });
});

describe("Ec2ComputeDriver's placement groups (anti-affinity)", () => {
  it("a spread group per load balancer, made once, booted into, deleted once its instances are terminated", async () => {
    const tag = `pg-${crypto.randomUUID()}`;
    await fx.taggedImage(tag, tag);
    const driver = new Ec2ComputeDriver(ec2, settings(tag), ec2DriverOptions(moto));
    const lbId = crypto.randomUUID();
    const name = await driver.createServerGroup(lbId);
    expect(name).toBe(`ottava-proxy-stage-lb-${lbId}`);
    expect(await driver.createServerGroup(lbId)).toBe(name); // a retry: the same group
    expect(proxy.placementGroups.get(name)).toMatchObject({
      strategy: "spread",
      tags: { [STAGE_TAG_KEY]: "proxy-stage", [LOAD_BALANCER_TAG_KEY]: lbId },
    });
    const reqs = [request({ loadBalancerId: lbId, serverGroupId: name }), request({ loadBalancerId: lbId, serverGroupId: name })];
    const ids = [await driver.build(reqs[0]!), await driver.build(reqs[1]!)];
    expect(builds().map((c) => c.params["Placement.GroupName"])).toEqual([name, name]);
    expect(proxy.placementGroups.get(name)!.instances).toEqual(ids);

    expect(await driver.deleteServerGroup(name)).toBe(false); // in use
    for (const [i, id] of ids.entries()) await driver.delete(id, reqs[i]!.amphoraId);
    expect(await driver.deleteServerGroup(name)).toBe(true);
    expect(proxy.placementGroups.has(name)).toBe(false);
    expect(await driver.deleteServerGroup(name)).toBe(true); // already gone
  });
});
