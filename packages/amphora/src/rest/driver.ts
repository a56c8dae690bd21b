// The REST amphora driver (OTTAVA_AMPHORA_DRIVER=rest), as Octavia's HaproxyAmphoraLoadBalancerDriver (amphorae/drivers/haproxy/rest_api_driver.py) with its keepalived VRRP part (amphorae/drivers/keepalived/vrrp_rest_driver.py).
import { createHash } from "node:crypto";
import {
  AMPHORA_ALLOCATED,
  CertificateError,
  DELETED,
  DriverError,
  LVS_PROTOCOLS,
  VNIC_TYPE_DIRECT,
  type Amphora,
  type AmphoraDriver,
  type AmphoraNetworkConfig,
  type CertGenerator,
  type CertManager,
  type Config,
  type L7Policy,
  type Listener,
  type LoadBalancer,
  type Logger,
  type NetworkDriver,
  type NetworkPort,
  type Pool,
  type Tree,
  type VipSubnetConfig,
} from "@ottava/core";
import { buildPem, pemDigest, tlsContainer } from "../certs/local";
import {
  HAPROXY_DEFAULT_SETTINGS,
  haproxyListeners,
  renderHaproxyConfig,
  type HaproxyCertPaths,
  type HaproxyListenerCerts,
  type HaproxyPoolCerts,
  type HaproxySettings,
} from "../render/haproxy";
import { newVrrpGroup, renderKeepalivedConfig, type KeepalivedSettings, type VrrpGroup } from "../render/keepalived";
import { renderLvsConfig, type LvsSettings } from "../render/lvs";
import { AmphoraApiClient, AmphoraApiError, AmpConnectionRetry, API_VERSION, type AgentTls, type TimeoutDict } from "./client";

/** What the agent's GET listeners calls its LVS listeners. */
const AGENT_LVS_TYPES = ["UDP", "SCTP"];

/**
 * Where an amphora's network configuration comes from: the network driver's get_network_configs (Octavia's
 * amphorae_network_config[amphora.id]). Its takeVip, if it has one, says that the VIP does not follow
 * keepalived's gratuitous ARP (createRestAmphoraDriver then sets keepalived's notify_master).
 */
export type NetworkConfigSource = Pick<NetworkDriver, "getNetworkConfigs" | "takeVip">;

/**
 * The script the amphora image installs (packages/aws/image/ottava-vrrp-master), which keepalived runs when
 * its amphora becomes MASTER: it reports the promotion to the health managers, whose flow moves the VIP.
 */
export const VRRP_NOTIFY_MASTER_SCRIPT = "/usr/local/sbin/ottava-vrrp-master";

export interface RestAmphoraDriverOptions {
  client: AmphoraApiClient;
  /** [certificates] cert_manager: resolves listeners' and pools' TLS references. */
  certManager: CertManager;
  /** Where the VRRP port and VIP subnet of an amphora come from: the network driver. */
  network: NetworkConfigSource;
  /**
   * An LB's VRRP group (Octavia's vrrp_group row). Ottava keeps none: by default the group is derived
   * from the LB's id (name: the id without dashes; PASS authentication with 7 hex digits of a hash of
   * the id; keepalived's PASS authentication travels in clear on the VIP network, as Octavia's does).
   */
  vrrpGroup?: (lb: LoadBalancer) => VrrpGroup;
  haproxySettings?: Partial<HaproxySettings>;
  keepalivedSettings?: Partial<KeepalivedSettings>;
  lvsSettings?: Partial<LvsSettings>;
  /** Octavia's timeout_dict of the calls that take one (none by default: the client's settings). */
  timeoutDict?: TimeoutDict;
  log?: Logger;
}

/**
 * An amphora driver whose amphorae run an agent that must answer before they are configured
 * (Octavia's AmphoraComputeConnectivityWait). Drivers without an agent (noop, local) have nothing to wait for.
 */
export interface AgentConnectivity {
  /** One attempt: true when the agent answered, false when it could not be reached yet (the caller waits and asks again). */
  agentReachable(amphora: Amphora): Promise<boolean>;
}

/** Do the driver's amphorae run an agent to wait for? */
export const hasAgent = (driver: AmphoraDriver): driver is AmphoraDriver & AgentConnectivity =>
  typeof (driver as Partial<AgentConnectivity>).agentReachable === "function";

const hostRoutes = (routes: VipSubnetConfig["host_routes"]) => routes.map((hr) => ({ nexthop: hr.nexthop, destination: hr.destination }));

