// The flows with OTTAVA_COMPUTE_DRIVER=ec2 (the no-op network and amphora drivers), through the real API,
// the real ASL in the local runner and DynamoDB Local, against moto behind the test proxy
// (@ottava/aws/testing: ClientToken idempotency, placement groups, instances not found then pending,
// injected faults): what RunInstances is asked; the compute wait, retried and bounded; failover and
// resize booting new instances and terminating the old; anti-affinity's placement group; EC2's faults
// ending in ACTIVE or ERROR with nothing left running; and the new tasks run twice.
import { DescribeInstancesCommand, EC2Client, type Instance } from "@aws-sdk/client-ec2";
import { AMPHORA_TAG_KEY, LOAD_BALANCER_TAG_KEY, STAGE_TAG_KEY } from "@ottava/aws";
import {
  INTERNAL_ERROR,
  MOTO_CLIENT,
  THROTTLED,
  ec2Fixture,
  startEc2Proxy,
  startMoto,
  type Ec2Fixture,
  type Ec2Proxy,
  type Moto,
  awsCallsMissingFromRecord,
  recordedAwsCalls,
} from "@ottava/aws/testing";
import type { Logger } from "@ottava/core";
import { createLocalCa } from "@ottava/controller";
import type { TaskDecorator } from "@ottava/local/runner";
import { inProcessApp, SUBNET } from "@ottava/local/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";

type App = Awaited<ReturnType<typeof inProcessApp>>;

const STAGE = "flows";
const RETRIES = 3;
const LBS = "/v2/lbaas/loadbalancers";
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

let moto: Moto;
let proxy: Ec2Proxy;
/** A client straight to moto: what the test reads of EC2 is neither recorded nor rewritten by the proxy. */
let ec2: EC2Client;
let fx: Ec2Fixture;
let olderAmi: string;
let newerAmi: string;
/** The app with anti-affinity on, and one with it off. */
let app: App;
let plain: App;
const flavors: Record<string, string> = {};

/** The task state to run twice each time, or to fail after its work the first time (as the idempotency test does). */
const twice = { state: "", mode: "twice" as "twice" | "throwAfter", hits: 0 };
const decorateTask: TaskDecorator = (call, invoke) => async (input) => {
  if (call.state !== twice.state) return invoke(input);
  twice.hits++;
  if (twice.mode === "twice") {
    await invoke(input);
    return invoke(input);
  }
  // throwAfter: the first run's work is done, its answer lost; the flow's Retry runs it again.
  if (twice.hits > 1) return invoke(input);
  await invoke(input);
  throw Object.assign(new Error(`injected after ${call.state}'s work`), { name: "TransientError" });
};

