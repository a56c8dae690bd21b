// The vpc network driver's member networks: Octavia's get_subnet, get_plugged_networks, create_port with
// plug_port, unplug_network with delete_port (network/drivers/neutron/allowed_address_pairs.py), where
// Octavia's network is a VPC and its subnet a subnet.
//
// A VPC routes between all its subnets, in every zone, so an amphora reaches a member on any subnet of a
// VPC it has an ENI in (subnetsRouted: the deltas compare VPCs, never subnets): the VIP's VPC through
// its "vrrp" ENI, any other VPC through one "member" ENI of that VPC. A member ENI is in a subnet of its
// VPC in the amphora's zone (an ENI attaches only to an instance of its zone; one of another VPC than
// the instance's is a multi-VPC attachment), in the load balancer's member group of that VPC, attached
// at the instance's next free device index. The amphora routes the VPC's ranges through it.
import { DriverError, NetworkRefused, VNIC_TYPE_NORMAL, type Amphora, type LoadBalancer, type NetworkPort } from "@ottava/core";
import { xmlChild, xmlItems, xmlText } from "@ottava/edge/aws-query";
import {
  AMPHORA_TAG_KEY,
  CREATED_AT_TAG_KEY,
  ENI_ROLE_TAG_KEY,
  LOAD_BALANCER_TAG_KEY,
  STAGE_TAG_KEY,
  memberSecurityGroupName,
} from "../constants";
import { cidrWithin, cidrsOverlap, filterParams, gatewayOf, tagOf, type Ec2Interface, type Ec2Subnet } from "./ec2-query";
import { MEMBER_ROLE, VPC_MTU, errorName, type VpcEc2 } from "./vpc-ec2";

/** The instance's own interface, on the management subnet: never one of get_plugged_networks' ports. */
const MANAGEMENT_DEVICE_INDEX = 0;
/** The device index of the "vrrp" ENI (plugVip): member ENIs take the first free index after it. */
const VRRP_DEVICE_INDEX = 1;
/** An amphora's interfaces that are not for its members: its management one and its VIP's. */
const NON_MEMBER_INTERFACES = 2;

const refusedSubnet = (id: string) => new NetworkRefused(`Subnet ${id} not found.`);
const isRefusal = (e: unknown) => e instanceof NetworkRefused;
const unique = <T>(xs: readonly T[]) => [...new Set(xs)];

export class VpcMemberNetworks {
  /** Subnet UUID → its VPC's UUID, for ever (a subnet never changes VPC). */
  private readonly networks = new Map<string, string>();

  constructor(private readonly net: VpcEc2) {}

  /** get_subnet: the VPC a subnet is in. A subnet EC2 does not know (or a UUID naming none): NetworkRefused. */
  async getSubnet(subnetId: string): Promise<{ id: string; network_id: string }> {
    return this.net.guard(
      `read subnet ${subnetId}`,
      async () => {
        let network_id = this.networks.get(subnetId);
        if (!network_id) {
          const awsId = await this.net.ids.awsId(subnetId, "subnet");
          const subnet = awsId ? await this.net.subnetById(awsId) : undefined;
          if (!subnet) throw refusedSubnet(subnetId);
          network_id = await this.net.ids.uuid(subnet.vpcId);
          this.networks.set(subnetId, network_id);
        }
        return { id: subnetId, network_id };
      },
      isRefusal,
    );
  }

  /**
   * get_plugged_networks: the instance's ENIs but its management one (device index 0): the "vrrp" ENI
   * on the VIP's VPC and the member ENIs, each a port of its VPC (ENIs being detached are no longer plugged).
   */
  async getPluggedNetworks(lb: LoadBalancer, amphora: Amphora): Promise<NetworkPort[]> {
    return this.net.guard(`read the networks plugged into amphora ${amphora.id} of load balancer ${lb.id}`, async () => {
      if (!amphora.compute_id) return [];
      const enis = (await this.instanceInterfaces(amphora.compute_id))
        .filter((e) => e.attachment!.deviceIndex !== MANAGEMENT_DEVICE_INDEX && !/^detach/.test(e.attachment!.status))
        .sort((a, b) => a.attachment!.deviceIndex - b.attachment!.deviceIndex);
      return this.portsOf(enis);
    });
  }

