// Housekeeping's orphan sweep with OTTAVA_COMPUTE_DRIVER=ec2, through the jobs' own wiring
// (createHousekeepingDeps, sweep), against moto behind the test proxy (placement groups) and DynamoDB
// Local: what the EC2 driver made for an amphora or a load balancer that is gone is removed; what a
// live one owns, or another stage made, is left; a second pass removes nothing.
import {
  AttachNetworkInterfaceCommand,
  CreateNetworkInterfaceCommand,
  CreatePlacementGroupCommand,
  CreateSecurityGroupCommand,
  DescribeInstancesCommand,
  DescribeNetworkInterfacesCommand,
  DescribeSecurityGroupsCommand,
  EC2Client,
  RunInstancesCommand,
  type Tag,
} from "@aws-sdk/client-ec2";
import {
  AMPHORA_TAG_KEY,
  AmphoraSecrets,
  CREATED_AT_TAG_KEY,
  Ec2ComputeDriver,
  LOAD_BALANCER_TAG_KEY,
  STAGE_TAG_KEY,
  amphoraSecretName,
} from "@ottava/aws";
import {
  MOTO_CLIENT,
  buildRequest,
  ec2DriverOptions,
  ec2Fixture,
  motoSecretsManager,
  startEc2Proxy,
  startMoto,
  type Ec2Fixture,
  type Ec2Proxy,
  type Moto,
  awsCallsMissingFromRecord,
  recordedAwsCalls,
} from "@ottava/aws/testing";
import { amphoraOrphanReason, type Amphora } from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { createHousekeepingDeps, createLocalCa, sweep } from "@ottava/controller";
import { inProcessApp, SUBNET } from "@ottava/local/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

const STAGE = "sweep";
let moto: Moto;
let proxy: Ec2Proxy;
let ec2: EC2Client;
let fx: Ec2Fixture;
let t: Awaited<ReturnType<typeof inProcessApp>>;

beforeAll(async () => {
  moto = await startMoto();
  // Its Secrets Manager calls, by workload, for the IAM record (recordedAwsCalls).
  await moto.record();
  proxy = await startEc2Proxy(moto.endpoint);
  ec2 = new EC2Client({ ...MOTO_CLIENT, endpoint: proxy.endpoint });
  fx = await ec2Fixture(ec2, "198.18.80.0/20");
  await fx.taggedImage("amphora", "amphora");
  vi.stubEnv("AWS_REGION", MOTO_CLIENT.region);
  vi.stubEnv("AWS_ACCESS_KEY_ID", MOTO_CLIENT.credentials.accessKeyId);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", MOTO_CLIENT.credentials.secretAccessKey);
  const ca = await createLocalCa();
  t = await inProcessApp(
    {
      OTTAVA_CA_CERTIFICATE: ca.certificate,
      OTTAVA_CA_PRIVATE_KEY: ca.privateKey,
      OTTAVA_COMPUTE_DRIVER: "ec2",
      OTTAVA_EC2_ENDPOINT: proxy.endpoint,
      OTTAVA_SECRETSMANAGER_ENDPOINT: moto.endpoint,
      OTTAVA_STAGE: STAGE,
      OTTAVA_AMP_IMAGE_TAG: "amphora",
      OTTAVA_AMP_FLAVOR_ID: "t3.micro",
      OTTAVA_AMP_BOOT_NETWORK_LIST: fx.subnets["us-east-1a"]!,
      OTTAVA_AMP_SECGROUP_LIST: fx.securityGroup,
    },
    { retryIntervalMs: 10 },
  );
}, 120_000);
afterAll(async () => {
  vi.unstubAllEnvs();
  ec2?.destroy();
  await proxy?.stop();
  await moto?.stop();
});

/** A driver of `stage` on the same EC2 and Secrets Manager, to make resources as a crashed flow leaves them. */
const driverOf = (stage: string) =>
  new Ec2ComputeDriver(
    ec2,
    {
      stage,
      ampImageTag: "amphora",
      ampBaseImageId: undefined,
      ampFlavorId: "t3.micro",
      ampBootNetworkList: [fx.subnets["us-east-1a"]!],
      ampSecgroupList: [fx.securityGroup],
      secretsmanagerEndpoint: moto.endpoint,
      ampInstanceProfile: undefined,
    },
    ec2DriverOptions(moto),
  );

async function liveInstances(): Promise<string[]> {
  const out = await ec2.send(
    new DescribeInstancesCommand({ Filters: [{ Name: "instance-state-name", Values: ["pending", "running", "stopping", "stopped"] }] }),
  );
  return (out.Reservations ?? [])
    .flatMap((r) => r.Instances ?? [])
    .map((i) => i.InstanceId!)
    .sort();
}

