// The controller's drivers, behind interfaces as Octavia's (compute, network, amphora).
import type { Amphora } from "./resources/amphora";
import type { LoadBalancer } from "./resources/loadbalancer";
import type { Tree } from "./resources/child";

export interface ComputeInstance {
  compute_id: string;
  lb_network_ip: string;
  image_id: string | null;
  compute_flavor: string | null;
  cached_zone: string | null;
}

/** What a compute driver is asked to build: Octavia's ComputeCreate / CertComputeCreate arguments. */
export interface ComputeBuildRequest {
  amphoraId: string;
  /** The load balancer the amphora serves (the EC2 driver tags the instance with it). */
  loadBalancerId?: string | undefined;
  /** The flavor profile's compute_flavor; null: the driver's default ([controller_worker] amp_flavor_id). */
  computeFlavor: string | null;
  /** The flavor profile's amp_image_tag; null or absent: the driver's default ([controller_worker] amp_image_tag). */
  imageTag?: string | null | undefined;
  /** The zone to boot in (an AZ profile's compute_zone); null: the driver's choice. */
  availabilityZone: string | null;
  /** An AZ profile's management_network (the EC2 driver: a subnet); null or absent: from amp_boot_network_list. */
  managementNetwork?: string | null | undefined;
  /** Octavia's server_group_id: the anti-affinity group of an ACTIVE_STANDBY pair (EC2: a placement group's name). */
  serverGroupId?: string | null | undefined;
  /**
   * The amphora agent's server certificate and its private key (PEM), for the instance's config drive
   * (Octavia's CertComputeCreate: /etc/octavia/certs/server.pem). Secret: never log it, never return it.
   */
  serverPem: string;
  /**
   * The amphora's amphora-agent.conf, which holds the heartbeat key (Octavia's ComputeCreate:
   * /etc/octavia/amphora-agent.conf in the config drive). Secret: never log it, never return it.
   */
  agentConfig: string;
}

export interface ComputeDriver {
  /** Boots an amphora instance; answers its compute id. */
  build(req: ComputeBuildRequest): Promise<string>;
  /**
   * Reads what the amphora record keeps of the instance. A driver whose instances take time to run asks
   * once and waits for nothing: it throws ComputeWaitTimeout while the instance is not running yet (the
   * flow asks again, as Octavia's ComputeRetry retries ComputeWait), ComputeBuildError when it never will.
   */
  getInstance(computeId: string): Promise<ComputeInstance>;
  /**
   * Deletes the instance built for `amphoraId`, and what the driver made with it (the EC2 driver: the
   * amphora's secret), waiting for nothing; what is already gone is deleted.
   */
  delete(computeId: string, amphoraId: string): Promise<void>;
  /**
   * Octavia's create_server_group ([nova] enable_anti_affinity): the anti-affinity group of a load
   * balancer's amphorae, made once (a retry answers the same); answers its id for ComputeBuildRequest's
   * serverGroupId. Absent: the driver has no groups, and the flows make none.
   */
  createServerGroup?(loadBalancerId: string): Promise<string>;
  /**
   * Octavia's delete_server_group: a group already gone is deleted (true). false: the cloud refuses while
   * instances in it are still terminating (EC2 does, Nova does not); ask again later.
   */
  deleteServerGroup?(serverGroupId: string): Promise<boolean>;
}

/**
 * Octavia's amphora provider driver's validate_flavor and validate_availability_zone, for the values
 * its compute, image and network services must know: a flavor profile's compute_flavor and
 * amp_image_tag, an availability zone profile's compute_zone and management_network. Each method
 * answers when the cloud has what the profile names, throws ProfileRefused naming what it lacks (the
 * text Octavia's provider driver gives), or throws the service's own error when it could not tell.
 * Without one (the noop and local compute drivers) nothing is checked, as Octavia's no-op drivers.
 */
export interface ProfileValidator {
  validateFlavor(data: Record<string, unknown>): Promise<void>;
  validateAvailabilityZone(data: Record<string, unknown>): Promise<void>;
}

/** A ProfileValidator's refusal: its message is Octavia's user fault string ("Nova flavor x not found." in Nova's words). */
export class ProfileRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProfileRefused";
  }
}

/** Octavia's ComputeWaitTimeoutException: the instance is not running yet; ask again later. */
export class ComputeWaitTimeout extends Error {
  constructor(computeId: string) {
    super(`Waiting for compute id ${computeId} to go active timeout.`);
    this.name = "ComputeWaitTimeout";
  }
}

