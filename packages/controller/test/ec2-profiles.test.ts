// What an amphora is built with, through the real flows (the API in process, the ASL in the local
// runner, DynamoDB Local) with the EC2 compute driver against moto: every build (load-balancer create,
// amphora failover, load-balancer failover, resize) passes what Octavia's ComputeCreate passes, the
// flavor profile's compute_flavor and amp_image_tag and the availability zone profile's compute_zone
// and management_network; without them, the settings' defaults.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Instance } from "@aws-sdk/client-ec2";
import { MOTO_CLIENT, ec2Bed, startMoto, type Ec2Bed, type Moto } from "@ottava/aws/testing";
import { SUBNET, inProcessApp } from "@ottava/local/testing";
import { createLocalCa } from "@ottava/controller";

type App = Awaited<ReturnType<typeof inProcessApp>>;
let moto: Moto;
let bed: Ec2Bed;
let t: App;
let defaultImage: string;
let flavorImage: string;
let n = 0;

beforeAll(async () => {
  moto = await startMoto();
  vi.stubEnv("AWS_REGION", MOTO_CLIENT.region);
  vi.stubEnv("AWS_ACCESS_KEY_ID", MOTO_CLIENT.credentials.accessKeyId);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", MOTO_CLIENT.credentials.secretAccessKey);
  bed = await ec2Bed(moto, "198.18.48.0");
  defaultImage = await bed.taggedImage("amphora-default");
  flavorImage = await bed.taggedImage("amphora-flavor");
  // The CA the amphorae's certificates are signed with, whose certificate their user data carries.
  const ca = await createLocalCa();
  t = await inProcessApp({
    OTTAVA_CA_CERTIFICATE: ca.certificate,
    OTTAVA_CA_PRIVATE_KEY: ca.privateKey,
    OTTAVA_COMPUTE_DRIVER: "ec2",
    OTTAVA_EC2_ENDPOINT: moto.endpoint,
    OTTAVA_SECRETSMANAGER_ENDPOINT: moto.endpoint,
    OTTAVA_AMP_IMAGE_TAG: "amphora-default",
    OTTAVA_AMP_FLAVOR_ID: "t3.micro",
    OTTAVA_AMP_BOOT_NETWORK_LIST: bed.subnets["us-east-1a"],
    OTTAVA_AMP_SECGROUP_LIST: bed.securityGroup,
    OTTAVA_STAGE: "flows",
  });
}, 120_000);
afterAll(async () => {
  vi.unstubAllEnvs();
  bed?.ec2.destroy();
  await moto?.stop();
});

async function flavor(data: Record<string, unknown>): Promise<string> {
  n++;
  const fp = await t.call("POST", "/v2/lbaas/flavorprofiles", {
    flavorprofile: { name: `fp-${n}`, provider_name: "amphora", flavor_data: JSON.stringify(data) },
  });
  expect(fp.status).toBe(201);
  const f = await t.call("POST", "/v2/lbaas/flavors", { flavor: { name: `f-${n}`, flavor_profile_id: fp.body.flavorprofile.id } });
  expect(f.status).toBe(201);
  return f.body.flavor.id;
}

async function zone(data: Record<string, unknown>): Promise<string> {
  n++;
  const azp = await t.call("POST", "/v2/lbaas/availabilityzoneprofiles", {
    availability_zone_profile: { name: `azp-${n}`, provider_name: "amphora", availability_zone_data: JSON.stringify(data) },
  });
  expect(azp.status).toBe(201);
  const az = await t.call("POST", "/v2/lbaas/availabilityzones", {
    availability_zone: { name: `az-${n}`, availability_zone_profile_id: azp.body.availability_zone_profile.id },
  });
  expect(az.status).toBe(201);
  return az.body.availability_zone.name;
}

async function activeLb(extra: Record<string, unknown>): Promise<string> {
  const res = await t.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET, ...extra } });
  expect(res.status).toBe(201);
  await t.settle();
  return waitActive(res.body.loadbalancer.id);
}

async function waitActive(id: string): Promise<string> {
  await t.settle();
  expect((await t.call("GET", `/v2/lbaas/loadbalancers/${id}`)).body.loadbalancer.provisioning_status).toBe("ACTIVE");
  return id;
}

const liveAmphorae = async (lbId: string) => (await t.store.amphoraeOf(lbId)).filter((a) => a.status !== "DELETED");

/** The running instance of each of the LB's amphorae, with its record. */
async function instancesOf(
  lbId: string,
): Promise<{ compute_id: string; cached_zone: string | null; image_id: string | null; instance: Instance }[]> {
  const running = new Map((await bed.instances()).map((i) => [i.InstanceId!, i]));
  return (await liveAmphorae(lbId)).map((a) => ({
    compute_id: a.compute_id!,
    cached_zone: a.cached_zone,
    image_id: a.image_id,
    instance: running.get(a.compute_id!)!,
  }));
}