/**
 * The VIP's net info of plug/vip and of plug/network's vip_net_info (Octavia's _build_net_info, with the
 * additional VIPs post_vip_plug adds): the VIP subnet, the VRRP port's MAC and MTU (`port`), the
 * amphora's VRRP address. Octavia's post_network_plug leaves additional_vips empty, and the agent then
 * deletes those addresses from the VIP interface; here they stay, as post_vip_plug put them.
 */
function vipNetInfo(
  amphora: Amphora,
  port: { mac_address: string; mtu: number | null },
  net: AmphoraNetworkConfig,
  sriov: boolean,
): Record<string, unknown> {
  return {
    subnet_cidr: net.vip_subnet.cidr,
    gateway: net.vip_subnet.gateway_ip,
    mac_address: port.mac_address,
    vrrp_ip: amphora.vrrp_ip,
    mtu: port.mtu,
    host_routes: hostRoutes(net.vip_subnet.host_routes),
    additional_vips: net.additional_vip_data.map((v) => ({
      subnet_cidr: v.subnet.cidr,
      ip_address: v.ip_address,
      gateway: v.subnet.gateway_ip,
      host_routes: hostRoutes(v.subnet.host_routes),
    })),
    is_sriov: sriov,
  };
}

const md5 = (data: string) => createHash("md5").update(data, "utf8").digest("hex");

/** The default VRRP group of an LB: see RestAmphoraDriverOptions.vrrpGroup. */
export function derivedVrrpGroup(lb: LoadBalancer, settings: Partial<KeepalivedSettings> = {}): VrrpGroup {
  return newVrrpGroup(lb.id, createHash("sha256").update(`ottava-vrrp/${lb.id}`).digest("hex").slice(0, 7), settings);
}

export class HaproxyAmphoraLoadBalancerDriver implements AmphoraDriver, AgentConnectivity {
  private readonly client: AmphoraApiClient;
  private readonly baseCertDir: string;

  constructor(private readonly opts: RestAmphoraDriverOptions) {
    this.client = opts.client;
    this.baseCertDir = opts.haproxySettings?.base_cert_dir ?? HAPROXY_DEFAULT_SETTINGS.base_cert_dir;
  }

  // ---- connectivity -----------------------------------------------------------------------------

  /**
   * Octavia's AmphoraComputeConnectivityWait with raise_retry_exception: one GET info; an agent that
   * cannot be reached yet answers false, any other failure (an error status, a wrong API version) throws.
   */
  async agentReachable(amphora: Amphora): Promise<boolean> {
    try {
      const info = await this.client.getInfo(amphora, { raiseRetryException: true });
      if (info.api_version !== API_VERSION) {
        throw new DriverError(`Amphora ${amphora.id} speaks amphora API ${String(info.api_version)}; Ottava speaks ${API_VERSION}`);
      }
      this.opts.log?.debug("Successfully connected to amphora", { amphoraId: amphora.id, haproxyVersion: info.haproxy_version });
      return true;
    } catch (e) {
      if (e instanceof AmpConnectionRetry) return false;
      throw e;
    }
  }

  // ---- AmphoraDriver ----------------------------------------------------------------------------

  /** Octavia's post_vip_plug: POST plug/vip/<vip> with the VRRP port and VIP subnet; a 409 (already plugged) is fine. */
  async postVipPlug(lb: LoadBalancer, amphora: Amphora): Promise<void> {
    if (amphora.status === DELETED) return;
    const net = await this.networkConfig(lb, amphora);
    const netInfo = vipNetInfo(amphora, net.vrrp_port, net, lb.vip_vnic_type === VNIC_TYPE_DIRECT);
    try {
      await this.client.plugVip(amphora, lb.vip_address, netInfo);
    } catch (e) {
      if (!(e instanceof AmphoraApiError && e.status === 409)) throw e;
      this.opts.log?.warn("VIP with MAC already exists on amphora, skipping post_vip_plug", {
        amphoraId: amphora.id,
        mac: net.vrrp_port.mac_address,
      });
    }
  }

