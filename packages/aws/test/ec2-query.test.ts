// The API's minimal EC2 client (@ottava/edge's awsQueryClient, EC2's Query protocol) and the profile
// checks over it (Ec2ProfileValidator), against moto (AMI and instance-type validation on); throttling
// and 500s injected by a forwarder in front of moto.
import { createServer } from "node:http";
import { isUnavailable, ProfileRefused } from "@ottava/core";
import { xmlItems, xmlText } from "@ottava/edge/aws-query";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Ec2ProfileValidator, ec2QueryClient } from "../src";
import { MOTO_CLIENT, ec2Bed, startMoto, type Ec2Bed, type Moto } from "./support";

let moto: Moto;
let bed: Ec2Bed;
beforeAll(async () => {
  moto = await startMoto();
  vi.stubEnv("AWS_REGION", MOTO_CLIENT.region);
  vi.stubEnv("AWS_ACCESS_KEY_ID", MOTO_CLIENT.credentials.accessKeyId);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", MOTO_CLIENT.credentials.secretAccessKey);
  bed = await ec2Bed(moto, "198.18.64.0");
}, 120_000);
afterAll(async () => {
  vi.unstubAllEnvs();
  bed?.ec2.destroy();
  await moto?.stop();
});

describe("the EC2 Query client", () => {
  it("makes DescribeInstanceTypes, DescribeImages (Owners self, a tag filter), DescribeAvailabilityZones and DescribeSubnets, and reads their answers", async () => {
    const image = await bed.taggedImage("query-test");
    const ec2 = ec2QueryClient({ ec2Endpoint: moto.endpoint });
    await moto.record();
    const types = await ec2("DescribeInstanceTypes", { "InstanceType.1": "t3.micro" }, "types");
    expect(xmlItems(types, "instanceTypeSet").map((i) => xmlText(i, "instanceType"))).toEqual(["t3.micro"]);
    const images = await ec2(
      "DescribeImages",
      { "Owner.1": "self", "Filter.1.Name": "tag:ottava:amp-image-tag", "Filter.1.Value.1": "query-test" },
      "images",
    );
    expect(xmlItems(images, "imagesSet").map((i) => xmlText(i, "imageId"))).toEqual([image]);
    const zones = await ec2("DescribeAvailabilityZones", {}, "zones");
    expect(xmlItems(zones, "availabilityZoneInfo").map((z) => xmlText(z, "zoneName"))).toContain("us-east-1b");
    const subnets = await ec2("DescribeSubnets", { "SubnetId.1": bed.subnets["us-east-1a"] }, "subnets");
    expect(xmlItems(subnets, "subnetSet").map((s) => xmlText(s, "availabilityZone"))).toEqual(["us-east-1a"]);
    const recorded = await moto.recorded();
    expect(recorded.map((r) => r.params.Action)).toEqual([
      "DescribeInstanceTypes",
      "DescribeImages",
      "DescribeAvailabilityZones",
      "DescribeSubnets",
    ]);
    expect(recorded.every((r) => r.params.Version === "2016-11-15")).toBe(true);
  });

  it("throws EC2's error by its code, with what the call was, and not as unavailable", async () => {
    const ec2 = ec2QueryClient({ ec2Endpoint: moto.endpoint });
    const e = await ec2("DescribeSubnets", { "SubnetId.1": "subnet-0123456789abcdef0" }, "EC2 DescribeSubnets of x").catch(
      (e: unknown) => e,
    );
    expect(e).toMatchObject({
      name: "InvalidSubnetID.NotFound",
      message: expect.stringMatching(/^EC2 DescribeSubnets of x: InvalidSubnetID.NotFound: /),
    });
    expect(isUnavailable(e)).toBe(false);
  });

  it("retries throttling and 500s (3 attempts), then throws them marked unavailable; a retry that gets through answers", async () => {
    let inject: string[] = [];
    let calls = 0;
    const proxy = createServer(async (req, res) => {
      calls++;
      let body = "";
      for await (const c of req) body += c;
      const code = inject.shift();
      if (code) {
        res.writeHead(code === "InternalError" ? 500 : 503, { "content-type": "text/xml" });
        return res.end(
          `<?xml version="1.0"?><Response><Errors><Error><Code>${code}</Code><Message>m</Message></Error></Errors><RequestID>r</RequestID></Response>`,
        );
      }
      const up = await fetch(moto.endpoint + req.url, { method: "POST", headers: req.headers as Record<string, string>, body });
      res.writeHead(up.status, { "content-type": "text/xml" }).end(await up.text());
    });
    await new Promise<void>((ok) => proxy.listen(0, "127.0.0.1", ok));
    try {
      const validator = new Ec2ProfileValidator(
        ec2QueryClient({ ec2Endpoint: `http://127.0.0.1:${(proxy.address() as { port: number }).port}/` }),
      );
      inject = ["RequestLimitExceeded", "InternalError"];
      await expect(validator.validateFlavor({ compute_flavor: "t3.micro" })).resolves.toBeUndefined();
      expect(calls).toBe(3);
      calls = 0;
      inject = ["RequestLimitExceeded", "RequestLimitExceeded", "RequestLimitExceeded"];
      const e = await validator.validateAvailabilityZone({ compute_zone: "us-east-1a" }).catch((e: unknown) => e);
      expect(e).toMatchObject({ name: "RequestLimitExceeded" });
      expect(isUnavailable(e)).toBe(true);
      expect(calls).toBe(3);
      inject = [];
      await expect(validator.validateAvailabilityZone({ compute_zone: "us-east-1q" })).rejects.toEqual(
        new ProfileRefused("EC2 availability zone us-east-1q not found."),
      );
    } finally {
      await new Promise((ok) => proxy.close(ok));
    }
  });
});
