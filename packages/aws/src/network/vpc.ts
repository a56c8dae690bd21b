// The vpc network driver (OTTAVA_NETWORK_DRIVER=vpc): Octavia's allowed-address-pairs driver
// (network/drivers/neutron/allowed_address_pairs.py) for a VPC, where a VIP is a secondary private IP
// that moves between network interfaces (AssignPrivateIpAddresses with AllowReassignment), since a VPC
// ignores gratuitous ARP and has no allowed address pairs.
//
// - allocate_vip: the VIP is held by a reservation ENI (vip_port_id) in the VIP subnet, made with the
//   load balancer's security group (lbSecurityGroupName), or by the user's own ENI (vip_port_id given),
//   which Ottava never deletes.
// - plug_vip: each amphora gets a "vrrp" ENI in the VIP subnet, attached at device index 1; its primary
//   IP is the amphora's vrrp_ip. The amphora that serves the VIP holds it (takeVip).
// - unplug_vip: the VIP goes back to the reservation ENI first if the amphora's ENI holds it; then the
//   ENI is detached, and deleted once EC2 shows it available.
// - deallocate_vip: every ENI tagged with the load balancer, then its groups.
// - member networks (members.ts): a member on another VPC than the VIP's is reached through a "member"
//   ENI of that VPC on each amphora; any subnet of a VPC the amphora has an ENI in needs nothing more.
//
// Every id the API shows is a UUID (AwsIds); who may use a VPC, subnet, ENI or group is said by its tags
// (tenancy.ts). Everything made is tagged with the stage and its load balancer (and amphora). It speaks
// edge's minimal EC2 Query client only: the API loads it to allocate VIPs. What its parts share (EC2
// reads, ENIs and groups made and deleted) is vpc-ec2.ts.
import { isIPv4 } from "node:net";
import {
  DriverError,
  Fault,
  validation,
  vipSecurityGroupRules,
  type Amphora,
  type AmphoraNetworkConfig,
  type AmphoraPorts,
  type CloudIdStore,
  type Config,
  type Listener,
  type LoadBalancer,
  type Logger,
  type NetworkDriver,
  type NetworkPort,
  type Tree,
  type Vip,
  type VipRequest,
} from "@ottava/core";
import type { AwsQueryCall } from "@ottava/edge/aws-query";
import { AMPHORA_TAG_KEY, CREATED_AT_TAG_KEY, ENI_ROLE_TAG_KEY, LOAD_BALANCER_TAG_KEY, lbSecurityGroupName } from "../constants";
import { ec2QueryClient } from "../profiles";
import { filterParams, gatewayOf, isSubnetHost, listParams, tagOf, type Ec2Interface, type Ec2Subnet, type Ec2Vpc } from "./ec2-query";
import { AwsIds } from "./ids";
import { VpcMemberNetworks } from "./members";
import { syncSecurityGroupRules } from "./rules";
import { mayUse } from "./tenancy";
import { VIP_ROLE, VRRP_ROLE, VPC_MTU, VpcEc2, errorName, type VpcNetworkOptions, type VpcNetworkSettings } from "./vpc-ec2";

export { MEMBER_ROLE, VIP_ROLE, VRRP_ROLE, VPC_MTU, type VpcNetworkOptions, type VpcNetworkSettings } from "./vpc-ec2";

/** Octavia's InvalidSubresource: "<resource> <id> not found." (400). */
const invalidSubresource = (resource: string, id: string) => new Fault(400, `${resource} ${id} not found.`);

export class VpcNetworkDriver implements NetworkDriver {
  /** A VPC routes between all its subnets, in every zone: a port on a VPC reaches each of them. */
  readonly subnetsRouted = true;
  private readonly net: VpcEc2;
  private readonly members: VpcMemberNetworks;

  constructor(ec2: AwsQueryCall, settings: VpcNetworkSettings, options: VpcNetworkOptions) {
    this.net = new VpcEc2(ec2, settings, options);
    this.members = new VpcMemberNetworks(this.net);
  }

  // ---- allocate_vip -------------------------------------------------------------------------------

