// A load balancer's security group in EC2 made to hold exactly Octavia's rules (core's vipSecurityGroupRules):
// Octavia's _update_security_group_rules adds what is missing and deletes what is no longer wanted; here
// the group's ingress rules are read (DescribeSecurityGroupRules), those not wanted revoked by their rule
// ids, the missing ones authorized. Egress is left alone, as Octavia leaves it.
import type { SecurityGroupRule } from "@ottava/core";
import { xmlChild, xmlItems, xmlText, type AwsQueryCall, type XmlElement } from "@ottava/edge/aws-query";
import { filterParams, listParams } from "./ec2-query";

/** SCTP's IP protocol number: EC2 names only tcp, udp, icmp and icmpv6, and takes any other protocol by its number. */
const SCTP_PROTOCOL = "132";

/**
 * A rule as EC2 holds it. EC2 opens every port of a protocol other than tcp, udp, icmp and icmpv6,
 * whatever ports it is given: an SCTP rule (132) is for all of SCTP's ports from its source, and
 * Octavia's SCTP rules of several ports from one source are one rule here (sent and read with -1).
 */
interface Ec2Rule {
  protocol: string;
  fromPort: number;
  toPort: number;
  /** "ipv4 <cidr>", "ipv6 <cidr>" or "group <sg-id>". */
  source: string;
}

const keyOf = (r: Ec2Rule) => `${r.protocol} ${r.fromPort} ${r.toPort} ${r.source}`;

/** Octavia's rule as EC2's: a port of tcp/udp, all of SCTP, or an IP protocol (VRRP, AH) from the group itself. */
function ec2Rule(rule: SecurityGroupRule, groupId: string): Ec2Rule {
  const source = rule.fromGroup
    ? `group ${groupId}`
    : rule.ethertype === "IPv6"
      ? `ipv6 ${rule.cidr ?? "::/0"}`
      : `ipv4 ${rule.cidr ?? "0.0.0.0/0"}`;
  if (rule.protocol === "tcp" || rule.protocol === "udp") {
    if (rule.port === null) throw new Error(`a ${rule.protocol} rule without a port: ${JSON.stringify(rule)}`);
    return { protocol: rule.protocol, fromPort: rule.port, toPort: rule.port, source };
  }
  return { protocol: rule.protocol === "sctp" ? SCTP_PROTOCOL : rule.protocol, fromPort: -1, toPort: -1, source };
}

/** An ingress rule of DescribeSecurityGroupRules' answer, with its id. */
function heldRule(item: XmlElement): Ec2Rule & { id: string } {
  const referenced = xmlText(xmlChild(item, "referencedGroupInfo"), "groupId");
  const cidr4 = xmlText(item, "cidrIpv4");
  const cidr6 = xmlText(item, "cidrIpv6");
  const prefixList = xmlText(item, "prefixListId");
  const source = referenced ? `group ${referenced}` : cidr4 ? `ipv4 ${cidr4}` : cidr6 ? `ipv6 ${cidr6}` : `prefix-list ${prefixList}`;
  return {
    id: xmlText(item, "securityGroupRuleId")!,
    protocol: xmlText(item, "ipProtocol")!,
    fromPort: Number(xmlText(item, "fromPort") ?? -1),
    toPort: Number(xmlText(item, "toPort") ?? -1),
    source,
  };
}

/** The IpPermissions.<n>.* parameters of `rules`. */
function ipPermissions(rules: readonly Ec2Rule[], first = 1): Record<string, string> {
  const params: Record<string, string> = {};
  rules.forEach((r, i) => {
    const p = `IpPermissions.${first + i}`;
    params[`${p}.IpProtocol`] = r.protocol;
    params[`${p}.FromPort`] = String(r.fromPort);
    params[`${p}.ToPort`] = String(r.toPort);
    const [kind, value] = r.source.split(" ") as [string, string];
    if (kind === "group")
      params[`${p}.Groups.1.GroupId`] = value; // UserIdGroupPairs, as the Query protocol names it
    else if (kind === "ipv6") params[`${p}.Ipv6Ranges.1.CidrIpv6`] = value;
    else params[`${p}.IpRanges.1.CidrIp`] = value;
  });
  return params;
}

const errorName = (e: unknown) => (e as { name?: unknown } | null)?.name;

/** The group's ingress rules, every page of them. */
async function ingressRules(ec2: AwsQueryCall, groupId: string): Promise<(Ec2Rule & { id: string })[]> {
  const rules: (Ec2Rule & { id: string })[] = [];
  let token: string | undefined;
  do {
    const params: Record<string, string> = { ...filterParams({ "group-id": groupId }), MaxResults: "1000" };
    if (token) params.NextToken = token;
    const out = await ec2("DescribeSecurityGroupRules", params, `EC2 DescribeSecurityGroupRules of ${groupId}`);
    for (const item of xmlItems(out, "securityGroupRuleSet")) {
      if (xmlText(item, "isEgress") !== "true" && xmlText(item, "groupId") === groupId) rules.push(heldRule(item));
    }
    token = xmlText(out, "nextToken") || undefined;
  } while (token);
  return rules;
}

/**
 * Makes group `groupId`'s ingress rules equal `rules`: the missing ones authorized, the others revoked
 * (egress untouched). Idempotent: a second call with the same rules changes nothing (one describe).
 * Another writer racing this one is harmless: a rule already authorized (InvalidPermission.Duplicate)
 * or already revoked (InvalidPermission.NotFound, InvalidSecurityGroupRuleId.NotFound) is done.
 */
export async function syncSecurityGroupRules(ec2: AwsQueryCall, groupId: string, rules: readonly SecurityGroupRule[]): Promise<void> {
  const wanted = new Map(rules.map((r) => ec2Rule(r, groupId)).map((r) => [keyOf(r), r] as const));
  const held = await ingressRules(ec2, groupId);
  const heldKeys = new Set(held.map(keyOf));
  const revoke = held.filter((r) => !wanted.has(keyOf(r))).map((r) => r.id);
  const authorize = [...wanted.values()].filter((r) => !heldKeys.has(keyOf(r)));

  // One call each; if one of a batch was done already (the whole call is refused), then one by one.
  const revokeIds = (ids: string[]) =>
    ec2(
      "RevokeSecurityGroupIngress",
      { GroupId: groupId, ...listParams("SecurityGroupRuleId", ids) },
      `EC2 RevokeSecurityGroupIngress of ${groupId}`,
    );
  const gone = (e: unknown) => errorName(e) === "InvalidPermission.NotFound" || errorName(e) === "InvalidSecurityGroupRuleId.NotFound";
  if (revoke.length > 0) {
    await revokeIds(revoke).catch(async (e) => {
      if (!gone(e)) throw e;
      for (const id of revoke) await revokeIds([id]).catch((e2) => (gone(e2) ? undefined : Promise.reject(e2)));
    });
  }
  const authorizeRules = (batch: Ec2Rule[]) =>
    ec2("AuthorizeSecurityGroupIngress", { GroupId: groupId, ...ipPermissions(batch) }, `EC2 AuthorizeSecurityGroupIngress of ${groupId}`);
  const duplicate = (e: unknown) => errorName(e) === "InvalidPermission.Duplicate";
  if (authorize.length > 0) {
    await authorizeRules(authorize).catch(async (e) => {
      if (!duplicate(e)) throw e;
      for (const r of authorize) await authorizeRules([r]).catch((e2) => (duplicate(e2) ? undefined : Promise.reject(e2)));
    });
  }
}