/** Octavia's ComputeBuildException: the instance was not built, or stopped for good (its fault given). */
export class ComputeBuildError extends Error {
  constructor(fault: string, options?: ErrorOptions) {
    super(`Failed to build compute instance due to: ${fault}`, options);
    this.name = "ComputeBuildError";
  }
}

export interface Vip {
  vip_address: string;
  vip_port_id: string;
  vip_subnet_id: string | null;
  vip_network_id: string;
  additional_vips: { subnet_id: string; ip_address: string; port_id: string; network_id: string }[];
}

export interface VipRequest {
  lbId: string;
  /** The project the load balancer is made for: a network driver with tenancy (vpc) lets it use only what it may. */
  projectId: string;
  /** v2.1 vip_qos_policy_id as given (the vpc driver has no QoS policies: it refuses one). */
  vip_qos_policy_id?: string | null | undefined;
  /**
   * The availability zone profile's data when the create names a zone ({} or absent: none): its
   * compute_zone, management_network and valid_vip_networks, which a driver with zones checks the VIP against.
   */
  zone?: Record<string, unknown> | undefined;
  vip_address: string | null;
  vip_port_id: string | null;
  vip_subnet_id: string | null;
  vip_network_id: string | null;
  additional_vips: { subnet_id: string; ip_address?: string | undefined }[];
  /** v2.29: the security groups the VIP port is created with (Octavia's allocate_vip reads vip.sg_ids); [] for none. */
  vip_sg_ids: string[];
  /** v2.28: the VIP's vNIC type, "normal" or "direct" (SR-IOV), as the API chose it from the flavor. */
  vip_vnic_type: string;
}

export interface AmphoraPorts {
  vrrp_ip: string;
  ha_ip: string;
  vrrp_port_id: string;
  ha_port_id: string;
}

/** A VIP subnet as the amphora's network configuration needs it (Neutron's subnet: its CIDR, gateway and host routes). */
export interface VipSubnetConfig {
  cidr: string;
  gateway_ip: string | null;
  host_routes: { destination: string; nexthop: string }[];
}

/**
 * Octavia's get_network_configs for one amphora (AmphoraNetworkConfig): its VRRP port (the port it
 * holds the VIP on: its MAC and MTU), the VIP subnet and the additional VIPs' subnets. The REST amphora
 * driver's VIP plug and keepalived configuration are made from it.
 */
export interface AmphoraNetworkConfig {
  vrrp_port: { mac_address: string; mtu: number | null };
  vip_subnet: VipSubnetConfig;
  additional_vip_data: { ip_address: string; subnet: VipSubnetConfig }[];
}

/**
 * A port of an amphora on a network other than its management one (Octavia's network Port, with its
 * network's MTU and its fixed IPs' subnets filled, as post_network_plug sends it to the amphora).
 */
export interface NetworkPort {
  /** The port's id (vpc: its ENI's). */
  id: string;
  network_id: string;
  mac_address: string;
  mtu: number | null;
  /** Octavia's VNIC type of the port: "normal", or "direct" (SR-IOV, v2.30). */
  vnic_type: string;
  fixed_ips: { subnet_id: string; ip_address: string; subnet: VipSubnetConfig }[];
}

/**
 * What a network driver refuses at the API, before anything is written (the API answers 400 with the
 * message): a member subnet it cannot plug into the load balancer's amphorae.
 */
export class NetworkRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NetworkRefused";
  }
}

/** A network driver's quotas that the API checks changes against (vpc: AWS's, OTTAVA_VPC_*). */
export interface NetworkLimits {
  /** Ingress rules of the LB's security group (vipSecurityGroupRules). */
  rulesPerSecurityGroup: number;
  /** Security groups on a VIP port: the LB's own and the vip_sg_ids. */
  securityGroupsPerInterface: number;
}

