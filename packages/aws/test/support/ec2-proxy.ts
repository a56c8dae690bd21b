// A test proxy in front of one moto_server: it speaks EC2's Query protocol (form POST in, XML out) and
// adds what moto lacks or gets wrong (../shared/notes/aws-emulation.md), as AWS does it:
// - ClientToken idempotency: RunInstances again with the same token and parameters answers the first
//   reservation; with other parameters, IdempotentParameterMismatch (moto makes a second instance);
// - placement groups: Create/Describe/DeletePlacementGroup(s) answered and recorded here (moto answers
//   500), RunInstances into an unknown group refused, a group with instances not terminated refused
//   deletion (InUse);
// - eventual consistency: a new instance is InvalidInstanceID.NotFound once, then `pending` for the first
//   describes (moto: `running` at the first), so a flow's wait runs;
// - addresses: an ENI's or a secondary address that moto would pick at random (perhaps one another ENI
//   holds) is pinned to a free one of the subnet;
// - faults on demand for named actions: throttling (RequestLimitExceeded, HTTP 503) and 500s, before
//   moto sees the request or after it did (AWS did the work, the answer was lost); and a call done but
//   never answered (hold), for a test that kills its caller between the two.
// - network interfaces: an attached ENI is refused deletion (InvalidNetworkInterface.InUse), a group any
//   ENI uses too (DependencyViolation); an attach of an ENI already attached, across zones, at a device
//   index the instance already uses, or past the interfaces its instance type takes is refused; AssignPrivateIpAddresses of an address another ENI holds
//   moves it with AllowReassignment=true (unassigned there first, as AWS does; moto leaves it on both)
//   and is refused without it. The last assignment of each address is kept (vipHolder), for the test
//   bed's routing of VIP traffic.
// Every request is recorded with its parameters. Test support only: nothing of the product reaches it.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { awsQueryClient, xmlChild, xmlItems, xmlText } from "@ottava/edge/aws-query";
import { interfaceOf, type Ec2Interface } from "../../src/network/ec2-query";

/** A request the proxy saw: its Query API parameters and the HTTP status it was answered with. */
export interface ProxiedCall {
  action: string;
  params: Record<string, string>;
  status: number;
  /** Its User-Agent: Ottava's name their workload (`ottava/<workload>`, @ottava/edge workloadUserAgent). */
  userAgent: string;
}

/** An injected fault: EC2's error `code` with its HTTP `status`, for the next `times` calls of an action. */
export interface Ec2Fault {
  code: string;
  status: number;
  message: string;
  times: number;
  /** true: moto does the work first, then the answer is the fault (AWS acted; its answer was lost). */
  after: boolean;
}

/** EC2's own faults, as AWS answers them. */
export const THROTTLED: Omit<Ec2Fault, "times" | "after"> = {
  code: "RequestLimitExceeded",
  status: 503,
  message: "Request limit exceeded.",
};
export const INTERNAL_ERROR: Omit<Ec2Fault, "times" | "after"> = {
  code: "InternalError",
  status: 500,
  message: "An internal error has occurred",
};

/** How new instances look while they "boot" (applies to instances launched after it is set). */
export interface BootBehaviour {
  /** The first DescribeInstances naming a new instance answers InvalidInstanceID.NotFound. */
  notFoundOnce: boolean;
  /** How many DescribeInstances show a new instance `pending` before `running` (Infinity: it never runs). */
  pendingDescribes: number;
}

/** A placement group the proxy keeps (moto has none). */
export interface PlacementGroup {
  groupName: string;
  groupId: string;
  strategy: string;
  tags: Record<string, string>;
  /** The instances RunInstances launched into it. */
  instances: string[];
}