  /**
   * create_port and plug_port: the amphora's member ENI on VPC `networkId` (found by its tags, else
   * made), attached to its instance. Made in the first of `subnetIds` in the amphora's zone, else in
   * another subnet of the VPC in that zone that the project may use; in the load balancer's member group
   * of the VPC. Idempotent: a retry finds the ENI (by its amphora, role and VPC), attaches it if it is
   * not attached yet, and never makes a second. Every ENI is an ENA interface: `vnicType` is no choice here.
   */
  async plugNetwork(lb: LoadBalancer, amphora: Amphora, networkId: string, subnetIds: string[], vnicType: string): Promise<NetworkPort> {
    return this.net.guard(`plug network ${networkId} into amphora ${amphora.id}`, async () => {
      const instanceId = amphora.compute_id;
      if (!instanceId) throw new DriverError(`amphora ${amphora.id} has no instance to plug network ${networkId} into`);
      const vpcId = await this.net.ids.awsId(networkId, "vpc");
      if (!vpcId) throw new DriverError(`network ${networkId} is unknown`);
      let eni = await this.memberInterface(amphora, vpcId);
      if (!eni) {
        const zone = amphora.cached_zone ?? (await this.net.zoneOf(await this.net.vipSubnetId(lb)));
        if (!zone) throw new DriverError(`the zone of amphora ${amphora.id} is unknown`);
        const subnet = await this.zoneSubnet(lb, vpcId, zone, await this.subnetsOf(subnetIds));
        if (!subnet)
          throw new DriverError(`network ${networkId} has no subnet in zone ${zone} that amphora ${amphora.id} can be plugged into`);
        // Tagged as the LB's other resources are, with the time they were made (as its VIP's).
        const tags = { ...this.net.lbTags(lb.id, lb.project_id), [CREATED_AT_TAG_KEY]: new Date().toISOString() };
        const group = await this.net.ensureGroup(lb.id, memberSecurityGroupName(this.net.settings.stage, lb.id), vpcId, tags);
        eni = await this.net.createInterface(subnet.id, [group], {
          ...tags,
          [AMPHORA_TAG_KEY]: amphora.id,
          [ENI_ROLE_TAG_KEY]: MEMBER_ROLE,
          Name: `octavia-lb-member-${amphora.id}`, // Octavia's name of a member port
        });
        this.net.log?.info("member port made", {
          lbId: lb.id,
          amphoraId: amphora.id,
          interface: eni.id,
          subnet: subnet.id,
          group,
          vnicType,
        });
      }
      if (eni.attachment && eni.attachment.instanceId !== instanceId)
        throw new DriverError(`ENI ${eni.id} of amphora ${amphora.id} is attached to ${eni.attachment.instanceId}, not to ${instanceId}`);
      if (!eni.attachment) {
        const deviceIndex = await this.attach(eni.id, instanceId);
        this.net.log?.info("member port plugged", { lbId: lb.id, amphoraId: amphora.id, interface: eni.id, deviceIndex });
      }
      return (await this.portsOf([eni]))[0]!;
    });
  }

  /**
   * unplug_network and delete_port: the ENI is detached, and deleted once EC2 shows it detached (a
   * DriverError, for the flow to retry, while it is not yet); the amphora's other member ENIs on that VPC
   * (a create whose answer was lost) go with it. Gone already: done. Only an amphora's member ENI is ever
   * unplugged here.
   */
  async unplugNetwork(amphora: Amphora, port: { id: string; network_id: string }): Promise<void> {
    await this.net.guard(`unplug network ${port.network_id} from amphora ${amphora.id}`, async () => {
      const eniId = await this.net.ids.awsId(port.id, "eni");
      const eni = eniId ? await this.net.interfaceById(eniId) : undefined;
      if (eni && !this.isMemberInterface(eni, amphora.id))
        throw new DriverError(`ENI ${eni.id} is not a member port of amphora ${amphora.id}: it is left plugged`);
      const vpcId = eni?.vpcId ?? (await this.net.ids.awsId(port.network_id, "vpc"));
      const others = vpcId ? await this.net.amphoraInterfaces(amphora.id, MEMBER_ROLE, vpcId) : [];
      const gone = [...(eni ? [eni] : []), ...others.filter((o) => o.id !== eni?.id)];
      for (const e of gone) await this.net.removeInterface(e);
      this.net.log?.info("member port unplugged", { amphoraId: amphora.id, network: port.network_id, interfaces: gone.map((e) => e.id) });
    });
  }