export interface NetworkDriver {
  /** Quotas the API checks a change against, with a 400 before anything is written; absent: none. */
  readonly limits?: NetworkLimits | undefined;
  /** Allocates the VIP port (the API calls this before answering a create). */
  allocateVip(req: VipRequest): Promise<Vip>;
  deallocateVip(lb: LoadBalancer): Promise<void>;
  /**
   * Octavia's get_security_group_by_id: answers the security group, or fails when there is none
   * (the API refuses any failure as "Security Group <id> not found."). `projectId`: the project that
   * would use it (Octavia looks it up with the caller's context); a driver with tenancy (vpc) fails
   * for a group the project may not use.
   */
  getSecurityGroup(sgId: string, projectId?: string): Promise<{ id: string }>;
  /** Octavia's update_vip_sg: puts the VIP port in the LB's security groups (vip_sg_ids) after an update. */
  updateVipSecurityGroups(lb: LoadBalancer): Promise<void>;
  /**
   * Octavia's update_vip (_update_security_group_rules): the rules of the LB's security group follow its
   * listeners (`tree`: the LB with its listeners as they will be served; PENDING_DELETE and DELETED
   * listeners have none). Absent: the driver has no security groups (noop, local), and the flows read nothing for it.
   */
  updateVip?(tree: Tree): Promise<void>;
  /**
   * Plugs the VIP into an amphora; answers the amphora's VRRP and HA ports. `holdVip`: the amphora is
   * to serve the VIP now (a STANDALONE amphora, or the MASTER of a new ACTIVE_STANDBY pair), so a driver
   * whose network does not follow gratuitous ARP (vpc) moves the VIP to its port.
   */
  plugVip(lb: LoadBalancer, amphora: Amphora, holdVip?: boolean): Promise<AmphoraPorts>;
  /**
   * Unplugs the VIP from an amphora. A VIP the amphora's port holds goes back to the LB's VIP port
   * first (never unassigned while the LB exists).
   */
  unplugVip(lb: LoadBalancer, amphora: Amphora): Promise<void>;
  /** Octavia's get_network_configs for one amphora whose VIP is plugged (it has a vrrp_port_id). */
  getNetworkConfigs(lb: LoadBalancer, amphora: Amphora): Promise<AmphoraNetworkConfig>;
  /**
   * Moves the LB's VIPs to the amphora's VRRP port (keepalived promoted it, or a failover hands it over);
   * true if they moved, false if they were there already. Absent: the network follows the amphorae's
   * gratuitous ARP (noop, local), nothing to move.
   */
  takeVip?(lb: LoadBalancer, amphora: Amphora): Promise<boolean>;
  /**
   * The availability zone the LB's amphorae must boot in (vpc: the VIP subnet's, where its ports can be
   * attached); absent or null: the compute driver's choice, as before.
   */
  vipZone?(lb: LoadBalancer): Promise<string | null>;
  /** Octavia's get_subnet, for what the network deltas need of it: the network a (member) subnet is on. */
  getSubnet(subnetId: string): Promise<{ id: string; network_id: string }>;
  /**
   * Octavia's get_plugged_networks, without the management interface (Octavia filters
   * amp_boot_network_list out): the amphora's VRRP port and its member ports. A driver whose ports are
   * not in a cloud (noop, local) answers from the amphora's record (`member_ports`).
   */
  getPluggedNetworks(lb: LoadBalancer, amphora: Amphora): Promise<NetworkPort[]>;
  /**
   * Octavia's create_port then plug_port: a new port of the amphora on `networkId`, with a fixed IP on
   * each of `subnetIds`, attached to its instance. Idempotent: asked again for the same amphora and
   * network, it answers the port it made, never a second one.
   */
  plugNetwork(lb: LoadBalancer, amphora: Amphora, networkId: string, subnetIds: string[], vnicType: string): Promise<NetworkPort>;
  /** Octavia's plug_fixed_ip: the port gets a fixed IP on `subnetId` (one it has already: answered as it is). */
  plugFixedIp(lb: LoadBalancer, amphora: Amphora, port: NetworkPort, subnetId: string): Promise<NetworkPort>;
  /** Octavia's unplug_fixed_ip: the port's fixed IP on `subnetId` goes (one it has not: answered as it is). */
  unplugFixedIp(lb: LoadBalancer, amphora: Amphora, port: NetworkPort, subnetId: string): Promise<NetworkPort>;
  /** Octavia's unplug_network then delete_port: the port is detached from the instance and deleted; what is gone is deleted. */
  unplugNetwork(amphora: Amphora, port: { id: string; network_id: string }): Promise<void>;
  /**
   * True when a port on a network reaches every subnet of it (a VPC routes between all its subnets, in
   * every zone): a member subnet then needs its network plugged and no fixed IP of its own, and the
   * deltas have no subnet changes (no plugFixedIp, unplugFixedIp).
   */
  readonly subnetsRouted?: boolean;
  /**
   * Checks, at the API, that the amphorae of `lb` can be plugged into every subnet of `subnetIds` (the
   * subnets its members will be on, those it has and those a request adds); throws NetworkRefused
   * when not (vpc: a subnet that is not there, or not the project's; a VPC without a subnet in the
   * amphorae's zone; more networks than an instance has interfaces for). Absent: nothing to check.
   */
  checkMemberSubnets?(lb: LoadBalancer, subnetIds: string[]): Promise<void>;
}

