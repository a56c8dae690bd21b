// The Neutron look-ups a client makes when a user names a subnet, network, port or security group (the
// `openstack` CLI, python-octaviaclient, openstacksdk, gophercloud: lists filtered by `id=` and `name=`,
// and GET of one), answered from the VPC with OTTAVA_NETWORK_DRIVER=vpc: subnets from DescribeSubnets,
// networks (VPCs) from DescribeVpcs, ports (ENIs) from DescribeNetworkInterfaces, security groups from
// DescribeSecurityGroups. Each answer is Neutron-shaped, its ids UUIDs (AwsIds); a caller sees only what
// its project may use (tenancy.ts), as Neutron answers a project only its own and the shared.
import type { CloudIdStore, Config } from "@ottava/core";
import { xmlChild, xmlItems, xmlText, type AwsQueryCall, type XmlElement } from "@ottava/edge/aws-query";
import { PROJECT_TAG_KEY, SHARED_TAG_KEY } from "../constants";
import { ec2QueryClient } from "../profiles";
import { gatewayOf, subnetHosts, tagOf, tagsOf } from "./ec2-query";
import { AwsIds, apiRegion, awsUuid } from "./ids";
import { mayUse, type AwsTags } from "./tenancy";
import { VPC_MTU } from "./vpc";

/** The collections answered, by their path under /v2.0. */
export const NEUTRON_KINDS = ["subnets", "networks", "ports", "security-groups"] as const;
export type NeutronKind = (typeof NEUTRON_KINDS)[number];

/** Who asks: the project of the caller's token (or X-Project-Id), and whether it is an admin (who sees everything). */
export interface LookupCaller {
  projectId: string | undefined;
  isAdmin: boolean;
}

export type NeutronObject = Record<string, unknown>;

export type LookupSettings = Pick<Config, "allowInvisibleResourceUsage" | "ampBootNetworkList">;

/** An EC2 DescribeX of one kind: its action, its answer's list, the prefix of its ids, its filters by id and by name. */
interface Ec2Kind {
  action: string;
  set: string;
  prefix: string;
  idFilter: string;
  nameFilter: string;
  /** Neutron's NotFound of the kind. */
  notFound: (id: string) => { type: string; message: string };
}

const EC2_KINDS: Record<NeutronKind, Ec2Kind> = {
  subnets: {
    action: "DescribeSubnets",
    set: "subnetSet",
    prefix: "subnet",
    idFilter: "subnet-id",
    nameFilter: "tag:Name",
    notFound: (id) => ({ type: "SubnetNotFound", message: `Subnet ${id} could not be found.` }),
  },
  networks: {
    action: "DescribeVpcs",
    set: "vpcSet",
    prefix: "vpc",
    idFilter: "vpc-id",
    nameFilter: "tag:Name",
    notFound: (id) => ({ type: "NetworkNotFound", message: `Network ${id} could not be found.` }),
  },
  ports: {
    action: "DescribeNetworkInterfaces",
    set: "networkInterfaceSet",
    prefix: "eni",
    idFilter: "network-interface-id",
    nameFilter: "tag:Name",
    notFound: (id) => ({ type: "PortNotFound", message: `Port ${id} could not be found.` }),
  },
  // A group's name is its GroupName (AWS's own name of a group, unique in its VPC), not a Name tag.
  "security-groups": {
    action: "DescribeSecurityGroups",
    set: "securityGroupInfo",
    prefix: "sg",
    idFilter: "group-id",
    nameFilter: "group-name",
    notFound: (id) => ({ type: "SecurityGroupNotFound", message: `Security group ${id} does not exist` }),
  },
};

/** Neutron's 404 body for an id it does not know (or the caller may not see). */
export function neutronNotFound(kind: NeutronKind, id: string) {
  return { NeutronError: { ...EC2_KINDS[kind].notFound(id), detail: "" } };
}