async function secretExists(name: string): Promise<boolean> {
  try {
    await motoSecretsManager(moto)("DescribeSecret", { SecretId: name }, "test DescribeSecret");
    return true;
  } catch (e) {
    if ((e as Error).name === "ResourceNotFoundException") return false;
    throw e;
  }
}

describe("the orphan sweep (OTTAVA_COMPUTE_DRIVER=ec2)", () => {
  it("removes what a gone amphora or load balancer owned, keeps what a live one owns and what another stage made", async () => {
    // A live load balancer: its amphora's instance and secret are owned.
    const created = await t.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET } });
    expect(created.status).toBe(201);
    const lbId = created.body.loadbalancer.id as string;
    await t.settle();
    expect((await t.store.getLoadBalancer(lbId))?.record.provisioning_status).toBe("ACTIVE");
    const [amphora] = await t.store.amphoraeOf(lbId);
    const owned = amphora!.compute_id!;

    // As a crash leaves them: an instance and its secret for an amphora with no record, a lone secret,
    // and a placement group of a load balancer that does not exist; and another stage's instance.
    const lost = buildRequest({ serverPem: "x", agentConfig: "y" });
    const lostInstance = await driverOf(STAGE).build(lost);
    const loneSecret = amphoraSecretName(STAGE, crypto.randomUUID());
    await new AmphoraSecrets(motoSecretsManager(moto)).create(loneSecret, { server_pem: "x", agent_conf: "y" }, []);
    const goneLb = crypto.randomUUID();
    const group = `ottava-${STAGE}-lb-${goneLb}`;
    await ec2.send(
      new CreatePlacementGroupCommand({
        GroupName: group,
        Strategy: "spread",
        TagSpecifications: [
          {
            ResourceType: "placement-group",
            Tags: [
              { Key: STAGE_TAG_KEY, Value: STAGE },
              { Key: LOAD_BALANCER_TAG_KEY, Value: goneLb },
            ],
          },
        ],
      }),
    );
    const other = buildRequest({ serverPem: "x", agentConfig: "y" });
    const otherInstance = await driverOf("another-stage").build(other);

    const deps = createHousekeepingDeps(t.config, t.engine, createLogger({ service: "test" }, "error"), metrics);
    const result = await sweep(deps);
    expect(result.removed.map((r) => `${r.kind} ${r.id}`).sort()).toEqual(
      [
        `instance ${lostInstance}`,
        `secret ${amphoraSecretName(STAGE, lost.amphoraId)}`,
        `secret ${loneSecret}`,
        `placement-group ${group}`,
      ].sort(),
    );
    expect(result.checked).toBe(6); // the live amphora's instance and secret besides
    expect(await liveInstances()).toEqual([owned, otherInstance].sort());
    expect(await secretExists(amphoraSecretName(STAGE, amphora!.id))).toBe(true);
    expect(await secretExists(amphoraSecretName(STAGE, lost.amphoraId))).toBe(false);
    expect(await secretExists(loneSecret)).toBe(false);
    expect(await secretExists(amphoraSecretName("another-stage", other.amphoraId))).toBe(true);
    expect(proxy.placementGroups.has(group)).toBe(false);

    // A second pass finds nothing more to remove.
    expect((await sweep(deps)).removed).toEqual([]);

    // The load balancer's delete removes its own: nothing is left for the sweep.
    expect((await t.call("DELETE", `/v2/lbaas/loadbalancers/${lbId}`)).status).toBe(204);
    await t.settle();
    expect(await liveInstances()).toEqual([otherInstance]);
    expect(await sweep(deps)).toEqual({ checked: 0, removed: [] });
  }, 120_000);
});

