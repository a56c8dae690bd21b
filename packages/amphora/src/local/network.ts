// The local network driver: VIPs and VRRP addresses handed out from a loopback range of this machine (what Octavia's allowed_address_pairs driver gets from Neutron: network/drivers/neutron/allowed_address_pairs.py allocate_vip, deallocate_vip, plug_vip, unplug_vip).
//
// Every address is claimed in the table with a conditional write (VipAllocations), so no two load
// balancers of a stack ever share one; a released address can be handed out again. There are no
// security groups nor ports here: every security group id exists (as the no-op driver answers), port
// ids are made up, and the "network" and "subnet" of the range have fixed ids derived from it.
import { isIPv4 } from "node:net";
import {
  Fault,
  uuidOf,
  type Amphora,
  type AmphoraNetworkConfig,
  type AmphoraPorts,
  type LoadBalancer,
  type NetworkDriver,
  type NetworkPort,
  type Vip,
  type VipRequest,
} from "@ottava/core";
import { recordedPorts } from "../noop";

/** Where allocations are recorded (packages/db's DynamoVipStore). */
export interface VipAllocations {
  /** Every address handed out, with its owner and the port id it was claimed with. */
  allocated(): Promise<{ address: string; owner: string; port_id?: string }[]>;
  /** Claims `address` for `owner` (a load balancer or amphora id): false if another owner holds it. */
  claim(address: string, owner: string, portId: string): Promise<boolean>;
  /** Gives `address` back if `owner` holds it. */
  release(address: string, owner: string): Promise<void>;
}

/** Loopback has no MAC (the kernel's all-zero address). */
const LOOPBACK_MAC = "00:00:00:00:00:00";
const loopbackIp = (subnetId: string) => ({
  subnet_id: subnetId,
  ip_address: "127.0.0.1",
  subnet: { cidr: "127.0.0.0/8", gateway_ip: null, host_routes: [] },
});

const toInt = (ip: string) => ip.split(".").reduce((n, o) => n * 256 + Number(o), 0);
const toIp = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");

/** An IPv4 range (CIDR): its usable addresses are those between the network and broadcast addresses. */
export class AddressRange {
  readonly first: number;
  readonly last: number;
  /** The ids the range answers as its network and subnet. */
  readonly networkId: string;
  readonly subnetId: string;

  constructor(readonly cidr: string) {
    const [base, prefix] = cidr.split("/");
    if (!base || !isIPv4(base) || !prefix) throw new Error(`'${cidr}' is not an IPv4 CIDR`);
    const size = 2 ** (32 - Number(prefix));
    const start = toInt(base) - (toInt(base) % size);
    this.first = start + 1;
    this.last = start + size - 2;
    // Derived from the range: its network and subnet keep their ids across restarts.
    this.networkId = uuidOf(`ottava-local-network/${cidr}`);
    this.subnetId = uuidOf(`ottava-local-subnet/${cidr}`);
  }

  contains(ip: string): boolean {
    if (!isIPv4(ip)) return false;
    const n = toInt(ip);
    return n >= this.first && n <= this.last;
  }

  /** The first usable address. */
  get firstAddress(): string {
    return toIp(this.first);
  }

  *addresses(): Generator<string> {
    for (let n = this.first; n <= this.last; n++) yield toIp(n);
  }
}

export class LocalNetworkDriver implements NetworkDriver {
  constructor(
    private readonly range: AddressRange,
    private readonly allocations: VipAllocations,
  ) {}

  /**
   * allocate_vip: the requested address if it is in the range and free (else Neutron's 400 or 409,
   * which Octavia's API passes on), or the first free one (409 when the range is full). Additional
   * VIPs get addresses from the range too. Idempotent per load balancer: each address is claimed
   * with a port id of its slot (the VIP's port, derived from the LB unless given; `<port>/<n>` for
   * the n-th additional VIP), so asking again answers the addresses already claimed, never new ones.
   */
  async allocateVip(req: VipRequest): Promise<Vip> {
    const portId = req.vip_port_id ?? uuidOf(`ottava-local-vip-port/${req.lbId}`);
    const vipAddress = await this.allocate(req.lbId, req.vip_address, portId, true);
    const additional: Vip["additional_vips"] = [];
    try {
      for (const [n, v] of req.additional_vips.entries()) {
        const address = await this.allocate(req.lbId, v.ip_address ?? null, `${portId}/${n + 1}`, true);
        additional.push({
          subnet_id: v.subnet_id,
          ip_address: address,
          network_id: req.vip_network_id ?? this.range.networkId,
          port_id: portId,
        });
      }
    } catch (e) {
      for (const a of [vipAddress, ...additional.map((v) => v.ip_address)]) await this.allocations.release(a, req.lbId);
      throw e;
    }
    return {
      vip_address: vipAddress,
      vip_port_id: portId,
      vip_subnet_id: req.vip_subnet_id ?? this.range.subnetId,
      vip_network_id: req.vip_network_id ?? this.range.networkId,
      additional_vips: additional,
    };
  }

  /** deallocate_vip: the LB's addresses go back to the range. */
  async deallocateVip(lb: LoadBalancer): Promise<void> {
    for (const address of [lb.vip_address, ...(lb.additional_vips ?? []).map((v) => v.ip_address)]) {
      if (address) await this.allocations.release(address, lb.id);
    }
  }