  /**
   * allocate_vip, with the API's _validate_vip_request_object for a VPC: the subnet (given, or picked
   * from the network as Octavia picks one), or the user's ENI; tenancy and zones checked; then the LB's
   * group, the reservation ENI and the VIP on it. A refusal leaves nothing this call made.
   */
  async allocateVip(req: VipRequest): Promise<Vip> {
    return this.net.guard("allocate the VIP", async () => {
      if (req.vip_qos_policy_id) throw new Fault(400, "The vpc network driver has no QoS policies: vip_qos_policy_id cannot be set.");
      if (req.additional_vips.length > 0)
        throw new Fault(
          400,
          "The vpc network driver does not support additional_vips: an amphora serves all its VIPs on one port, and an EC2 network interface holds addresses of its own subnet only.",
        );
      if (req.vip_address !== null && !isIPv4(req.vip_address)) throw ipv6Refused();
      const zone = req.zone ?? {};
      const { subnet, vpc, userPort } = req.vip_port_id ? await this.userPortOf(req) : await this.subnetOf(req);
      await this.checkZones(req, subnet, zone);
      const vpcUuid = await this.net.ids.uuid(vpc.id);
      const subnetUuid = await this.net.ids.uuid(subnet.id);
      const vipGroups: string[] = [];
      for (const sg of req.vip_sg_ids)
        vipGroups.push((await this.net.ids.awsId(sg, "sg")) ?? throwFault(invalidSubresource("Security Group", sg)));
      if (req.vip_address !== null && !userPort && !isSubnetHost(req.vip_address, subnet.cidr!))
        throw new Fault(400, `IP address ${req.vip_address} is not a valid IP for the specified subnet.`);

      const made: { group?: string; eni?: string; address?: { eni: string; ip: string } } = {};
      try {
        // Made before the LB's record is written: the orphan sweep gives them time (CREATED_AT_TAG_KEY).
        const lbTags = { ...this.net.lbTags(req.lbId, req.projectId), [CREATED_AT_TAG_KEY]: new Date().toISOString() };
        const group = await this.net.ensureGroup(req.lbId, lbSecurityGroupName(this.net.settings.stage, req.lbId), vpc.id, lbTags, made);
        let holder: Ec2Interface;
        if (userPort) holder = userPort;
        else {
          const found = await this.net.lbInterfaces(req.lbId, VIP_ROLE);
          holder =
            found[0] ??
            (await this.net.createInterface(
              subnet.id,
              [group, ...vipGroups],
              { ...lbTags, [ENI_ROLE_TAG_KEY]: VIP_ROLE },
              `vip-${req.lbId}`,
            ));
          if (!found[0]) made.eni = holder.id;
        }
        let address = req.vip_address ?? holder.secondaryIps[0];
        if (address === undefined || !holder.secondaryIps.includes(address)) {
          address = await this.assignNew(holder, req.vip_address, subnetUuid);
          made.address = { eni: holder.id, ip: address };
        }
        this.net.log?.info("VIP allocated", { lbId: req.lbId, address, port: holder.id, subnet: subnet.id, group });
        return {
          vip_address: address,
          vip_port_id: await this.net.ids.uuid(holder.id),
          vip_subnet_id: subnetUuid,
          vip_network_id: vpcUuid,
          additional_vips: [],
        };
      } catch (e) {
        await this.undoAllocation(req.lbId, made);
        throw e;
      }
    });
  }

  /** The VIP subnet: vip_subnet_id (in vip_network_id if that is given too), else one of vip_network_id's as Octavia picks it. */
  private async subnetOf(req: VipRequest): Promise<{ subnet: Ec2Subnet; vpc: Ec2Vpc; userPort?: undefined }> {
    let vpc: Ec2Vpc | undefined;
    if (req.vip_network_id) vpc = await this.usableVpc(req.vip_network_id, req.projectId);
    if (req.vip_subnet_id) {
      const subnet = await this.usableSubnet(req.vip_subnet_id, req.projectId, req.zone);
      if (vpc && subnet.vpcId !== vpc.id) throw invalidSubresource("Subnet", req.vip_subnet_id);
      if (!subnet.cidr) throw ipv6Refused();
      return { subnet, vpc: vpc ?? (await this.net.vpcById(subnet.vpcId)) ?? throwFault(invalidSubresource("Subnet", req.vip_subnet_id)) };
    }
    // _validate_network_and_fill_or_validate_subnet: with an address, the subnet that holds it; else
    // the first subnet with enough free addresses (IPv4 only here). Those of zones the amphorae can
    // boot in come first (checkZones refuses the others).
    const usable = (await this.net.describeSubnets({ ...filterParams({ "vpc-id": vpc!.id }) })).filter((s) =>
      this.net.mayHoldVip(s, req.projectId, req.zone),
    );
    const bootable = new Map<string, boolean>();
    for (const s of usable) bootable.set(s.id, await this.bootableZone(s.zone, req.zone ?? {}));
    const subnets = usable.sort((a, b) => Number(bootable.get(b.id)) - Number(bootable.get(a.id)) || a.id.localeCompare(b.id));
    if (req.vip_address !== null) {
      const subnet = subnets.find((s) => s.cidr && inCidr(req.vip_address!, s.cidr));
      if (!subnet) throw validation("Supplied network does not contain a subnet for VIP address specified.");
      return { subnet, vpc: vpc! };
    }
    const v4 = subnets.filter((s) => s.cidr);
    if (v4.length === 0) throw validation("Supplied network does not contain a subnet.");
    // The reservation ENI's own address, the VIP, and an ENI per amphora of an ACTIVE_STANDBY pair.
    const subnet = v4.find((s) => s.availableIps >= 4);
    if (!subnet) throw validation("Subnet(s) in the supplied network do not contain enough available IPs.");
    return { subnet, vpc: vpc! };
  }