  /**
   * At the API: can the amphorae of `lb` reach members on these subnets? Each subnet must exist, be one
   * the project may use and no management subnet ("Subnet <id> not found.", as Octavia answers a subnet
   * the caller cannot see), and have an IPv4 range. Each VPC other than the VIP's needs a member ENI:
   * a subnet of it in the amphorae's zone (the VIP subnet's) that the project may use, ranges that
   * overlap neither the VIP's VPC's nor another member VPC's, and room for the ENI on the amphorae's
   * instance type (its maximum network interfaces, less the management and the VIP's ENIs).
   */
  async checkMemberSubnets(lb: LoadBalancer, subnetIds: string[]): Promise<void> {
    await this.net.guard(
      `check the member subnets of load balancer ${lb.id}`,
      async () => {
        const uuids = unique(subnetIds);
        const awsIds = new Map<string, string>();
        for (const id of uuids) awsIds.set(id, (await this.net.ids.awsId(id, "subnet")) ?? throwRefusal(refusedSubnet(id)));
        const found = new Map((await this.net.subnetsById([...awsIds.values()])).map((s) => [s.id, s]));
        const vipSubnetId = await this.net.vipSubnetId(lb);
        const vipSubnet = found.get(vipSubnetId) ?? (await this.net.subnetById(vipSubnetId));
        if (!vipSubnet) throw new DriverError(`the VIP subnet ${vipSubnetId} of load balancer ${lb.id} was not found`);
        /** The member VPCs other than the VIP's, each with its subnets (UUID and subnet) asked for. */
        const others = new Map<string, { uuid: string; subnet: Ec2Subnet }[]>();
        for (const [uuid, awsId] of awsIds) {
          const subnet = found.get(awsId);
          if (!subnet || (awsId !== vipSubnetId && !this.net.mayHoldVip(subnet, lb.project_id, undefined))) throw refusedSubnet(uuid);
          if (!subnet.cidr)
            throw new NetworkRefused(`Subnet ${uuid} has no IPv4 range: the vpc network driver reaches members over IPv4 only.`);
          if (subnet.vpcId === vipSubnet.vpcId) continue;
          others.set(subnet.vpcId, [...(others.get(subnet.vpcId) ?? []), { uuid, subnet }]);
        }
        if (others.size === 0) return;
        for (const [vpcId, asked] of others) {
          if (
            await this.zoneSubnet(
              lb,
              vpcId,
              vipSubnet.zone,
              asked.map((a) => a.subnet),
            )
          )
            continue;
          throw new NetworkRefused(
            `Subnet ${asked[0]!.uuid} is on network ${await this.net.ids.uuid(vpcId)}, which has no subnet in availability zone ${vipSubnet.zone} that the load balancer's amphorae can be plugged into: an amphora's network interface must be in the amphora's zone, the VIP subnet's.`,
          );
        }
        await this.checkOverlaps(vipSubnet.vpcId, others);
        await this.checkInterfaceLimit(lb, others.size);
      },
      isRefusal,
    );
  }

  /** The member VPCs' ranges overlap neither the VIP VPC's nor each other's: an amphora routes each through its own ENI. */
  private async checkOverlaps(vipVpcId: string, others: Map<string, { uuid: string }[]>): Promise<void> {
    const vpcs = new Map((await this.net.vpcsById([vipVpcId, ...others.keys()])).map((v) => [v.id, v]));
    const order = [vipVpcId, ...others.keys()];
    for (let i = 1; i < order.length; i++) {
      for (let j = 0; j < i; j++) {
        for (const a of vpcs.get(order[i]!)?.cidrs ?? []) {
          const b = (vpcs.get(order[j]!)?.cidrs ?? []).find((c) => cidrsOverlap(a, c));
          if (!b) continue;
          const whose = j === 0 ? "the VIP's network" : `network ${await this.net.ids.uuid(order[j]!)}`;
          throw new NetworkRefused(
            `Subnet ${others.get(order[i]!)![0]!.uuid} is on network ${await this.net.ids.uuid(order[i]!)}, whose range ${a} overlaps the range ${b} of ${whose}: an amphora could not route to both.`,
          );
        }
      }
    }
  }