  /**
   * Octavia's post_network_plug: POST plug/network with the port's MAC, fixed IPs (each with its
   * subnet's CIDR, gateway and host routes), MTU and SR-IOV flag. The VRRP port (a member subnet added
   * on the VIP network) carries the VIP's net info too, as post_vip_plug sends it, so the agent
   * rewrites the VIP interface with the new fixed IPs and keeps the VIPs. A 409 (already plugged) is fine.
   */
  async postNetworkPlug(lb: LoadBalancer, amphora: Amphora, port: NetworkPort, network: AmphoraNetworkConfig): Promise<void> {
    const portInfo: Record<string, unknown> = {
      mac_address: port.mac_address,
      fixed_ips: port.fixed_ips.map((ip) => ({
        ip_address: ip.ip_address,
        subnet_cidr: ip.subnet.cidr,
        host_routes: hostRoutes(ip.subnet.host_routes),
        gateway: ip.subnet.gateway_ip,
      })),
      mtu: port.mtu,
      is_sriov: port.vnic_type === VNIC_TYPE_DIRECT,
    };
    if (port.id === amphora.vrrp_port_id) {
      // Octavia's _build_net_info without its sriov argument (false): the agent reads the port's is_sriov.
      portInfo.vip_net_info = { ...vipNetInfo(amphora, port, network, false), vip: lb.vip_address };
    }
    try {
      await this.client.plugNetwork(amphora, portInfo);
    } catch (e) {
      if (!(e instanceof AmphoraApiError && e.status === 409)) throw e;
      this.opts.log?.warn("Network with MAC already exists on amphora, skipping post_network_plug", {
        amphoraId: amphora.id,
        mac: port.mac_address,
      });
    }
  }

  /** Octavia's update: update_amphora_listeners on each amphora that is not DELETED. */
  async update(tree: Tree, amphorae: Amphora[]): Promise<void> {
    for (const amphora of amphorae) {
      if (amphora.status !== DELETED) await this.updateAmphoraListeners(tree, amphora, amphorae);
    }
  }

  /** Octavia's upload_cert_amp: PUT certificate with the agent's new server certificate and key. */
  async uploadCert(amphora: Amphora, pem: string): Promise<void> {
    await this.client.updateCertForRotation(amphora, pem);
  }

  /**
   * Octavia's update_amphora_agent_config: PUT config with the rendered file. An agent without that
   * API (404) is skipped with an error line, as AmphoraConfigUpdate does.
   */
  async updateAgentConfig(amphora: Amphora, agentConfig: string): Promise<void> {
    try {
      await this.client.updateAgentConfig(amphora, agentConfig, this.opts.timeoutDict);
    } catch (e) {
      if (!(e instanceof AmphoraApiError && e.status === 404)) throw e;
      this.opts.log?.error(
        "Amphora does not support agent configuration update. Please update the amphora image for this amphora. Skipping.",
        { amphoraId: amphora.id },
      );
    }
  }

  /**
   * ACTIVE_STANDBY (Octavia's AmphoraVRRPUpdate then AmphoraVRRPStart): keepalived.conf uploaded to
   * every ALLOCATED amphora, then keepalived started on each (the agent reloads a running one).
   */
  async startVrrp(tree: Tree, amphorae: Amphora[]): Promise<void> {
    const lb = tree.lb;
    const group = (this.opts.vrrpGroup ?? ((l: LoadBalancer) => derivedVrrpGroup(l, this.opts.keepalivedSettings)))(lb);
    const allocated = amphorae.filter((a) => a.status === AMPHORA_ALLOCATED);
    for (const amphora of allocated) {
      const network = await this.networkConfig(lb, amphora);
      const config = renderKeepalivedConfig({ lb, amphora, amphorae, vrrpGroup: group, network }, this.opts.keepalivedSettings);
      await this.client.uploadVrrpConfig(amphora, config);
    }
    for (const amphora of allocated) await this.client.startVrrp(amphora, this.opts.timeoutDict);
  }

  // ---- Octavia's update_amphora_listeners ------------------------------------------------------

