// The EC2 test bed itself (test/support/bed): two beds at once in one file (each its own moto, port and
// /20, never seeing the other's instances), an instance's network namespace holding its moto address,
// the IMDSv2 stand-in (401 without a token; id, placement, role credentials and user data per instance),
// Debian's cloud-init applying each instance's own user data in its own namespaces, an instance's
// namespaces gone once it is terminated, and nothing of the beds left on the host after stop().
import { spawnSync } from "node:child_process";
import { existsSync, readlinkSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DescribeInstancesCommand, RunInstancesCommand, TerminateInstancesCommand } from "@aws-sdk/client-ec2";
import { STAGE_TAG_KEY } from "@ottava/aws";
import { BED_SUPERNET, bedRange } from "./support/bed/range";
import { bedUnavailable, startBed, type Bed, type BedInstance } from "./support/bed/bed";

const unavailable = bedUnavailable();
if (unavailable) throw new Error(`test/bed.e2e.test.ts needs root, iproute2 and Debian's cloud-init and python3-octavia: ${unavailable}`);

const STAGE = "bed-test";
let a: Bed;
let b: Bed;

/** The host's lines of `ip -4 -o addr` ("<index>: <if> inet <address>/<prefix> ...") that hold `address`. */
const onHost = (address: string) =>
  spawnSync("/usr/sbin/ip", ["-4", "-o", "addr", "show"], { encoding: "utf8" })
    .stdout.split("\n")
    .filter((l) => l.includes(` inet ${address}/`));

/** Through the instance's metadata service, from its network namespace: [status, body] of each request. */
const IMDS_CLIENT = `
import json, sys, urllib.request, urllib.error
def call(method, path, headers):
    req = urllib.request.Request("http://169.254.169.254" + path, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return [r.status, r.read().decode()]
    except urllib.error.HTTPError as e:
        return [e.code, ""]
out = [call("GET", "/latest/meta-data/instance-id", {})]
out.append(call("GET", "/latest/meta-data/instance-id", {"X-aws-ec2-metadata-token": "forged"}))
out.append(call("PUT", "/latest/api/token", {}))
status, token = call("PUT", "/latest/api/token", {"X-aws-ec2-metadata-token-ttl-seconds": "60"})
out.append([status, ""])
for path in sys.argv[1:]:
    out.append(call("GET", path, {"X-aws-ec2-metadata-token": token}))
print(json.dumps(out))
`;

function imds(instance: BedInstance, paths: string[]): [number, string][] {
  const r = instance.netExec(["/usr/bin/python3", "-c", IMDS_CLIENT, ...paths]);
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as [number, string][];
}

const userData = (marker: string) =>
  Buffer.from(
    [
      "#cloud-config",
      "write_files:",
      "  - path: /etc/ottava/marker",
      `    content: ${marker}`,
      "runcmd:",
      `  - [sh, -c, "echo ran-${marker} > /var/lib/ottava-runcmd"]`,
      "",
    ].join("\n"),
  ).toString("base64");

async function launch(bed: Bed, marker: string, profileArn?: string): Promise<string> {
  const out = await bed.ec2.send(
    new RunInstancesCommand({
      ImageId: bed.imageId,
      InstanceType: "t3.small",
      MinCount: 1,
      MaxCount: 1,
      SubnetId: bed.subnetId,
      UserData: userData(marker),
      ...(profileArn ? { IamInstanceProfile: { Arn: profileArn } } : {}),
      TagSpecifications: [{ ResourceType: "instance", Tags: [{ Key: STAGE_TAG_KEY, Value: STAGE }] }],
    }),
  );
  return out.Instances![0]!.InstanceId!;
}

/** Waits for cloud-init's last stage; its logs on failure. */
async function booted(instance: BedInstance) {
  await vi.waitFor(() => expect(instance.booted(), instance.logs()).toBe(true), { timeout: 90_000, interval: 250 });
}