describe("the orphan sweep of the vpc network driver's ENIs and security groups", () => {
  const tags = (over: Record<string, string>): Tag[] =>
    Object.entries({ [STAGE_TAG_KEY]: STAGE, ...over }).map(([Key, Value]) => ({ Key, Value }));
  const longAgo = new Date(Date.now() - 3_600_000).toISOString();
  const subnet = () => fx.subnets["us-east-1a"]!;
  const eni = async (over: Record<string, string>) =>
    (
      await ec2.send(
        new CreateNetworkInterfaceCommand({
          SubnetId: subnet(),
          TagSpecifications: [{ ResourceType: "network-interface", Tags: tags(over) }],
        }),
      )
    ).NetworkInterface!.NetworkInterfaceId!;
  const eniExists = async (id: string) =>
    (
      (await ec2.send(new DescribeNetworkInterfacesCommand({ Filters: [{ Name: "network-interface-id", Values: [id] }] })))
        .NetworkInterfaces ?? []
    ).length > 0;

  it("removes a gone amphora's ENI (detached first), a gone load balancer's reservation ENI and group; leaves a young one whose load balancer is still being written", async () => {
    const vpcId = (await ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [fx.securityGroup] }))).SecurityGroups![0]!.VpcId!;
    const goneLb = crypto.randomUUID();
    const newLb = crypto.randomUUID();
    const group = async (lb: string, createdAt: string) =>
      (
        await ec2.send(
          new CreateSecurityGroupCommand({
            GroupName: `ottava-${STAGE}-lb-${lb}`,
            Description: "test",
            VpcId: vpcId,
            TagSpecifications: [
              { ResourceType: "security-group", Tags: tags({ [LOAD_BALANCER_TAG_KEY]: lb, [CREATED_AT_TAG_KEY]: createdAt }) },
            ],
          }),
        )
      ).GroupId!;
    const goneGroup = await group(goneLb, longAgo);
    const youngGroup = await group(newLb, new Date().toISOString());
    const goneReservation = await eni({ [LOAD_BALANCER_TAG_KEY]: goneLb, [CREATED_AT_TAG_KEY]: longAgo });
    const youngReservation = await eni({ [LOAD_BALANCER_TAG_KEY]: newLb, [CREATED_AT_TAG_KEY]: new Date().toISOString() });
    // An amphora's ENI, still attached to the instance a crash left (its amphora has no record).
    const lost = buildRequest({ serverPem: "x", agentConfig: "y" });
    const instance = await driverOf(STAGE).build(lost);
    const amphoraEni = await eni({ [AMPHORA_TAG_KEY]: lost.amphoraId, [LOAD_BALANCER_TAG_KEY]: goneLb });
    await ec2.send(new AttachNetworkInterfaceCommand({ NetworkInterfaceId: amphoraEni, InstanceId: instance, DeviceIndex: 1 }));

    const deps = createHousekeepingDeps(t.config, t.engine, createLogger({ service: "test" }, "error"), metrics);
    const first = (await sweep(deps)).removed.map((r) => `${r.kind} ${r.id}`);
    expect(first).toEqual(
      expect.arrayContaining([`network-interface ${goneReservation}`, `network-interface ${amphoraEni}`, `security-group ${goneGroup}`]),
    );
    expect(first.join()).not.toContain(youngReservation);
    expect(first.join()).not.toContain(youngGroup);
    expect(await eniExists(goneReservation)).toBe(false);
    // The attached ENI was detached by the first pass, and is deleted by the next.
    expect(await eniExists(amphoraEni)).toBe(true);
    await sweep(deps);
    expect(await eniExists(amphoraEni)).toBe(false);
    expect(await eniExists(youngReservation)).toBe(true);
    const groups = (
      await ec2.send(new DescribeSecurityGroupsCommand({ Filters: [{ Name: `tag:${STAGE_TAG_KEY}`, Values: [STAGE] }] }))
    ).SecurityGroups!.map((g) => g.GroupId);
    expect(groups).toEqual([youngGroup]);
    // OTTAVA_ORPHAN_GRACE_SEC: once the young ones are older than it, they go too.
    await new Promise((r) => setTimeout(r, 1100));
    const late = (await sweep({ ...deps, config: { ...deps.config, orphanGraceSec: 1 } })).removed.map((r) => r.id);
    expect(late.sort()).toEqual([youngGroup, youngReservation].sort());
    expect(await eniExists(youngReservation)).toBe(false);
  }, 120_000);
});