/** Query keys that are not filters (Neutron's paging, sorting and field selection). */
const NOT_FILTERS = new Set(["fields", "limit", "marker", "page_reverse", "sort_key", "sort_dir"]);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class NeutronLookups {
  private readonly management: Set<string>;

  constructor(
    private readonly ec2: AwsQueryCall,
    private readonly ids: AwsIds,
    private readonly settings: LookupSettings,
  ) {
    this.management = new Set(settings.ampBootNetworkList);
  }

  /** Neutron's 404 body for `id` (what the caller may not see is answered as unknown). */
  notFound(kind: NeutronKind, id: string) {
    return neutronNotFound(kind, id);
  }

  /** GET /v2.0/<kind>/<id>: the object `id` names (a UUID, an AWS id or a Name), if the caller may see it and it is the only one. */
  async get(kind: NeutronKind, caller: LookupCaller, id: string, fields: string[] = []): Promise<NeutronObject | undefined> {
    const found = await this.find(kind, caller, { ids: [id], names: [] });
    const byName = found.length === 0 && !UUID.test(id) && !id.startsWith(`${EC2_KINDS[kind].prefix}-`);
    const items = byName ? await this.find(kind, caller, { ids: [], names: [id] }) : found;
    return items.length === 1 ? select(items[0]!, fields) : undefined;
  }

  /**
   * GET /v2.0/<kind>?…: what the caller may see, filtered as Neutron filters (`id=` a UUID or an AWS id,
   * `name=`, and any other field of the answer, each repeated key one of its values), `fields=` kept.
   */
  async list(kind: NeutronKind, caller: LookupCaller, query: readonly [string, string][]): Promise<NeutronObject[]> {
    const filters = new Map<string, string[]>();
    for (const [k, v] of query) if (!NOT_FILTERS.has(k)) filters.set(k, [...(filters.get(k) ?? []), v]);
    const ids = filters.get("id") ?? [];
    const names = filters.get("name") ?? [];
    // By id when asked by id (the names then filter what is found), else by name.
    const items = await this.find(kind, caller, { ids, names: ids.length ? [] : names });
    if (ids.length) filters.delete("id");
    else filters.delete("name");
    const fields = query.filter(([k]) => k === "fields").flatMap(([, v]) => v.split(","));
    return items.filter((o) => [...filters].every(([k, values]) => matches(o[k], values))).map((o) => select(o, fields));
  }

  /** The visible objects of `kind` with these ids (UUIDs or AWS ids) or names; all of them when neither is given. */
  private async find(kind: NeutronKind, caller: LookupCaller, by: { ids: string[]; names: string[] }): Promise<NeutronObject[]> {
    const k = EC2_KINDS[kind];
    let filter: { name: string; values: string[] } | undefined;
    if (by.ids.length) {
      const awsIds = (await Promise.all(by.ids.map((id) => this.awsId(id, k.prefix)))).filter((id) => id !== undefined);
      // Ids that name nothing find nothing (an empty filter would find everything).
      if (awsIds.length === 0) return [];
      filter = { name: k.idFilter, values: awsIds };
    } else if (by.names.length) filter = { name: k.nameFilter, values: by.names };
    const items = (await this.describe(k, filter)).filter((i) => this.visible(kind, i, caller));
    switch (kind) {
      case "subnets":
        return Promise.all(items.map((i) => this.subnet(i)));
      case "networks":
        return this.networks(items, caller);
      case "ports":
        return Promise.all(items.map((i) => this.port(i)));
      case "security-groups":
        return Promise.all(items.map((i) => this.securityGroup(i)));
    }
  }

  private async awsId(id: string, prefix: string): Promise<string | undefined> {
    if (UUID.test(id)) return this.ids.awsId(id, prefix);
    return id.startsWith(`${prefix}-`) ? id : undefined;
  }

  /** Every item DescribeX answers (all its pages). */
  private async describe(k: Ec2Kind, filter: { name: string; values: string[] } | undefined): Promise<XmlElement[]> {
    const params: Record<string, string> = {};
    if (filter) {
      params["Filter.1.Name"] = filter.name;
      filter.values.forEach((v, i) => (params[`Filter.1.Value.${i + 1}`] = v));
    }
    const items: XmlElement[] = [];
    let token: string | undefined;
    do {
      const out = await this.ec2(k.action, token ? { ...params, NextToken: token } : params, `EC2 ${k.action} (Neutron look-up)`);
      items.push(...xmlItems(out, k.set));
      token = xmlText(out, "nextToken") || undefined;
    } while (token);
    return items;
  }

  /** May the caller see it? Admins see everything but the management subnets, which never hold a VIP; others what their project may use. */
  private visible(kind: NeutronKind, item: XmlElement, caller: LookupCaller): boolean {
    if (kind === "subnets" && this.management.has(xmlText(item, "subnetId") ?? "")) return false;
    if (caller.isAdmin) return true;
    return mayUse(tagsOf(item), caller.projectId ?? "", this.settings.allowInvisibleResourceUsage);
  }

  private async subnet(item: XmlElement): Promise<NeutronObject> {
    const tags = tagsOf(item);
    const cidr = xmlText(item, "cidrBlock") ?? "";
    const project = ownerOf(item, tags);
    return {
      id: await this.ids.uuid(xmlText(item, "subnetId") ?? ""),
      name: tagOf(tags, "Name") ?? "",
      network_id: await this.ids.uuid(xmlText(item, "vpcId") ?? ""),
      tenant_id: project,
      project_id: project,
      ip_version: 4,
      cidr,
      // The VPC's router is the first host; AWS keeps the first four addresses and the last.
      gateway_ip: gatewayOf(cidr),
      allocation_pools: [subnetHosts(cidr)],
      enable_dhcp: true,
      dns_nameservers: [],
      host_routes: [],
      subnetpool_id: null,
      ipv6_address_mode: null,
      ipv6_ra_mode: null,
      service_types: [],
      segment_id: null,
      description: "",
      tags: tagStrings(tags),
      revision_number: 0,
    };
  }

  /** VPCs as networks, each with the subnets of it the caller may see (one DescribeSubnets for all of them). */
  private async networks(vpcs: XmlElement[], caller: LookupCaller): Promise<NeutronObject[]> {
    const vpcIds = vpcs.map((v) => xmlText(v, "vpcId") ?? "");
    const subnets = vpcIds.length
      ? (await this.describe(EC2_KINDS.subnets, { name: "vpc-id", values: vpcIds })).filter((s) => this.visible("subnets", s, caller))
      : [];
    return Promise.all(
      vpcs.map(async (item) => {
        const tags = tagsOf(item);
        const project = ownerOf(item, tags);
        const vpcId = xmlText(item, "vpcId") ?? "";
        const own = subnets.filter((s) => xmlText(s, "vpcId") === vpcId);
        return {
          id: await this.ids.uuid(vpcId),
          name: tagOf(tags, "Name") ?? "",
          subnets: await Promise.all(own.map((s) => this.ids.uuid(xmlText(s, "subnetId") ?? ""))),
          status: "ACTIVE",
          admin_state_up: true,
          shared: tagOf(tags, SHARED_TAG_KEY) === "true",
          mtu: VPC_MTU,
          tenant_id: project,
          project_id: project,
          "router:external": false,
          port_security_enabled: true,
          availability_zone_hints: [],
          availability_zones: [...new Set(own.map((s) => xmlText(s, "availabilityZone") ?? ""))].sort(),
          ipv4_address_scope: null,
          ipv6_address_scope: null,
          qos_policy_id: null,
          description: "",
          tags: tagStrings(tags),
          revision_number: 0,
        };
      }),
    );
  }

  private async port(item: XmlElement): Promise<NeutronObject> {
    const tags = tagsOf(item);
    const project = ownerOf(item, tags);
    const subnetId = await this.ids.uuid(xmlText(item, "subnetId") ?? "");
    const addresses = xmlItems(item, "privateIpAddressesSet").map((a) => xmlText(a, "privateIpAddress") ?? "");
    const attachment = xmlChild(item, "attachment");
    const instance = xmlText(attachment, "instanceId") ?? "";
    const status = xmlText(item, "status");
    return {
      id: await this.ids.uuid(xmlText(item, "networkInterfaceId") ?? ""),
      name: tagOf(tags, "Name") ?? "",
      network_id: await this.ids.uuid(xmlText(item, "vpcId") ?? ""),
      tenant_id: project,
      project_id: project,
      mac_address: xmlText(item, "macAddress") ?? "",
      // The primary address first (DescribeNetworkInterfaces lists it first).
      fixed_ips: (addresses.length ? addresses : [xmlText(item, "privateIpAddress") ?? ""]).map((ip) => ({
        subnet_id: subnetId,
        ip_address: ip,
      })),
      device_id: instance,
      device_owner: instance ? `compute:${xmlText(item, "availabilityZone") ?? ""}` : "",
      status: status === "in-use" ? "ACTIVE" : "DOWN",
      admin_state_up: true,
      security_groups: await Promise.all(xmlItems(item, "groupSet").map((g) => this.ids.uuid(xmlText(g, "groupId") ?? ""))),
      allowed_address_pairs: [],
      "binding:vnic_type": "normal",
      port_security_enabled: true,
      qos_policy_id: null,
      description: xmlText(item, "description") ?? "",
      tags: tagStrings(tags),
      revision_number: 0,
    };
  }

  private async securityGroup(item: XmlElement): Promise<NeutronObject> {
    const tags = tagsOf(item);
    const project = ownerOf(item, tags);
    const groupId = xmlText(item, "groupId") ?? "";
    const id = await this.ids.uuid(groupId);
    const rules: NeutronObject[] = [];
    for (const [direction, set] of [
      ["ingress", "ipPermissions"],
      ["egress", "ipPermissionsEgress"],
    ] as const) {
      for (const p of xmlItems(item, set)) {
        const proto = xmlText(p, "ipProtocol") ?? "-1";
        const base = {
          direction,
          protocol: proto === "-1" ? null : proto,
          port_range_min: port(xmlText(p, "fromPort"), proto),
          port_range_max: port(xmlText(p, "toPort"), proto),
        };
        const remotes = [
          ...xmlItems(p, "ipRanges").map((r) => ({ ethertype: "IPv4", remote_ip_prefix: xmlText(r, "cidrIp") ?? null, remote: r })),
          ...xmlItems(p, "ipv6Ranges").map((r) => ({ ethertype: "IPv6", remote_ip_prefix: xmlText(r, "cidrIpv6") ?? null, remote: r })),
          ...xmlItems(p, "groups").map((r) => ({ ethertype: "IPv4", remote_ip_prefix: null, remote: r })),
        ];
        for (const { remote, ...r } of remotes) {
          const remoteGroup = xmlText(remote, "groupId");
          const rule = { ...base, ...r, remote_group_id: remoteGroup ? await this.ids.uuid(remoteGroup) : null };
          rules.push({
            // A rule has no id of its own in DescribeSecurityGroups: a stable one from what it is.
            id: awsUuid(this.ids.region, `${groupId}/${JSON.stringify(rule)}`),
            security_group_id: id,
            ...rule,
            remote_address_group_id: null,
            description: xmlText(remote, "description") ?? "",
            tenant_id: project,
            project_id: project,
          });
        }
      }
    }
    return {
      id,
      name: xmlText(item, "groupName") ?? "",
      description: xmlText(item, "groupDescription") ?? "",
      tenant_id: project,
      project_id: project,
      security_group_rules: rules,
      stateful: true,
      shared: tagOf(tags, SHARED_TAG_KEY) === "true",
      tags: tagStrings(tags),
      revision_number: 0,
    };
  }
}