beforeAll(async () => {
  [a, b] = await Promise.all([startBed({ stage: STAGE }), startBed({ stage: STAGE })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
});

describe("two beds at once", () => {
  it("each has its own /20 of 198.18.0.0/15, its own moto on its own port there, and its controller address on its own host interface", () => {
    expect(BED_SUPERNET).toBe("198.18.0.0/15");
    expect(a.range.index).not.toBe(b.range.index);
    expect(a.range.cidr).toBe(bedRange(a.range.index).cidr);
    expect(a.range.cidr).toMatch(/^198\.1[89]\.\d+\.0\/20$/);
    expect(a.controllerIp).toBe(a.range.address(4094));
    expect(new URL(a.moto.endpoint).hostname).toBe(a.controllerIp);
    expect(new URL(b.moto.endpoint).hostname).toBe(b.controllerIp);
    expect(a.moto.endpoint).not.toBe(b.moto.endpoint);
    expect(onHost(a.controllerIp)).toEqual([expect.stringMatching(new RegExp(`^\\d+: ${a.network.hostIf} +inet ${a.controllerIp}/20 `))]);
    expect(onHost(b.controllerIp)).toEqual([expect.stringMatching(new RegExp(`^\\d+: ${b.network.hostIf} +inet ${b.controllerIp}/20 `))]);
  });

  it("boots each instance of its own moto only, in a network namespace holding the address moto gave it", async () => {
    const [ia, ib] = await Promise.all([launch(a, "in-a", a.instanceProfile("amphora-profile", "amphora-role")), launch(b, "in-b")]);
    const [x, y] = await Promise.all([a.instance(ia), b.instance(ib)]);
    expect(a.instances.has(ib)).toBe(false);
    expect(b.instances.has(ia)).toBe(false);
    const described = (await a.ec2.send(new DescribeInstancesCommand({ InstanceIds: [ia] }))).Reservations![0]!.Instances![0]!;
    expect(x.address).toBe(described.PrivateIpAddress);
    expect(x.netExec(["/usr/sbin/ip", "-4", "-o", "addr", "show", "dev", "eth0"]).stdout).toContain(`inet ${x.address}/20`);
    expect(y.netExec(["/usr/sbin/ip", "-4", "-o", "addr", "show", "dev", "eth0"]).stdout).toContain(`inet ${y.address}/20`);
    // Its own network namespace: not the host's, not the other's.
    const netns = (i: BedInstance) => readlinkSync(i.ns.netns);
    expect(netns(x)).not.toBe(readlinkSync("/proc/self/ns/net"));
    expect(netns(x)).not.toBe(netns(y));
    // The instance reaches its bed's controller address (moto), and the other bed's range is not routed there.
    const get = (i: BedInstance, url: string) =>
      i.netExec(["/usr/bin/python3", "-c", `import urllib.request; print(urllib.request.urlopen("${url}", timeout=3).status)`]);
    expect(get(x, `${a.moto.endpoint}/moto-api/`).stdout.trim()).toBe("200");
    expect(get(x, `${b.moto.endpoint}/moto-api/`).status).not.toBe(0);
    await Promise.all([booted(x), booted(y)]);
  });

  it("serves IMDSv2 only, with each instance's own id, placement, role credentials and user data", async () => {
    const [x] = [...a.instances.values()];
    const [y] = [...b.instances.values()];
    const paths = [
      "/latest/meta-data/instance-id",
      "/latest/meta-data/placement/availability-zone",
      "/latest/meta-data/iam/security-credentials/",
      "/latest/meta-data/iam/security-credentials/amphora-role",
      "/latest/user-data",
      "/2021-03-23/meta-data/local-ipv4",
    ];
    const [noToken, forged, noTtl, token, id, zone, roles, creds, data, ipv4] = imds(x!, paths);
    expect(noToken![0]).toBe(401);
    expect(forged![0]).toBe(401);
    expect(noTtl![0]).toBe(400);
    expect(token![0]).toBe(200);
    expect(id).toEqual([200, x!.id]);
    expect(zone).toEqual([200, a.zone]);
    expect(roles).toEqual([200, "amphora-role"]);
    expect(creds![0]).toBe(200);
    expect(JSON.parse(creds![1])).toMatchObject({
      Code: "Success",
      Type: "AWS-HMAC",
      AccessKeyId: expect.stringMatching(/^ASIA[0-9A-F]{16}$/),
      SecretAccessKey: expect.any(String),
      Token: expect.any(String),
      Expiration: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    expect(data).toEqual([200, Buffer.from(userData("in-a"), "base64").toString()]);
    expect(ipv4).toEqual([200, x!.address]);
    // The other bed's instance: its own id and user data, and no role (launched without a profile).
    const [, , , , yid, , yroles, , ydata] = imds(y!, paths);
    expect(yid).toEqual([200, y!.id]);
    expect(yroles![0]).toBe(404);
    expect(ydata).toEqual([200, Buffer.from(userData("in-b"), "base64").toString()]);
    // cloud-init went through IMDSv2 too: a token first, and no request refused.
    expect(x!.imdsLog()[0]).toBe("PUT /latest/api/token 200");
    // Only this test's own were refused, without a token and with a forged one (the log comes in as the event loop turns).
    await vi.waitFor(() => expect(x!.imdsLog().filter((l) => / 401$/.test(l))).toHaveLength(2));
  });

  it("applies each instance's own user data with cloud-init, in its own namespaces", () => {
    const [x] = [...a.instances.values()];
    const [y] = [...b.instances.values()];
    expect(x!.ns.read("/etc/ottava/marker")?.trim(), x!.logs()).toBe("in-a");
    expect(x!.ns.read("/var/lib/ottava-runcmd")?.trim()).toBe("ran-in-a");
    expect(y!.ns.read("/etc/ottava/marker")?.trim(), y!.logs()).toBe("in-b");
    expect(y!.ns.read("/var/lib/ottava-runcmd")?.trim()).toBe("ran-in-b");
    // Not on the host.
    expect(existsSync("/etc/ottava/marker")).toBe(false);
    expect(existsSync("/var/lib/ottava-runcmd")).toBe(false);
    // cloud-init found the Ec2 datasource (the metadata service), and its user data is the instance's.
    expect(x!.ns.read(`/var/lib/cloud/instances/${x!.id}/user-data.txt`)).toBe(Buffer.from(userData("in-a"), "base64").toString());
    expect(x!.ns.read("/run/cloud-init/instance-data.json") ?? "").toContain(x!.id);
  });

  it("removes an instance's namespaces once it is terminated", async () => {
    const [x] = [...a.instances.values()];
    const pid = x!.ns.pid();
    expect(existsSync(`/proc/${pid}`)).toBe(true);
    await a.ec2.send(new TerminateInstancesCommand({ InstanceIds: [x!.id] }));
    await vi.waitFor(() => expect(a.instances.has(x!.id)).toBe(false), { timeout: 20_000, interval: 250 });
    await vi.waitFor(() => expect(existsSync(`/proc/${pid}`)).toBe(false), { timeout: 10_000, interval: 250 });
    expect(b.instances.size).toBe(1);
  });

  it("leaves nothing on the host once stopped", async () => {
    const [y] = [...b.instances.values()];
    const pid = y!.ns.pid();
    const hostIfs = [a.network.hostIf, b.network.hostIf];
    await Promise.all([a.stop(), b.stop()]);
    expect(onHost(a.controllerIp)).toEqual([]);
    expect(onHost(b.controllerIp)).toEqual([]);
    for (const name of hostIfs) expect(existsSync(`/sys/class/net/${name}`)).toBe(false);
    expect(existsSync(`/proc/${pid}`)).toBe(false);
    await expect(fetch(`${a.moto.endpoint}/moto-api/`)).rejects.toThrow();
  });
});
