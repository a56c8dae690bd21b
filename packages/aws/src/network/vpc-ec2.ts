// What the vpc network driver's parts share (vpc.ts: the VIPs; members.ts: the member networks): its ids
// and settings, its EC2 reads, the ENIs and security groups it makes and deletes, and its guard, which
// turns EC2's refusals into driver errors.
import { DriverError, Fault, isUnavailable, type Config, type LoadBalancer, type Logger } from "@ottava/core";
import { xmlChild, xmlItems, xmlText, type AwsQueryCall } from "@ottava/edge/aws-query";
import {
  AMPHORA_TAG_KEY,
  ENI_ROLE_TAG_KEY,
  LOAD_BALANCER_TAG_KEY,
  PROJECT_TAG_KEY,
  STAGE_TAG_KEY,
  lbSecurityGroupName,
} from "../constants";
import {
  filterParams,
  interfaceOf,
  listParams,
  securityGroupOf,
  subnetOf,
  tagSpecParams,
  vpcOf,
  type Ec2Interface,
  type Ec2SecurityGroup,
  type Ec2Subnet,
  type Ec2Vpc,
} from "./ec2-query";
import type { AwsIds } from "./ids";
import { mayUse } from "./tenancy";

/**
 * The ENI roles (ENI_ROLE_TAG_KEY): a load balancer's VIP reservation, an amphora's port in the VIP
 * subnet, an amphora's port on a member network (another VPC).
 */
export const VIP_ROLE = "vip";
export const VRRP_ROLE = "vrrp";
export const MEMBER_ROLE = "member";
/** A VPC's MTU (jumbo frames within the VPC). */
export const VPC_MTU = 9001;

export type VpcNetworkSettings = Pick<Config, "stage" | "ampBootNetworkList" | "allowInvisibleResourceUsage" | "ampFlavorId">;

export interface VpcNetworkOptions {
  ids: AwsIds;
  log?: Logger | undefined;
  /**
   * [networking] max_retries and retry_interval (ms): how often, and how far apart, a group delete
   * refused while an ENI still uses it, an ENI delete refused while it is still attached, and the wait
   * for a detached ENI to become available are tried. Default 15 and 1000, as Octavia's.
   */
  maxRetries?: number;
  retryIntervalMs?: number;
}

export const errorName = (e: unknown) => String((e as { name?: unknown } | null)?.name ?? "");
export const notFound = (e: unknown) => /\.NotFound$/.test(errorName(e));
export const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

export class VpcEc2 {
  readonly ids: AwsIds;
  readonly log: Logger | undefined;
  readonly maxRetries: number;
  readonly retryIntervalMs: number;
  /** Subnets' zones, for ever (a subnet never moves). */
  private readonly zones = new Map<string, string>();

  constructor(
    readonly call: AwsQueryCall,
    readonly settings: VpcNetworkSettings,
    options: VpcNetworkOptions,
  ) {
    this.ids = options.ids;
    this.log = options.log;
    this.maxRetries = options.maxRetries ?? 15;
    this.retryIntervalMs = options.retryIntervalMs ?? 1000;
  }

  lbTags(lbId: string, projectId: string): Record<string, string> {
    return { [STAGE_TAG_KEY]: this.settings.stage, [LOAD_BALANCER_TAG_KEY]: lbId, [PROJECT_TAG_KEY]: projectId };
  }

  /** The project may use it, and it is not a management subnet (those never hold VIPs, nor members' ports). */
  mayHoldVip(subnet: Ec2Subnet, projectId: string, zone: Record<string, unknown> | undefined): boolean {
    return mayUse(subnet.tags, projectId, this.settings.allowInvisibleResourceUsage) && !this.isManagement(subnet.id, zone);
  }

  isManagement(subnetId: string, zone: Record<string, unknown> | undefined): boolean {
    return this.settings.ampBootNetworkList.includes(subnetId) || zone?.management_network === subnetId;
  }

  async vipSubnetId(lb: LoadBalancer): Promise<string> {
    const subnetId = lb.vip_subnet_id ? await this.ids.awsId(lb.vip_subnet_id, "subnet") : undefined;
    if (!subnetId) throw new DriverError(`the VIP subnet ${lb.vip_subnet_id} of load balancer ${lb.id} is unknown`);
    return subnetId;
  }

  async zoneOf(subnetId: string): Promise<string | null> {
    const known = this.zones.get(subnetId);
    if (known) return known;
    const subnet = await this.subnetById(subnetId);
    if (!subnet) return null;
    this.zones.set(subnetId, subnet.zone);
    return subnet.zone;
  }

  async describeSubnets(params: Record<string, string>): Promise<Ec2Subnet[]> {
    const out = await this.call("DescribeSubnets", params, "EC2 DescribeSubnets");
    const subnets = xmlItems(out, "subnetSet").map(subnetOf);
    for (const s of subnets) this.zones.set(s.id, s.zone);
    return subnets;
  }

