// OTTAVA_COMPUTE_DRIVER=ec2 through createDrivers: the EC2 compute driver (@ottava/aws), loaded on its
// first call, on a client to OTTAVA_EC2_ENDPOINT that the process's decorator saw, against moto.
import { ComputeWaitTimeout, loadConfig } from "@ottava/core";
import { MOTO_CLIENT, startMoto, type Moto } from "@ottava/aws/testing";
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
    const config = loadConfig({ OTTAVA_COMPUTE_DRIVER: "ec2", OTTAVA_EC2_ENDPOINT: moto.endpoint });
    const decorated: unknown[] = [];
    const { compute } = createDrivers(config, { decorateAwsClient: (c) => void decorated.push(c) });
    expect(decorated).toEqual([]); // nothing loaded yet
    await moto.record();
    await expect(compute.getInstance("i-0123456789abcdef0")).rejects.toBeInstanceOf(ComputeWaitTimeout);
    await expect(compute.delete("i-0123456789abcdef0")).resolves.toBeUndefined();
    expect(decorated).toHaveLength(1);
    expect((await moto.recorded()).map((r) => r.params.Action)).toEqual(["DescribeInstances", "TerminateInstances"]);
  });
});
