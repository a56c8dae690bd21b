// A crash between the API's VIP allocation and its write of the load balancer, on the EC2 test bed
// (test/support/bed): the local stack runs as `npm start` runs it (a child process), with
// OTTAVA_NETWORK_DRIVER=vpc against the bed's EC2 test proxy and the DynamoDB table of an in-process app.
// The proxy holds the answer of the VIP's CreateNetworkInterface (moto has made the ENI) and the test
// SIGKILLs the stack then: the ENI and the load balancer's security group are left, tagged with the
// stage and the load balancer, and no load balancer is in the table. Housekeeping's sweep, with the
// product's deps (createHousekeepingDeps on the same settings), leaves them while they are younger than
// OTTAVA_ORPHAN_GRACE_SEC (the API may still be writing the load balancer) and removes them once they are
// older, logging the WARN line its alarm counts. No amphora boots (the compute driver is noop).
import { randomUUID } from "node:crypto";
import { DescribeNetworkInterfacesCommand, DescribeSecurityGroupsCommand, CreateTagsCommand, type Tag } from "@aws-sdk/client-ec2";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CREATED_AT_TAG_KEY, LOAD_BALANCER_TAG_KEY, SHARED_TAG_KEY, STAGE_TAG_KEY } from "@ottava/aws";
import { MOTO_CLIENT } from "@ottava/aws/testing";
import { ORPHAN_SWEPT_ALERT } from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { captureOutput, jsonLines } from "@ottava/edge/testing";
import { createHousekeepingDeps, sweep } from "@ottava/controller";
import { inProcessApp } from "@ottava/local/testing";
import { bedUnavailable, startBed, type Bed } from "./support/bed/bed";
import { startStack, type Stack } from "./support/stack";

const unavailable = bedUnavailable();
if (unavailable) throw new Error(`test/sweep-bed.e2e.test.ts needs the EC2 test bed (.ci/run installs its needs): ${unavailable}`);

const STAGE = `sweep${randomUUID().slice(0, 8)}`;
let bed: Bed;
let app: Awaited<ReturnType<typeof inProcessApp>>;
let stack: Stack | undefined;
let vipSubnetUuid: string;

const tagOf = (tags: Tag[] | undefined, key: string) => tags?.find((t) => t.Key === key)?.Value;

beforeAll(async () => {
  bed = await startBed({ stage: STAGE });
  const settings = {
    OTTAVA_STAGE: STAGE,
    OTTAVA_NETWORK_DRIVER: "vpc",
    OTTAVA_EC2_ENDPOINT: bed.ec2Endpoint,
    OTTAVA_SECRETSMANAGER_ENDPOINT: bed.moto.endpoint,
    OTTAVA_AMP_BOOT_NETWORK_LIST: bed.subnetId,
  };
  vi.stubEnv("AWS_REGION", MOTO_CLIENT.region);
  vi.stubEnv("AWS_ACCESS_KEY_ID", MOTO_CLIENT.credentials.accessKeyId);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", MOTO_CLIENT.credentials.secretAccessKey);
  const [vipSubnet, started] = await Promise.all([bed.subnet({ zone: bed.zone }), inProcessApp(settings)]);
  app = started;
  await bed.ec2.send(new CreateTagsCommand({ Resources: [vipSubnet.id], Tags: [{ Key: SHARED_TAG_KEY, Value: "true" }] }));
  const found = await app.call("GET", `/network/v2.0/subnets/${vipSubnet.id}`);
  expect(found.status).toBe(200);
  vipSubnetUuid = found.body.subnet.id;
  // The stack on the app's table (DynamoDB Local outlives the kill), in a process group of its own.
  stack = await startStack(
    ["--in-memory"],
    {
      ...settings,
      OTTAVA_DYNAMODB_ENDPOINT: app.config.dynamodbEndpoint!,
      OTTAVA_TABLE_NAME: app.config.tableName,
      AWS_REGION: MOTO_CLIENT.region,
      AWS_ACCESS_KEY_ID: MOTO_CLIENT.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: MOTO_CLIENT.credentials.secretAccessKey,
    },
    { detached: true },
  );
}, 120_000);
afterAll(async () => {
  await stack?.killGroup("SIGKILL");
  await bed?.stop();
  vi.unstubAllEnvs();
});

describe("a crash between the VIP's allocation and the load balancer's write", () => {
  it("leaves the VIP's ENI and group tagged with the stage and the load balancer; the sweep removes them after OTTAVA_ORPHAN_GRACE_SEC", async () => {
    const created = bed.proxy.hold("CreateNetworkInterface");
    const post = stack!.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: vipSubnetUuid } }).catch((e: Error) => e);
    const call = await created;
    await stack!.killGroup("SIGKILL");
    expect(await post).toBeInstanceOf(Error); // never answered: the process died mid-request
    expect(call.status).toBe(200);

    // What the crash left: the reservation ENI moto made, and the group made before it.
    const enis = (
      await bed.ec2.send(new DescribeNetworkInterfacesCommand({ Filters: [{ Name: `tag:${STAGE_TAG_KEY}`, Values: [STAGE] }] }))
    ).NetworkInterfaces!;
    expect(enis).toHaveLength(1);
    const eni = enis[0]!;
    const lbId = tagOf(eni.TagSet, LOAD_BALANCER_TAG_KEY)!;
    expect(lbId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.now() - Date.parse(tagOf(eni.TagSet, CREATED_AT_TAG_KEY)!)).toBeLessThan(60_000);
    const groups = (await bed.ec2.send(new DescribeSecurityGroupsCommand({ Filters: [{ Name: `tag:${STAGE_TAG_KEY}`, Values: [STAGE] }] })))
      .SecurityGroups!;
    expect(groups.map((g) => tagOf(g.Tags, LOAD_BALANCER_TAG_KEY))).toEqual([lbId]);
    expect(await app.store.getLoadBalancer(lbId)).toBeUndefined();

    // Housekeeping's sweep as the product wires it (the settings' sweeper: the vpc driver's), logging as the job does.
    const output = captureOutput();
    const deps = createHousekeepingDeps(app.config, app.engine, createLogger({ service: "ottava-housekeeping" }, "warn"), metrics);
    expect(deps.config.orphanGraceSec).toBe(900); // the default
    const early = await sweep(deps);
    expect(early).toEqual({ checked: 2, removed: [] });
    // Older than the grace: removed, each with the alarm's WARN line.
    await new Promise((r) => setTimeout(r, 1100));
    const late = await sweep({ ...deps, config: { ...deps.config, orphanGraceSec: 1 } });
    expect(late.removed.map((r) => `${r.kind} ${r.id}`)).toEqual([
      `network-interface ${eni.NetworkInterfaceId}`,
      `security-group ${groups[0]!.GroupId}`,
    ]);
    const warned = jsonLines(output).filter((l) => l.alert === ORPHAN_SWEPT_ALERT);
    expect(warned.map((l) => [l.level, l.message, l.id, l.loadBalancerId, l.why])).toEqual([
      ["WARN", "orphaned cloud resource removed", eni.NetworkInterfaceId, lbId, "its load balancer no longer exists"],
      ["WARN", "orphaned cloud resource removed", groups[0]!.GroupId, lbId, "its load balancer no longer exists"],
    ]);
    const left = await bed.ec2.send(
      new DescribeNetworkInterfacesCommand({ Filters: [{ Name: "network-interface-id", Values: [eni.NetworkInterfaceId!] }] }),
    );
    expect(left.NetworkInterfaces).toEqual([]);
    expect(await sweep(deps)).toEqual({ checked: 0, removed: [] });
  }, 120_000);
});
