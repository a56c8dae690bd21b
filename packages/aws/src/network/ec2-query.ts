// The EC2 Query API as the vpc network driver speaks it: request parameters (tags, filters, lists) and
// the few fields of its answers it reads (subnets, VPCs, network interfaces, security groups).
import { xmlChild, xmlItems, xmlText, type XmlElement } from "@ottava/edge/aws-query";
import type { AwsTags } from "./tenancy";

/** `prefix.1`, `prefix.2`, ... = values (the Query protocol's lists). */
export function listParams(prefix: string, values: readonly string[]): Record<string, string> {
  return Object.fromEntries(values.map((v, i) => [`${prefix}.${i + 1}`, v]));
}

/** Filter.N.Name / Filter.N.Value.1 for each name = value. */
export function filterParams(filters: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  Object.entries(filters).forEach(([name, value], i) => {
    out[`Filter.${i + 1}.Name`] = name;
    out[`Filter.${i + 1}.Value.1`] = value;
  });
  return out;
}

/** TagSpecification.1 of `resourceType` with these tags. */
export function tagSpecParams(resourceType: string, tags: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { "TagSpecification.1.ResourceType": resourceType };
  Object.entries(tags).forEach(([key, value], i) => {
    out[`TagSpecification.1.Tag.${i + 1}.Key`] = key;
    out[`TagSpecification.1.Tag.${i + 1}.Value`] = value;
  });
  return out;
}

export const tagsOf = (item: XmlElement): AwsTags =>
  xmlItems(item, "tagSet").map((t) => ({ key: xmlText(t, "key") ?? "", value: xmlText(t, "value") ?? "" }));

export const tagOf = (tags: AwsTags, key: string) => tags.find((t) => t.key === key)?.value;

export interface Ec2Subnet {
  id: string;
  vpcId: string;
  /** Its IPv4 range; absent for an IPv6-only subnet. */
  cidr: string | undefined;
  zone: string;
  availableIps: number;
  tags: AwsTags;
}

export const subnetOf = (item: XmlElement): Ec2Subnet => ({
  id: xmlText(item, "subnetId") ?? "",
  vpcId: xmlText(item, "vpcId") ?? "",
  cidr: xmlText(item, "cidrBlock") || undefined,
  zone: xmlText(item, "availabilityZone") ?? "",
  availableIps: Number(xmlText(item, "availableIpAddressCount") ?? "0"),
  tags: tagsOf(item),
});

export interface Ec2Vpc {
  id: string;
  /** Its IPv4 ranges: the primary one, and those associated since. */
  cidrs: string[];
  tags: AwsTags;
}

export function vpcOf(item: XmlElement): Ec2Vpc {
  const associated = xmlItems(item, "cidrBlockAssociationSet")
    .filter((a) => xmlText(xmlChild(a, "cidrBlockState"), "state") === "associated")
    .map((a) => xmlText(a, "cidrBlock") ?? "");
  const primary = xmlText(item, "cidrBlock");
  return { id: xmlText(item, "vpcId") ?? "", cidrs: [...new Set([...(primary ? [primary] : []), ...associated])], tags: tagsOf(item) };
}

export interface Ec2Interface {
  id: string;
  subnetId: string;
  vpcId: string;
  zone: string;
  mac: string;
  /** Its primary private IPv4 address (it never moves). */
  primaryIp: string;
  /** Its secondary private IPv4 addresses (those that can move: a VIP). */
  secondaryIps: string[];
  groups: string[];
  /** "available", "in-use", "attaching", "detaching", ... */
  status: string;
  attachment: { id: string; instanceId: string; deviceIndex: number; status: string } | undefined;
  tags: AwsTags;
}

export function interfaceOf(item: XmlElement): Ec2Interface {
  const attachment = xmlChild(item, "attachment");
  const attachmentId = xmlText(attachment, "attachmentId");
  return {
    id: xmlText(item, "networkInterfaceId") ?? "",
    subnetId: xmlText(item, "subnetId") ?? "",
    vpcId: xmlText(item, "vpcId") ?? "",
    zone: xmlText(item, "availabilityZone") ?? "",
    mac: xmlText(item, "macAddress") ?? "",
    primaryIp: xmlText(item, "privateIpAddress") ?? "",
    secondaryIps: xmlItems(item, "privateIpAddressesSet")
      .filter((a) => xmlText(a, "primary") !== "true")
      .map((a) => xmlText(a, "privateIpAddress") ?? ""),
    groups: xmlItems(item, "groupSet").map((g) => xmlText(g, "groupId") ?? ""),
    status: xmlText(item, "status") ?? "",
    attachment: attachmentId
      ? {
          id: attachmentId,
          instanceId: xmlText(attachment, "instanceId") ?? "",
          deviceIndex: Number(xmlText(attachment, "deviceIndex") ?? "-1"),
          status: xmlText(attachment, "status") ?? "",
        }
      : undefined,
    tags: tagsOf(item),
  };
}

export interface Ec2SecurityGroup {
  id: string;
  name: string;
  vpcId: string;
  tags: AwsTags;
}

export const securityGroupOf = (item: XmlElement): Ec2SecurityGroup => ({
  id: xmlText(item, "groupId") ?? "",
  name: xmlText(item, "groupName") ?? "",
  vpcId: xmlText(item, "vpcId") ?? "",
  tags: tagsOf(item),
});

const toInt = (ip: string) => ip.split(".").reduce((n, o) => n * 256 + Number(o), 0);
const toIp = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");

/** An IPv4 CIDR's network address and size. */
function range(cidr: string): { start: number; size: number } {
  const [base = "", prefix = "32"] = cidr.split("/");
  const size = 2 ** (32 - Number(prefix));
  return { start: toInt(base) - (toInt(base) % size), size };
}

/** Do two IPv4 ranges share an address? */
export function cidrsOverlap(a: string, b: string): boolean {
  const x = range(a);
  const y = range(b);
  return x.start < y.start + y.size && y.start < x.start + x.size;
}

/** Is IPv4 range `inner` within `outer`? */
export function cidrWithin(inner: string, outer: string): boolean {
  const i = range(inner);
  const o = range(outer);
  return i.start >= o.start && i.start + i.size <= o.start + o.size;
}

/** A VPC subnet's router: the first host of its range (AWS reserves it, the network address plus one). */
export const gatewayOf = (cidr: string): string => toIp(range(cidr).start + 1);

/**
 * May `ip` be a host of the VPC subnet `cidr`? Not its first four addresses (network, router, DNS, and
 * one AWS keeps) nor its last (broadcast): AWS reserves them.
 */
export function isSubnetHost(ip: string, cidr: string): boolean {
  const { start, size } = range(cidr);
  const n = toInt(ip);
  return n >= start + 4 && n <= start + size - 2;
}

/** The hosts a VPC subnet `cidr` gives out (Neutron's allocation pool): all but the four first addresses and the last. */
export function subnetHosts(cidr: string): { start: string; end: string } {
  const { start, size } = range(cidr);
  return { start: toIp(start + 4), end: toIp(start + size - 2) };
}