  /**
   * _validate_port_and_fill_or_validate_subnet for the user's ENI: it exists and the project may use it;
   * it is in use neither by an instance nor by Ottava (another LB's port); the VIP is vip_address (a
   * secondary IP of it), else its first secondary IP, else a new one.
   */
  private async userPortOf(req: VipRequest): Promise<{ subnet: Ec2Subnet; vpc: Ec2Vpc; userPort: Ec2Interface }> {
    const portId = req.vip_port_id!;
    const eniId = await this.net.ids.awsId(portId, "eni");
    const port = eniId ? await this.net.interfaceById(eniId) : undefined;
    if (
      !port ||
      !mayUse(port.tags, req.projectId, this.net.settings.allowInvisibleResourceUsage) ||
      this.net.isManagement(port.subnetId, req.zone)
    )
      throw invalidSubresource("Port", portId);
    const device =
      port.attachment?.instanceId ?? (tagOf(port.tags, ENI_ROLE_TAG_KEY) ? `lb-${tagOf(port.tags, LOAD_BALANCER_TAG_KEY)}` : undefined);
    if (device) throw validation(`Port ${portId} is already used by device ${device} `);
    const subnet = (await this.net.subnetById(port.subnetId)) ?? throwFault(invalidSubresource("Port", portId));
    if (!subnet.cidr) throw ipv6Refused();
    if (req.vip_network_id) {
      const vpc = await this.usableVpc(req.vip_network_id, req.projectId);
      if (vpc.id !== port.vpcId) throw invalidSubresource("Port", portId);
    }
    if (req.vip_subnet_id && (await this.net.ids.awsId(req.vip_subnet_id, "subnet")) !== port.subnetId) {
      await this.usableSubnet(req.vip_subnet_id, req.projectId, req.zone);
      throw validation("No VIP address found on the specified VIP port within the specified subnet.");
    }
    if (req.vip_address !== null && !port.secondaryIps.includes(req.vip_address)) {
      if (req.vip_address === port.primaryIp)
        throw new Fault(
          400,
          `IP address ${req.vip_address} is the primary address of port ${portId}, which cannot move between network interfaces: the vpc network driver needs a secondary address of the port as the VIP.`,
        );
      throw validation("Specified VIP address not found on the specified VIP port.");
    }
    const vpc = (await this.net.vpcById(port.vpcId)) ?? throwFault(invalidSubresource("Port", portId));
    return { subnet, vpc, userPort: port };
  }

  /** The VPC a network UUID names, if the project may use it; else Octavia's "Network <id> not found." */
  private async usableVpc(networkId: string, projectId: string): Promise<Ec2Vpc> {
    const vpcId = await this.net.ids.awsId(networkId, "vpc");
    const vpc = vpcId ? await this.net.vpcById(vpcId) : undefined;
    if (!vpc || !mayUse(vpc.tags, projectId, this.net.settings.allowInvisibleResourceUsage)) throw invalidSubresource("Network", networkId);
    return vpc;
  }

