// An amphora's secret against moto's Secrets Manager and EC2: made before RunInstances, tagged, bound to
// the instance by its ARN, deleted by delete (what the build's revert, computeDelete, calls) and by a
// build that fails for good; the user data limit; and everything the emulator tells about the instance,
// in which neither the agent's key nor the heartbeat key may be.
import { generateKeyPairSync, randomBytes } from "node:crypto";
import {
  DescribeImagesCommand,
  DescribeInstanceAttributeCommand,
  DescribeInstancesCommand,
  DescribeTagsCommand,
  EC2Client,
  type InstanceAttributeName,
} from "@aws-sdk/client-ec2";
import { ComputeBuildError, isUnavailable, markUnavailable, type ComputeBuildRequest } from "@ottava/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AMPHORA_TAG_KEY,
  Ec2ComputeDriver,
  INSTANCE_ARN_TAG_KEY,
  LOAD_BALANCER_TAG_KEY,
  STAGE_TAG_KEY,
  type SecretsManagerCall,
} from "../src";
import { ec2Bed } from "./support/bed";
import { createInstanceProfile, startMoto, type Moto } from "./support/moto";
import { TEST_IMAGE_FILES, buildRequest, ec2DriverOptions, motoSecretsManager } from "./support/secrets";

let moto: Moto;
let ec2: EC2Client;
let sm: SecretsManagerCall;
let subnet: string;
let baseAmi: string;
/** An image of this account tagged "amphora" (made with CreateImage: RegisterImage drops tags). */
let taggedAmi: string;
const STAGE = "secret-stage";
/** moto's account. */
const ACCOUNT = "123456789012";

/** A real agent key (PEM) and a heartbeat key, as computeCreate hands them over. */
const SERVER_PEM = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const HEARTBEAT_KEY = randomBytes(24).toString("hex");
const AGENT_CONFIG = `[health_manager]\ncontroller_ip_port_list = 198.18.16.1:5555\nheartbeat_key = ${HEARTBEAT_KEY}\n`;

const settings = () => ({
  stage: STAGE,
  ampImageTag: undefined,
  ampBaseImageId: baseAmi,
  ampFlavorId: "t3.micro",
  ampBootNetworkList: [subnet],
  ampSecgroupList: [],
  secretsmanagerEndpoint: moto.endpoint,
  ampInstanceProfile: "ottava-secret-stage-amphora",
});
const request = (over: Partial<ComputeBuildRequest> = {}) => buildRequest({ serverPem: SERVER_PEM, agentConfig: AGENT_CONFIG, ...over });
const secretName = (amphoraId: string) => `ottava/${STAGE}/amphora/${amphoraId}`;
const describeSecret = (amphoraId: string) => sm("DescribeSecret", { SecretId: secretName(amphoraId) }, "test");
const secretValue = async (amphoraId: string) =>
  JSON.parse(String((await sm("GetSecretValue", { SecretId: secretName(amphoraId) }, "test")).SecretString));
const tagsOf = (tags: unknown) => Object.fromEntries(((tags ?? []) as { Key: string; Value: string }[]).map((t) => [t.Key, t.Value]));
const stateOf = async (id: string) =>
  (await ec2.send(new DescribeInstancesCommand({ InstanceIds: [id] }))).Reservations![0]!.Instances![0]!.State!.Name;
/** Secrets Manager with one operation failing as `fail` says. */
const failing =
  (operation: string, fail: () => Error): SecretsManagerCall =>
  (op, input, label) =>
    op === operation ? Promise.reject(fail()) : sm(op, input, label);

beforeAll(async () => {
  moto = await startMoto();
  sm = motoSecretsManager(moto);
  await createInstanceProfile(moto, "ottava-secret-stage-amphora");
  const bed = await ec2Bed(moto, "198.18.16.0");
  ec2 = bed.ec2;
  subnet = bed.subnets["us-east-1a"];
  baseAmi = (await ec2.send(new DescribeImagesCommand({ Owners: ["amazon"], Filters: [{ Name: "architecture", Values: ["x86_64"] }] })))
    .Images![0]!.ImageId!;
  taggedAmi = await bed.taggedImage("amphora");
});
afterAll(async () => {
  ec2?.destroy();
  await moto?.stop();
});

