// The no-op drivers, as Octavia's (compute_noop_driver, network_noop_driver, amphora_noop_driver):
// they answer as a cloud would, without one. Tests and npm start make chosen calls fail or take time
// by wrapping them (@ottava/amphora/testing/noop-faults: OTTAVA_NOOP_FAULTS, OTTAVA_NOOP_LATENCY).
//
// Idempotent, as the flows need every driver call to be (a task may run again after it called the
// driver: a retry, a duplicate delivery, a runner continuing after a restart): the ids they make up
// are derived from what they are asked for (the amphora, the load balancer), so asking twice answers
// the same instance and ports, never a second one.
import { NOOP_LB_NETWORK_IP, NOOP_VIP_ADDRESS, uuidOf } from "@ottava/core";
import {
  CertificateError,
  type Amphora,
  type AmphoraDriver,
  type CertManager,
  type ComputeDriver,
  type Drivers,
  type LoadBalancer,
  type NetworkDriver,
  type NetworkPort,
  type VipSubnetConfig,
} from "@ottava/core";

/**
 * The last server PEM (certificate and key) handed to the no-op drivers per amphora, for tests and
 * inspection in process only: never logged. At most SERVER_PEMS_KEPT amphorae (the oldest go first).
 */
const serverPems = new Map<string, string>();
const SERVER_PEMS_KEPT = 10_000;
function keepServerPem(amphoraId: string, pem: string) {
  serverPems.delete(amphoraId);
  serverPems.set(amphoraId, pem);
  if (serverPems.size > SERVER_PEMS_KEPT) serverPems.delete(serverPems.keys().next().value!);
}

/** The server PEM the no-op drivers last received for an amphora (build or uploadCert), if any. */
export const noopServerPem = (amphoraId: string): string | undefined => serverPems.get(amphoraId);

const compute: ComputeDriver = {
  // One instance per amphora: building it again answers the same one.
  async build(req) {
    keepServerPem(req.amphoraId, req.serverPem);
    return uuidOf(`ottava-noop-compute/${req.amphoraId}`);
  },
  async getInstance(computeId) {
    return { compute_id: computeId, lb_network_ip: NOOP_LB_NETWORK_IP, image_id: null, compute_flavor: null, cached_zone: null };
  },
  async delete() {},
};

const network: NetworkDriver = {
  // As Octavia's no-op allocate_vip: the VIP's security groups and vNIC type (req.vip_sg_ids,
  // req.vip_vnic_type) change nothing in what it answers; the API keeps them on the LB.
  // The load balancer's port, network and subnet are derived from its id: allocating again answers the same ones.
  async allocateVip(req) {
    const network_id = req.vip_network_id ?? uuidOf(`ottava-noop-vip-network/${req.lbId}`);
    const port_id = req.vip_port_id ?? uuidOf(`ottava-noop-vip-port/${req.lbId}`);
    return {
      vip_address: req.vip_address ?? NOOP_VIP_ADDRESS,
      vip_port_id: port_id,
      vip_subnet_id: req.vip_subnet_id ?? uuidOf(`ottava-noop-vip-subnet/${req.lbId}`),
      vip_network_id: network_id,
      additional_vips: req.additional_vips.map((v) => ({
        subnet_id: v.subnet_id,
        ip_address: v.ip_address ?? NOOP_VIP_ADDRESS,
        network_id,
        port_id,
      })),
    };
  },
  async deallocateVip() {},
  // Octavia's no-op get_security_group_by_id: every id is a security group.
  async getSecurityGroup(sgId) {
    return { id: sgId };
  },
  async updateVipSecurityGroups() {},
  // The amphora's ports are derived from its id: plugging again answers the same ports.
  async plugVip(_lb, a) {
    return {
      vrrp_ip: NOOP_VIP_ADDRESS,
      ha_ip: NOOP_VIP_ADDRESS,
      vrrp_port_id: uuidOf(`ottava-noop-vrrp-port/${a.id}`),
      ha_port_id: uuidOf(`ottava-noop-ha-port/${a.id}`),
    };
  },
  async unplugVip() {},
  // As Octavia's no-op get_network_configs: the VRRP port's MAC derived from the amphora, the VIP's subnet a documentation range.
  async getNetworkConfigs(lb, a) {
    return {
      vrrp_port: { mac_address: noopVrrpMac(a.id), mtu: 1500 },
      vip_subnet: NOOP_VIP_SUBNET,
      additional_vip_data: (lb.additional_vips ?? []).map((v) => ({ ip_address: v.ip_address, subnet: NOOP_VIP_SUBNET })),
    };
  },
  // As Octavia's no-op get_subnet: every subnet exists; its network is derived from it (one network a subnet).
  async getSubnet(subnetId) {
    return { id: subnetId, network_id: noopNetworkOf(subnetId) };
  },
  async getPluggedNetworks(lb, a) {
    return recordedPorts(lb, a, NOOP_VIP_SUBNET, noopVrrpMac(a.id));
  },
  // The port is derived from the amphora and the network: plugging again answers the same port.
  async plugNetwork(_lb, a, networkId, subnetIds, vnicType) {
    const id = uuidOf(`ottava-noop-member-port/${a.id}/${networkId}`);
    return {
      id,
      network_id: networkId,
      mac_address: macOf(`ottava-noop-member-mac/${id}`),
      mtu: 1500,
      vnic_type: vnicType,
      fixed_ips: subnetIds.map(noopFixedIp),
    };
  },
  async plugFixedIp(_lb, _a, port, subnetId) {
    if (port.fixed_ips.some((ip) => ip.subnet_id === subnetId)) return port;
    return { ...port, fixed_ips: [...port.fixed_ips, noopFixedIp(subnetId)] };
  },
  async unplugFixedIp(_lb, _a, port, subnetId) {
    return { ...port, fixed_ips: port.fixed_ips.filter((ip) => ip.subnet_id !== subnetId) };
  },
  async unplugNetwork() {},
};