  /** No security groups here: every id names one (as the no-op driver). */
  async getSecurityGroup(sgId: string): Promise<{ id: string }> {
    return { id: sgId };
  }

  /** Loopback addresses have no security groups to apply. */
  async updateVipSecurityGroups(): Promise<void> {}

  /** get_network_configs: the range is the VIP subnet; loopback has no gateway and no MAC. */
  async getNetworkConfigs(lb: LoadBalancer): Promise<AmphoraNetworkConfig> {
    const subnet = { cidr: this.range.cidr, gateway_ip: null, host_routes: [] };
    return {
      vrrp_port: { mac_address: LOOPBACK_MAC, mtu: null },
      vip_subnet: subnet,
      additional_vip_data: (lb.additional_vips ?? []).map((v) => ({ ip_address: v.ip_address, subnet })),
    };
  }

  /** plug_vip: the amphora gets a VRRP address of its own from the range; the VIP (ha_ip) is the LB's. */
  async plugVip(lb: LoadBalancer, amphora: Amphora): Promise<AmphoraPorts> {
    const vrrpPort = uuidOf(`ottava-local-vrrp-port/${amphora.id}`);
    const vrrp = await this.allocate(amphora.id, null, vrrpPort, true);
    return { vrrp_ip: vrrp, ha_ip: lb.vip_address, vrrp_port_id: vrrpPort, ha_port_id: lb.vip_port_id };
  }

  /** unplug_vip: the amphora's VRRP address goes back to the range. */
  async unplugVip(_lb: LoadBalancer, amphora: Amphora): Promise<void> {
    if (amphora.vrrp_ip) await this.allocations.release(amphora.vrrp_ip, amphora.id);
  }

  /**
   * get_subnet: the range's subnet is on the range's network; any other subnet is a member subnet of
   * this host, one network each (derived from it, as the no-op driver's).
   */
  async getSubnet(subnetId: string): Promise<{ id: string; network_id: string }> {
    return {
      id: subnetId,
      network_id: subnetId === this.range.subnetId ? this.range.networkId : uuidOf(`ottava-local-network/${subnetId}`),
    };
  }

  /** get_plugged_networks: the VRRP port on the range, and the member ports the amphora's record keeps. */
  async getPluggedNetworks(lb: LoadBalancer, amphora: Amphora): Promise<NetworkPort[]> {
    return recordedPorts(lb, amphora, { cidr: this.range.cidr, gateway_ip: null, host_routes: [] }, LOOPBACK_MAC);
  }

  /**
   * create_port + plug_port: the local amphorae are HAProxy processes of this host, which reaches every
   * member address through its own loopback: a member port is this host's loopback address on each subnet
   * (derived from the amphora and network, so plugging again answers the same port).
   */
  async plugNetwork(_lb: LoadBalancer, amphora: Amphora, networkId: string, subnetIds: string[], vnicType: string): Promise<NetworkPort> {
    return {
      id: uuidOf(`ottava-local-member-port/${amphora.id}/${networkId}`),
      network_id: networkId,
      mac_address: LOOPBACK_MAC,
      mtu: null,
      vnic_type: vnicType,
      fixed_ips: subnetIds.map(loopbackIp),
    };
  }

  async plugFixedIp(_lb: LoadBalancer, _amphora: Amphora, port: NetworkPort, subnetId: string): Promise<NetworkPort> {
    if (port.fixed_ips.some((ip) => ip.subnet_id === subnetId)) return port;
    return { ...port, fixed_ips: [...port.fixed_ips, loopbackIp(subnetId)] };
  }

  async unplugFixedIp(_lb: LoadBalancer, _amphora: Amphora, port: NetworkPort, subnetId: string): Promise<NetworkPort> {
    return { ...port, fixed_ips: port.fixed_ips.filter((ip) => ip.subnet_id !== subnetId) };
  }

  /** unplug_network + delete_port: a loopback port holds nothing to give back. */
  async unplugNetwork(): Promise<void> {}

  /**
   * An address for `owner`: `wanted` if given (400 outside the range, 409 held by another owner), else
   * the first free one, tried in order until a claim wins (another allocation may win one first).
   * `reuse`: an address `owner` already holds with this port id answers again (a retried plug or allocation).
   */
  private async allocate(owner: string, wanted: string | null, portId: string, reuse = false): Promise<string> {
    if (wanted !== null) {
      if (!this.range.contains(wanted)) throw new Fault(400, `IP address ${wanted} is not a valid IP for the specified subnet.`);
      if (!(await this.allocations.claim(wanted, owner, portId)))
        throw new Fault(409, `IP address ${wanted} already allocated in subnet ${this.range.subnetId}.`);
      return wanted;
    }
    const held = await this.allocations.allocated();
    if (reuse) {
      const mine = held.find(
        (a) => a.owner === owner && (a.port_id === undefined || a.port_id === portId) && this.range.contains(a.address),
      );
      if (mine) return mine.address;
    }
    const taken = new Set(held.map((a) => a.address));
    for (const address of this.range.addresses()) {
      if (taken.has(address)) continue;
      if (await this.allocations.claim(address, owner, portId)) return address;
    }
    throw new Fault(409, `No more IP addresses available on network ${this.range.networkId}.`);
  }
}