describe("an amphora's secret", () => {
  it("is made before RunInstances with the key and the agent configuration, tagged, bound to the instance's ARN, and deleted by delete", async () => {
    const driver = new Ec2ComputeDriver(ec2, settings(), ec2DriverOptions(moto));
    const req = request();
    await moto.record();
    const id = await driver.build(req);
    // CreateSecret, then RunInstances, then TagResource with the instance's ARN.
    const order = (await moto.recorded())
      .map(
        (r) =>
          r.params.Action ??
          (r.body.includes('"SecretString"') ? "CreateSecret" : r.body.includes(INSTANCE_ARN_TAG_KEY) ? "TagResource" : "?"),
      )
      .filter((a) => ["CreateSecret", "RunInstances", "TagResource"].includes(a));
    expect(order).toEqual(["CreateSecret", "RunInstances", "TagResource"]);

    const described = await describeSecret(req.amphoraId);
    expect(tagsOf(described.Tags)).toEqual({
      [STAGE_TAG_KEY]: STAGE,
      [AMPHORA_TAG_KEY]: req.amphoraId,
      [LOAD_BALANCER_TAG_KEY]: req.loadBalancerId,
      [INSTANCE_ARN_TAG_KEY]: `arn:aws:ec2:us-east-1:${ACCOUNT}:instance/${id}`,
    });
    expect(await secretValue(req.amphoraId)).toEqual({ server_pem: SERVER_PEM, agent_conf: AGENT_CONFIG });

    await driver.delete(id, req.amphoraId);
    await expect(describeSecret(req.amphoraId)).rejects.toMatchObject({ name: "ResourceNotFoundException" });
    expect(["shutting-down", "terminated"]).toContain(await stateOf(id));
    // Deleting again: the secret already gone, the instance terminated.
    await expect(driver.delete(id, req.amphoraId)).resolves.toBeUndefined();
  });

  it("is found made by a retried build, which puts its new value in it", async () => {
    const driver = new Ec2ComputeDriver(ec2, settings(), ec2DriverOptions(moto));
    const req = request();
    await driver.build(req);
    const retried = { ...req, serverPem: `${SERVER_PEM}# a new certificate\n` };
    const id = await driver.build(retried);
    expect(await secretValue(req.amphoraId)).toEqual({ server_pem: retried.serverPem, agent_conf: AGENT_CONFIG });
    expect(tagsOf((await describeSecret(req.amphoraId)).Tags)[INSTANCE_ARN_TAG_KEY]).toBe(
      `arn:aws:ec2:us-east-1:${ACCOUNT}:instance/${id}`,
    );
  });

  it("goes with a build that fails for good: RunInstances refused, or the secret not bound (then the instance goes too)", async () => {
    const refused = request({ computeFlavor: "m9.nonexistent" });
    await expect(new Ec2ComputeDriver(ec2, settings(), ec2DriverOptions(moto)).build(refused)).rejects.toBeInstanceOf(ComputeBuildError);
    await expect(describeSecret(refused.amphoraId)).rejects.toMatchObject({ name: "ResourceNotFoundException" });

    const unbound = request();
    const denied = () => Object.assign(new Error("AccessDeniedException: not allowed"), { name: "AccessDeniedException" });
    const driver = new Ec2ComputeDriver(ec2, settings(), ec2DriverOptions(moto, { secrets: failing("TagResource", denied) }));
    await moto.record();
    await expect(driver.build(unbound)).rejects.toThrow(/AccessDeniedException/);
    await expect(describeSecret(unbound.amphoraId)).rejects.toMatchObject({ name: "ResourceNotFoundException" });
    const terminated = (await moto.recorded()).find((r) => r.params.Action === "TerminateInstances");
    expect(await stateOf(terminated!.params["InstanceId.1"]!)).toMatch(/shutting-down|terminated/);
  });

  it("stays, with its instance, for the retry of a build that failed for now (a service unavailable)", async () => {
    const req = request();
    const throttled = () =>
      markUnavailable(Object.assign(new Error("ThrottlingException: Rate exceeded"), { name: "ThrottlingException" }));
    const driver = new Ec2ComputeDriver(ec2, settings(), ec2DriverOptions(moto, { secrets: failing("TagResource", throttled) }));
    await moto.record();
    const error = await driver.build(req).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ComputeBuildError);
    expect(isUnavailable(error)).toBe(true); // the flow retries it
    expect(await secretValue(req.amphoraId)).toEqual({ server_pem: SERVER_PEM, agent_conf: AGENT_CONFIG });
    expect((await moto.recorded()).some((r) => r.params.Action === "TerminateInstances")).toBe(false);
  });

  it("is not made when the user data is over AWS's 16 KiB: the build fails before it", async () => {
    const big = [...TEST_IMAGE_FILES, { name: "noise", executable: false, content: randomBytes(13_000).toString("base64") }];
    const driver = new Ec2ComputeDriver(ec2, settings(), ec2DriverOptions(moto, { imageFiles: big }));
    const req = request();
    await moto.record();
    const error = driver.build(req);
    await expect(error).rejects.toBeInstanceOf(ComputeBuildError);
    await expect(error).rejects.toThrow(/the user data is \d+ bytes, more than AWS's limit of 16384$/);
    const recorded = await moto.recorded();
    expect(recorded.some((r) => r.params.Action === "RunInstances" || r.body.includes('"SecretString"'))).toBe(false);
    await expect(describeSecret(req.amphoraId)).rejects.toMatchObject({ name: "ResourceNotFoundException" });
  });
});

