// Octavia's _update_security_group_rules (network/drivers/neutron/allowed_address_pairs.py): the rules
// of a load balancer's security group, from its listeners. No I/O: a network driver with security
// groups (vpc) makes the cloud's group hold exactly these; the API counts them against the cloud's quota.
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

/** The rules of `lb`'s group for its `listeners` (those PENDING_DELETE or DELETED make none), in a stable order. */
export function vipSecurityGroupRules(lb: LoadBalancer, listeners: readonly Listener[]): SecurityGroupRule[] {
  void lb;
  void listeners;
  throw new Error("vipSecurityGroupRules: being written (issue 22)");
}