export interface Ec2Proxy {
  endpoint: string;
  /** Every request, in order. */
  calls: ProxiedCall[];
  /** The action and User-Agent of every request since the proxy started, which reset() keeps: a whole file's record (test/support/aws-calls.ts). */
  history: Pick<ProxiedCall, "action" | "userAgent">[];
  /** The parameters of each call of `action`. */
  params(action: string): Record<string, string>[];
  /** The placement groups that exist, by name. */
  placementGroups: Map<string, PlacementGroup>;
  /** The next `times` (default 1) calls of `action` answer `fault` (THROTTLED, INTERNAL_ERROR, or any EC2 error). */
  fail(action: string, fault: Omit<Ec2Fault, "times" | "after">, options?: { times?: number; after?: boolean }): void;
  /** Drops the faults not yet answered. */
  clearFaults(): void;
  /**
   * The next call of `action` is done (moto acts, the call is recorded) but never answered: the answer
   * resolves with the call, for a test that kills the caller between the act and its answer.
   */
  hold(action: string): Promise<ProxiedCall>;
  /** How instances launched from now on boot (default: NotFound never, `running` at once, as moto). */
  boot(behaviour: Partial<BootBehaviour>): void;
  /**
   * The ENI the last successful AssignPrivateIpAddresses gave `address` to (explicitly, or picked by EC2
   * for SecondaryPrivateIpAddressCount), while it holds it: undefined once it was unassigned or its ENI
   * deleted. What the test bed routes VIP traffic by.
   */
  vipHolder(address: string): string | undefined;
  /** Forgets calls, faults, tokens, groups and boot behaviour (not moto's state: Moto.reset; nor vipHolder, which follows moto's state). */
  reset(): void;
  stop(): Promise<void>;
}