/** Every attribute DescribeInstanceAttribute takes (the EC2 API reference). */
const ATTRIBUTES: InstanceAttributeName[] = [
  "instanceType",
  "kernel",
  "ramdisk",
  "userData",
  "disableApiTermination",
  "instanceInitiatedShutdownBehavior",
  "rootDeviceName",
  "blockDeviceMapping",
  "productCodes",
  "sourceDestCheck",
  "groupSet",
  "ebsOptimized",
  "sriovNetSupport",
  "enaSupport",
  "enclaveOptions",
  "disableApiStop",
];

describe("what anyone who may describe the instance reads", () => {
  it("holds neither the agent's key nor the heartbeat key: DescribeInstances, every instance attribute, its tags, its image", async () => {
    for (const firstBoot of [true, false]) {
      const driver = new Ec2ComputeDriver(ec2, firstBoot ? settings() : { ...settings(), ampImageTag: "amphora" }, ec2DriverOptions(moto));
      const req = request();
      const id = await driver.build(req);
      const read: string[] = [];
      const instances = await ec2.send(new DescribeInstancesCommand({ InstanceIds: [id] }));
      read.push(JSON.stringify(instances));
      const answered: string[] = [];
      for (const attribute of ATTRIBUTES) {
        try {
          const out = await ec2.send(new DescribeInstanceAttributeCommand({ InstanceId: id, Attribute: attribute }));
          read.push(JSON.stringify(out));
          answered.push(attribute);
          if (attribute === "userData") read.push(Buffer.from(out.UserData!.Value!, "base64").toString("utf8"));
        } catch {
          // an attribute moto does not answer
        }
      }
      expect(answered).toEqual(expect.arrayContaining(["userData", "instanceType", "groupSet", "sourceDestCheck"]));
      read.push(JSON.stringify(await ec2.send(new DescribeTagsCommand({ Filters: [{ Name: "resource-id", Values: [id] }] }))));
      const imageId = instances.Reservations![0]!.Instances![0]!.ImageId!;
      expect(imageId).toBe(firstBoot ? baseAmi : taggedAmi);
      read.push(JSON.stringify(await ec2.send(new DescribeImagesCommand({ ImageIds: [imageId] }))));

      const all = read.join("\n");
      expect(all).toContain("ottava-amphora-configure"); // the user data was read
      if (firstBoot) expect(all).toContain("/var/lib/ottava/image/install.sh");
      const keyBody = SERVER_PEM.split("\n").slice(1, -2).join("");
      for (const secret of [HEARTBEAT_KEY, "PRIVATE KEY", ...keyBody.match(/.{16}/g)!])
        expect(all, `${secret} (firstBoot ${firstBoot})`).not.toContain(secret);
      await driver.delete(id, req.amphoraId);
    }
  });
});