/** What an instance was built with: its type, image, subnet and zone. */
const builtWith = (i: Instance | undefined) => ({
  type: i?.InstanceType,
  image: i?.ImageId,
  subnet: i?.SubnetId,
  zone: i?.Placement?.AvailabilityZone,
});

describe("amphora builds on EC2 take their flavor's and zone's profiles", () => {
  let special: string;
  let zoneB: string;

  beforeAll(async () => {
    special = await flavor({ compute_flavor: "t3.small", amp_image_tag: "amphora-flavor", loadbalancer_topology: "ACTIVE_STANDBY" });
    zoneB = await zone({ compute_zone: "us-east-1b", management_network: bed.subnets["us-east-1b"] });
  });

  it("create: without a flavor or zone, the settings' type, image and subnet", async () => {
    const lb = await activeLb({});
    const [amp] = await instancesOf(lb);
    expect(builtWith(amp!.instance)).toEqual({
      type: "t3.micro",
      image: defaultImage,
      subnet: bed.subnets["us-east-1a"],
      zone: "us-east-1a",
    });
    expect(amp).toMatchObject({ image_id: defaultImage, cached_zone: "us-east-1a" });
  });

  it("create, amphora failover, load-balancer failover: the flavor's type and image tag, the zone's subnet and zone", async () => {
    const expected = { type: "t3.small", image: flavorImage, subnet: bed.subnets["us-east-1b"], zone: "us-east-1b" };
    const lb = await activeLb({ flavor_id: special, availability_zone: zoneB });
    const created = await instancesOf(lb);
    expect(created).toHaveLength(2);
    for (const a of created) expect(builtWith(a.instance)).toEqual(expected);
    expect(created.every((a) => a.cached_zone === "us-east-1b" && a.image_id === flavorImage)).toBe(true);

    // Amphora failover: one new instance, built the same way; the old one terminated.
    const old = created[0]!.compute_id;
    const amp = (await liveAmphorae(lb)).find((a) => a.compute_id === old)!;
    expect((await t.call("PUT", `/v2/octavia/amphorae/${amp.id}/failover`)).status).toBe(202);
    await waitActive(lb);
    const afterAmp = await instancesOf(lb);
    expect(afterAmp.map((a) => a.compute_id)).not.toContain(old);
    for (const a of afterAmp) expect(builtWith(a.instance)).toEqual(expected);

    // Load-balancer failover: both amphorae new, built the same way.
    const before = new Set(afterAmp.map((a) => a.compute_id));
    expect((await t.call("PUT", `/v2/lbaas/loadbalancers/${lb}/failover`)).status).toBe(202);
    await waitActive(lb);
    const afterLb = await instancesOf(lb);
    expect(afterLb).toHaveLength(2);
    expect(afterLb.filter((a) => before.has(a.compute_id))).toEqual([]);
    for (const a of afterLb) expect(builtWith(a.instance)).toEqual(expected);
    // Only the LB's two current instances run of those made for it.
    const running = new Set((await bed.instances()).map((i) => i.InstanceId));
    expect([...before, old].filter((id) => running.has(id))).toEqual([]);
  });

  it("resize: the new flavor's instance type and image tag, in the zone's subnet", async () => {
    const small = await flavor({ compute_flavor: "t3.small", loadbalancer_topology: "SINGLE" });
    const large = await flavor({ compute_flavor: "t3.large", amp_image_tag: "amphora-flavor", loadbalancer_topology: "SINGLE" });
    const lb = await activeLb({ flavor_id: small, availability_zone: zoneB });
    const [before] = await instancesOf(lb);
    expect(builtWith(before!.instance)).toMatchObject({ type: "t3.small", image: defaultImage, subnet: bed.subnets["us-east-1b"] });
    expect((await t.call("PUT", `/v2/lbaas/loadbalancers/${lb}/resize`, { new_flavor_id: large })).status).toBe(202);
    await waitActive(lb);
    const after = await instancesOf(lb);
    expect(after).toHaveLength(1);
    expect(after[0]!.compute_id).not.toBe(before!.compute_id);
    expect(builtWith(after[0]!.instance)).toEqual({
      type: "t3.large",
      image: flavorImage,
      subnet: bed.subnets["us-east-1b"],
      zone: "us-east-1b",
    });
    expect((await t.call("GET", `/v2/lbaas/loadbalancers/${lb}`)).body.loadbalancer.flavor_id).toBe(large);
  });
});