  /** The subnet a UUID names, if the project may use it and it is no management subnet; else "Subnet <id> not found." */
  private async usableSubnet(subnetUuid: string, projectId: string, zone: Record<string, unknown> | undefined): Promise<Ec2Subnet> {
    const subnetId = await this.net.ids.awsId(subnetUuid, "subnet");
    const subnet = subnetId ? await this.net.subnetById(subnetId) : undefined;
    if (!subnet || !this.net.mayHoldVip(subnet, projectId, zone)) throw invalidSubresource("Subnet", subnetUuid);
    return subnet;
  }

  /**
   * The amphorae boot in the VIP subnet's zone (an ENI attaches only to an instance of its zone): the
   * zone needs a management subnet (the availability zone's management_network, else one of
   * amp_boot_network_list), and an availability zone's compute_zone must be that zone.
   */
  private async checkZones(req: VipRequest, subnet: Ec2Subnet, zone: Record<string, unknown>): Promise<void> {
    const subnetName = req.vip_subnet_id ?? (await this.net.ids.uuid(subnet.id));
    const computeZone = typeof zone.compute_zone === "string" && zone.compute_zone !== "" ? zone.compute_zone : undefined;
    if (computeZone && computeZone !== subnet.zone)
      throw new Fault(
        400,
        `VIP subnet ${subnetName} is in availability zone ${subnet.zone}, not in the availability zone's compute_zone ${computeZone}: the amphorae must boot in the VIP subnet's zone.`,
      );
    if (await this.bootableZone(subnet.zone, zone)) return;
    throw new Fault(
      400,
      `VIP subnet ${subnetName} is in availability zone ${subnet.zone}, where the amphorae have no management subnet: the amphorae must boot in the VIP subnet's zone.`,
    );
  }

  /** May amphorae boot in `az`: it is the compute_zone if one is set, and it has a management subnet? */
  private async bootableZone(az: string, zone: Record<string, unknown>): Promise<boolean> {
    if (typeof zone.compute_zone === "string" && zone.compute_zone !== "" && zone.compute_zone !== az) return false;
    const management =
      typeof zone.management_network === "string" && zone.management_network !== ""
        ? [zone.management_network]
        : this.net.settings.ampBootNetworkList;
    for (const id of management) if ((await this.net.zoneOf(id)) === az) return true;
    return false;
  }

  /** A new secondary IP on `eni`: `wanted`, else one EC2 picks. An address held by another ENI: Octavia's 409. */
  private async assignNew(eni: Ec2Interface, wanted: string | null, subnetUuid: string): Promise<string> {
    try {
      await this.net.call(
        "AssignPrivateIpAddresses",
        { NetworkInterfaceId: eni.id, ...(wanted ? { "PrivateIpAddress.1": wanted } : { SecondaryPrivateIpAddressCount: "1" }) },
        `EC2 AssignPrivateIpAddresses to ${eni.id}`,
      );
    } catch (e) {
      if (wanted && (errorName(e) === "InvalidIPAddress.InUse" || errorName(e) === "InvalidParameterValue"))
        throw new Fault(409, `The VIP IP address is already in use: IP address ${wanted} already allocated in subnet ${subnetUuid}.`);
      if (!wanted && errorName(e) === "InsufficientFreeAddressesInSubnet")
        throw new Fault(409, `No more IP addresses available on subnet ${subnetUuid}.`);
      throw e;
    }
    if (wanted) return wanted;
    const now = await this.net.interfaceById(eni.id);
    const fresh = now?.secondaryIps.find((ip) => !eni.secondaryIps.includes(ip));
    if (!fresh) throw new DriverError(`EC2 AssignPrivateIpAddresses to ${eni.id}: no new address on it`);
    return fresh;
  }

  /** What a refused allocation made goes again (the address from a user's ENI, the reservation ENI, the group). */
  private async undoAllocation(lbId: string, made: { group?: string; eni?: string; address?: { eni: string; ip: string } }) {
    try {
      if (made.address && made.address.eni !== made.eni)
        await this.net.call(
          "UnassignPrivateIpAddresses",
          { NetworkInterfaceId: made.address.eni, "PrivateIpAddress.1": made.address.ip },
          `EC2 UnassignPrivateIpAddresses from ${made.address.eni}`,
        );
      if (made.eni) await this.net.deleteInterface(made.eni);
      if (made.group) await this.net.deleteGroup(made.group);
    } catch (e) {
      this.net.log?.error("a refused VIP allocation left resources behind", { lbId, made, error: String(e) });
    }
  }

  // ---- deallocate_vip -----------------------------------------------------------------------------