beforeAll(async () => {
  moto = await startMoto();
  // Its Secrets Manager calls, by workload, for the IAM record (recordedAwsCalls).
  await moto.record();
  proxy = await startEc2Proxy(moto.endpoint);
  ec2 = new EC2Client({ ...MOTO_CLIENT, endpoint: moto.endpoint });
  fx = await ec2Fixture(ec2, "198.18.32.0/20");
  olderAmi = await fx.taggedImage("amphora", "amphora-older");
  newerAmi = await fx.taggedImage("amphora", "amphora-newer");
  // The driver's client takes the Region and credentials from the environment, as in a Lambda function.
  vi.stubEnv("AWS_REGION", MOTO_CLIENT.region);
  vi.stubEnv("AWS_ACCESS_KEY_ID", MOTO_CLIENT.credentials.accessKeyId);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", MOTO_CLIENT.credentials.secretAccessKey);
  // The CA the amphorae's certificates are signed with, whose certificate their user data carries.
  const ca = await createLocalCa();
  const env = {
    OTTAVA_CA_CERTIFICATE: ca.certificate,
    OTTAVA_CA_PRIVATE_KEY: ca.privateKey,
    OTTAVA_COMPUTE_DRIVER: "ec2",
    OTTAVA_EC2_ENDPOINT: proxy.endpoint,
    OTTAVA_SECRETSMANAGER_ENDPOINT: moto.endpoint,
    OTTAVA_STAGE: STAGE,
    OTTAVA_AMP_IMAGE_TAG: "amphora",
    OTTAVA_AMP_FLAVOR_ID: "t3.micro",
    OTTAVA_AMP_BOOT_NETWORK_LIST: `${fx.subnets["us-east-1a"]},${fx.subnets["us-east-1b"]}`,
    OTTAVA_AMP_SECGROUP_LIST: fx.securityGroup,
    OTTAVA_AMP_ACTIVE_RETRIES: String(RETRIES),
    OTTAVA_AMP_ACTIVE_WAIT_SEC: "1",
  };
  app = await inProcessApp({ ...env, OTTAVA_ENABLE_ANTI_AFFINITY: "true" }, { retryIntervalMs: 10, decorateTask });
  plain = await inProcessApp(env, { retryIntervalMs: 10 });
  // The failing flows' failure handlers log at ERROR, by design: not in this test's output.
  app.tasks.log = plain.tasks.log = silent;
  const flavor = async (name: string, data: Record<string, unknown>) => {
    const fp = await app.call("POST", "/v2/lbaas/flavorprofiles", {
      flavorprofile: { name, provider_name: "amphora", flavor_data: JSON.stringify(data) },
    });
    const f = await app.call("POST", "/v2/lbaas/flavors", { flavor: { name, flavor_profile_id: fp.body.flavorprofile.id, enabled: true } });
    return f.body.flavor.id as string;
  };
  flavors.ha = await flavor("ha", { loadbalancer_topology: "ACTIVE_STANDBY" });
  flavors.haLarge = await flavor("ha-large", { loadbalancer_topology: "ACTIVE_STANDBY", compute_flavor: "t3.large" });
  const haPlain = await plain.call("POST", "/v2/lbaas/flavorprofiles", {
    flavorprofile: { name: "ha", provider_name: "amphora", flavor_data: JSON.stringify({ loadbalancer_topology: "ACTIVE_STANDBY" }) },
  });
  flavors.haPlain = (
    await plain.call("POST", "/v2/lbaas/flavors", {
      flavor: { name: "ha", flavor_profile_id: haPlain.body.flavorprofile.id, enabled: true },
    })
  ).body.flavor.id;
}, 120_000);
afterAll(async () => {
  vi.unstubAllEnvs();
  ec2?.destroy();
  await proxy?.stop();
  await moto?.stop();
});
beforeEach(() => {
  proxy.reset();
  Object.assign(twice, { state: "", mode: "twice", hits: 0 });
});

// ---- helpers ----

