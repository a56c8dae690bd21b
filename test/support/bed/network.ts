// The EC2 test bed's management network (devstack's lb-mgmt-net and o-hm0): a bridge in a network
// namespace the bed holds, one veth pair joining the host to it (the host end holds the controller's
// address, as o-hm0 does: the controller's processes are this test's), and one veth pair an instance.
// Nothing has a name outside the bed's namespaces but the host end; when the holder of the bridge's
// namespace ends (teardown, or the test process killed), the kernel deletes every pair, the host end and
// its address with it.
import { holdNetns, run, type NetnsHolder } from "../agent/agent";

export interface ManagementNetwork {
  /** The host end of the veth pair (o-hm0): "otvm<range index>". */
  hostIf: string;
  /** The controller's address, on hostIf. */
  controllerIp: string;
  prefix: number;
  /**
   * Plugs an instance into the bridge: a veth pair whose instance end is its eth0 (with `mac` and
   * `address`/prefix), in the network namespace `netns` (a /proc/<pid>/ns/net path); its lo holds
   * 169.254.169.254 for its metadata service. With `vipStandIn`, its eth1 is a stand-in VIP port (for tests
   * on the no-op network driver, which makes no ENI: the REST driver's VIP plug needs an interface with the
   * VRRP port's MAC): a veth pair whose other end stays down in the bridge's namespace. The VPC's ENIs are
   * ./vpc.ts's. Answers the bridge end's name and eth1's MAC ("" without the stand-in).
   */
  plug(netns: string, address: string, mac: string | undefined, vipStandIn?: boolean): { bridgeIf: string; vipMac: string };
  /** Runs a command in the bridge's namespace. */
  exec(args: string[]): string;
  remove(): void;
}

let plugs = 0;

export async function managementNetwork(opts: { index: number; controllerIp: string; prefix: number }): Promise<ManagementNetwork> {
  const holder: NetnsHolder = await holdNetns();
  const hostIf = `otvm${opts.index}`;
  const inBridge = (...args: string[]) => run("/usr/bin/nsenter", [holder.nsenter, "--", ...args]);
  const net: ManagementNetwork = {
    hostIf,
    controllerIp: opts.controllerIp,
    prefix: opts.prefix,
    plug: (netns, address, mac, vipStandIn = false) => {
      const name = `i${process.pid % 10000}p${++plugs}`;
      const inInstance = (...args: string[]) => run("/usr/bin/nsenter", [`--net=${netns}`, "--", "/usr/sbin/ip", ...args]);
      inBridge("/usr/sbin/ip", "link", "add", name, "type", "veth", "peer", "name", "eth0", "netns", netns);
      inBridge("/usr/sbin/ip", "link", "set", name, "master", "br0", "up");
      inInstance("link", "set", "lo", "up");
      inInstance("addr", "add", "169.254.169.254/32", "dev", "lo");
      if (mac) inInstance("link", "set", "eth0", "address", mac);
      inInstance("addr", "add", `${address}/${opts.prefix}`, "dev", "eth0");
      inInstance("link", "set", "eth0", "up");
      if (!vipStandIn) return { bridgeIf: name, vipMac: "" };
      inBridge("/usr/sbin/ip", "link", "add", `${name}v`, "type", "veth", "peer", "name", "eth1", "netns", netns);
      const vipMac = /link\/ether ([0-9a-f:]{17})/.exec(inInstance("-o", "link", "show", "eth1"))![1]!;
      return { bridgeIf: name, vipMac };
    },
    exec: (args) => inBridge(...args),
    remove: () => {
      holder.release();
      // Gone with the namespace; deleted here at once (and in case the holder was slow to end).
      run("/usr/sbin/ip", ["link", "del", hostIf], true);
    },
  };
  try {
    run("/usr/sbin/ip", ["link", "del", hostIf], true); // a bed of this range whose process was killed a moment ago
    inBridge("/usr/sbin/ip", "link", "set", "lo", "up");
    inBridge("/usr/sbin/ip", "link", "add", "br0", "type", "bridge");
    inBridge("/usr/sbin/ip", "link", "set", "br0", "up");
    run("/usr/sbin/ip", ["link", "add", hostIf, "type", "veth", "peer", "name", "uplink", "netns", String(holder.pid)]);
    inBridge("/usr/sbin/ip", "link", "set", "uplink", "master", "br0", "up");
    run("/usr/sbin/ip", ["addr", "add", `${opts.controllerIp}/${opts.prefix}`, "dev", hostIf]);
    run("/usr/sbin/ip", ["link", "set", hostIf, "up"]);
  } catch (e) {
    net.remove();
    throw e;
  }
  return net;
}