export interface AmphoraDriver {
  /** Configures the amphora after its VIP is plugged. */
  postVipPlug(lb: LoadBalancer, amphora: Amphora): Promise<void>;
  /** Writes and starts the VRRP (keepalived) configuration of an ACTIVE_STANDBY pair. */
  startVrrp(tree: Tree, amphorae: Amphora[]): Promise<void>;
  /**
   * Replaces the amphora agent's configuration file with `agentConfig`, the rendered amphora-agent.conf
   * (health-manager addresses, heartbeat key, ...): Octavia's update_amphora_agent_config. Secret (it
   * holds the heartbeat key): never log it.
   */
  updateAgentConfig(amphora: Amphora, agentConfig: string): Promise<void>;
  /**
   * Octavia's post_network_plug: the amphora configures a port just plugged or changed (its fixed IPs,
   * routes and MTU); the VRRP port (`port.id` is the amphora's vrrp_port_id) with the VIP's `network`
   * configuration as well. A port the amphora has already is updated.
   */
  postNetworkPlug(lb: LoadBalancer, amphora: Amphora, port: NetworkPort, network: AmphoraNetworkConfig): Promise<void>;
  /**
   * Pushes the load balancer's configuration (its listeners, pools, members, monitors, L7 policies and
   * rules as `tree` holds them) to its amphorae: Octavia's update_amphora_listeners.
   */
  update(tree: Tree, amphorae: Amphora[]): Promise<void>;
  /** Replaces the amphora agent's server certificate and key (`pem`, secret: never log it): Octavia's upload_cert_amp. */
  uploadCert(amphora: Amphora, pem: string): Promise<void>;
}

/** A TLS certificate as Octavia's certificate managers answer it (octavia/certificates/common/cert.py). Secret: never log it. */
export interface TlsCertificate {
  certificate: string;
  private_key: string | null;
  private_key_passphrase: string | null;
  intermediates: string[];
}

/**
 * Octavia's certificate manager ([certificates] cert_manager): the TLS container references of
 * listeners and pools resolved to PEMs, and the secrets (client CA, CRL) they name.
 */
export interface CertManager {
  /** Octavia's get_cert: fails (a CertificateError) when the reference names nothing. */
  getCert(projectId: string, ref: string): Promise<TlsCertificate>;
  /** Octavia's get_secret: a client CA or CRL PEM. */
  getSecret(projectId: string, ref: string): Promise<string>;
  /**
   * True for the no-op manager only (OTTAVA_CERT_MANAGER=noop): it reads nothing and answers any
   * non-empty reference with empty material, so the API checks only that references are given.
   */
  readonly noop?: boolean;
}

/** A resource a cloud driver made for an amphora or a load balancer, with the owner its tags name. */
export interface CloudResource {
  /** What it is, in the cloud's words ("instance", "secret", "placement-group"). */
  kind: string;
  /** Its id in the cloud (an instance id, a secret's name). */
  id: string;
  /** The amphora it was made for. */
  amphoraId?: string | undefined;
  /** The load balancer it was made for, when it is the LB's rather than one amphora's. */
  loadBalancerId?: string | undefined;
  /**
   * When it was made (ISO 8601), for what is made before its owner's record is written (a VIP's port:
   * the API allocates it before it writes the load balancer): while young, an owner not found yet is no orphan.
   */
  createdAt?: string | undefined;
}

/** What housekeeping's orphan sweep (services/sweep.ts) asks of a cloud's drivers. */
export interface OrphanSweeper {
  /** Every resource the drivers of this deployment (OTTAVA_STAGE) made and that still exists, each naming its owner. */
  resources(): AsyncIterable<CloudResource>;
  /** Removes one, waiting for nothing; one already gone is removed. */
  remove(r: CloudResource): Promise<void>;
}

export interface Drivers {
  compute: ComputeDriver;
  network: NetworkDriver;
  amphora: AmphoraDriver;
  /** [certificates] cert_manager: OTTAVA_CERT_MANAGER (noop, local). */
  certificates: CertManager;
}

/** A driver failure. Retried by the flows (it is what a cloud's transient failures look like). */
export class DriverError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DriverError";
  }
}