async function create(t: App, ha: boolean, flavorId = ha ? flavors.ha : undefined) {
  const res = await t.call("POST", LBS, {
    loadbalancer: { name: "lb", vip_subnet_id: SUBNET, ...(flavorId ? { flavor_id: flavorId } : {}) },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await t.settle();
  return res.body.loadbalancer.id as string;
}
async function act(t: App, method: string, path: string, body?: unknown) {
  const res = await t.call(method, path, body);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  await t.settle();
}
const statusOf = async (t: App, lbId: string) => (await t.store.getLoadBalancer(lbId))?.record.provisioning_status;
const lbRecord = async (t: App, lbId: string) => (await t.store.getLoadBalancer(lbId))!.record;
const liveAmphorae = async (t: App, lbId: string) => (await t.store.amphoraeOf(lbId)).filter((a) => a.status !== "DELETED");

/** Every instance of the stage EC2 has for this load balancer, as moto has it. */
async function instancesOf(lbId: string): Promise<Instance[]> {
  const out = await ec2.send(
    new DescribeInstancesCommand({
      Filters: [
        { Name: `tag:${STAGE_TAG_KEY}`, Values: [STAGE] },
        { Name: `tag:${LOAD_BALANCER_TAG_KEY}`, Values: [lbId] },
      ],
    }),
  );
  return out.Reservations!.flatMap((r) => r.Instances!);
}
/** The ids of the load balancer's instances that are not terminated. */
const running = async (lbId: string) =>
  (await instancesOf(lbId))
    .filter((i) => i.State?.Name !== "terminated")
    .map((i) => i.InstanceId!)
    .sort();
const launches = () => proxy.calls.filter((c) => c.action === "RunInstances" && c.status === 200).map((c) => c.params);
const groupName = (lbId: string) => `ottava-${STAGE}-lb-${lbId}`;

/** The end state a test compares across runs: the LB, its amphorae, what runs in EC2, its placement group. */
async function endState(t: App, lbId: string) {
  const amphorae = await liveAmphorae(t, lbId);
  const lb = await t.store.getLoadBalancer(lbId);
  const live = await running(lbId);
  return {
    status: lb?.record.provisioning_status,
    serverGroup: lb?.record.server_group_id ?? null,
    amphorae: amphorae.map((a) => [a.role, a.status]).sort(),
    instances: live.length,
    // Each amphora's instance is running, and nothing else runs.
    matched: amphorae.map((a) => a.compute_id).filter((id) => id && live.includes(id)).length,
    group: proxy.placementGroups.has(groupName(lbId)),
  };
}

// ---- create ----

describe("create with the EC2 compute driver", () => {
  it("reaches ACTIVE; RunInstances gets the newest tagged AMI, the type, the subnet, the groups, the tags, IMDSv2 and the amphora id as ClientToken", async () => {
    const lbId = await create(app, false);
    expect(await statusOf(app, lbId)).toBe("ACTIVE");
    const [amp] = await liveAmphorae(app, lbId);
    expect(launches()).toHaveLength(1);
    const p = launches()[0]!;
    expect(p).toMatchObject({
      ImageId: newerAmi,
      InstanceType: "t3.micro",
      MinCount: "1",
      MaxCount: "1",
      ClientToken: amp!.id,
      SubnetId: fx.subnets["us-east-1a"],
      "SecurityGroupId.1": fx.securityGroup,
      "MetadataOptions.HttpEndpoint": "enabled",
      "MetadataOptions.HttpTokens": "required",
      "MetadataOptions.HttpPutResponseHopLimit": "1",
    });
    expect(p.ImageId).not.toBe(olderAmi);
    expect(p["Placement.GroupName"]).toBeUndefined(); // SINGLE: no anti-affinity group
    const tags = Object.fromEntries(
      [1, 2, 3, 4].map((i) => [p[`TagSpecification.1.Tag.${i}.Key`], p[`TagSpecification.1.Tag.${i}.Value`]]),
    );
    expect(tags).toEqual({ Name: `amphora-${amp!.id}`, [STAGE_TAG_KEY]: STAGE, [AMPHORA_TAG_KEY]: amp!.id, [LOAD_BALANCER_TAG_KEY]: lbId });
    // What the amphora record keeps of the instance.
    const [instance] = await instancesOf(lbId);
    expect(amp).toMatchObject({
      status: "ALLOCATED",
      compute_id: instance!.InstanceId,
      lb_network_ip: instance!.PrivateIpAddress,
      image_id: newerAmi,
      compute_flavor: "t3.micro",
      cached_zone: "us-east-1a",
    });
    expect(amp!.lb_network_ip).toMatch(/^198\.18\.32\./);
    expect(proxy.calls.some((c) => c.action.includes("PlacementGroup"))).toBe(false);
  });

  it("waits for the instance: NotFound once, then pending, are asked again until it runs", async () => {
    proxy.boot({ notFoundOnce: true, pendingDescribes: 1 });
    const lbId = await create(app, false);
    expect(await statusOf(app, lbId)).toBe("ACTIVE");
    const [amp] = await liveAmphorae(app, lbId);
    const describes = proxy.calls.filter((c) => c.action === "DescribeInstances" && c.params["InstanceId.1"] === amp!.compute_id);
    // NotFound, pending, running: three runs of ComputeWait, with a Wait of OTTAVA_AMP_ACTIVE_WAIT_SEC between them.
    expect(describes.map((c) => c.status)).toEqual([400, 200, 200]);
    expect(amp!.lb_network_ip).toBeTruthy();
  });

  it("gives up after OTTAVA_AMP_ACTIVE_RETRIES on an instance that never runs: ERROR, and nothing left running", async () => {
    proxy.boot({ pendingDescribes: Infinity });
    const lbId = await create(app, false);
    expect(await statusOf(app, lbId)).toBe("ERROR");
    const ids = (await instancesOf(lbId)).map((i) => i.InstanceId!);
    expect(ids).toHaveLength(1);
    expect(proxy.calls.filter((c) => c.action === "DescribeInstances" && c.params["InstanceId.1"] === ids[0])).toHaveLength(RETRIES);
    expect(proxy.params("TerminateInstances").map((p) => p["InstanceId.1"])).toEqual(ids);
    expect(await running(lbId)).toEqual([]);
    expect((await app.store.amphoraeOf(lbId)).map((a) => a.status)).not.toContain("ALLOCATED");
  });
});

// ---- failover and resize; anti-affinity ----

describe("an ACTIVE_STANDBY load balancer on EC2, anti-affinity on", () => {
  it("create makes its spread group and boots both amphorae in it; failovers and a resize boot new instances into it and terminate the old; delete removes it all", async () => {
    const lbId = await create(app, true);
    expect(await statusOf(app, lbId)).toBe("ACTIVE");
    const group = groupName(lbId);
    expect((await lbRecord(app, lbId)).server_group_id).toBe(group);
    expect(proxy.placementGroups.get(group)).toMatchObject({
      strategy: "spread",
      tags: { [STAGE_TAG_KEY]: STAGE, [LOAD_BALANCER_TAG_KEY]: lbId },
    });
    // The group is made before the first build (EC2 refuses a launch into an unknown group).
    const actions = proxy.calls.map((c) => c.action);
    expect(actions.indexOf("CreatePlacementGroup")).toBeLessThan(actions.indexOf("RunInstances"));
    expect(launches().map((p) => p["Placement.GroupName"])).toEqual([group, group]);
    const first = await running(lbId);
    expect(first).toHaveLength(2);
    expect(proxy.placementGroups.get(group)!.instances.sort()).toEqual(first);

    // Amphora failover: one new instance, in the group; the old one terminated.
    proxy.calls.length = 0;
    const master = (await liveAmphorae(app, lbId)).find((a) => a.role === "MASTER")!;
    await act(app, "PUT", `/v2/octavia/amphorae/${master.id}/failover`);
    expect(await statusOf(app, lbId)).toBe("ACTIVE");
    expect(launches().map((p) => p["Placement.GroupName"])).toEqual([group]);
    expect(proxy.params("TerminateInstances").map((p) => p["InstanceId.1"])).toEqual([master.compute_id]);
    const afterAmphora = await running(lbId);
    expect(afterAmphora).toHaveLength(2);
    expect(afterAmphora).not.toContain(master.compute_id);

    // Load balancer failover: both replaced, one at a time.
    proxy.calls.length = 0;
    await act(app, "PUT", `${LBS}/${lbId}/failover`);
    expect(await statusOf(app, lbId)).toBe("ACTIVE");
    expect(launches().map((p) => p["Placement.GroupName"])).toEqual([group, group]);
    expect(
      proxy
        .params("TerminateInstances")
        .map((p) => p["InstanceId.1"])
        .sort(),
    ).toEqual(afterAmphora);
    const afterLb = await running(lbId);
    expect(afterLb).toHaveLength(2);
    expect(afterLb.filter((id) => afterAmphora.includes(id))).toEqual([]);

    // Resize: the new flavor's instance type (what main passes today: the resize's computeFlavor).
    proxy.calls.length = 0;
    await act(app, "PUT", `${LBS}/${lbId}/resize`, { new_flavor_id: flavors.haLarge });
    expect(await statusOf(app, lbId)).toBe("ACTIVE");
    expect(launches().map((p) => [p.InstanceType, p["Placement.GroupName"]])).toEqual([
      ["t3.large", group],
      ["t3.large", group],
    ]);
    const afterResize = await running(lbId);
    expect((await instancesOf(lbId)).filter((i) => afterResize.includes(i.InstanceId!)).map((i) => i.InstanceType)).toEqual([
      "t3.large",
      "t3.large",
    ]);
    expect(afterResize.filter((id) => afterLb.includes(id))).toEqual([]);
    expect((await liveAmphorae(app, lbId)).map((a) => a.compute_flavor)).toEqual(["t3.large", "t3.large"]);

    // Delete: the instances go, then the group (EC2 refuses it while one is terminating: asked again).
    proxy.calls.length = 0;
    proxy.fail(
      "DeletePlacementGroup",
      { code: "InvalidPlacementGroup.InUse", status: 400, message: `The placement group '${group}' is in use and may not be deleted.` },
      { times: 2 },
    );
    await act(app, "DELETE", `${LBS}/${lbId}`);
    expect(await statusOf(app, lbId)).toBe("DELETED");
    expect(await running(lbId)).toEqual([]);
    expect(proxy.calls.filter((c) => c.action === "DeletePlacementGroup").map((c) => c.status)).toEqual([400, 400, 200]);
    expect(proxy.placementGroups.has(group)).toBe(false);
  });

  it("a create that fails after its builds deletes its instances, then its group", async () => {
    proxy.boot({ pendingDescribes: Infinity });
    const lbId = await create(app, true);
    expect(await endState(app, lbId)).toMatchObject({ status: "ERROR", serverGroup: null, instances: 0, group: false });
    const actions = proxy.calls.map((c) => c.action);
    expect(actions.lastIndexOf("TerminateInstances")).toBeLessThan(actions.indexOf("DeletePlacementGroup"));
  });

  it("a group EC2 still refuses: the create's revert leaves it on the ERROR load balancer; a delete asks OTTAVA_AMP_ACTIVE_RETRIES times, then ERROR; a later delete removes it", async () => {
    const inUse = { code: "InvalidPlacementGroup.InUse", status: 400, message: "The placement group is in use and may not be deleted." };
    proxy.boot({ pendingDescribes: Infinity });
    proxy.fail("DeletePlacementGroup", inUse, { times: 1000 });
    const lbId = await create(app, true);
    const group = groupName(lbId);
    expect(await endState(app, lbId)).toMatchObject({ status: "ERROR", serverGroup: group, instances: 0, group: true });
    expect(proxy.calls.filter((c) => c.action === "DeletePlacementGroup").map((c) => c.status)).toEqual([400]);

    await act(app, "DELETE", `${LBS}/${lbId}`);
    expect(await statusOf(app, lbId)).toBe("ERROR");
    // OTTAVA_AMP_ACTIVE_RETRIES looks, the last one failing the step, which the flow's Retry runs twice more.
    expect(proxy.calls.filter((c) => c.action === "DeletePlacementGroup").map((c) => c.status)).toEqual(Array(1 + RETRIES + 2).fill(400));
    expect(proxy.placementGroups.has(group)).toBe(true);

    proxy.clearFaults();
    await act(app, "DELETE", `${LBS}/${lbId}`);
    expect(await statusOf(app, lbId)).toBe("DELETED");
    expect(proxy.placementGroups.has(group)).toBe(false);
  });

  it("a SINGLE load balancer gets no group; with anti-affinity off neither does an ACTIVE_STANDBY one", async () => {
    const single = await create(app, false);
    expect((await lbRecord(app, single)).server_group_id ?? null).toBeNull();
    const pair = await create(plain, true, flavors.haPlain);
    expect(await statusOf(plain, pair)).toBe("ACTIVE");
    expect((await lbRecord(plain, pair)).server_group_id ?? null).toBeNull();
    expect(launches()).toHaveLength(3);
    expect(launches().map((p) => p["Placement.GroupName"])).toEqual([undefined, undefined, undefined]);
    expect(proxy.calls.some((c) => c.action.includes("PlacementGroup"))).toBe(false);
  });
});

// ---- faults ----

describe("EC2's faults end in ACTIVE or ERROR, with nothing left running by a revert", () => {
  it("RunInstances' answer lost (a 500 after EC2 launched): the retry is answered the same instance; ACTIVE", async () => {
    proxy.fail("RunInstances", INTERNAL_ERROR, { after: true });
    const lbId = await create(app, false);
    expect(await endState(app, lbId)).toMatchObject({ status: "ACTIVE", instances: 1, matched: 1 });
    expect(proxy.calls.filter((c) => c.action === "RunInstances").map((c) => c.status)).toEqual([500, 200]);
  });

  it("throttling past the SDK's retries: the flow retries the task; ACTIVE with one instance an amphora", async () => {
    proxy.fail("RunInstances", THROTTLED, { times: 4 });
    proxy.fail("DescribeInstances", THROTTLED, { times: 3 });
    const lbId = await create(app, true);
    expect(await endState(app, lbId)).toMatchObject({ status: "ACTIVE", instances: 2, matched: 2, group: true });
  });

  it("throttling that does not end: ERROR, and the revert leaves nothing running", async () => {
    proxy.fail("DescribeInstances", THROTTLED, { times: 1000 });
    const lbId = await create(app, true);
    expect(await endState(app, lbId)).toMatchObject({ status: "ERROR", instances: 0, group: false, serverGroup: null });
  });

  it("500s on the placement group: ERROR before any instance is launched", async () => {
    proxy.fail("CreatePlacementGroup", INTERNAL_ERROR, { times: 1000 });
    const lbId = await create(app, true);
    expect(await endState(app, lbId)).toMatchObject({ status: "ERROR", instances: 0, group: false });
    expect(launches()).toEqual([]);
  });

  it("500s on TerminateInstances in a delete: ERROR (never PENDING_DELETE); deleted again once EC2 answers", async () => {
    const lbId = await create(app, true);
    proxy.fail("TerminateInstances", INTERNAL_ERROR, { times: 1000 });
    await act(app, "DELETE", `${LBS}/${lbId}`);
    expect(await statusOf(app, lbId)).toBe("ERROR");
    proxy.clearFaults();
    await act(app, "DELETE", `${LBS}/${lbId}`);
    expect(await statusOf(app, lbId)).toBe("DELETED");
    expect(await running(lbId)).toEqual([]);
    expect(proxy.placementGroups.size).toBe(0);
  });
});

// ---- the new tasks, run twice ----

describe("the EC2 flows' new tasks run twice, or failing after their work, end as a clean run", () => {
  const variants = ["twice", "throwAfter"] as const;

  it.each(variants.flatMap((mode) => ["CreateServerGroup", "ComputeCreate", "ComputeWait"].map((state) => [state, mode] as const)))(
    "create: %s (%s)",
    async (state, mode) => {
      Object.assign(twice, { state, mode });
      const lbId = await create(app, true);
      expect(twice.hits).toBeGreaterThan(0);
      expect(await endState(app, lbId)).toEqual({
        status: "ACTIVE",
        serverGroup: groupName(lbId),
        amphorae: [
          ["BACKUP", "ALLOCATED"],
          ["MASTER", "ALLOCATED"],
        ],
        instances: 2,
        matched: 2,
        group: true,
      });
    },
  );

  it.each(variants.flatMap((mode) => ["RevertCreateServerGroup", "RevertComputeCreate"].map((state) => [state, mode] as const)))(
    "create's reverts: %s (%s)",
    async (state, mode) => {
      proxy.boot({ pendingDescribes: Infinity });
      Object.assign(twice, { state, mode });
      const lbId = await create(app, true);
      expect(twice.hits).toBeGreaterThan(0);
      expect(await endState(app, lbId)).toEqual({
        status: "ERROR",
        serverGroup: null,
        amphorae: [],
        instances: 0,
        matched: 0,
        group: false,
      });
    },
  );

  it.each(variants)("delete: DeleteServerGroup (%s)", async (mode) => {
    const lbId = await create(app, true);
    const group = groupName(lbId);
    Object.assign(twice, { state: "DeleteServerGroup", mode });
    await act(app, "DELETE", `${LBS}/${lbId}`);
    expect(twice.hits).toBeGreaterThan(0);
    expect(await endState(app, lbId)).toEqual({
      status: "DELETED",
      serverGroup: group,
      amphorae: [],
      instances: 0,
      matched: 0,
      group: false,
    });
  });
});

it("called only the EC2 and Secrets Manager actions the IAM record holds for each workload (test/fixtures/aws-calls.json)", async () => {
  await app.settle();
  expect(awsCallsMissingFromRecord(await recordedAwsCalls({ moto, proxy }))).toEqual([]);
});