  /**
   * The LB's configuration on one amphora: each UDP/SCTP listener's keepalived configuration uploaded
   * and reloaded; the certificates of the others uploaded, then one haproxy.cfg for all of them,
   * uploaded and reloaded. What the tree no longer holds is deleted (Octavia's driver.delete): the
   * HAProxy configuration when no listener is HAProxy's, and UDP/SCTP listeners the agent still runs.
   * A listener whose certificates cannot be read fails the update (Octavia skips it and marks it ERROR
   * in its database; the flow's revert marks it here).
   */
  private async updateAmphoraListeners(tree: Tree, amphora: Amphora, amphorae: Amphora[]): Promise<void> {
    const lb = tree.lb;
    const listeners = tree.of<Listener>("listener");
    const lvs = listeners.filter((l) => LVS_PROTOCOLS.includes(l.protocol));
    const tcp = haproxyListeners(tree);
    const t = this.opts.timeoutDict;
    for (const listener of lvs) {
      const config = renderLvsConfig(tree, listener.id, this.opts.lvsSettings);
      await this.client.uploadUdpConfig(amphora, listener.id, config, t);
      await this.client.reloadListener(amphora, listener.id, t);
    }
    if (tcp.length > 0) {
      const info = await this.client.getInfo(amphora, { timeoutDict: t });
      const certs: { listeners: Record<string, HaproxyListenerCerts>; pools: Record<string, HaproxyPoolCerts> } = {
        listeners: {},
        pools: {},
      };
      for (const listener of tcp) {
        await this.processTlsCertificates(listener, amphora, lb.id);
        const files: HaproxyListenerCerts = {};
        const ca = await this.processSecret(listener, listener.client_ca_tls_container_ref, amphora, lb.id);
        if (ca) files.client_ca = ca;
        const crl = await this.processSecret(listener, listener.client_crl_container_ref, amphora, lb.id);
        if (crl) files.client_crl = crl;
        certs.listeners[listener.id] = files;
        Object.assign(certs.pools, await this.processListenerPoolCerts(tree, listener, amphora, lb.id, certs.pools));
      }
      const config = renderHaproxyConfig({
        tree,
        amphora,
        amphorae,
        haproxyVersion: String(info.haproxy_version ?? ""),
        certs: certs satisfies HaproxyCertPaths,
        settings: this.opts.haproxySettings,
      });
      await this.client.uploadConfig(amphora, lb.id, config, t);
      await this.client.reloadListener(amphora, lb.id, t);
    } else {
      // No listener left for HAProxy (the last one deleted): its configuration goes (a 404 is fine).
      await this.client.deleteListener(amphora, lb.id);
    }
    const kept = new Set(lvs.map((l) => l.id));
    for (const running of await this.client.getAllListeners(amphora)) {
      if (AGENT_LVS_TYPES.includes(running.type) && !kept.has(running.uuid)) await this.client.deleteListener(amphora, running.uuid);
    }
  }

  /**
   * Octavia's _process_tls_certificates: the listener's default certificate, then its SNI
   * certificates, each uploaded as <sha1 of the certificate>.pem (certificate, key, intermediates),
   * and the crt-list <listener id>.pem naming them, default first.
   */
  private async processTlsCertificates(listener: Listener, amphora: Amphora, objId: string): Promise<void> {
    const refs = [
      ...(listener.default_tls_container_ref ? [listener.default_tls_container_ref] : []),
      ...(listener.sni_container_refs ?? []),
    ];
    if (refs.length === 0) return;
    const paths: string[] = [];
    for (const ref of refs) {
      const cert = tlsContainer(await this.opts.certManager.getCert(listener.project_id, ref));
      const pem = buildPem(cert);
      const name = `${cert.id}.pem`;
      paths.push(`${this.baseCertDir}/${objId}/${name}`);
      await this.uploadCertIfChanged(amphora, objId, pem, name);
    }
    await this.uploadCertIfChanged(amphora, objId, `${paths.join("\n")}\n`, `${listener.id}.pem`);
  }

  /** Octavia's _process_secret: a client CA or CRL uploaded as <sha1 of the secret>.pem; answers the file name. */
  private async processSecret(
    owner: { project_id: string },
    ref: string | null | undefined,
    amphora: Amphora,
    objId: string,
  ): Promise<string | null> {
    if (!ref) return null;
    const secret = await this.opts.certManager.getSecret(owner.project_id, ref);
    const name = `${pemDigest(secret)}.pem`;
    await this.uploadCertIfChanged(amphora, objId, secret, name);
    return name;
  }

  /** Octavia's _process_listener_pool_certs: the listener's pools and its L7 policies' redirect pools, each once. */
  private async processListenerPoolCerts(
    tree: Tree,
    listener: Listener,
    amphora: Amphora,
    objId: string,
    done: Record<string, HaproxyPoolCerts>,
  ) {
    const out: Record<string, HaproxyPoolCerts> = {};
    const pools: Pool[] = [];
    const add = (id: string | null | undefined) => {
      const p = id ? tree.get<Pool>("pool", id) : undefined;
      if (p && !(p.id in done) && !pools.some((x) => x.id === p.id)) pools.push(p);
    };
    add(listener.default_pool_id);
    for (const policy of tree.of<L7Policy>("l7policy").filter((p) => p.listener_id === listener.id)) add(policy.redirect_pool_id);
    for (const pool of pools) out[pool.id] = await this.processPoolCerts(listener, pool, amphora, objId);
    return out;
  }

