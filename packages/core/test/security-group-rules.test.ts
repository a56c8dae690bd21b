// vipSecurityGroupRules against Octavia's own _update_security_group_rules (master's, run by
// fixtures/octavia-security-group-rules.py on Debian's Octavia constants): the same rules for each case,
// but that VRRP and AH come from the group itself here (Octavia opens them to any address).
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { vipSecurityGroupRules, type Listener, type LoadBalancer } from "@ottava/core";

const FIXTURE = new URL("./fixtures/octavia-security-group-rules.py", import.meta.url).pathname;

interface Case {
  name: string;
  topology?: string;
  vip_address?: string;
  vip_sg_ids?: string[];
  additional_vips?: string[];
  listeners: { protocol: string; protocol_port: number; peer_port?: number; allowed_cidrs?: string[]; provisioning_status?: string }[];
}

const CASES: Case[] = [
  { name: "an HTTP listener", listeners: [{ protocol: "HTTP", protocol_port: 80, peer_port: 1025 }] },
  {
    name: "the same with allowed_cidrs of both families",
    listeners: [
      { protocol: "HTTP", protocol_port: 80, peer_port: 1025, allowed_cidrs: ["192.0.2.0/24", "198.51.100.0/24", "2001:db8::/64"] },
    ],
  },
  {
    name: "a peer port already open to 0.0.0.0/0",
    listeners: [{ protocol: "TCP", protocol_port: 1025, peer_port: 1025, allowed_cidrs: ["0.0.0.0/0"] }],
  },
  {
    name: "ACTIVE_STANDBY, two listeners",
    topology: "ACTIVE_STANDBY",
    listeners: [
      { protocol: "HTTP", protocol_port: 80, peer_port: 1025 },
      { protocol: "HTTPS", protocol_port: 443, peer_port: 1026 },
    ],
  },
  {
    name: "vip_sg_ids: no listener rules",
    topology: "ACTIVE_STANDBY",
    vip_sg_ids: ["sg"],
    listeners: [{ protocol: "HTTP", protocol_port: 80, peer_port: 1025 }],
  },
  {
    name: "a listener being deleted",
    listeners: [
      { protocol: "HTTP", protocol_port: 80, peer_port: 1025 },
      { protocol: "HTTP", protocol_port: 8080, peer_port: 1026, provisioning_status: "PENDING_DELETE" },
    ],
  },
  {
    name: "UDP and SCTP listeners",
    listeners: [
      { protocol: "UDP", protocol_port: 53, peer_port: 1025 },
      { protocol: "SCTP", protocol_port: 3868, peer_port: 1026 },
    ],
  },
  {
    name: "an IPv6 additional VIP",
    additional_vips: ["2001:db8::5"],
    listeners: [{ protocol: "HTTP", protocol_port: 80, peer_port: 1025, allowed_cidrs: ["192.0.2.0/24"] }],
  },
  { name: "no listener", listeners: [] },
];

const full = (c: Case) => ({
  topology: c.topology ?? "SINGLE",
  vip_address: c.vip_address ?? "203.0.113.5",
  vip_sg_ids: c.vip_sg_ids ?? [],
  additional_vips: c.additional_vips ?? [],
  listeners: c.listeners.map((l) => ({ provisioning_status: "ACTIVE", allowed_cidrs: [], ...l })),
});

type Rule = { protocol: string; port: number | null; cidr: string | null; ethertype: string };
const sorted = (rules: Rule[]) => rules.map((r) => JSON.stringify(r)).sort();

describe("the load balancer's security-group rules: Octavia's _update_security_group_rules", () => {
  const r = spawnSync("/usr/bin/python3", [FIXTURE], { input: JSON.stringify(CASES.map(full)), encoding: "utf8" });
  if (r.status !== 0) throw new Error(`the Octavia fixture failed: ${r.stderr}`);
  const octavia = JSON.parse(r.stdout) as Rule[][];

  it.each(CASES.map((c, i) => [c.name, i] as const))("%s", (_name, i) => {
    const c = full(CASES[i]!);
    const lb = {
      topology: c.topology,
      vip_address: c.vip_address,
      vip_sg_ids: c.vip_sg_ids,
      additional_vips: c.additional_vips.map((ip_address) => ({ ip_address })),
    } as unknown as LoadBalancer;
    const ours = vipSecurityGroupRules(lb, c.listeners as unknown as Listener[]);
    // VRRP and AH: from the group itself here.
    expect(ours.filter((x) => x.fromGroup).map((x) => x.protocol)).toEqual(c.topology === "ACTIVE_STANDBY" ? ["112", "51"] : []);
    expect(sorted(ours.map(({ protocol, port, cidr, ethertype }) => ({ protocol, port, cidr, ethertype })))).toEqual(sorted(octavia[i]!));
  });
});