const XMLNS = "http://ec2.amazonaws.com/doc/2016-11-15/";
const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** EC2's error body (every Query API error: Response/Errors/Error with Code and Message, and a RequestID). */
export const errorXml = (code: string, message: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${escape(code)}</Code><Message>${escape(message)}</Message></Error></Errors><RequestID>${randomUUID()}</RequestID></Response>`;

const responseXml = (action: string, body: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${XMLNS}"><requestId>${randomUUID()}</requestId>${body}</${action}Response>`;

const groupXml = (g: PlacementGroup) =>
  `<groupName>${escape(g.groupName)}</groupName><state>available</state><strategy>${escape(g.strategy)}</strategy>` +
  `<groupId>${g.groupId}</groupId><groupArn>arn:aws:ec2:us-east-1:123456789012:placement-group/${escape(g.groupName)}</groupArn>` +
  `<tagSet>${Object.entries(g.tags)
    .map(([k, v]) => `<item><key>${escape(k)}</key><value>${escape(v)}</value></item>`)
    .join("")}</tagSet>`;

/** The values of a Query list parameter: `prefix.1`, `prefix.2`, ... */
const list = (params: Record<string, string>, prefix: string) => {
  const out: string[] = [];
  for (let i = 1; params[`${prefix}.${i}`] !== undefined; i++) out.push(params[`${prefix}.${i}`]!);
  return out;
};

/** The tags of a TagSpecification of `resourceType`. */
function specTags(params: Record<string, string>, resourceType: string): Record<string, string> {
  for (let s = 1; params[`TagSpecification.${s}.ResourceType`] !== undefined; s++) {
    if (params[`TagSpecification.${s}.ResourceType`] !== resourceType) continue;
    const tags: Record<string, string> = {};
    for (let t = 1; params[`TagSpecification.${s}.Tag.${t}.Key`] !== undefined; t++)
      tags[params[`TagSpecification.${s}.Tag.${t}.Key`]!] = params[`TagSpecification.${s}.Tag.${t}.Value`] ?? "";
    return tags;
  }
  return {};
}

/** The top-level `<item>`s of each `<instancesSet>` of an EC2 answer, each passed through `fn`. */
function mapInstances(xml: string, fn: (item: string) => string): string {
  return xml.replace(/<instancesSet>([\s\S]*?)<\/instancesSet>/g, (_, inner: string) => {
    let out = "";
    let depth = 0;
    let start = -1;
    const tag = /<(\/?)item(\/?)>/g;
    let last = 0;
    for (let m = tag.exec(inner); m; m = tag.exec(inner)) {
      if (m[2]) continue; // <item/>
      if (!m[1]) {
        if (depth++ === 0) {
          out += inner.slice(last, m.index);
          start = m.index;
        }
      } else if (--depth === 0) {
        out += fn(inner.slice(start, tag.lastIndex));
        last = tag.lastIndex;
      }
    }
    return `<instancesSet>${out}${inner.slice(last)}</instancesSet>`;
  });
}

/** The instance's own id and state in one item of an instancesSet (the first instanceId is the instance's). */
const idOf = (item: string) => /<instanceId>([^<]+)<\/instanceId>/.exec(item)?.[1];
const stateOf = (item: string) => /<instanceState><code>\d+<\/code><name>([^<]+)<\/name><\/instanceState>/.exec(item)?.[1];

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Starts a proxy on a free loopback port in front of moto at `motoEndpoint`. */
export async function startEc2Proxy(motoEndpoint: string): Promise<Ec2Proxy> {
  const calls: ProxiedCall[] = [];
  const history: Pick<ProxiedCall, "action" | "userAgent">[] = [];
  const faults = new Map<string, Ec2Fault[]>();
  const groups = new Map<string, PlacementGroup>();
  /** ClientToken → the RunInstances parameters it came with and moto's answer (a promise: a concurrent retry waits for it). */
  const tokens = new Map<string, { key: string; answer: Promise<{ status: number; body: string }> }>();
  let behaviour: BootBehaviour = { notFoundOnce: false, pendingDescribes: 0 };
  /** New instances and how far they are through their boot. */
  const booting = new Map<string, BootBehaviour & { describes: number; notFoundDone: boolean }>();
  /** Actions whose next call is held unanswered (hold), with whom to tell. */
  const holds = new Map<string, (call: ProxiedCall) => void>();

  /** A request of the proxy's own to moto (signed as moto routes: an EC2 credential scope; it checks no signature). */
  const moto = async (body: string, headers: Record<string, string>) => {
    const res = await fetch(motoEndpoint, { method: "POST", headers, body });
    return { status: res.status, body: await res.text() };
  };
  const ownHeaders = {
    "content-type": "application/x-www-form-urlencoded; charset=utf-8",
    authorization: "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/ec2/aws4_request, SignedHeaders=host, Signature=0",
  };

  /** moto's EC2 through the Query client, for the proxy's own reads and fix-ups (ENIs, instances). */
  const motoEc2 = awsQueryClient(
    { signingName: "ec2", version: "2016-11-15" },
    { endpoint: motoEndpoint, region: "us-east-1", credentials: async () => ({ accessKeyId: "testing", secretAccessKey: "testing" }) },
  );
  /** address → the ENI the last AssignPrivateIpAddresses gave it to. */
  const holders = new Map<string, string>();
  const refuse = (code: string, message: string) => ({ status: 400, body: errorXml(code, message) });

  async function nics(params: Record<string, string> = {}): Promise<Ec2Interface[]> {
    return xmlItems(await motoEc2("DescribeNetworkInterfaces", params, "proxy: DescribeNetworkInterfaces"), "networkInterfaceSet").map(
      interfaceOf,
    );
  }
  async function nic(id: string): Promise<Ec2Interface | undefined> {
    try {
      return (await nics({ "NetworkInterfaceId.1": id }))[0];
    } catch {
      return undefined; // moto answers the request itself with its NotFound
    }
  }
  async function instance(id: string): Promise<{ zone: string; state: string; type: string } | undefined> {
    try {
      const out = await motoEc2("DescribeInstances", { "InstanceId.1": id }, "proxy: DescribeInstances");
      const item = xmlItems(xmlItems(out, "reservationSet")[0], "instancesSet")[0];
      if (!item) return undefined;
      return {
        zone: xmlText(xmlChild(item, "placement"), "availabilityZone") ?? "",
        state: xmlText(xmlChild(item, "instanceState"), "name") ?? "",
        type: xmlText(item, "instanceType") ?? "",
      };
    } catch {
      return undefined;
    }
  }

  /** The network interfaces an instance type takes (its NetworkInfo.MaximumNetworkInterfaces), if moto knows the type. */
  async function maxInterfaces(type: string): Promise<number | undefined> {
    try {
      const out = await motoEc2("DescribeInstanceTypes", { "InstanceType.1": type }, "proxy: DescribeInstanceTypes");
      const max = Number(xmlText(xmlChild(xmlItems(out, "instanceTypeSet")[0], "networkInfo"), "maximumNetworkInterfaces"));
      return Number.isInteger(max) && max > 0 ? max : undefined;
    } catch {
      return undefined;
    }
  }

  /** What AWS refuses of ENIs and security groups and moto does not; null: moto answers. */
  async function interfaceCall(action: string, p: Record<string, string>, forward: () => Promise<{ status: number; body: string }>) {
    if (action === "DeleteNetworkInterface") {
      const id = p.NetworkInterfaceId ?? "";
      const n = await nic(id);
      if (n?.attachment) {
        // AWS detaches an ENI from an instance that terminated; moto keeps it attached (in-use).
        if ((await instance(n.attachment.instanceId))?.state !== "terminated")
          return refuse("InvalidNetworkInterface.InUse", `The network interface '${id}' is currently in use.`);
        await motoEc2("DetachNetworkInterface", { AttachmentId: n.attachment.id, Force: "true" }, "proxy: DetachNetworkInterface");
      }
      const out = await forward();
      if (out.status === 200) for (const [address, eni] of holders) if (eni === id) holders.delete(address);
      return out;
    }
    if (action === "DeleteSecurityGroup") {
      const id = p.GroupId ?? "";
      if (id && (await nics()).some((n) => n.groups.includes(id)))
        return refuse("DependencyViolation", `resource ${id} has a dependent object`);
      return forward();
    }
    if (action === "AttachNetworkInterface") {
      const id = p.NetworkInterfaceId ?? "";
      const instanceId = p.InstanceId ?? "";
      const n = await nic(id);
      const i = await instance(instanceId);
      if (!n || !i) return forward();
      if (n.attachment) return refuse("InvalidNetworkInterface.InUse", `Interface: [${id}] in use.`);
      if (n.zone !== i.zone)
        return refuse(
          "InvalidParameterCombination",
          "You may not attach a network interface to an instance if they are not in the same availability zone",
        );
      const attached = (await nics()).filter((o) => o.attachment?.instanceId === instanceId);
      if (attached.some((o) => String(o.attachment!.deviceIndex) === p.DeviceIndex))
        return refuse(
          "InvalidParameterValue",
          `Instance '${instanceId}' already has an interface attached at device index '${p.DeviceIndex}'.`,
        );
      const max = await maxInterfaces(i.type);
      if (max !== undefined && attached.length + 1 > max)
        return refuse("AttachmentLimitExceeded", `Interface count ${attached.length + 1} exceeds the limit for ${i.type}`);
      return forward();
    }
    if (action === "AssignPrivateIpAddresses") {
      const target = p.NetworkInterfaceId ?? "";
      const wanted = list(p, "PrivateIpAddress");
      const before = await nic(target);
      if (!before) return forward();
      const all = await nics();
      for (const address of wanted) {
        const holder = all.find((n) => n.id !== target && (n.primaryIp === address || n.secondaryIps.includes(address)));
        if (!holder) continue;
        if (p.AllowReassignment !== "true" || holder.primaryIp === address)
          return refuse("InvalidIPAddress.InUse", "The specified address is already in use.");
      }
      // AWS moves the address: it leaves the ENI that held it (moto would leave it on both).
      for (const address of wanted) {
        const holder = all.find((n) => n.id !== target && n.secondaryIps.includes(address));
        if (holder)
          await motoEc2(
            "UnassignPrivateIpAddresses",
            { NetworkInterfaceId: holder.id, "PrivateIpAddress.1": address },
            "proxy: UnassignPrivateIpAddresses",
          );
      }
      const out = await forward();
      if (out.status !== 200) return out;
      const after = (await nic(target))?.secondaryIps ?? [];
      for (const address of wanted.length ? wanted : after.filter((a) => !before.secondaryIps.includes(a))) holders.set(address, target);
      return out;
    }
    // UnassignPrivateIpAddresses
    const out = await forward();
    if (out.status === 200)
      for (const address of list(p, "PrivateIpAddress")) if (holders.get(address) === p.NetworkInterfaceId) holders.delete(address);
    return out;
  }

  /** The states moto gives these instances (an instance it does not know: absent). */
  async function statesOf(ids: string[]): Promise<Map<string, string>> {
    const states = new Map<string, string>();
    if (ids.length === 0) return states;
    const q = new URLSearchParams({ Action: "DescribeInstances", Version: "2016-11-15" });
    ids.forEach((id, i) => q.set(`InstanceId.${i + 1}`, id));
    const out = await moto(q.toString(), ownHeaders);
    mapInstances(out.body, (item) => {
      const id = idOf(item);
      const state = stateOf(item);
      if (id && state) states.set(id, state);
      return item;
    });
    return states;
  }

  async function placementGroupCall(action: string, p: Record<string, string>): Promise<{ status: number; body: string }> {
    if (action === "CreatePlacementGroup") {
      const name = p.GroupName ?? "";
      if (!name) return { status: 400, body: errorXml("MissingParameter", "The request must contain the parameter groupName") };
      if (groups.has(name))
        return { status: 400, body: errorXml("InvalidPlacementGroup.Duplicate", `The placement group '${name}' already exists.`) };
      const strategy = p.Strategy ?? "";
      if (!["cluster", "spread", "partition"].includes(strategy))
        return { status: 400, body: errorXml("InvalidParameterValue", `Value (${strategy}) for parameter strategy is invalid.`) };
      const g: PlacementGroup = {
        groupName: name,
        groupId: `pg-${randomUUID().replaceAll("-", "").slice(0, 17)}`,
        strategy,
        tags: specTags(p, "placement-group"),
        instances: [],
      };
      groups.set(name, g);
      return { status: 200, body: responseXml(action, `<placementGroup>${groupXml(g)}</placementGroup>`) };
    }
    if (action === "DescribePlacementGroups") {
      const names = list(p, "GroupName");
      for (const n of names)
        if (!groups.has(n))
          return { status: 400, body: errorXml("InvalidPlacementGroup.Unknown", `The Placement Group '${n}' is unknown.`) };
      const found = names.length ? names.map((n) => groups.get(n)!) : [...groups.values()];
      return {
        status: 200,
        body: responseXml(action, `<placementGroupSet>${found.map((g) => `<item>${groupXml(g)}</item>`).join("")}</placementGroupSet>`),
      };
    }
    // DeletePlacementGroup: refused while an instance launched into it is not terminated.
    const name = p.GroupName ?? "";
    const g = groups.get(name);
    if (!g) return { status: 400, body: errorXml("InvalidPlacementGroup.Unknown", `The Placement Group '${name}' is unknown.`) };
    const states = await statesOf(g.instances);
    if ([...states.values()].some((s) => s !== "terminated"))
      return {
        status: 400,
        body: errorXml("InvalidPlacementGroup.InUse", `The placement group '${name}' is in use and may not be deleted.`),
      };
    groups.delete(name);
    return { status: 200, body: responseXml(action, "<return>true</return>") };
  }

  async function runInstances(p: Record<string, string>, forward: () => Promise<{ status: number; body: string }>) {
    const group = p["Placement.GroupName"];
    if (group && !groups.has(group))
      return { status: 400, body: errorXml("InvalidPlacementGroup.Unknown", `The Placement Group '${group}' is unknown.`) };
    const token = p.ClientToken;
    const key = JSON.stringify(Object.entries(p).sort(([a], [b]) => a.localeCompare(b)));
    const launch = async () => {
      const out = await forward();
      if (out.status === 200)
        mapInstances(out.body, (item) => {
          const id = idOf(item);
          if (id) {
            booting.set(id, { ...behaviour, describes: 0, notFoundDone: false });
            if (group) groups.get(group)?.instances.push(id);
          }
          return item;
        });
      return out;
    };
    if (!token) return launch();
    const seen = tokens.get(token);
    if (seen) {
      if (seen.key !== key)
        return {
          status: 400,
          body: errorXml(
            "IdempotentParameterMismatch",
            "Arguments on this idempotent request are inconsistent with arguments used in previous request(s).",
          ),
        };
      return seen.answer;
    }
    const answer = launch();
    tokens.set(token, { key, answer });
    // A request AWS refused launched nothing: its token is free again.
    void answer.then(
      (a) => a.status === 200 || tokens.delete(token),
      () => tokens.delete(token),
    );
    return answer;
  }

  async function describeInstances(p: Record<string, string>, forward: () => Promise<{ status: number; body: string }>) {
    for (const id of list(p, "InstanceId")) {
      const b = booting.get(id);
      if (b?.notFoundOnce && !b.notFoundDone) {
        b.notFoundDone = true;
        return { status: 400, body: errorXml("InvalidInstanceID.NotFound", `The instance ID '${id}' does not exist`) };
      }
    }
    const out = await forward();
    if (out.status !== 200) return out;
    const body = mapInstances(out.body, (item) => {
      const id = idOf(item);
      const b = id ? booting.get(id) : undefined;
      if (!b) return item;
      b.notFoundDone = true; // seen once: no NotFound after it
      if (stateOf(item) !== "running" || b.describes++ >= b.pendingDescribes) return item;
      return item.replace(/<instanceState>[\s\S]*?<\/instanceState>/, "<instanceState><code>0</code><name>pending</name></instanceState>");
    });
    return { status: 200, body };
  }

  /**
   * `n` addresses of the subnet no ENI holds (as a primary or secondary address) and AWS does not reserve
   * (the first four and the last), from the top of the range down: moto picks an ENI's address at random
   * without looking at the others (and its instances' from the bottom up), so two ENIs could get one.
   */
  async function freeAddresses(subnetId: string, n: number): Promise<string[]> {
    const subnet = xmlItems(await motoEc2("DescribeSubnets", { "SubnetId.1": subnetId }, "proxy: DescribeSubnets"), "subnetSet")[0];
    const [base, prefix] = (xmlText(subnet, "cidrBlock") ?? "").split("/");
    const toInt = (ip: string) => ip.split(".").reduce((v, o) => v * 256 + Number(o), 0);
    const toIp = (v: number) => [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join(".");
    const held = new Set(
      (await nics({ "Filter.1.Name": "subnet-id", "Filter.1.Value.1": subnetId })).flatMap((x) => [x.primaryIp, ...x.secondaryIps]),
    );
    const first = toInt(base!);
    const out: string[] = [];
    for (let v = first + 2 ** (32 - Number(prefix)) - 2; v >= first + 4 && out.length < n; v--) if (!held.has(toIp(v))) out.push(toIp(v));
    return out;
  }

  /** The request's parameters with the addresses moto would pick itself pinned to free ones (freeAddresses). */
  async function pinAddresses(action: string, p: Record<string, string>): Promise<Record<string, string> | undefined> {
    if (action === "CreateNetworkInterface" && p.SubnetId && !p.PrivateIpAddress && !p["PrivateIpAddresses.1.PrivateIpAddress"])
      return { ...p, PrivateIpAddress: (await freeAddresses(p.SubnetId, 1))[0]! };
    if (action === "AssignPrivateIpAddresses" && p.SecondaryPrivateIpAddressCount && p.NetworkInterfaceId) {
      const subnetId = (await nic(p.NetworkInterfaceId))?.subnetId;
      if (!subnetId) return undefined;
      const { SecondaryPrivateIpAddressCount: count, ...rest } = p;
      const pinned = await freeAddresses(subnetId, Number(count));
      return { ...rest, ...Object.fromEntries(pinned.map((a, i) => [`PrivateIpAddress.${i + 1}`, a])) };
    }
    return undefined;
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    let raw = await readBody(req);
    let params = Object.fromEntries(new URLSearchParams(raw));
    const action = params.Action ?? "";
    const pinned = await pinAddresses(action, params).catch(() => undefined);
    if (pinned) {
      params = pinned;
      raw = new URLSearchParams(pinned).toString();
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (typeof v === "string" && !["host", "content-length", "connection"].includes(k)) headers[k] = v;
    const forward = () => moto(raw, headers);
    const fault = faults.get(action)?.[0];
    if (fault && --fault.times <= 0) faults.get(action)!.shift();
    let answer: { status: number; body: string };
    if (fault && !fault.after) answer = { status: fault.status, body: errorXml(fault.code, fault.message) };
    else if (/^(Create|Delete)PlacementGroup$|^DescribePlacementGroups$/.test(action)) answer = await placementGroupCall(action, params);
    else if (action === "RunInstances") answer = await runInstances(params, forward);
    else if (action === "DescribeInstances") answer = await describeInstances(params, forward);
    else if (/^(Delete|Attach)NetworkInterface$|^DeleteSecurityGroup$|^(Assign|Unassign)PrivateIpAddresses$/.test(action))
      answer = await interfaceCall(action, params, forward);
    else answer = await forward();
    if (fault?.after) answer = { status: fault.status, body: errorXml(fault.code, fault.message) };
    const userAgent = headers["user-agent"] ?? "";
    const call = { action, params, status: answer.status, userAgent };
    calls.push(call);
    history.push({ action, userAgent });
    const holder = holds.get(action);
    if (holder) {
      holds.delete(action);
      return holder(call); // unanswered: the connection ends with its caller, or at stop()
    }
    res.writeHead(answer.status, { "content-type": "text/xml;charset=UTF-8", "x-amzn-requestid": randomUUID() });
    res.end(answer.body);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      res.writeHead(500, { "content-type": "text/xml;charset=UTF-8" });
      res.end(errorXml("InternalError", `ec2 proxy: ${String(e)}`));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    history,
    params: (action) => calls.filter((c) => c.action === action).map((c) => c.params),
    placementGroups: groups,
    fail: (action, fault, options = {}) => {
      const queue = faults.get(action) ?? [];
      queue.push({ ...fault, times: options.times ?? 1, after: options.after ?? false });
      faults.set(action, queue);
    },
    clearFaults: () => faults.clear(),
    hold: (action) => new Promise((resolve) => holds.set(action, resolve)),
    boot: (b) => void (behaviour = { ...behaviour, ...b }),
    vipHolder: (address) => holders.get(address),
    reset: () => {
      calls.length = 0;
      faults.clear();
      groups.clear();
      tokens.clear();
      booting.clear();
      behaviour = { notFoundOnce: false, pendingDescribes: 0 };
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