describe("the orphan sweep of a deleted load balancer's instance and group", () => {
  it("removes both; a live load balancer's instance and group stay, and so do untagged ones", async () => {
    const vpcId = (await ec2.send(new DescribeSecurityGroupsCommand({ GroupIds: [fx.securityGroup] }))).SecurityGroups![0]!.VpcId!;
    const longAgo = new Date(Date.now() - 3_600_000).toISOString();
    const group = async (name: string, tags: Tag[]) =>
      (
        await ec2.send(
          new CreateSecurityGroupCommand({
            GroupName: name,
            Description: "test",
            VpcId: vpcId,
            ...(tags.length ? { TagSpecifications: [{ ResourceType: "security-group" as const, Tags: tags }] } : {}),
          }),
        )
      ).GroupId!;
    const lbGroup = (lb: string) =>
      group(`ottava-${STAGE}-lb-${lb}`, [
        { Key: STAGE_TAG_KEY, Value: STAGE },
        { Key: LOAD_BALANCER_TAG_KEY, Value: lb },
        { Key: CREATED_AT_TAG_KEY, Value: longAgo },
      ]);
    // A live load balancer: its amphora's instance, and a group of its own.
    const created = await t.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET } });
    expect(created.status).toBe(201);
    const liveLb = created.body.loadbalancer.id as string;
    await t.settle();
    const liveInstance = (await t.store.amphoraeOf(liveLb))[0]!.compute_id!;
    const liveGroup = await lbGroup(liveLb);
    // A deleted load balancer (its records purged): the instance of its amphora and its group, as a crash left them.
    const deletedLb = crypto.randomUUID();
    const lost = buildRequest({ serverPem: "x", agentConfig: "y", loadBalancerId: deletedLb });
    const deletedInstance = await driverOf(STAGE).build(lost);
    const deletedGroup = await lbGroup(deletedLb);
    // Untagged: not Ottava's.
    const untaggedInstance = (await ec2.send(new RunInstancesCommand({ ImageId: fx.publicAmi, MinCount: 1, MaxCount: 1 }))).Instances![0]!
      .InstanceId!;
    const untaggedGroup = await group(`not-ottava-${crypto.randomUUID()}`, []);

    const deps = createHousekeepingDeps(t.config, t.engine, createLogger({ service: "test" }, "error"), metrics);
    expect((await sweep(deps)).removed.map((r) => `${r.kind} ${r.id}`).sort()).toEqual(
      [`instance ${deletedInstance}`, `secret ${amphoraSecretName(STAGE, lost.amphoraId)}`, `security-group ${deletedGroup}`].sort(),
    );
    const running = await liveInstances();
    expect(running).toEqual(expect.arrayContaining([liveInstance, untaggedInstance]));
    expect(running).not.toContain(deletedInstance);
    const groups = (
      await ec2.send(new DescribeSecurityGroupsCommand({ Filters: [{ Name: "vpc-id", Values: [vpcId] }] }))
    ).SecurityGroups!.map((g) => g.GroupId);
    expect(groups).toEqual(expect.arrayContaining([liveGroup, untaggedGroup, fx.securityGroup]));
    expect(groups).not.toContain(deletedGroup);
  }, 120_000);
});

describe("which resource has no owner (core's rule)", () => {
  const amphora = (over: Partial<Amphora>) => ({ status: "ALLOCATED", compute_id: "i-1", ...over }) as Amphora;
  const instance = { kind: "instance", id: "i-1", amphoraId: "a" };
  const secret = { kind: "secret", id: "ottava/s/amphora/a", amphoraId: "a" };

  it("an instance: its amphora gone, DELETED, on another instance, or in ERROR without one; never while it is being built", () => {
    expect(amphoraOrphanReason(instance, undefined)).toBe("its amphora no longer exists");
    expect(amphoraOrphanReason(instance, amphora({ status: "DELETED" }))).toBe("its amphora is DELETED");
    expect(amphoraOrphanReason(instance, amphora({ compute_id: "i-2" }))).toBe("its amphora runs on i-2");
    expect(amphoraOrphanReason(instance, amphora({ status: "ERROR", compute_id: null }))).toBe("its amphora is in ERROR without it");
    expect(amphoraOrphanReason(instance, amphora({}))).toBeUndefined();
    expect(amphoraOrphanReason(instance, amphora({ status: "ERROR" }))).toBeUndefined(); // an admin deletes it
    expect(amphoraOrphanReason(instance, amphora({ status: "PENDING_CREATE", compute_id: null }))).toBeUndefined();
    expect(amphoraOrphanReason(instance, amphora({ status: "BOOTING", compute_id: null }))).toBeUndefined();
  });

  it("a secret: only its amphora gone or DELETED", () => {
    expect(amphoraOrphanReason(secret, undefined)).toBe("its amphora no longer exists");
    expect(amphoraOrphanReason(secret, amphora({ status: "DELETED" }))).toBe("its amphora is DELETED");
    expect(amphoraOrphanReason(secret, amphora({ compute_id: "i-2" }))).toBeUndefined();
    expect(amphoraOrphanReason(secret, amphora({ status: "ERROR", compute_id: null }))).toBeUndefined();
  });
});

it("called only the EC2 and Secrets Manager actions the IAM record holds for each workload (test/fixtures/aws-calls.json)", async () => {
  await t.settle();
  expect(awsCallsMissingFromRecord(await recordedAwsCalls({ moto, proxy }))).toEqual([]);
});