  /** Octavia's _process_pool_certs: the pool's client certificate, CA and CRL, as full paths on the amphora. */
  private async processPoolCerts(listener: Listener, pool: Pool, amphora: Amphora, objId: string): Promise<HaproxyPoolCerts> {
    const files: HaproxyPoolCerts = {};
    const dir = `${this.baseCertDir}/${objId}`;
    if (pool.tls_container_ref) {
      const cert = tlsContainer(await this.opts.certManager.getCert(pool.project_id, pool.tls_container_ref));
      const name = `${cert.id}.pem`;
      await this.uploadCertIfChanged(amphora, objId, buildPem(cert), name);
      files.client_cert = `${dir}/${name}`;
    }
    const ca = await this.processSecret(listener, pool.ca_tls_container_ref, amphora, objId);
    if (ca) files.ca_cert = `${dir}/${ca}`;
    const crl = await this.processSecret(listener, pool.crl_container_ref, amphora, objId);
    if (crl) files.crl = `${dir}/${crl}`;
    return files;
  }

  /** Octavia's _upload_cert: uploaded unless the agent already holds a file with the same MD5. */
  private async uploadCertIfChanged(amphora: Amphora, objId: string, pem: string, name: string): Promise<void> {
    if ((await this.client.getCertMd5sum(amphora, objId, name, [404])) === md5(pem)) return;
    await this.client.uploadCertPem(amphora, objId, name, pem);
  }

  private networkConfig(lb: LoadBalancer, amphora: Amphora): Promise<AmphoraNetworkConfig> {
    return this.opts.network.getNetworkConfigs(lb, amphora);
  }
}

/** The CN of the client certificate Ottava issues itself with its CA (any name: the agents check only the CA). */
export const CLIENT_CERT_CN = "ottava-controller";

/** What the process building the drivers may give the REST driver beyond the settings. */
export interface RestDriverSetup {
  /**
   * Issues Ottava's client certificate (CN ottava-controller, signed by the CA that signs the amphorae's)
   * when OTTAVA_CLIENT_CERT is not set: the controller's certificate generator.
   */
  certs?: CertGenerator;
  /** The CA certificate (PEM) the agents are checked against when neither OTTAVA_SERVER_CA nor OTTAVA_CA_CERTIFICATE is set (npm start's local CA). */
  caCertificate?: string | (() => Promise<string>);
  /**
   * keepalived's notify_master script on the amphorae (KeepalivedSettings.vrrpNotifyMaster). By default
   * VRRP_NOTIFY_MASTER_SCRIPT when the network driver moves VIPs itself (it has takeVip: vpc), and none
   * otherwise (the network follows gratuitous ARP: Octavia's file, unchanged). null: none.
   */
  vrrpNotifyMaster?: string | null;
  log?: Logger;
}

/**
 * The REST amphora driver from the settings: the agents' port, the timeouts and retries for live
 * amphorae, the client certificate ([haproxy_amphora] client_cert, else issued by the CA on first
 * use) and the CA the agents are checked against ([haproxy_amphora] server_ca, else the CA
 * certificate). What is missing fails the first call with a CertificateError that names the settings.
 */
export function createRestAmphoraDriver(
  config: Config,
  certManager: CertManager,
  network: NetworkConfigSource,
  setup: RestDriverSetup = {},
): HaproxyAmphoraLoadBalancerDriver {
  const tls = async (): Promise<AgentTls> => {
    const given = typeof setup.caCertificate === "function" ? await setup.caCertificate() : setup.caCertificate;
    const ca = config.serverCa ?? config.caCertificate ?? given;
    if (!ca)
      throw new CertificateError("no CA to check the amphora agents' certificates with: set OTTAVA_SERVER_CA (or OTTAVA_CA_CERTIFICATE)");
    if (config.clientCert) return { ca, clientPem: config.clientCert };
    if (!setup.certs)
      throw new CertificateError("no client certificate for the amphora agents: set OTTAVA_CLIENT_CERT (its certificate and key, PEM)");
    return { ca, clientPem: (await setup.certs.generateServerPem(CLIENT_CERT_CN, config.certValidityTime)).pem };
  };
  const client = new AmphoraApiClient({
    port: config.amphoraAgentPort,
    tls,
    connTimeout: config.restRequestConnTimeout,
    readTimeout: config.restRequestReadTimeout,
    retries: { maxRetries: config.activeConnectionMaxRetries, retryInterval: config.activeConnectionRetryInterval },
    lbNetworkInterface: config.lbNetworkInterface,
    ...(setup.log ? { log: setup.log } : {}),
  });
  const notifyMaster = setup.vrrpNotifyMaster === undefined ? (network.takeVip ? VRRP_NOTIFY_MASTER_SCRIPT : null) : setup.vrrpNotifyMaster;
  return new HaproxyAmphoraLoadBalancerDriver({
    client,
    certManager,
    network,
    ...(notifyMaster ? { keepalivedSettings: { vrrpNotifyMaster: notifyMaster } } : {}),
    ...(setup.log ? { log: setup.log } : {}),
  });
}
