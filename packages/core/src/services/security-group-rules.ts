// Octavia's _update_security_group_rules (network/drivers/neutron/allowed_address_pairs.py, master): the
// rules of a load balancer's security group, from its listeners. No I/O: a network driver with security
// groups (vpc) makes the cloud's group hold exactly these; the API counts them against the cloud's quota.
import { ipVersion } from "../compat/ipaddress";
import type { NetworkLimits } from "../drivers";
import { Fault } from "../faults";
import type { LoadBalancer } from "../resources/loadbalancer";
import type { Listener } from "../resources/listener";

/** One ingress rule as Octavia makes it: a port of a protocol from a CIDR (null: any), or an IP protocol (VRRP 112, AH 51) from the group itself. */
export interface SecurityGroupRule {
  /** "tcp", "udp", "sctp", or an IP protocol number as text ("112", "51"). */
  protocol: string;
  /** The port (port_range_min = port_range_max); null for an IP protocol. */
  port: number | null;
  /** remote_ip_prefix; null: any address of the ethertype. */
  cidr: string | null;
  ethertype: "IPv4" | "IPv6";
  /** The group itself is the source (VRRP and AH between the amphorae of an ACTIVE_STANDBY pair). */
  fromGroup?: boolean;
}

/** Octavia's constants.VRRP_PROTOCOL_NUM and AUTH_HEADER_PROTOCOL_NUMBER, as the rules carry them. */
export const VRRP_PROTOCOL = "112";
export const AH_PROTOCOL = "51";

type Ethertype = SecurityGroupRule["ethertype"];
const ethertypeOf = (address: string): Ethertype => (ipVersion(address) === 6 ? "IPv6" : "IPv4");

/** A listener's protocol as the rule's: UDP and SCTP are themselves, every other (HTTP, HTTPS, TERMINATED_HTTPS, PROMETHEUS, TCP) is TCP. */
const ruleProtocol = (protocol: string) => (protocol === "UDP" ? "udp" : protocol === "SCTP" ? "sctp" : "tcp");

/**
 * The rules of `lb`'s group for its `listeners` (those PENDING_DELETE or DELETED make none), in a stable
 * order: the listeners' ports in their order, then the peer ports, then VRRP and AH. Octavia's, on an
 * empty group:
 * - one (port, protocol, CIDR) per allowed CIDR of each listener, or one from any address (CIDR null);
 *   none when the VIP port has the user's groups (`vip_sg_ids`: theirs decide who reaches the listeners);
 * - a TCP rule from any address for each listener's peer port (HAProxy's peers, keepalived), unless the
 *   same port is already open to 0.0.0.0/0 by TCP;
 * - each of those for every ethertype of the VIP and the additional VIPs that its CIDR is of (a rule
 *   from any address: for all of them);
 * - ACTIVE_STANDBY: IP protocols 112 (VRRP) and 51 (AH) for the VIP's ethertype. Octavia opens them to
 *   any address; here they come from the group itself (the pair's own amphorae), which is all VRRP needs.
 * A listener without a peer port (a record older than them) makes no peer-port rule: Octavia's would be
 * a TCP rule with no port, every port open.
 */
export function vipSecurityGroupRules(lb: LoadBalancer, listeners: readonly Listener[]): SecurityGroupRule[] {
  const skipListenerRules = (lb.vip_sg_ids ?? []).length > 0;
  const ports: { port: number; protocol: string; cidr: string | null }[] = [];
  const key = (p: { port: number; protocol: string; cidr: string | null }) => `${p.port} ${p.protocol} ${p.cidr}`;
  const seen = new Set<string>();
  const add = (p: { port: number; protocol: string; cidr: string | null }) => {
    if (!seen.has(key(p))) (ports.push(p), seen.add(key(p)));
  };
  const peerPorts: number[] = [];
  for (const l of listeners) {
    if (l.provisioning_status === "PENDING_DELETE" || l.provisioning_status === "DELETED") continue;
    if (!skipListenerRules) {
      const protocol = ruleProtocol(l.protocol);
      if (l.allowed_cidrs.length > 0) for (const cidr of l.allowed_cidrs) add({ port: l.protocol_port, protocol, cidr });
      else add({ port: l.protocol_port, protocol, cidr: null });
    }
    if (l.peer_port != null) peerPorts.push(l.peer_port);
  }
  const listenerKeys = new Set(seen);
  for (const port of peerPorts) {
    if (!listenerKeys.has(key({ port, protocol: "tcp", cidr: "0.0.0.0/0" }))) add({ port, protocol: "tcp", cidr: null });
  }

  const primary = ethertypeOf(lb.vip_address);
  const ethertypes = [...new Set<Ethertype>([primary, ...lb.additional_vips.map((v) => ethertypeOf(v.ip_address))])];
  const rules: SecurityGroupRule[] = [];
  for (const p of ports) {
    for (const ethertype of ethertypes) {
      if (p.cidr === null || ethertypeOf(p.cidr.split("/")[0]!) === ethertype)
        rules.push({ protocol: p.protocol, port: p.port, cidr: p.cidr, ethertype });
    }
  }
  if (lb.topology === "ACTIVE_STANDBY") {
    for (const protocol of [VRRP_PROTOCOL, AH_PROTOCOL])
      rules.push({ protocol, port: null, cidr: null, ethertype: primary, fromGroup: true });
  }
  return rules;
}

/**
 * Refuses (400) listeners whose rules would not fit in the LB's security group: the network driver's
 * quota (vpc: AWS's 60 inbound rules a group, OTTAVA_VPC_RULES_PER_SECURITY_GROUP). No limits: nothing to check.
 */
export function checkRuleQuota(limits: NetworkLimits | undefined, lb: LoadBalancer, listeners: readonly Listener[]): void {
  if (!limits) return;
  const n = vipSecurityGroupRules(lb, listeners).length;
  if (n > limits.rulesPerSecurityGroup)
    throw new Fault(
      400,
      `The load balancer's security group would need ${n} rules (a rule per listener port and allowed CIDR, and the peer ports); the network allows ${limits.rulesPerSecurityGroup} (OTTAVA_VPC_RULES_PER_SECURITY_GROUP).`,
    );
}

/** Refuses (400) more vip_sg_ids than fit on a VIP port beside the LB's own group (vpc: AWS's 5 groups a network interface). */
export function checkGroupQuota(limits: NetworkLimits | undefined, sgIds: readonly string[]): void {
  if (limits && 1 + sgIds.length > limits.securityGroupsPerInterface)
    throw new Fault(
      400,
      `Too many VIP security groups: a VIP port holds at most ${limits.securityGroupsPerInterface} security groups (OTTAVA_VPC_SECURITY_GROUPS_PER_INTERFACE), and the load balancer's own group is one of them.`,
    );
}