/** The network the no-op driver answers for a subnet. */
export const noopNetworkOf = (subnetId: string) => uuidOf(`ottava-noop-network/${subnetId}`);

/** A no-op fixed IP on a subnet: an address of TEST-NET-3 derived from the subnet alone (every amphora gets the same one), the subnet a made-up /24 of it. */
function noopFixedIp(subnetId: string) {
  const h = uuidOf(`ottava-noop-fixed-ip/${subnetId}`).replace(/-/g, "");
  const host = (parseInt(h.slice(0, 2), 16) % 253) + 1;
  return {
    subnet_id: subnetId,
    ip_address: `203.0.113.${host}`,
    subnet: { cidr: "203.0.113.0/24", gateway_ip: "203.0.113.254", host_routes: [] },
  };
}

/**
 * get_plugged_networks of a driver whose ports are in no cloud (noop, local): the amphora's VRRP port
 * on the VIP's network and subnet (with the fixed IPs the flows added to it, which its record keeps
 * among its member ports), and its member ports as its record keeps them.
 */
export function recordedPorts(lb: LoadBalancer, a: Amphora, vipSubnet: VipSubnetConfig, vrrpMac: string): NetworkPort[] {
  const recorded = (a.member_ports ?? []).map(({ plugged_by: _, ...p }) => p);
  if (!a.vrrp_port_id || recorded.some((p) => p.id === a.vrrp_port_id)) return recorded;
  const vrrp: NetworkPort = {
    id: a.vrrp_port_id,
    network_id: lb.vip_network_id,
    mac_address: vrrpMac,
    mtu: 1500,
    vnic_type: lb.vip_vnic_type ?? "normal",
    fixed_ips: lb.vip_subnet_id && a.vrrp_ip ? [{ subnet_id: lb.vip_subnet_id, ip_address: a.vrrp_ip, subnet: vipSubnet }] : [],
  };
  return [vrrp, ...recorded];
}

/** The subnet the no-op driver's VIPs are on (NOOP_VIP_ADDRESS's: TEST-NET-2). */
const NOOP_VIP_SUBNET = { cidr: "198.51.100.0/24", gateway_ip: "198.51.100.254", host_routes: [] };

/** The MAC of an amphora's VRRP port as the no-op network driver answers it: Neutron's fa:16:3e prefix, then 3 bytes of a hash of the amphora id. */
export const noopVrrpMac = (amphoraId: string): string => macOf(`ottava-noop-vrrp-mac/${amphoraId}`);

const macOf = (seed: string) => {
  const h = uuidOf(seed).replace(/-/g, "");
  return `fa:16:3e:${h.slice(0, 2)}:${h.slice(2, 4)}:${h.slice(4, 6)}`;
};

const amphora: AmphoraDriver = {
  async postVipPlug() {},
  async postNetworkPlug() {},
  async updateAgentConfig(_amphora, _agentConfig) {},
  async startVrrp() {},
  async update() {},
  async uploadCert(a, pem) {
    keepServerPem(a.id, pem);
  },
};

/**
 * The no-op certificate manager (OTTAVA_CERT_MANAGER=noop): nothing is read; any non-empty reference
 * answers empty material, as Ottava accepted any non-empty reference before it had certificate managers.
 */
export const noopCertManager: CertManager = {
  noop: true,
  async getCert(_projectId, ref) {
    if (!ref) throw new CertificateError("Could not retrieve certificate: an empty reference");
    return { certificate: "", private_key: null, private_key_passphrase: null, intermediates: [] };
  },
  async getSecret(_projectId, ref) {
    if (!ref) throw new CertificateError("Could not retrieve certificate: an empty reference");
    return "";
  },
};

/** The no-op drivers (their certificate manager the no-op one). */
export function noopDrivers(): Drivers {
  return { compute, network, amphora, certificates: noopCertManager };
}
