// vipSecurityGroupRules held to Octavia's own _update_security_group_rules: master's (the methods in
// fixtures/octavia_master_sg_rules.py, verbatim) run by fixtures/octavia-sg-rules.py on a recording
// stand-in for Neutron, with Debian's python3-octavia for its constants and data models. Each case is a
// sequence of a load balancer's states; the stand-in's group carries over from one to the next, as a
// real group does, so Octavia's diff (what it adds, what it deletes) is what the test compares with.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Listener, LoadBalancer, SecurityGroupRule } from "../src";
import { vipSecurityGroupRules } from "../src";
import { loadBalancerRecord, PythonJsonProcess } from "./support";

const HARNESS = fileURLToPath(new URL("./fixtures/octavia-sg-rules.py", import.meta.url));
const octavia = new PythonJsonProcess("import runpy, sys; runpy.run_path(sys.argv[1], run_name='__main__')", [HARNESS]);
afterAll(() => octavia.close());

interface NeutronRule {
  direction: string;
  protocol: string | null;
  port_range_min: number | null;
  port_range_max: number | null;
  ethertype: string;
  remote_ip_prefix: string | null;
}

let nextPeer = 1025;
const listener = (protocol: string, protocol_port: number, over: Partial<Listener> = {}): Listener =>
  ({
    id: `l-${protocol}-${protocol_port}`,
    protocol,
    protocol_port,
    allowed_cidrs: [],
    provisioning_status: "ACTIVE",
    peer_port: nextPeer++,
    ...over,
  }) as Listener;

/** A rule as a comparable text: Octavia's VRRP/AH rule (any address) is ours from the group itself. */
const ours = (r: SecurityGroupRule) => `${r.ethertype} ${r.protocol} ${r.port} ${r.cidr}${r.fromGroup ? " group" : ""}`;
const theirs = (r: NeutronRule) => {
  expect(r.direction).toBe("ingress");
  expect(r.port_range_min).toBe(r.port_range_max);
  const ipProtocol = r.protocol === "112" || r.protocol === "51";
  return `${r.ethertype} ${r.protocol} ${r.port_range_max} ${r.remote_ip_prefix}${ipProtocol ? " group" : ""}`;
};

async function octaviaUpdate(version: "master" | "11", group: NeutronRule[], lb: LoadBalancer, listeners: Listener[]) {
  const answer = await octavia.ask({ version, group, lb, listeners });
  expect(answer.error).toBeUndefined();
  return answer as { group: NeutronRule[]; created: number; deleted: number };
}

const http = listener("HTTP", 80);
const cidrs = listener("HTTP", 80, { allowed_cidrs: ["192.0.2.0/24", "203.0.113.0/25", "2001:db8::/64"] });
const udp = listener("UDP", 53);
const sctp = listener("SCTP", 9000);
const tcpSamePort = listener("TCP", 53);
const https = listener("HTTPS", 443);
const gone = { ...https, provisioning_status: "PENDING_DELETE" };
/** A TCP listener on another listener's peer port, open to 0.0.0.0/0: the peer port needs no rule of its own. */
const onPeerPort = listener("TCP", 1025, { allowed_cidrs: ["0.0.0.0/0"] });
const dualStack = { additional_vips: [{ subnet_id: "s", ip_address: "2001:db8:1::5", port_id: "p", network_id: "n" }] };

