// Flavor and availability zone profiles checked against EC2 when they are made (Octavia's amphora
// driver's validate_flavor and validate_availability_zone), with OTTAVA_COMPUTE_DRIVER=ec2: the API in
// process over DynamoDB Local, its checks against moto (AMI and instance-type validation on). An
// unknown instance type, image tag, zone or subnet is a 400 with Octavia's text naming the AWS resource
// (Octavia answers 500: docs/api-compatibility.md), and nothing is written.
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { MOTO_CLIENT, ec2Bed, startMoto, type Ec2Bed, type Moto } from "@ottava/aws/testing";
import { SUBNET, fault, inProcessApp, pick } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
let moto: Moto;
let bed: Ec2Bed;
let t: App;
const FP = "/v2/lbaas/flavorprofiles";
const AZP = "/v2/lbaas/availabilityzoneprofiles";
const MISSING_SUBNET = "subnet-0123456789abcdef0";
const reports = (text: string, provider = "amphora") => fault(400, `Provider '${provider}' reports error: ${text}`);

beforeAll(async () => {
  moto = await startMoto();
  // The Region and credentials come from the environment, as in the API Lambda.
  vi.stubEnv("AWS_REGION", MOTO_CLIENT.region);
  vi.stubEnv("AWS_ACCESS_KEY_ID", MOTO_CLIENT.credentials.accessKeyId);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", MOTO_CLIENT.credentials.secretAccessKey);
  bed = await ec2Bed(moto, "198.18.32.0");
  await bed.taggedImage("amphora-ok");
  t = await inProcessApp({ OTTAVA_COMPUTE_DRIVER: "ec2", OTTAVA_EC2_ENDPOINT: moto.endpoint });
}, 120_000);
afterAll(async () => {
  vi.unstubAllEnvs();
  bed?.ec2.destroy();
  await moto?.stop();
});

let n = 0;
const flavorProfile = (flavorData: Record<string, unknown>, provider = "amphora") =>
  t.call("POST", FP, { flavorprofile: { name: `fp-${++n}`, provider_name: provider, flavor_data: JSON.stringify(flavorData) } });
const zoneProfile = (data: Record<string, unknown>) =>
  t.call("POST", AZP, {
    availability_zone_profile: { name: `azp-${++n}`, provider_name: "amphora", availability_zone_data: JSON.stringify(data) },
  });
const count = async (path: string, key: string) => ((await t.call("GET", path)).body[key] as unknown[]).length;

describe("flavor profiles with the ec2 compute driver", () => {
  it("refuses an unknown instance type or image tag with 400 and Octavia's text, writing nothing", async () => {
    const before = await count(FP, "flavorprofiles");
    expect(pick(await flavorProfile({ compute_flavor: "t9.nope" }))).toEqual(reports("EC2 instance type t9.nope not found."));
    expect(pick(await flavorProfile({ amp_image_tag: "no-such-tag" }))).toEqual(
      reports("Failed to find an image with tag no-such-tag due to: Failed to retrieve image with no-such-tag tag."),
    );
    // The type is checked first, as Octavia's validate_flavor; the provider is named as the request named it.
    expect(pick(await flavorProfile({ compute_flavor: "t9.nope", amp_image_tag: "no-such-tag" }, "octavia"))).toEqual(
      reports("EC2 instance type t9.nope not found.", "octavia"),
    );
    expect(await count(FP, "flavorprofiles")).toBe(before);
  });

  it("accepts an instance type and image tag EC2 has (201), and a profile that names neither", async () => {
    const res = await flavorProfile({ compute_flavor: "t3.small", amp_image_tag: "amphora-ok", loadbalancer_topology: "SINGLE" });
    expect(res.status).toBe(201);
    expect((await flavorProfile({ loadbalancer_topology: "ACTIVE_STANDBY" })).status).toBe(201);
  });

  it("refuses an update to an unknown value (400) and keeps the profile as it was", async () => {
    const made = (await flavorProfile({ compute_flavor: "t3.small" })).body.flavorprofile;
    const put = (data: Record<string, unknown>) =>
      t.call("PUT", `${FP}/${made.id}`, { flavorprofile: { flavor_data: JSON.stringify(data) } });
    expect(pick(await put({ compute_flavor: "m1.tiny" }))).toEqual(reports("EC2 instance type m1.tiny not found."));
    expect(pick(await put({ amp_image_tag: "gone" }))).toEqual(
      reports("Failed to find an image with tag gone due to: Failed to retrieve image with gone tag."),
    );
    expect((await t.call("GET", `${FP}/${made.id}`)).body.flavorprofile.flavor_data).toBe('{"compute_flavor":"t3.small"}');
    const ok = await put({ compute_flavor: "t3.medium", amp_image_tag: "amphora-ok" });
    expect(ok.status).toBe(200);
    expect(ok.body.flavorprofile.flavor_data).toBe('{"compute_flavor":"t3.medium","amp_image_tag":"amphora-ok"}');
  });
});