  async subnetById(id: string): Promise<Ec2Subnet | undefined> {
    return (await this.absentIfNotFound(() => this.describeSubnets({ "SubnetId.1": id })))?.[0];
  }

  /** The subnets of these ids that exist (by a filter: an id that names nothing is left out, not refused). */
  async subnetsById(ids: readonly string[]): Promise<Ec2Subnet[]> {
    if (ids.length === 0) return [];
    return this.describeSubnets({ "Filter.1.Name": "subnet-id", ...listParams("Filter.1.Value", ids) });
  }

  async vpcById(id: string): Promise<Ec2Vpc | undefined> {
    return (await this.vpcsById([id]))[0];
  }

  /** The VPCs of these ids that exist. */
  async vpcsById(ids: readonly string[]): Promise<Ec2Vpc[]> {
    if (ids.length === 0) return [];
    const out = await this.absentIfNotFound(() =>
      this.call(
        "DescribeVpcs",
        { "Filter.1.Name": "vpc-id", ...listParams("Filter.1.Value", ids) },
        `EC2 DescribeVpcs of ${ids.join(", ")}`,
      ),
    );
    return out ? xmlItems(out, "vpcSet").map(vpcOf) : [];
  }

  async interfaces(params: Record<string, string>): Promise<Ec2Interface[]> {
    const out = await this.call("DescribeNetworkInterfaces", params, "EC2 DescribeNetworkInterfaces");
    return xmlItems(out, "networkInterfaceSet").map(interfaceOf);
  }

  async interfaceById(id: string): Promise<Ec2Interface | undefined> {
    return (await this.absentIfNotFound(() => this.interfaces({ "NetworkInterfaceId.1": id })))?.[0];
  }

  /** The ENIs Ottava made for the load balancer (of one role, if given), in a stable order. */
  async lbInterfaces(lbId: string, role?: string): Promise<Ec2Interface[]> {
    const filters: Record<string, string> = { [`tag:${STAGE_TAG_KEY}`]: this.settings.stage, [`tag:${LOAD_BALANCER_TAG_KEY}`]: lbId };
    if (role) filters[`tag:${ENI_ROLE_TAG_KEY}`] = role;
    return (await this.interfaces(filterParams(filters))).sort((a, b) => a.id.localeCompare(b.id));
  }

  /** The ENIs of `role` Ottava made for the amphora (in one VPC, if given), in a stable order. */
  async amphoraInterfaces(amphoraId: string, role: string, vpcId?: string): Promise<Ec2Interface[]> {
    const filters: Record<string, string> = {
      [`tag:${STAGE_TAG_KEY}`]: this.settings.stage,
      [`tag:${AMPHORA_TAG_KEY}`]: amphoraId,
      [`tag:${ENI_ROLE_TAG_KEY}`]: role,
    };
    if (vpcId) filters["vpc-id"] = vpcId;
    return (await this.interfaces(filterParams(filters))).sort((a, b) => a.id.localeCompare(b.id));
  }

  async groupById(id: string): Promise<Ec2SecurityGroup | undefined> {
    const out = await this.absentIfNotFound(() =>
      this.call("DescribeSecurityGroups", { "GroupId.1": id }, `EC2 DescribeSecurityGroups of ${id}`),
    );
    return out ? xmlItems(out, "securityGroupInfo").map(securityGroupOf)[0] : undefined;
  }

  /** The load balancer's own group (by its stage and load balancer tags, and its name). */
  async lbGroup(lbId: string): Promise<Ec2SecurityGroup | undefined> {
    return (await this.lbGroups(lbId, { "group-name": lbSecurityGroupName(this.settings.stage, lbId) }))[0];
  }