/** Each case: the load balancer's states in turn (its listeners as the flow's tree holds them). */
const CASES: { name: string; steps: [Partial<LoadBalancer>, Listener[]][]; octavia11Differs?: boolean }[] = [
  { name: "an HTTP listener", steps: [[{}, [http]]] },
  { name: "the same with allowed_cidrs of IPv4 and IPv6", steps: [[{}, [cidrs]]], octavia11Differs: true },
  {
    name: "allowed_cidrs on a dual-stack load balancer (an IPv6 additional VIP)",
    steps: [[dualStack, [cidrs, http]]],
    octavia11Differs: true,
  },
  { name: "a listener from any address on a dual-stack load balancer", steps: [[dualStack, [udp]]] },
  { name: "a peer port already open to 0.0.0.0/0 by TCP", steps: [[{}, [http, onPeerPort]]] },
  { name: "ACTIVE_STANDBY", steps: [[{ topology: "ACTIVE_STANDBY" }, [http, udp]]] },
  { name: "vip_sg_ids", steps: [[{ vip_sg_ids: ["4ad2d4a4-9f5e-4d0b-8e7e-6a0a7a1d5c01"] }, [http, cidrs, udp]]], octavia11Differs: true },
  {
    name: "vip_sg_ids on ACTIVE_STANDBY",
    steps: [[{ topology: "ACTIVE_STANDBY", vip_sg_ids: ["4ad2d4a4-9f5e-4d0b-8e7e-6a0a7a1d5c01"] }, [http]]],
    octavia11Differs: true,
  },
  { name: "a PENDING_DELETE listener", steps: [[{}, [http, gone]]] },
  { name: "UDP and SCTP listeners, and TCP on the UDP one's port", steps: [[{}, [udp, sctp, tcpSamePort]]] },
  { name: "no listener", steps: [[{ topology: "ACTIVE_STANDBY" }, []]] },
  {
    name: "listeners created, changed and deleted in turn",
    steps: [
      [{}, [http]],
      [{}, [http, https, udp]],
      [{}, [cidrs, https, udp]],
      [{}, [cidrs, gone, udp]],
      [{}, [cidrs]],
      [{}, [http]],
    ],
  },
  {
    name: "vip_sg_ids set and then cleared by an update",
    steps: [
      [{ topology: "ACTIVE_STANDBY" }, [http, udp]],
      [{ topology: "ACTIVE_STANDBY", vip_sg_ids: ["4ad2d4a4-9f5e-4d0b-8e7e-6a0a7a1d5c01"] }, [http, udp]],
      [{ topology: "ACTIVE_STANDBY" }, [http, udp]],
    ],
  },
];

describe("vipSecurityGroupRules: Octavia master's _update_security_group_rules", () => {
  it.each(CASES)("$name", async ({ steps }) => {
    let group: NeutronRule[] = [];
    for (const [over, listeners] of steps) {
      const lb = loadBalancerRecord(over);
      const rules = vipSecurityGroupRules(lb, listeners);
      ({ group } = await octaviaUpdate("master", group, lb, listeners));
      expect(rules.map(ours).sort()).toEqual(group.map(theirs).sort());
      expect(new Set(rules.map(ours)).size).toBe(rules.length);
      // A second update changes nothing: the rules are the group's fixed point.
      const again = await octaviaUpdate("master", group, lb, listeners);
      expect([again.created, again.deleted]).toEqual([0, 0]);
    }
  });

  it("names the rules exactly: an HTTP listener, its peer port, VRRP and AH from the group itself", () => {
    const lb = loadBalancerRecord({ topology: "ACTIVE_STANDBY" });
    expect(vipSecurityGroupRules(lb, [listener("HTTP", 8080, { peer_port: 1030 })])).toEqual([
      { protocol: "tcp", port: 8080, cidr: null, ethertype: "IPv4" },
      { protocol: "tcp", port: 1030, cidr: null, ethertype: "IPv4" },
      { protocol: "112", port: null, cidr: null, ethertype: "IPv4", fromGroup: true },
      { protocol: "51", port: null, cidr: null, ethertype: "IPv4", fromGroup: true },
    ]);
  });
});

describe("Octavia 11 (Debian's python3-octavia) and master", () => {
  // 11 has neither master's vip_sg_ids skip nor its filter of a CIDR by the ethertype (it would ask
  // Neutron for an IPv4 rule from an IPv6 CIDR); Ottava follows master.
  it.each(CASES)("$name: the same rules, but where master changed them", async ({ steps, octavia11Differs }) => {
    const [over, listeners] = steps[0]!;
    const lb = loadBalancerRecord(over);
    const master = (await octaviaUpdate("master", [], lb, listeners)).group.map(theirs).sort();
    const eleven = (await octaviaUpdate("11", [], lb, listeners)).group.map(theirs).sort();
    if (octavia11Differs) expect(eleven).not.toEqual(master);
    else expect(eleven).toEqual(master);
  });
});

const MIRROR = "/work/.mirror/openstack+octavia/repo";
describe.skipIf(!existsSync(MIRROR))("fixtures/octavia_master_sg_rules.py", () => {
  it("holds the mirror's methods, verbatim", async () => {
    const show = (path: string) => execFileSync("git", ["-C", MIRROR, "show", `HEAD:${path}`], { encoding: "utf8", maxBuffer: 1 << 24 });
    const answer = await octavia.ask({
      extract: {
        aap: show("octavia/network/drivers/neutron/allowed_address_pairs.py"),
        base: show("octavia/network/drivers/neutron/base.py"),
      },
    });
    expect(answer.held).toBe(answer.text);
  });
});
