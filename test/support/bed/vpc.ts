// The EC2 test bed's VPC data plane: what the VPC does between ENIs, as moto describes them.
// - Each VPC (of the bed's /20) is a network namespace the bed holds: one bridge per subnet, which holds the
//   subnet's first host address (the VPC router's, what the vpc driver answers as gateway_ip), and
//   forwarding on, so that the subnets of one VPC route to each other. VPCs share nothing: no packet goes
//   from one VPC's namespace to another's.
// - An ENI attached to a running instance of the bed at DeviceIndex >= 1 is a veth pair: eth<DeviceIndex>
//   with the ENI's MAC in the instance's network namespace (down and without an address, as a hot-plugged
//   NIC: Octavia's agent finds it by its MAC, configures it and moves it into amphora-haproxy), its other
//   end on its subnet's bridge. So is one attached later to a running instance (the next sync plugs it),
//   and one of another VPC than the instance's (a multi-VPC ENI): it joins its own subnet's bridge, in its
//   own VPC's namespace, and reaches that VPC only. Detached (or the instance gone), the pair goes, from
//   wherever the instance moved its end.
// - The router never asks ARP (its solicitations are 0): it reaches each address of its subnets through a
//   permanent neighbour entry naming the MAC of the ENI that holds the address (`owners`, bed.ts), which no
//   ARP can change (arp_accept 0; a permanent entry ignores gratuitous ARP). An address no ENI holds any
//   more is a blackhole route. So a VIP goes where the last AssignPrivateIpAddresses put it, whatever
//   the instances hold or announce, as in a VPC; a flow that forgets to move it loses its traffic.
//   Traffic within a subnet is plain L2 (the bridge) and does answer ARP: tests put their clients in
//   another subnet, so that they reach a VIP through the router.
// - Hosts (clients and backends of the tests) are namespaces with an ENI of their own (moto knows their
//   address), plugged into their subnet's bridge, with the router as their default gateway.
// Every namespace is held by a process that ends with the test process; the veth pairs go with them.
import { spawnSync } from "node:child_process";
import { holdNetns, run, type NetnsHolder } from "../agent/agent";

/** An ENI as the data plane needs it (from DescribeNetworkInterfaces). */
export interface PlaneEni {
  id: string;
  subnetId: string;
  mac: string;
  /** Primary first. */
  addresses: string[];
  attachment?: { id: string; instanceId: string; deviceIndex: number; status: string };
}

/** A subnet the plane gives a bridge (from DescribeSubnets): one of a VPC of the bed's /20, not a management subnet. */
export interface PlaneSubnet {
  id: string;
  vpcId: string;
  cidr: string;
}

/** What the plane brings itself in line with, each sync. */
export interface PlaneState {
  subnets: PlaneSubnet[];
  enis: PlaneEni[];
  /** Where each private address of the subnets goes: the ENI that holds it (bed.ts `addressOwners`). */
  owners: Map<string, PlaneEni>;
  /** The network namespaces (/proc/<pid>/ns/net) of the bed's running instances, by instance id. */
  instances: Map<string, string>;
}