  /**
   * deallocate_vip: a user's port gets the VIP back if an amphora's ENI holds it; every ENI tagged with
   * the load balancer (the reservation, the amphorae's "vrrp" and member ENIs) is detached and deleted;
   * then its groups, its own and its member networks' (DependencyViolation retried while EC2 still sees
   * an ENI in one). What is gone is deallocated.
   */
  async deallocateVip(lb: LoadBalancer): Promise<void> {
    await this.net.guard("deallocate the VIP", async () => {
      const enis = await this.net.lbInterfaces(lb.id);
      const portId = lb.vip_port_id ? await this.net.ids.awsId(lb.vip_port_id, "eni") : undefined;
      if (portId && !enis.some((e) => e.id === portId) && enis.some((e) => e.secondaryIps.includes(lb.vip_address))) {
        const port = await this.net.interfaceById(portId);
        if (port && !port.secondaryIps.includes(lb.vip_address)) await this.moveVip(lb.vip_address, port.id);
      }
      for (const eni of enis) await this.net.removeInterface(eni);
      const groups = await this.net.lbGroups(lb.id);
      for (const group of groups) await this.net.deleteGroup(group.id);
      this.net.log?.info("VIP deallocated", { lbId: lb.id, interfaces: enis.map((e) => e.id), groups: groups.map((g) => g.id) });
    });
  }

  // ---- security groups ----------------------------------------------------------------------------

  /**
   * get_security_group_by_id: the group a UUID names, if it exists and (with `projectId`) the project
   * may use it; else it throws (the API answers "Security Group <id> not found.").
   */
  async getSecurityGroup(sgId: string, projectId?: string): Promise<{ id: string }> {
    return this.net.guard("read a security group", async () => {
      const groupId = await this.net.ids.awsId(sgId, "sg");
      const group = groupId ? await this.net.groupById(groupId) : undefined;
      if (!group || (projectId !== undefined && !mayUse(group.tags, projectId, this.net.settings.allowInvisibleResourceUsage)))
        throw invalidSubresource("Security Group", sgId);
      return { id: sgId };
    });
  }

  /** update_vip_sg: the LB's ENIs (reservation and amphorae) in its group plus vip_sg_ids' groups. */
  async updateVipSecurityGroups(lb: LoadBalancer): Promise<void> {
    await this.net.guard("update the VIP's security groups", async () => {
      const group = await this.net.lbGroup(lb.id);
      if (!group) throw new DriverError(`the security group of load balancer ${lb.id} was not found`);
      const groups = [group.id, ...(await this.vipGroups(lb))];
      for (const eni of await this.net.lbInterfaces(lb.id)) {
        if (sameSet(eni.groups, groups)) continue;
        await this.net.call(
          "ModifyNetworkInterfaceAttribute",
          { NetworkInterfaceId: eni.id, ...listParams("SecurityGroupId", groups) },
          `EC2 ModifyNetworkInterfaceAttribute of ${eni.id}`,
        );
      }
    });
  }

  /** update_vip (_update_security_group_rules): the LB's group holds exactly Octavia's rules for its listeners. */
  async updateVip(tree: Tree): Promise<void> {
    await this.net.guard("update the VIP's security group rules", async () => {
      const group = await this.net.lbGroup(tree.lb.id);
      if (!group) throw new DriverError(`the security group of load balancer ${tree.lb.id} was not found`);
      await syncSecurityGroupRules(this.net.call, group.id, vipSecurityGroupRules(tree.lb, tree.of<Listener>("listener")));
    });
  }

  // ---- plug, unplug, take -------------------------------------------------------------------------