/** The look-ups of these settings, over the API's EC2 Query client, their UUIDs remembered in `cloudIds`. */
export const neutronLookups = (config: LookupSettings & Pick<Config, "ec2Endpoint">, cloudIds: CloudIdStore): NeutronLookups =>
  new NeutronLookups(ec2QueryClient(config), new AwsIds(apiRegion(), cloudIds), config);

/** Neutron's tags are strings: each AWS tag as "key=value". */
const tagStrings = (tags: AwsTags) => tags.map((t) => `${t.key}=${t.value}`);
/** The project a resource is tagged for, else the AWS account that owns it. */
const ownerOf = (item: XmlElement, tags: AwsTags) => tagOf(tags, PROJECT_TAG_KEY) ?? xmlText(item, "ownerId") ?? "";

/** A rule's port bound: none for all protocols, or for -1 (all ports, or any ICMP type/code). */
const port = (v: string | undefined, proto: string) => (proto === "-1" || v === undefined || v === "-1" ? null : Number(v));

/** Neutron's filter: the field equals one of the values (compared as the query's strings). */
function matches(value: unknown, values: string[]): boolean {
  if (value === undefined) return true; // a field these answers do not have filters nothing, as Neutron ignores an unknown filter
  if (Array.isArray(value) || (typeof value === "object" && value !== null)) return true;
  if (typeof value === "boolean") return values.some((v) => v.toLowerCase() === String(value));
  return values.includes(value === null ? "" : String(value));
}

/** `fields=`: only those (all when none). */
const select = (o: NeutronObject, fields: string[]): NeutronObject =>
  fields.length ? Object.fromEntries(Object.entries(o).filter(([k]) => fields.includes(k))) : o;