describe("availability zone profiles with the ec2 compute driver", () => {
  it("refuses an unknown zone or subnet with 400 and Octavia's text, writing nothing", async () => {
    const before = await count(AZP, "availability_zone_profiles");
    expect(pick(await zoneProfile({ compute_zone: "us-east-1z" }))).toEqual(reports("EC2 availability zone us-east-1z not found."));
    expect(pick(await zoneProfile({ management_network: MISSING_SUBNET }))).toEqual(
      reports(`subnet not found (subnet id: ${MISSING_SUBNET}).`),
    );
    expect(pick(await zoneProfile({ compute_zone: "us-east-1b", management_network: "not-a-subnet" }))).toEqual(
      reports("subnet not found (subnet id: not-a-subnet)."),
    );
    expect(await count(AZP, "availability_zone_profiles")).toBe(before);
  });

  it("accepts a zone of the Region and a subnet EC2 has (201), and refuses an update to an unknown one", async () => {
    const res = await zoneProfile({ compute_zone: "us-east-1b", management_network: bed.subnets["us-east-1b"] });
    expect(res.status).toBe(201);
    const id = res.body.availability_zone_profile.id as string;
    const put = await t.call("PUT", `${AZP}/${id}`, {
      availability_zone_profile: { availability_zone_data: '{"compute_zone": "eu-west-1a"}' },
    });
    expect(pick(put)).toEqual(reports("EC2 availability zone eu-west-1a not found."));
    expect((await t.call("GET", `${AZP}/${id}`)).body.availability_zone_profile.availability_zone_data).toContain("us-east-1b");
  });
});

describe("load balancers with the ec2 compute driver", () => {
  it("check the flavor's and the zone's profiles again when created, as Octavia does (an image untagged since: 400)", async () => {
    const image = await bed.taggedImage("short-lived");
    const fp = (await flavorProfile({ compute_flavor: "t3.small", amp_image_tag: "short-lived" })).body.flavorprofile;
    const flavor = (await t.call("POST", "/v2/lbaas/flavors", { flavor: { name: `f-${++n}`, flavor_profile_id: fp.id } })).body.flavor;
    const { DeleteTagsCommand } = await import("@aws-sdk/client-ec2");
    await bed.ec2.send(new DeleteTagsCommand({ Resources: [image], Tags: [{ Key: "ottava:amp-image-tag" }] }));
    const res = await t.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET, flavor_id: flavor.id } });
    expect(pick(res)).toEqual(
      reports("Failed to find an image with tag short-lived due to: Failed to retrieve image with short-lived tag."),
    );
    expect((await t.call("GET", `/v2/lbaas/loadbalancers?flavor_id=${flavor.id}`)).body.loadbalancers).toEqual([]);
  });
});

describe("EC2 unavailable", () => {
  it("answers 503 when EC2 throttles or fails (after the client's retries), and writes nothing", async () => {
    // An EC2 endpoint that answers every call as a throttled EC2 does, then one that answers 500.
    for (const [status, code] of [
      [503, "RequestLimitExceeded"],
      [500, "InternalError"],
    ] as const) {
      let calls = 0;
      const server = createServer((_req, res) => {
        calls++;
        res.writeHead(status, { "content-type": "text/xml" });
        res.end(`<?xml version="1.0"?><Response><Errors><Error><Code>${code}</Code><Message>m</Message></Error></Errors></Response>`);
      });
      await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
      try {
        const endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
        const other = await inProcessApp({ OTTAVA_COMPUTE_DRIVER: "ec2", OTTAVA_EC2_ENDPOINT: endpoint });
        const res = await other.call("POST", FP, {
          flavorprofile: { name: "x", provider_name: "amphora", flavor_data: '{"compute_flavor": "t3.small"}' },
        });
        expect(pick(res)).toEqual(fault(503, `The service is temporarily unavailable (${code}). Please retry the request later.`));
        expect(calls).toBe(3);
        expect((await other.call("GET", FP)).body.flavorprofiles).toEqual([]);
      } finally {
        await new Promise((ok) => server.close(ok));
      }
    }
  });
});

describe("the noop compute driver", () => {
  it("checks nothing against a cloud (as Octavia's no-op drivers)", async () => {
    const noop = await inProcessApp({ OTTAVA_EC2_ENDPOINT: "http://127.0.0.1:9/" });
    const res = await noop.call("POST", FP, {
      flavorprofile: { name: "x", provider_name: "amphora", flavor_data: '{"compute_flavor": "t9.nope"}' },
    });
    expect(res.status).toBe(201);
  });
});