  /**
   * plug_vip: the amphora's "vrrp" ENI in the VIP subnet (found by its tags, else made), attached to its
   * instance at device index 1; with `holdVip`, the VIP moves to it. Answers its primary IP and UUID as
   * the VRRP port, the LB's VIP and VIP port as the HA port.
   */
  async plugVip(lb: LoadBalancer, amphora: Amphora, holdVip = false): Promise<AmphoraPorts> {
    return this.net.guard(`plug the VIP into amphora ${amphora.id}`, async () => {
      if (!amphora.compute_id) throw new DriverError(`amphora ${amphora.id} has no instance to plug the VIP into`);
      let eni = await this.amphoraInterface(amphora.id);
      if (!eni) {
        const subnetId = await this.net.vipSubnetId(lb);
        const group = await this.net.lbGroup(lb.id);
        if (!group) throw new DriverError(`the security group of load balancer ${lb.id} was not found`);
        eni = await this.net.createInterface(
          subnetId,
          [group.id, ...(await this.vipGroups(lb))],
          { ...this.net.lbTags(lb.id, lb.project_id), [AMPHORA_TAG_KEY]: amphora.id, [ENI_ROLE_TAG_KEY]: VRRP_ROLE },
          `vrrp-${amphora.id}`,
        );
      }
      if (eni.attachment && eni.attachment.instanceId !== amphora.compute_id)
        throw new DriverError(
          `ENI ${eni.id} of amphora ${amphora.id} is attached to ${eni.attachment.instanceId}, not to ${amphora.compute_id}`,
        );
      if (!eni.attachment)
        await this.net.call(
          "AttachNetworkInterface",
          { NetworkInterfaceId: eni.id, InstanceId: amphora.compute_id, DeviceIndex: "1" },
          `EC2 AttachNetworkInterface ${eni.id} to ${amphora.compute_id}`,
        );
      if (holdVip) await this.takeVipOn(lb, eni);
      this.net.log?.info("VIP plugged", { lbId: lb.id, amphoraId: amphora.id, interface: eni.id, holdsVip: holdVip });
      return { vrrp_ip: eni.primaryIp, vrrp_port_id: await this.net.ids.uuid(eni.id), ha_ip: lb.vip_address, ha_port_id: lb.vip_port_id };
    });
  }

  /**
   * unplug_vip: if the amphora's ENI holds the VIP, the VIP goes back to the LB's VIP port first (it is
   * never unassigned while the LB exists); then the ENI is detached, and deleted once available.
   */
  async unplugVip(lb: LoadBalancer, amphora: Amphora): Promise<void> {
    await this.net.guard(`unplug the VIP from amphora ${amphora.id}`, async () => {
      const eni = await this.amphoraInterface(amphora.id);
      if (!eni) return;
      if (eni.secondaryIps.includes(lb.vip_address)) {
        const port = await this.net.ids.awsId(lb.vip_port_id, "eni");
        if (!port) throw new DriverError(`the VIP port ${lb.vip_port_id} of load balancer ${lb.id} is unknown`);
        await this.moveVip(lb.vip_address, port);
      }
      await this.net.removeInterface(eni);
      this.net.log?.info("VIP unplugged", { lbId: lb.id, amphoraId: amphora.id, interface: eni.id });
    });
  }

  /** Moves the VIP to the amphora's ENI (AllowReassignment): true if it moved, false if the ENI held it already. */
  async takeVip(lb: LoadBalancer, amphora: Amphora): Promise<boolean> {
    return this.net.guard(`move the VIP to amphora ${amphora.id}`, async () => {
      const eni = await this.amphoraInterface(amphora.id);
      if (!eni) throw new DriverError(`amphora ${amphora.id} has no VIP port`);
      return this.takeVipOn(lb, eni);
    });
  }

  private async takeVipOn(lb: LoadBalancer, eni: Ec2Interface): Promise<boolean> {
    if (eni.secondaryIps.includes(lb.vip_address)) return false;
    await this.moveVip(lb.vip_address, eni.id);
    this.net.log?.info("VIP moved", { lbId: lb.id, address: lb.vip_address, interface: eni.id });
    return true;
  }

  /** AssignPrivateIpAddresses with AllowReassignment: the address leaves the ENI that held it. */
  private async moveVip(address: string, eniId: string): Promise<void> {
    await this.net.call(
      "AssignPrivateIpAddresses",
      { NetworkInterfaceId: eniId, "PrivateIpAddress.1": address, AllowReassignment: "true" },
      `EC2 AssignPrivateIpAddresses ${address} to ${eniId}`,
    );
  }

  // ---- member networks (members.ts) ---------------------------------------------------------------

  getSubnet(subnetId: string): Promise<{ id: string; network_id: string }> {
    return this.members.getSubnet(subnetId);
  }

  getPluggedNetworks(lb: LoadBalancer, amphora: Amphora): Promise<NetworkPort[]> {
    return this.members.getPluggedNetworks(lb, amphora);
  }

  plugNetwork(lb: LoadBalancer, amphora: Amphora, networkId: string, subnetIds: string[], vnicType: string): Promise<NetworkPort> {
    return this.members.plugNetwork(lb, amphora, networkId, subnetIds, vnicType);
  }

