// A load balancer's security group in EC2 made to hold exactly Octavia's rules (core's vipSecurityGroupRules):
// Octavia's _update_security_group_rules adds what is missing and deletes what is no longer wanted; here
// the group's ingress rules are read (DescribeSecurityGroupRules), those not wanted revoked by their rule
// ids, the missing ones authorized. Egress is left alone, as Octavia leaves it.
import type { SecurityGroupRule } from "@ottava/core";
import { xmlChild, xmlItems, xmlText, type AwsQueryCall } from "@ottava/edge/aws-query";
import { filterParams } from "./ec2-query";

/** The protocols EC2 takes with ports; any other is an IP protocol number, from any port (-1). */
const PORTED = new Set(["tcp", "udp", "132"]);

/** EC2's IpProtocol of a rule's protocol: SCTP is IP protocol 132 (EC2 names only tcp, udp, icmp and icmpv6). */
const ec2Protocol = (protocol: string) => (protocol === "sctp" ? "132" : protocol);

/** An ingress permission as EC2 holds it: protocol, ports, and one source (a CIDR, or a group). */
interface Permission {
  protocol: string;
  from: number;
  to: number;
  cidrIpv4?: string | undefined;
  cidrIpv6?: string | undefined;
  group?: string | undefined;
}

const keyOf = (p: Permission) =>
  [p.protocol, PORTED.has(p.protocol) ? `${p.from}-${p.to}` : "", p.cidrIpv4 ?? "", p.cidrIpv6 ?? "", p.group ?? ""].join("|");

/** A rule of Octavia's as EC2's permission in group `groupId` (a rule from any address: 0.0.0.0/0 or ::/0). */
export function permissionOf(rule: SecurityGroupRule, groupId: string): Permission {
  const protocol = ec2Protocol(rule.protocol);
  const ports = PORTED.has(protocol) && rule.port !== null ? { from: rule.port, to: rule.port } : { from: -1, to: -1 };
  if (rule.fromGroup) return { protocol, ...ports, group: groupId };
  const any = rule.ethertype === "IPv6" ? "::/0" : "0.0.0.0/0";
  const cidr = rule.cidr ?? any;
  return rule.ethertype === "IPv6" ? { protocol, ...ports, cidrIpv6: cidr } : { protocol, ...ports, cidrIpv4: cidr };
}

/** AuthorizeSecurityGroupIngress's parameters of one permission. */
function authorizeParams(groupId: string, p: Permission): Record<string, string> {
  const base = "IpPermissions.1";
  return {
    GroupId: groupId,
    [`${base}.IpProtocol`]: p.protocol,
    [`${base}.FromPort`]: String(p.from),
    [`${base}.ToPort`]: String(p.to),
    ...(p.cidrIpv4 ? { [`${base}.IpRanges.1.CidrIp`]: p.cidrIpv4 } : {}),
    ...(p.cidrIpv6 ? { [`${base}.Ipv6Ranges.1.CidrIpv6`]: p.cidrIpv6 } : {}),
    ...(p.group ? { [`${base}.Groups.1.GroupId`]: p.group } : {}),
  };
}

/** The group's ingress rules: each one's id and permission. */
async function ingressRules(ec2: AwsQueryCall, groupId: string): Promise<{ id: string; permission: Permission }[]> {
  const out: { id: string; permission: Permission }[] = [];
  let token: string | undefined;
  do {
    const answer = await ec2(
      "DescribeSecurityGroupRules",
      { ...filterParams({ "group-id": groupId }), ...(token ? { NextToken: token } : {}) },
      `EC2 DescribeSecurityGroupRules of ${groupId}`,
    );
    for (const r of xmlItems(answer, "securityGroupRuleSet")) {
      if (xmlText(r, "isEgress") === "true") continue;
      out.push({
        id: xmlText(r, "securityGroupRuleId") ?? "",
        permission: {
          protocol: xmlText(r, "ipProtocol") ?? "",
          from: Number(xmlText(r, "fromPort") ?? -1),
          to: Number(xmlText(r, "toPort") ?? -1),
          cidrIpv4: xmlText(r, "cidrIpv4") || undefined,
          cidrIpv6: xmlText(r, "cidrIpv6") || undefined,
          group: xmlText(xmlChild(r, "referencedGroupInfo"), "groupId") || undefined,
        },
      });
    }
    token = xmlText(answer, "nextToken") || undefined;
  } while (token);
  return out;
}

const errorName = (e: unknown) => String((e as { name?: unknown } | null)?.name ?? "");

/**
 * Makes group `groupId`'s ingress rules equal `rules`: the others revoked, the missing ones authorized
 * (egress untouched). Idempotent: a second call with the same rules only reads. A rule already there
 * (InvalidPermission.Duplicate) or already gone (InvalidPermission.NotFound) is done.
 */
export async function syncSecurityGroupRules(ec2: AwsQueryCall, groupId: string, rules: readonly SecurityGroupRule[]): Promise<void> {
  const wanted = new Map(rules.map((r) => permissionOf(r, groupId)).map((p) => [keyOf(p), p]));
  const held = await ingressRules(ec2, groupId);
  const stale = held.filter((h) => !wanted.has(keyOf(h.permission))).map((h) => h.id);
  const heldKeys = new Set(held.map((h) => keyOf(h.permission)));
  if (stale.length > 0) {
    try {
      await ec2(
        "RevokeSecurityGroupIngress",
        { GroupId: groupId, ...Object.fromEntries(stale.map((id, i) => [`SecurityGroupRuleId.${i + 1}`, id])) },
        `EC2 RevokeSecurityGroupIngress of ${groupId}`,
      );
    } catch (e) {
      if (errorName(e) !== "InvalidPermission.NotFound") throw e;
    }
  }
  for (const [key, p] of wanted) {
    if (heldKeys.has(key)) continue;
    try {
      await ec2("AuthorizeSecurityGroupIngress", authorizeParams(groupId, p), `EC2 AuthorizeSecurityGroupIngress to ${groupId}`);
    } catch (e) {
      if (errorName(e) !== "InvalidPermission.Duplicate") throw e;
    }
  }
}