  /**
   * An amphora takes `memberNetworks` member ENIs beside its management and VIP ones: within its
   * instance type's maximum network interfaces (DescribeInstanceTypes). The types are those of the load
   * balancer's instances, else OTTAVA_AMP_FLAVOR_ID's; when none is known, nothing is checked (an attach
   * beyond the limit then fails in the flow, which reverts).
   */
  private async checkInterfaceLimit(lb: LoadBalancer, memberNetworks: number): Promise<void> {
    const types = await this.instanceTypes(lb.id);
    if (types.length === 0 && this.net.settings.ampFlavorId) types.push(this.net.settings.ampFlavorId);
    const limits = await this.interfaceLimits(types);
    const [type, max] = [...limits].sort(([, a], [, b]) => a - b)[0] ?? [];
    if (type === undefined || max === undefined) {
      this.net.log?.warn("no instance type known: the member networks' interfaces are not counted", { lbId: lb.id, types });
      return;
    }
    if (NON_MEMBER_INTERFACES + memberNetworks <= max) return;
    throw new NetworkRefused(
      `The members' subnets are on ${memberNetworks} networks besides the VIP's, each needing a network interface on each amphora, but instance type ${type} has at most ${max} network interfaces: one for the management network, one for the VIP's network, and ${Math.max(0, max - NON_MEMBER_INTERFACES)} for members' networks.`,
    );
  }

  /** The instance types of the load balancer's instances that are not terminated (nor terminating). */
  private async instanceTypes(lbId: string): Promise<string[]> {
    const out = await this.net.call(
      "DescribeInstances",
      filterParams({ [`tag:${STAGE_TAG_KEY}`]: this.net.settings.stage, [`tag:${LOAD_BALANCER_TAG_KEY}`]: lbId }),
      `EC2 DescribeInstances of load balancer ${lbId}`,
    );
    const types = xmlItems(out, "reservationSet")
      .flatMap((r) => xmlItems(r, "instancesSet"))
      .filter((i) => !["shutting-down", "terminated"].includes(xmlText(xmlChild(i, "instanceState"), "name") ?? ""))
      .map((i) => xmlText(i, "instanceType") ?? "");
    return unique(types.filter(Boolean));
  }

  /** Each type's MaximumNetworkInterfaces, for the types EC2 knows. */
  private async interfaceLimits(types: string[]): Promise<Map<string, number>> {
    const limits = new Map<string, number>();
    for (const type of unique(types)) {
      try {
        const out = await this.net.call("DescribeInstanceTypes", { "InstanceType.1": type }, `EC2 DescribeInstanceTypes of ${type}`);
        const item = xmlItems(out, "instanceTypeSet").find((i) => xmlText(i, "instanceType") === type);
        const max = Number(xmlText(xmlChild(item, "networkInfo"), "maximumNetworkInterfaces"));
        if (Number.isInteger(max) && max > 0) limits.set(type, max);
      } catch (e) {
        if (errorName(e) !== "InvalidInstanceType" && errorName(e) !== "InvalidParameterValue") throw e;
      }
    }
    return limits;
  }

  // ---- ENIs ---------------------------------------------------------------------------------------

  private isMemberInterface(eni: Ec2Interface, amphoraId: string): boolean {
    return (
      tagOf(eni.tags, STAGE_TAG_KEY) === this.net.settings.stage &&
      tagOf(eni.tags, AMPHORA_TAG_KEY) === amphoraId &&
      tagOf(eni.tags, ENI_ROLE_TAG_KEY) === MEMBER_ROLE
    );
  }

  /**
   * The amphora's member ENI on the VPC: the one attached to its instance, else the first. Others not
   * attached (a create whose answer was lost, then made again) are deleted.
   */
  private async memberInterface(amphora: Amphora, vpcId: string): Promise<Ec2Interface | undefined> {
    const found = await this.net.amphoraInterfaces(amphora.id, MEMBER_ROLE, vpcId);
    const kept = found.find((e) => e.attachment?.instanceId === amphora.compute_id) ?? found[0];
    for (const stray of found.filter((e) => e !== kept && !e.attachment)) {
      this.net.log?.warn("a second member port of the amphora on the network is deleted", { amphoraId: amphora.id, interface: stray.id });
      await this.net.deleteInterface(stray.id);
    }
    return kept;
  }

  private async instanceInterfaces(instanceId: string): Promise<Ec2Interface[]> {
    return (await this.net.interfaces(filterParams({ "attachment.instance-id": instanceId }))).filter(
      (e) => e.attachment?.instanceId === instanceId,
    );
  }