  /** The groups Ottava made for the load balancer (its own, its member networks'), those matching `filters` if given. */
  async lbGroups(lbId: string, filters: Record<string, string> = {}): Promise<Ec2SecurityGroup[]> {
    const out = await this.call(
      "DescribeSecurityGroups",
      filterParams({ [`tag:${STAGE_TAG_KEY}`]: this.settings.stage, [`tag:${LOAD_BALANCER_TAG_KEY}`]: lbId, ...filters }),
      `EC2 DescribeSecurityGroups of load balancer ${lbId}`,
    );
    return xmlItems(out, "securityGroupInfo")
      .map(securityGroupOf)
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  /**
   * A group of the load balancer named `name` in `vpcId`, found by its tags and name, else made with
   * these tags and no ingress rule (recorded in `made`). Two callers making it at once: the second finds the first's.
   */
  async ensureGroup(
    lbId: string,
    name: string,
    vpcId: string,
    tags: Record<string, string>,
    made: { group?: string } = {},
  ): Promise<string> {
    const find = async () => (await this.lbGroups(lbId, { "group-name": name, "vpc-id": vpcId }))[0];
    const found = await find();
    if (found) return found.id;
    try {
      const out = await this.call(
        "CreateSecurityGroup",
        {
          GroupName: name,
          GroupDescription: `Ottava load balancer ${lbId}`,
          VpcId: vpcId,
          ...tagSpecParams("security-group", { ...tags, Name: name }),
        },
        `EC2 CreateSecurityGroup ${name}`,
      );
      const id = xmlText(out, "groupId");
      if (!id) throw new DriverError(`EC2 CreateSecurityGroup ${name}: no groupId in the answer`);
      made.group = id;
      return id;
    } catch (e) {
      // Another call made it first.
      if (errorName(e) !== "InvalidGroup.Duplicate") throw e;
      const again = await find();
      if (!again) throw e;
      return again.id;
    }
  }

  /**
   * A new ENI in the subnet with these groups and tags; `token` (a ClientToken) makes a retried create
   * answer the first one.
   */
  async createInterface(subnetId: string, groups: string[], tags: Record<string, string>, token?: string): Promise<Ec2Interface> {
    const out = await this.call(
      "CreateNetworkInterface",
      {
        SubnetId: subnetId,
        Description: `Ottava ${tags[ENI_ROLE_TAG_KEY]} port of load balancer ${tags[LOAD_BALANCER_TAG_KEY]}`,
        ...(token ? { ClientToken: token } : {}),
        ...listParams("SecurityGroupId", groups),
        ...tagSpecParams("network-interface", tags),
      },
      `EC2 CreateNetworkInterface in ${subnetId}`,
    );
    const item = xmlChild(out, "networkInterface");
    if (!item) throw new DriverError(`EC2 CreateNetworkInterface in ${subnetId}: no networkInterface in the answer`);
    return interfaceOf(item);
  }

  /** Detaches the ENI if attached, waits until EC2 shows it available, and deletes it (InUse retried). */
  async removeInterface(eni: Ec2Interface): Promise<void> {
    if (eni.attachment) {
      try {
        await this.call("DetachNetworkInterface", { AttachmentId: eni.attachment.id }, `EC2 DetachNetworkInterface ${eni.id}`);
      } catch (e) {
        if (!notFound(e)) throw e;
      }
      for (let attempt = 0; ; attempt++) {
        const now = await this.interfaceById(eni.id);
        if (!now) return;
        if (now.status === "available" && !now.attachment) break;
        if (attempt >= this.maxRetries) break; // the delete says why, and is retried as it says
        await sleep(this.retryIntervalMs);
      }
    }
    await this.deleteInterface(eni.id);
  }

  async deleteInterface(id: string): Promise<void> {
    await this.retrying(`EC2 DeleteNetworkInterface ${id}`, "InvalidNetworkInterface.InUse", () =>
      this.call("DeleteNetworkInterface", { NetworkInterfaceId: id }, `EC2 DeleteNetworkInterface ${id}`),
    );
  }

  /** _delete_vip_security_group: retried while EC2 still sees an ENI in it (DependencyViolation). */
  async deleteGroup(id: string): Promise<void> {
    await this.retrying(`EC2 DeleteSecurityGroup ${id}`, "DependencyViolation", () =>
      this.call("DeleteSecurityGroup", { GroupId: id }, `EC2 DeleteSecurityGroup ${id}`),
    );
  }

  /** A delete: done when it succeeds or finds nothing; `retried` errors tried again up to maxRetries times. */
  async retrying(label: string, retried: string, call: () => Promise<unknown>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await call();
        return;
      } catch (e) {
        if (notFound(e)) return;
        if (errorName(e) !== retried) throw e;
        if (attempt >= this.maxRetries) throw new DriverError(`${label}: still ${retried} after ${attempt + 1} attempts`);
        this.log?.warn("delete refused for now; retrying", { what: label, error: errorName(e), attempt: attempt + 1 });
        await sleep(this.retryIntervalMs);
      }
    }
  }

  async absentIfNotFound<T>(call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (e) {
      if (notFound(e) || errorName(e).endsWith(".Malformed")) return undefined;
      throw e;
    }
  }

  /**
   * Runs `fn`: Octavia's faults and driver errors as they are, EC2 being unavailable (throttling, 5xx,
   * lost connections: edge marks them) as it is, any other EC2 refusal a DriverError naming what failed.
   * `pass`: other errors of the caller's own that go through as they are.
   */
  async guard<T>(what: string, fn: () => Promise<T>, pass: (e: unknown) => boolean = () => false): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof Fault || e instanceof DriverError || isUnavailable(e) || pass(e)) throw e;
      throw new DriverError(`vpc network driver: could not ${what}: ${(e as Error).message ?? String(e)}`);
    }
  }
}