/** An IPv4 address as a number, and back. */
export const ipToInt = (ip: string) => ip.split(".").reduce((v, o) => v * 256 + Number(o), 0);
export const intToIp = (v: number) => [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join(".");

/** The subnet's first host address: the VPC router's (AWS's x.x.x.1). */
export const gatewayOf = (cidr: string) => intToIp(ipToInt(cidr.split("/")[0]!) + 1);

interface Bridge {
  name: string;
  subnet: PlaneSubnet;
}

interface Vpc {
  holder: NetnsHolder;
  bridges: Map<string, Bridge>;
  /** The permanent neighbour entries the plane set: address → "mac dev". */
  neighbours: Map<string, string>;
  /** Addresses an ENI held and no ENI holds now: blackhole routes. */
  blackholes: Set<string>;
}

interface Plug {
  key: string; // eni id / attachment id
  vpcId: string;
  /** The end on the subnet's bridge, in the VPC's namespace. */
  name: string;
  instanceId: string;
}

export interface BedHost {
  address: string;
  mac: string;
  subnetId: string;
  /** The ENI the host's address belongs to (moto knows the address is taken). */
  eniId: string;
  /** Runs a command in the host's network namespace. */
  exec(args: string[], timeoutMs?: number): { status: number | null; stdout: string; stderr: string };
  /** nsenter's option for the host's network namespace. */
  nsenter: string;
  remove(): void;
}

export interface VpcPlane {
  /** Brings namespaces, bridges, interfaces and neighbour entries in line with `state`; answers what it could not do (each once). */
  apply(state: PlaneState): Promise<Error[]>;
  /** Runs a command in the VPC's namespace (its router). */
  exec(vpcId: string, args: string[], allowFail?: boolean): string;
  /** Whether the VPC's namespace has the subnet's bridge. */
  hasBridge(vpcId: string, subnetId: string): boolean;
  /** A namespace with `address`/`mac` (its ENI's) on the subnet's bridge, default route via the router. */
  plugHost(subnet: PlaneSubnet, eniId: string, address: string, mac: string): Promise<BedHost>;
  stop(): void;
}

let seq = 0;
const ip = (nsenter: string, ...args: string[]) => run("/usr/bin/nsenter", [nsenter, "--", "/usr/sbin/ip", ...args]);
const prefixOf = (cidr: string) => cidr.split("/")[1]!;

/** The router's settings: forwarding; no ARP of its own, none learnt from gratuitous ARP; no redirects; no reverse-path filter (routes are asymmetric between an instance's interfaces). */
const ROUTER_SYSCTLS = [
  "net.ipv4.ip_forward=1",
  "net.ipv4.conf.all.rp_filter=0",
  "net.ipv4.conf.default.rp_filter=0",
  "net.ipv4.conf.all.arp_accept=0",
  "net.ipv4.conf.default.arp_accept=0",
  "net.ipv4.conf.all.send_redirects=0",
  "net.ipv4.conf.default.send_redirects=0",
];
/** A bridge's: the router never solicits (a network namespace has no neigh/default of its own to set once). */
const noSolicit = (dev: string) => ["mcast_solicit", "ucast_solicit", "app_solicit"].map((k) => `net.ipv4.neigh.${dev}.${k}=0`);

export function vpcPlane(): VpcPlane {
  const vpcs = new Map<string, Vpc>();
  const creating = new Map<string, Promise<Vpc>>();
  const plugs = new Map<string, Plug>(); // by ENI id
  const hosts = new Set<BedHost>();
  const failed = new Set<string>(); // what was tried and failed: not again
  let stopped = false;

  const vpcOf = async (vpcId: string): Promise<Vpc> => {
    const known = vpcs.get(vpcId) ?? (await creating.get(vpcId));
    if (known) return known;
    const p = (async () => {
      const holder = await holdNetns();
      try {
        run("/usr/bin/nsenter", [holder.nsenter, "--", "/usr/sbin/sysctl", "-q", "-w", ...ROUTER_SYSCTLS]);
        ip(holder.nsenter, "link", "set", "lo", "up");
      } catch (e) {
        holder.release();
        throw e;
      }
      const vpc: Vpc = { holder, bridges: new Map(), neighbours: new Map(), blackholes: new Set() };
      if (stopped) holder.release();
      else vpcs.set(vpcId, vpc);
      return vpc;
    })();
    creating.set(vpcId, p);
    try {
      return await p;
    } finally {
      creating.delete(vpcId);
    }
  };

  const ensureBridge = (vpc: Vpc, subnet: PlaneSubnet) => {
    if (vpc.bridges.has(subnet.id)) return;
    const name = `s${++seq}`;
    const ns = vpc.holder.nsenter;
    // A MAC of its own: a bridge that takes its ports' lowest one changes it as ports come, and the kernel
    // then flushes the device's neighbour entries, permanent ones included.
    ip(
      ns,
      "link",
      "add",
      name,
      "address",
      `02:0b:ed:00:${((seq >> 8) & 255).toString(16).padStart(2, "0")}:${(seq & 255).toString(16).padStart(2, "0")}`,
      "type",
      "bridge",
    );
    run("/usr/bin/nsenter", [ns, "--", "/usr/sbin/sysctl", "-q", "-w", ...noSolicit(name)]);
    ip(ns, "addr", "add", `${gatewayOf(subnet.cidr)}/${prefixOf(subnet.cidr)}`, "dev", name);
    ip(ns, "link", "set", name, "up");
    vpc.bridges.set(subnet.id, { name, subnet });
  };

  const unplug = (eniId: string) => {
    const p = plugs.get(eniId);
    if (!p) return;
    plugs.delete(eniId);
    const vpc = vpcs.get(p.vpcId);
    // The pair goes with either end (the instance's may be in amphora-haproxy by now).
    if (vpc) run("/usr/bin/nsenter", [vpc.holder.nsenter, "--", "/usr/sbin/ip", "link", "del", p.name], true);
  };

  const plane: VpcPlane = {
    apply: async (state) => {
      const errors: Error[] = [];
      const attempt = (key: string, fn: () => void) => {
        if (failed.has(key)) return;
        try {
          fn();
        } catch (e) {
          failed.add(key);
          errors.push(e as Error);
        }
      };
      for (const vpcId of new Set(state.subnets.map((s) => s.vpcId)))
        if (!vpcs.has(vpcId) && !failed.has(`vpc ${vpcId}`))
          await vpcOf(vpcId).catch((e: unknown) => {
            failed.add(`vpc ${vpcId}`);
            errors.push(e as Error);
          });
      if (stopped) return errors;
      const subnets = new Map(state.subnets.map((s) => [s.id, s]));
      for (const s of state.subnets) {
        const vpc = vpcs.get(s.vpcId);
        if (vpc) attempt(`bridge ${s.id}`, () => ensureBridge(vpc, s));
      }
      // Subnets deleted: their bridges go.
      for (const vpc of vpcs.values())
        for (const [id, b] of vpc.bridges)
          if (!subnets.has(id)) {
            run("/usr/bin/nsenter", [vpc.holder.nsenter, "--", "/usr/sbin/ip", "link", "del", b.name], true);
            vpc.bridges.delete(id);
            // Its neighbour entries went with it.
            for (const [address, entry] of vpc.neighbours) if (entry.endsWith(` ${b.name}`)) vpc.neighbours.delete(address);
          }

      // ENIs attached to running instances at DeviceIndex >= 1.
      const wanted = new Map<string, PlaneEni>();
      for (const eni of state.enis) {
        const a = eni.attachment;
        if (!a || a.deviceIndex < 1 || !["attached", "attaching"].includes(a.status) || !state.instances.has(a.instanceId)) continue;
        wanted.set(eni.id, eni);
      }
      for (const [id, p] of plugs) {
        const eni = wanted.get(id);
        if (!eni || p.key !== `${id}/${eni.attachment!.id}` || !state.instances.has(p.instanceId)) unplug(id);
      }
      for (const [id, eni] of wanted) {
        if (plugs.has(id)) continue;
        const subnet = subnets.get(eni.subnetId);
        const vpc = subnet && vpcs.get(subnet.vpcId);
        const bridge = vpc?.bridges.get(eni.subnetId);
        if (!subnet || !vpc || !bridge) continue; // not a subnet of the plane (yet)
        const a = eni.attachment!;
        const key = `${id}/${a.id}`;
        attempt(`plug ${key}`, () => {
          const name = `e${++seq}`;
          const ns = vpc.holder.nsenter;
          ip(
            ns,
            "link",
            "add",
            name,
            "type",
            "veth",
            "peer",
            "name",
            `eth${a.deviceIndex}`,
            "address",
            eni.mac,
            "netns",
            state.instances.get(a.instanceId)!,
          );
          plugs.set(id, { key, vpcId: subnet.vpcId, name, instanceId: a.instanceId });
          ip(ns, "link", "set", name, "master", bridge.name, "up");
        });
      }

      // The router's neighbours: each address to the MAC of its owner, permanent.
      for (const [vpcId, vpc] of vpcs) {
        const want = new Map<string, string>();
        for (const [address, eni] of state.owners) {
          const bridge = vpc.bridges.get(eni.subnetId);
          if (bridge && subnets.get(eni.subnetId)?.vpcId === vpcId) want.set(address, `${eni.mac} ${bridge.name}`);
        }
        const ns = vpc.holder.nsenter;
        for (const [address, entry] of vpc.neighbours)
          if (!want.has(address)) {
            const dev = entry.split(" ")[1]!;
            attempt(`blackhole ${vpcId} ${address} ${entry}`, () => {
              ip(ns, "neigh", "del", address, "dev", dev);
              ip(ns, "route", "replace", "blackhole", `${address}/32`);
              vpc.neighbours.delete(address);
              vpc.blackholes.add(address);
            });
          }
        for (const [address, entry] of want) {
          if (vpc.neighbours.get(address) === entry) continue;
          const [mac, dev] = entry.split(" ") as [string, string];
          attempt(`neighbour ${vpcId} ${address} ${entry}`, () => {
            if (vpc.blackholes.delete(address)) ip(ns, "route", "del", "blackhole", `${address}/32`);
            const old = vpc.neighbours.get(address);
            if (old && old.split(" ")[1] !== dev)
              run("/usr/bin/nsenter", [ns, "--", "/usr/sbin/ip", "neigh", "del", address, "dev", old.split(" ")[1]!], true);
            ip(ns, "neigh", "replace", address, "lladdr", mac, "dev", dev, "nud", "permanent");
            vpc.neighbours.set(address, entry);
          });
        }
      }
      return errors;
    },
    exec: (vpcId, args, allowFail = false) => {
      const vpc = vpcs.get(vpcId);
      if (!vpc) throw new Error(`the bed has no namespace for ${vpcId} (none of its subnets seen yet)`);
      return run("/usr/bin/nsenter", [vpc.holder.nsenter, "--", ...args], allowFail);
    },
    hasBridge: (vpcId, subnetId) => vpcs.get(vpcId)?.bridges.has(subnetId) ?? false,
    plugHost: async (subnet, eniId, address, mac) => {
      const vpc = await vpcOf(subnet.vpcId);
      ensureBridge(vpc, subnet);
      const bridge = vpc.bridges.get(subnet.id)!;
      const holder = await holdNetns();
      const name = `h${++seq}`;
      const host: BedHost = {
        address,
        mac,
        subnetId: subnet.id,
        eniId,
        nsenter: holder.nsenter,
        exec: (args, timeoutMs = 15_000) => spawnSyncIn(holder.nsenter, args, timeoutMs),
        remove: () => {
          hosts.delete(host);
          holder.release();
          run("/usr/bin/nsenter", [vpc.holder.nsenter, "--", "/usr/sbin/ip", "link", "del", name], true);
        },
      };
      hosts.add(host);
      try {
        ip(vpc.holder.nsenter, "link", "add", name, "type", "veth", "peer", "name", "eth0", "address", mac, "netns", String(holder.pid));
        ip(vpc.holder.nsenter, "link", "set", name, "master", bridge.name, "up");
        ip(holder.nsenter, "link", "set", "lo", "up");
        ip(holder.nsenter, "addr", "add", `${address}/${prefixOf(subnet.cidr)}`, "dev", "eth0");
        ip(holder.nsenter, "link", "set", "eth0", "up");
        ip(holder.nsenter, "route", "add", "default", "via", gatewayOf(subnet.cidr));
      } catch (e) {
        host.remove();
        throw e;
      }
      return host;
    },
    stop: () => {
      stopped = true;
      for (const h of [...hosts]) h.remove();
      for (const vpc of vpcs.values()) vpc.holder.release();
      vpcs.clear();
      plugs.clear();
    },
  };
  return plane;
}

function spawnSyncIn(nsenter: string, args: string[], timeoutMs: number) {
  const r = spawnSync("/usr/bin/nsenter", [nsenter, "--", ...args], { encoding: "utf8", timeout: timeoutMs });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