  /**
   * Attaches the ENI at the instance's first free device index after the VRRP ENI's; another ENI taking
   * that index meanwhile (EC2's InvalidParameterValue naming the device index): the next one. Answers the index.
   */
  private async attach(eniId: string, instanceId: string): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      const used = new Set((await this.instanceInterfaces(instanceId)).map((e) => e.attachment!.deviceIndex));
      let index = VRRP_DEVICE_INDEX + 1;
      while (used.has(index)) index++;
      try {
        await this.net.call(
          "AttachNetworkInterface",
          { NetworkInterfaceId: eniId, InstanceId: instanceId, DeviceIndex: String(index) },
          `EC2 AttachNetworkInterface ${eniId} to ${instanceId}`,
        );
        return index;
      } catch (e) {
        const taken = errorName(e) === "InvalidParameterValue" && /device index/i.test((e as Error).message);
        if (!taken || attempt >= this.net.maxRetries) throw e;
      }
    }
  }

  // ---- subnets and ports --------------------------------------------------------------------------

  /** The subnets these UUIDs name, in their order (those that name none left out). */
  private async subnetsOf(subnetIds: string[]): Promise<Ec2Subnet[]> {
    const awsIds: string[] = [];
    for (const id of subnetIds) {
      const awsId = await this.net.ids.awsId(id, "subnet");
      if (awsId) awsIds.push(awsId);
    }
    const found = new Map((await this.net.subnetsById(awsIds)).map((s) => [s.id, s]));
    return awsIds.map((id) => found.get(id)).filter((s) => s !== undefined);
  }

  /**
   * The subnet of VPC `vpcId` in `zone` for a member ENI: the first of `preferred` there, else the first
   * other (by id) with a free address; either an IPv4 subnet the project may use, no management one.
   */
  private async zoneSubnet(lb: LoadBalancer, vpcId: string, zone: string, preferred: Ec2Subnet[]): Promise<Ec2Subnet | undefined> {
    const usable = (s: Ec2Subnet) => s.vpcId === vpcId && s.zone === zone && !!s.cidr && this.net.mayHoldVip(s, lb.project_id, undefined);
    const first = preferred.find(usable);
    if (first) return first;
    return (await this.net.describeSubnets(filterParams({ "vpc-id": vpcId, "availability-zone": zone })))
      .filter((s) => usable(s) && s.availableIps > 0)
      .sort((a, b) => a.id.localeCompare(b.id))[0];
  }

  /**
   * Each ENI as Octavia's port: its VPC, its MAC, its primary address on its subnet with the subnet's
   * range and router (its first host), and the VPC's other ranges routed through that router: a member
   * on any subnet of the VPC is reached through this ENI. MTU 9001: the ENI carries only the VPC's own
   * traffic (those routes), and within a VPC EC2 carries jumbo frames.
   */
  private async portsOf(enis: Ec2Interface[]): Promise<NetworkPort[]> {
    const subnets = new Map((await this.net.subnetsById(unique(enis.map((e) => e.subnetId)))).map((s) => [s.id, s]));
    const vpcs = new Map((await this.net.vpcsById(unique(enis.map((e) => e.vpcId)))).map((v) => [v.id, v]));
    const ports: NetworkPort[] = [];
    for (const eni of enis) {
      const cidr = subnets.get(eni.subnetId)?.cidr;
      if (!cidr) throw new DriverError(`the subnet ${eni.subnetId} of ENI ${eni.id} was not found`);
      const gateway = gatewayOf(cidr);
      const host_routes = (vpcs.get(eni.vpcId)?.cidrs ?? [])
        .filter((c) => !cidrWithin(c, cidr))
        .map((destination) => ({ destination, nexthop: gateway }));
      ports.push({
        id: await this.net.ids.uuid(eni.id),
        network_id: await this.net.ids.uuid(eni.vpcId),
        mac_address: eni.mac,
        mtu: VPC_MTU,
        vnic_type: VNIC_TYPE_NORMAL,
        fixed_ips: [
          {
            subnet_id: await this.net.ids.uuid(eni.subnetId),
            ip_address: eni.primaryIp,
            subnet: { cidr, gateway_ip: gateway, host_routes },
          },
        ],
      });
    }
    return ports;
  }
}

function throwRefusal(e: NetworkRefused): never {
  throw e;
}
