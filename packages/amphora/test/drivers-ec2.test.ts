// OTTAVA_COMPUTE_DRIVER=ec2 through createDrivers: the EC2 compute driver (@ottava/aws), loaded on its
// first call, on a client to OTTAVA_EC2_ENDPOINT that the process's decorator saw, its secrets at
// OTTAVA_SECRETSMANAGER_ENDPOINT, the controller CA in its user data, against moto.
import { DescribeInstanceAttributeCommand } from "@aws-sdk/client-ec2";
import { ComputeWaitTimeout, loadConfig } from "@ottava/core";
import { MOTO_CLIENT, ec2Bed, motoSecretsManager, startMoto, type Moto } from "@ottava/aws/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDrivers } from "../src";

let moto: Moto;
beforeAll(async () => {
  moto = await startMoto();
  // The Region and credentials come from the environment, as in a Lambda function.
  vi.stubEnv("AWS_REGION", MOTO_CLIENT.region);
  vi.stubEnv("AWS_ACCESS_KEY_ID", MOTO_CLIENT.credentials.accessKeyId);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", MOTO_CLIENT.credentials.secretAccessKey);
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await moto?.stop();
});

describe("createDrivers with OTTAVA_COMPUTE_DRIVER=ec2", () => {
  it("answers the EC2 compute driver, on a client to OTTAVA_EC2_ENDPOINT made on its first call and decorated", async () => {
    const config = loadConfig({
      OTTAVA_COMPUTE_DRIVER: "ec2",
      OTTAVA_EC2_ENDPOINT: moto.endpoint,
      OTTAVA_SECRETSMANAGER_ENDPOINT: moto.endpoint,
    });
    const decorated: unknown[] = [];
    const { compute } = createDrivers(config, { decorateAwsClient: (c) => void decorated.push(c) });
    expect(decorated).toEqual([]); // nothing loaded yet
    await moto.record();
    await expect(compute.getInstance("i-0123456789abcdef0")).rejects.toBeInstanceOf(ComputeWaitTimeout);
    await expect(compute.delete("i-0123456789abcdef0", "00000000-0000-4000-8000-000000000000")).resolves.toBeUndefined();
    expect(decorated).toHaveLength(1);
    // delete terminates the instance (EC2 knows none), then deletes the amphora's secret (at OTTAVA_SECRETSMANAGER_ENDPOINT).
    const recorded = await moto.recorded();
    expect(recorded.map((r) => r.params.Action ?? r.target)).toEqual([
      "DescribeInstances",
      "TerminateInstances",
      "secretsmanager.DeleteSecret",
    ]);
    expect(recorded[2]!.body).toContain("ottava/local/amphora/00000000-0000-4000-8000-000000000000");
  });

  it("builds with its secret at OTTAVA_SECRETSMANAGER_ENDPOINT and the controller CA in the user data: the settings', else the one given", async () => {
    const bed = await ec2Bed(moto, "198.18.32.0");
    const ec2 = bed.ec2;
    await bed.taggedImage("amphora");
    const settings = {
      OTTAVA_COMPUTE_DRIVER: "ec2",
      OTTAVA_EC2_ENDPOINT: moto.endpoint,
      OTTAVA_SECRETSMANAGER_ENDPOINT: moto.endpoint,
      OTTAVA_STAGE: "drivers",
      OTTAVA_AMP_IMAGE_TAG: "amphora",
      OTTAVA_AMP_FLAVOR_ID: "t3.micro",
      OTTAVA_AMP_BOOT_NETWORK_LIST: bed.subnets["us-east-1a"],
    };
    const build = async (env: Record<string, string>, given?: string) => {
      const { compute } = createDrivers(loadConfig({ ...settings, ...env }), given ? { caCertificate: async () => given } : {});
      const amphoraId = crypto.randomUUID();
      const id = await compute.build({ amphoraId, computeFlavor: null, availabilityZone: null, serverPem: "PEM", agentConfig: "CONF" });
      const userData = (await ec2.send(new DescribeInstanceAttributeCommand({ InstanceId: id, Attribute: "userData" }))).UserData!.Value!;
      const secret = await motoSecretsManager(moto)("GetSecretValue", { SecretId: `ottava/drivers/amphora/${amphoraId}` }, "test");
      expect(JSON.parse(String(secret.SecretString))).toEqual({ server_pem: "PEM", agent_conf: "CONF" });
      return Buffer.from(userData, "base64").toString("utf8");
    };
    const configured = "-----BEGIN CERTIFICATE-----\nTHE-SETTINGS-CA\n-----END CERTIFICATE-----";
    const local = "-----BEGIN CERTIFICATE-----\nTHE-LOCAL-CA\n-----END CERTIFICATE-----";
    expect(await build({ OTTAVA_CA_CERTIFICATE: configured }, local)).toContain("THE-SETTINGS-CA");
    expect(await build({}, local)).toContain("THE-LOCAL-CA");
    await expect(build({})).rejects.toThrow(/no controller CA certificate for the amphorae's client_ca\.pem: set OTTAVA_CA_CERTIFICATE/);
    ec2.destroy();
  });
});
