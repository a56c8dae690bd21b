// The EC2 test bed itself (test/support/bed): two beds at once in one file (each its own moto, port and
// /20, never seeing the other's instances), an instance's network namespace holding its moto address,
// the IMDSv2 stand-in (401 without a token; id, placement, role credentials and user data per instance),
// Debian's cloud-init applying each instance's own user data in its own namespaces, an instance's
// namespaces gone once it is terminated, the VPC's data plane (ENIs as interfaces, the router between
// subnets, VIPs routed to the ENI of the last AssignPrivateIpAddresses whatever ARP says, VPCs apart, an
// ENI of another VPC hot-plugged into a running instance and unplugged), and nothing of the beds left on
// the host after stop().
import { spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readlinkSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  AssignPrivateIpAddressesCommand,
  AttachNetworkInterfaceCommand,
  CreateNetworkInterfaceCommand,
  DeleteNetworkInterfaceCommand,
  DescribeInstancesCommand,
  DescribeNetworkInterfacesCommand,
  DetachNetworkInterfaceCommand,
  RunInstancesCommand,
  TerminateInstancesCommand,
} from "@aws-sdk/client-ec2";
import { STAGE_TAG_KEY } from "@ottava/aws";
import { BED_SUPERNET, bedRange } from "./support/bed/range";
import { intToIp, ipToInt } from "./support/bed/vpc";
import { bedUnavailable, startBed, type Bed, type BedInstance, type BedNode, type BedSubnet } from "./support/bed/bed";
import { httpGet, serveHttp } from "./support/agent/agent";

const unavailable =
  bedUnavailable() ?? (existsSync("/usr/bin/arping") ? undefined : "/usr/bin/arping (Debian's iputils-arping) is missing");
if (unavailable)
  throw new Error(`test/bed.e2e.test.ts needs root, iproute2, Debian's cloud-init, python3-octavia and iputils-arping: ${unavailable}`);

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
});