  unplugNetwork(amphora: Amphora, port: { id: string; network_id: string }): Promise<void> {
    return this.members.unplugNetwork(amphora, port);
  }

  checkMemberSubnets(lb: LoadBalancer, subnetIds: string[]): Promise<void> {
    return this.members.checkMemberSubnets(lb, subnetIds);
  }

  /**
   * plug_fixed_ip: the port as it is. A port reaches every subnet of its VPC through the VPC's router
   * (subnetsRouted), so a member subnet never needs an address of its own on it; the flows never call
   * this with this driver.
   */
  async plugFixedIp(_lb: LoadBalancer, _amphora: Amphora, port: NetworkPort, _subnetId: string): Promise<NetworkPort> {
    return port;
  }

  /** unplug_fixed_ip: the port as it is, as plugFixedIp. */
  async unplugFixedIp(_lb: LoadBalancer, _amphora: Amphora, port: NetworkPort, _subnetId: string): Promise<NetworkPort> {
    return port;
  }

  // ---- configuration ------------------------------------------------------------------------------

  /** get_network_configs: the amphora's ENI's MAC, the VIP subnet's range and router, a VPC's MTU. */
  async getNetworkConfigs(lb: LoadBalancer, amphora: Amphora): Promise<AmphoraNetworkConfig> {
    return this.net.guard(`read the network configuration of amphora ${amphora.id}`, async () => {
      const byPort = amphora.vrrp_port_id ? await this.net.ids.awsId(amphora.vrrp_port_id, "eni") : undefined;
      const eni = (byPort ? await this.net.interfaceById(byPort) : undefined) ?? (await this.amphoraInterface(amphora.id));
      if (!eni) throw new DriverError(`amphora ${amphora.id} has no VIP port`);
      const subnet = await this.net.subnetById(eni.subnetId);
      if (!subnet?.cidr) throw new DriverError(`the VIP subnet ${eni.subnetId} of load balancer ${lb.id} was not found`);
      return {
        vrrp_port: { mac_address: eni.mac, mtu: VPC_MTU },
        vip_subnet: { cidr: subnet.cidr, gateway_ip: gatewayOf(subnet.cidr), host_routes: [] },
        additional_vip_data: [],
      };
    });
  }

  /** The VIP subnet's zone: the amphorae must boot there. */
  async vipZone(lb: LoadBalancer): Promise<string | null> {
    return this.net.guard(`read the VIP zone of load balancer ${lb.id}`, async () => this.net.zoneOf(await this.net.vipSubnetId(lb)));
  }

  // ---- EC2 reads

  /** The amphora's "vrrp" ENI. */
  private async amphoraInterface(amphoraId: string): Promise<Ec2Interface | undefined> {
    return (await this.net.amphoraInterfaces(amphoraId, VRRP_ROLE))[0];
  }

  private async vipGroups(lb: LoadBalancer): Promise<string[]> {
    const groups: string[] = [];
    for (const sg of lb.vip_sg_ids ?? []) {
      const id = await this.net.ids.awsId(sg, "sg");
      if (!id) throw new DriverError(`security group ${sg} of load balancer ${lb.id} is unknown`);
      groups.push(id);
    }
    return groups;
  }
}

/** The vpc network driver of these settings, over the API's EC2 Query client, its ids remembered in `cloudIds`. */
export function vpcNetworkDriver(
  config: VpcNetworkSettings & Pick<Config, "ec2Endpoint">,
  cloudIds: CloudIdStore,
  log?: Logger,
): VpcNetworkDriver {
  const region = process.env.AWS_REGION ?? "us-east-1";
  return new VpcNetworkDriver(ec2QueryClient(config), config, { ids: new AwsIds(region, cloudIds), log });
}

const ipv6Refused = () =>
  new Fault(400, "The vpc network driver does not support IPv6 VIPs yet: AWS cannot move an IPv6 address between network interfaces.");

function throwFault(f: Fault): never {
  throw f;
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

function inCidr(ip: string, cidr: string): boolean {
  const toInt = (s: string) => s.split(".").reduce((n, o) => n * 256 + Number(o), 0);
  const [base = "", prefix = "32"] = cidr.split("/");
  const size = 2 ** (32 - Number(prefix));
  return isIPv4(ip) && Math.floor(toInt(ip) / size) === Math.floor(toInt(base) / size);
}