describe("the VPC's data plane", () => {
  const PORT = 8080;
  let vipNet: BedSubnet;
  let clientNet: BedSubnet;
  let memberNet: BedSubnet;
  let client: BedNode;
  /** The two instances with an ENI each in vipNet at DeviceIndex 1, by name. */
  const amp: Record<"one" | "two", { instance: BedInstance; eni: string; mac: string; address: string; attachment: string }> = {} as never;
  let vip: string;
  const servers: ChildProcess[] = [];
  /** A second VPC, its subnet in the instances' zone, and a backend there. */
  let other: string;
  let otherNet: BedSubnet;
  let stranger: BedNode;

  afterAll(() => {
    for (const p of servers) p.kill("SIGKILL");
  });

  /** Runs a command in the instance's mount, network and PID namespaces (as its own processes run it: its /proc is its PID namespace's). */
  const inInstance = (i: BedInstance, args: string[]) => {
    const r = spawnSync("/usr/bin/nsenter", [`--target=${i.ns.pid()}`, "--mount", "--net", "--pid", "--", ...args], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  /** nsenter's option for the instance's amphora-haproxy namespace (a file of its mount namespace). */
  const haproxyNs = (i: BedInstance) => `--net=/proc/${i.ns.pid()}/root/run/netns/amphora-haproxy`;
  const inHaproxy = (i: BedInstance, args: string[]) => inInstance(i, ["ip", "netns", "exec", "amphora-haproxy", ...args]);
  /** The instance's interface with `mac` ("eth1"), or undefined: `ip -o link` of its namespace. */
  const interfaceWith = (out: string, mac: string) => new RegExp(`^\\d+: ([^:@]+)[:@].* link/ether ${mac} `, "m").exec(out)?.[1];
  /** The address of the subnet's nth host. */
  const host = (s: BedSubnet, n: number) => intToIp(ipToInt(s.cidr.split("/")[0]!) + n);
  /** The body the client gets from url, once the bed has synced. */
  const answers = async (url: string, body: string, from: BedNode = client) => {
    await a.sync(); // a whole sync after what the test did in EC2
    await vi.waitFor(
      () => {
        const got = from.get(url);
        const why = () =>
          [
            `GET ${url} from ${from.address}: ${got.error}`,
            a.router(["/usr/sbin/ip", "neigh"]),
            a.router(["/usr/sbin/ip", "route"]),
            a.errors.map(String).join("\n"),
          ].join("\n");
        expect(got, got.status === 200 ? undefined : why()).toMatchObject({ status: 200, body });
      },
      { timeout: 10_000, interval: 200 },
    );
  };
  /** Whether a GET of url gets no answer within a second (unreachable, or dropped). */
  const lost = (url: string, from: BedNode = client) => from.get(url, { timeoutS: 1 }).status === 0;
  const assignVip = (eni: string, allowReassignment?: boolean) =>
    a.ec2.send(
      new AssignPrivateIpAddressesCommand({
        NetworkInterfaceId: eni,
        PrivateIpAddresses: [vip],
        ...(allowReassignment ? { AllowReassignment: true } : {}),
      }),
    );
  /** Gratuitous ARP for the VIP from the instance's VIP interface, as requests and as replies (keepalived sends them when it takes the VIP). */
  const gratuitousArp = (i: BedInstance) => {
    for (const mode of ["-U", "-A"]) inHaproxy(i, ["/usr/bin/arping", mode, "-c", "1", "-I", "eth1", vip]);
  };
  const routerNeighbour = () => a.router(["/usr/sbin/ip", "neigh", "show", vip]).trim();

  beforeAll(async () => {
    [vipNet, clientNet, memberNet] = await Promise.all([a.subnet(), a.subnet(), a.subnet()]);
    vip = host(vipNet, 100);
    client = await a.client(clientNet.id);
  }, 60_000);

  it("gives each subnet of the bed's VPC a bridge holding its first host address (the VPC router's), from the bed's /20", () => {
    const addrs = a.router(["/usr/sbin/ip", "-4", "-o", "addr"]);
    for (const s of [vipNet, clientNet, memberNet]) {
      expect(s.cidr).toMatch(/^198\.1[89]\.\d+\.0\/24$/);
      expect(s.gateway).toBe(host(s, 1));
      expect(addrs).toContain(`inet ${s.gateway}/24 `);
    }
    // Within the bed's VPC, the /20's first half, past its management subnets (its first two /24s).
    const [, second, third] = a.range.cidr.split(".").map(Number);
    expect(a.vpcCidr).toBe(`${a.range.address(0)}/21`);
    for (const s of [vipNet, clientNet, memberNet]) {
      expect(Number(s.cidr.split(".")[1])).toBe(second);
      expect(Number(s.cidr.split(".")[2]) - third!).toBeGreaterThanOrEqual(2);
      expect(Number(s.cidr.split(".")[2]) - third!).toBeLessThan(8);
    }
    expect(a.router(["/usr/sbin/sysctl", "-n", "net.ipv4.ip_forward", "net.ipv4.conf.all.arp_accept"]).split("\n").slice(0, 2)).toEqual([
      "1",
      "0",
    ]);
    // The client: its ENI's address in its subnet, the router as its gateway.
    expect(client.exec(["/usr/sbin/ip", "-4", "route", "show", "default"]).stdout).toContain(`default via ${clientNet.gateway} dev eth0`);
  });

  it("makes an ENI attached at DeviceIndex 1 the instance's eth1, with the ENI's MAC", async () => {
    const ids = await Promise.all(["one", "two"].map((m) => launch(a, `vpc-${m}`)));
    const instances = await Promise.all(ids.map((id) => a.instance(id)));
    for (const [n, name] of (["one", "two"] as const).entries()) {
      const eni = (await a.ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: vipNet.id, PrivateIpAddress: host(vipNet, 11 + n) })))
        .NetworkInterface!;
      const attachment = (
        await a.ec2.send(
          new AttachNetworkInterfaceCommand({ NetworkInterfaceId: eni.NetworkInterfaceId, InstanceId: ids[n], DeviceIndex: 1 }),
        )
      ).AttachmentId!;
      amp[name] = {
        instance: instances[n]!,
        eni: eni.NetworkInterfaceId!,
        mac: eni.MacAddress!,
        address: eni.PrivateIpAddress!,
        attachment,
      };
    }
    for (const { instance, mac } of Object.values(amp))
      await vi.waitFor(() => expect(interfaceWith(instance.netExec(["/usr/sbin/ip", "-o", "link"]).stdout, mac)).toBe("eth1"), {
        timeout: 10_000,
        interval: 200,
      });
    // Not the other's.
    expect(interfaceWith(amp.one.instance.netExec(["/usr/sbin/ip", "-o", "link"]).stdout, amp.two.mac)).toBeUndefined();
    // As Octavia's agent plugs a VIP: the interface found by its MAC moves into amphora-haproxy, gets the
    // ENI's address and the subnet's gateway; a server there answers the instance's name.
    for (const [name, { instance, mac, address }] of Object.entries(amp)) {
      const ifname = interfaceWith(inInstance(instance, ["ip", "-o", "link"]), mac)!;
      inInstance(instance, ["ip", "netns", "add", "amphora-haproxy"]);
      inInstance(instance, ["ip", "link", "set", ifname, "netns", "amphora-haproxy"]);
      inHaproxy(instance, ["ip", "link", "set", "lo", "up"]);
      inHaproxy(instance, ["ip", "addr", "add", `${address}/24`, "dev", ifname]);
      inHaproxy(instance, ["ip", "link", "set", ifname, "up"]);
      inHaproxy(instance, ["ip", "route", "add", "default", "via", vipNet.gateway]);
      servers.push(await serveHttp(haproxyNs(instance), "0.0.0.0", PORT, name));
    }
  }, 60_000);

  it("routes a client in another subnet to an ENI's primary address through the VPC router", async () => {
    await answers(`http://${amp.one.address}:${PORT}/`, "one");
    await answers(`http://${amp.two.address}:${PORT}/`, "two");
    // From the instance's amphora-haproxy namespace to a member in a third subnet, through the router.
    const member = await a.backend(memberNet.id, host(memberNet, 20), 8081, "member-1");
    expect(member.exec(["/usr/sbin/ip", "-4", "route", "show", "default"]).stdout).toContain(`via ${memberNet.gateway}`);
    expect(httpGet(haproxyNs(amp.one.instance), `http://${member.address}:8081/`)).toMatchObject({ status: 200, body: "member-1" });
  });

  it("routes a secondary address to the ENI of its last AssignPrivateIpAddresses, whatever the instances hold or announce", async () => {
    await assignVip(amp.one.eni);
    // Both instances hold the VIP on their interface (a keepalived that did not step down, a flow that did not move it).
    for (const { instance } of Object.values(amp)) inHaproxy(instance, ["ip", "addr", "add", `${vip}/32`, "dev", "eth1"]);
    await answers(`http://${vip}:${PORT}/`, "one");
    expect(routerNeighbour()).toBe(`${vip} dev ${routerNeighbour().split(" ")[2]} lladdr ${amp.one.mac} PERMANENT`);
    // Instance two announces it: nothing changes.
    gratuitousArp(amp.two.instance);
    for (let i = 0; i < 5; i++) expect(client.get(`http://${vip}:${PORT}/`)).toMatchObject({ status: 200, body: "one" });
    expect(routerNeighbour()).toContain(`lladdr ${amp.one.mac} PERMANENT`);

    // Moved with AllowReassignment: instance two gets it, while instance one still holds it and announces it.
    await assignVip(amp.two.eni, true);
    await answers(`http://${vip}:${PORT}/`, "two");
    gratuitousArp(amp.one.instance);
    for (let i = 0; i < 5; i++) expect(client.get(`http://${vip}:${PORT}/`)).toMatchObject({ status: 200, body: "two" });
    expect(routerNeighbour()).toContain(`lladdr ${amp.two.mac} PERMANENT`);
    // moto's answer lists the address on both ENIs (its gap): the bed follows the last assignment.
    const described = (await a.ec2.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [amp.two.eni] })))
      .NetworkInterfaces![0]!;
    expect(described.PrivateIpAddresses!.map((p) => p.PrivateIpAddress)).toContain(vip);
  });

  it("keeps other VPCs apart: nothing of one is reachable from the other", async () => {
    other = await a.vpc();
    otherNet = await a.subnet({ vpcId: other });
    expect(otherNet.cidr).toMatch(/\/26$/);
    // In the /20's second half: outside the bed's VPC (the ranges of two VPCs never overlap).
    const [, , third] = a.range.cidr.split(".").map(Number);
    expect(Number(otherNet.cidr.split(".")[2]) - third!).toBeGreaterThanOrEqual(8);
    expect(Number(otherNet.cidr.split(".")[2]) - third!).toBeLessThan(15);
    stranger = await a.backend(otherNet.id, host(otherNet, 10), 8081, "stranger");
    // Its own router, and no route of the bed's VPC in it.
    expect(a.router(["/usr/sbin/ip", "-4", "-o", "addr"], other)).toContain(`inet ${otherNet.gateway}/26 `);
    const otherRoutes = a.router(["/usr/sbin/ip", "-4", "route"], other);
    for (const s of [vipNet, clientNet, memberNet]) expect(otherRoutes).not.toContain(s.cidr);
    // Neither way.
    for (const url of [`http://${vip}:${PORT}/`, `http://${amp.one.address}:${PORT}/`]) expect(lost(url, stranger)).toBe(true);
    expect(lost(`http://${stranger.address}:8081/`)).toBe(true);
    // Its own subnet's neighbour is reached from within it.
    const neighbour = await a.client(otherNet.id);
    expect(neighbour.get(`http://${stranger.address}:8081/`)).toMatchObject({ status: 200, body: "stranger" });
    // Nor from an instance's ENI of the bed's VPC (eth1, in amphora-haproxy, its default route the VPC's router).
    expect(httpGet(haproxyNs(amp.one.instance), `http://${stranger.address}:8081/`, { timeoutS: 1 }).status).toBe(0);
  });

  it("hot-plugs an ENI of another VPC attached to a running instance: a new eth<N> with its MAC, that reaches its own VPC's subnets (all zones) through that VPC's router and nothing else; detached it goes, deleted nothing of it is left", async () => {
    const { instance } = amp.one;
    const errorsBefore = a.errors.length;
    // The second VPC's other subnet, in another zone, with a backend: reached through the VPC's router.
    const farNet = await a.subnet({ vpcId: other, zone: "us-east-1b" });
    const far = await a.backend(farNet.id, host(farNet, 10), 8081, "far");
    const eni = (await a.ec2.send(new CreateNetworkInterfaceCommand({ SubnetId: otherNet.id }))).NetworkInterface!;
    const [mac, address, eniId] = [eni.MacAddress!, eni.PrivateIpAddress!, eni.NetworkInterfaceId!];
    // Attached after the instance's boot, at DeviceIndex 2 (the VIP's ENI is at 1): a multi-VPC ENI.
    const attachment = (
      await a.ec2.send(new AttachNetworkInterfaceCommand({ NetworkInterfaceId: eniId, InstanceId: instance.id, DeviceIndex: 2 }))
    ).AttachmentId!;
    await vi.waitFor(() => expect(interfaceWith(instance.netExec(["/usr/sbin/ip", "-o", "link"]).stdout, mac)).toBe("eth2"), {
      timeout: 10_000,
      interval: 200,
    });
    // Down and without an address, as a hot-plugged NIC; its other end on the second VPC's bridge of its subnet.
    expect(instance.netExec(["/usr/sbin/ip", "-o", "addr", "show", "dev", "eth2"]).stdout).not.toContain("inet ");
    const otherBridge = new RegExp(`\\d+: (\\S+) +inet ${otherNet.gateway}/`).exec(
      a.router(["/usr/sbin/ip", "-o", "-4", "addr"], other),
    )![1]!;
    expect(a.router(["/usr/sbin/ip", "-o", "link", "show", "master", otherBridge], other)).toMatch(/: e\d+@/);
    // As Octavia's agent plugs a member network: found by its MAC, moved into amphora-haproxy under the
    // next free name there (lo, eth1: eth2), its address and the VPC's range through the subnet's router.
    inInstance(instance, ["ip", "link", "set", "eth2", "netns", "amphora-haproxy"]);
    inHaproxy(instance, ["ip", "addr", "add", `${address}/26`, "dev", "eth2"]);
    inHaproxy(instance, ["ip", "link", "set", "eth2", "up"]);
    inHaproxy(instance, ["ip", "route", "add", `${otherNet.cidr.split("/")[0]}/24`, "via", otherNet.gateway]);
    await a.sync();
    const fromAmphora = (url: string, timeoutS = 5) => httpGet(haproxyNs(instance), url, { timeoutS });
    await vi.waitFor(() => expect(fromAmphora(`http://${stranger.address}:8081/`)).toMatchObject({ status: 200, body: "stranger" }), {
      timeout: 10_000,
      interval: 200,
    });
    expect(fromAmphora(`http://${far.address}:8081/`)).toMatchObject({ status: 200, body: "far" });
    // The second VPC's router reaches the ENI's address by its MAC; the bed's VPC's router knows nothing of it.
    expect(a.router(["/usr/sbin/ip", "neigh", "show", address], other)).toContain(`lladdr ${mac} PERMANENT`);
    expect(a.router(["/usr/sbin/ip", "neigh", "show", address])).toBe("");
    // The bed's VPC is still reached through eth1; nothing of it through eth2: the instance's server (on
    // every address of amphora-haproxy) answers a host of the second VPC on the ENI's address, and a client
    // of the bed's VPC not at all.
    expect(fromAmphora(`http://${host(memberNet, 20)}:8081/`)).toMatchObject({ status: 200, body: "member-1" });
    expect(stranger.get(`http://${address}:${PORT}/`)).toMatchObject({ status: 200, body: "one" });
    expect(lost(`http://${address}:${PORT}/`)).toBe(true);

    // Detached: it leaves the instance (from amphora-haproxy, where it was moved), and the VPC is lost again.
    await a.ec2.send(new DetachNetworkInterfaceCommand({ AttachmentId: attachment }));
    await vi.waitFor(() => expect(interfaceWith(inHaproxy(instance, ["ip", "-o", "link"]), mac)).toBeUndefined(), {
      timeout: 10_000,
      interval: 200,
    });
    expect(fromAmphora(`http://${stranger.address}:8081/`, 1).status).toBe(0);
    expect(a.router(["/usr/sbin/ip", "-o", "link", "show", "master", otherBridge], other)).not.toMatch(/: e\d+@/);
    // Deleted: nothing of it is left; its address goes nowhere.
    await a.ec2.send(new DeleteNetworkInterfaceCommand({ NetworkInterfaceId: eniId }));
    await a.sync();
    expect(a.router(["/usr/sbin/ip", "neigh", "show", address], other)).toBe("");
    expect(a.router(["/usr/sbin/ip", "route", "show", `${address}/32`], other)).toContain("blackhole");
    for (const ns of [instance.netExec(["/usr/sbin/ip", "-o", "link"]).stdout, inHaproxy(instance, ["ip", "-o", "link"])])
      expect(interfaceWith(ns, mac)).toBeUndefined();
    expect(lost(`http://${address}:${PORT}/`, stranger)).toBe(true);
    // The instance's own ENI of the bed's VPC still serves.
    await answers(`http://${amp.one.address}:${PORT}/`, "one");
    expect(a.errors.slice(errorsBefore)).toEqual([]);
  });

  it("removes the interface once the ENI is detached, and traffic to its addresses is lost", async () => {
    await a.ec2.send(new DetachNetworkInterfaceCommand({ AttachmentId: amp.two.attachment }));
    // It had moved into amphora-haproxy: it goes from there.
    await vi.waitFor(() => expect(interfaceWith(inHaproxy(amp.two.instance, ["ip", "-o", "link"]), amp.two.mac)).toBeUndefined(), {
      timeout: 10_000,
      interval: 200,
    });
    // The VIP is still ENI two's (detached): instance one, which holds it and announces it, gets nothing.
    await a.sync();
    gratuitousArp(amp.one.instance);
    expect(lost(`http://${vip}:${PORT}/`)).toBe(true);
    expect(lost(`http://${amp.two.address}:${PORT}/`)).toBe(true);
    // Back to ENI one: reached again.
    await assignVip(amp.one.eni, true);
    await answers(`http://${vip}:${PORT}/`, "one");
  });

  it("removes an instance's ENI interfaces with the instance", async () => {
    const bridge = new RegExp(`\\d+: (\\S+) +inet ${vipNet.gateway}/`).exec(a.router(["/usr/sbin/ip", "-o", "-4", "addr"]))![1]!;
    /** The ENI ends on vipNet's bridge (an instance's ENI: e<n>; a client's: h<n>). */
    const links = () => a.router(["/usr/sbin/ip", "-o", "link", "show", "master", bridge]);
    expect(links()).toMatch(/: e\d+@/);
    await a.ec2.send(new TerminateInstancesCommand({ InstanceIds: [amp.one.instance.id] }));
    await vi.waitFor(() => expect(a.instances.has(amp.one.instance.id)).toBe(false), { timeout: 20_000, interval: 250 });
    await vi.waitFor(() => expect(links()).not.toMatch(/: e\d+@/), { timeout: 10_000, interval: 250 });
    expect(lost(`http://${vip}:${PORT}/`)).toBe(true);
  });
});

describe("stop", () => {
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
    await expect(fetch(`${a.ec2Endpoint}/`)).rejects.toThrow();
    // No namespace holder (the VPCs' routers, clients, backends, the management networks) nor server is left:
    // every one was a child of this process.
    const children = spawnSync("/usr/bin/pgrep", ["-a", "-P", String(process.pid)], { encoding: "utf8" }).stdout;
    expect(children).not.toMatch(/unshare|nsenter/);
  });
});
