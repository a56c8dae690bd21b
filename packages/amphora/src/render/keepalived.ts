// keepalived.conf of an ACTIVE_STANDBY amphora (its VRRP instance), as Octavia's KeepalivedJinjaTemplater (amphorae/drivers/keepalived/jinja/jinja_cfg.py, templates/keepalived_base.template).
import {
  AMPHORA_ALLOCATED,
  ipNetwork,
  ipVersion,
  type Amphora,
  type AmphoraNetworkConfig as CoreNetworkConfig,
  type LoadBalancer,
  type VipSubnetConfig,
} from "@ottava/core";
import { osPathJoin } from "./common";

/** The [keepalived_vrrp] and [haproxy_amphora] settings the file is built from. */
export interface KeepalivedSettings {
  /** [keepalived_vrrp] vrrp_advert_int: seconds between VRRP advertisements (a new VRRP group's advert_int). */
  vrrpAdvertInt: number;
  /** [keepalived_vrrp] vrrp_check_interval: seconds between runs of the check script. */
  vrrpCheckInterval: number;
  /** [keepalived_vrrp] vrrp_fail_count: failed checks in a row before the instance goes to FAULT. */
  vrrpFailCount: number;
  /** [keepalived_vrrp] vrrp_success_count: successful checks in a row before it comes back. */
  vrrpSuccessCount: number;
  /** [keepalived_vrrp] vrrp_garp_refresh_interval: seconds between the MASTER's gratuitous ARPs. */
  vrrpGarpRefreshInterval: number;
  /** [keepalived_vrrp] vrrp_garp_refresh_count: gratuitous ARPs per refresh. */
  vrrpGarpRefreshCount: number;
  /** [haproxy_amphora] base_path: the check script is <base_path>/vrrp/check_script.sh on the amphora. */
  basePath: string;
  /**
   * Ottava's addition, absent in Octavia (and by default): the script keepalived runs when this amphora
   * becomes MASTER (a `notify_master` line), for a network that ignores gratuitous ARP (vpc: the
   * amphora image's ottava-vrrp-master reports the promotion to the health manager, which moves the VIP).
   * An absolute path on the amphora, without quotes, backslashes or whitespace (keepalived reads it as one quoted string).
   */
  vrrpNotifyMaster?: string;
}

/** Octavia's defaults (common/config.py). */
export const KEEPALIVED_DEFAULTS: Readonly<KeepalivedSettings> = Object.freeze({
  vrrpAdvertInt: 1,
  vrrpCheckInterval: 5,
  vrrpFailCount: 2,
  vrrpSuccessCount: 2,
  vrrpGarpRefreshInterval: 5,
  vrrpGarpRefreshCount: 2,
  basePath: "/var/lib/octavia",
});

/** keepalived's VRRP authentication types (constants.SUPPORTED_VRRP_AUTH); PASS is Octavia's (VRRP_AUTH_DEFAULT). */
export const VRRP_AUTH_DEFAULT = "PASS";
export const VRRP_AUTH_AH = "AH";
/** The virtual_router_id Octavia gives every amphora of an ACTIVE_STANDBY pair (database_tasks: vrrp_id=1). */
export const VRRP_ID = 1;

/** A load balancer's VRRP group (Octavia's vrrp_group table), shared by both amphorae of the pair. */
export interface VrrpGroup {
  vrrp_group_name: string;
  vrrp_auth_type: string;
  /** Secret (keepalived uses at most 8 characters): never log it. */
  vrrp_auth_pass: string;
  advert_int: number;
}

/**
 * Octavia's CreateVRRPGroupForLB: named after the LB's id without its dashes, PASS authentication with
 * `authPass` (Octavia draws 7 random hex digits, uuid4().hex[:7]), advert_int from the settings.
 */
export function newVrrpGroup(lbId: string, authPass: string, settings: Partial<KeepalivedSettings> = {}): VrrpGroup {
  return {
    vrrp_group_name: lbId.replaceAll("-", ""),
    vrrp_auth_type: VRRP_AUTH_DEFAULT,
    vrrp_auth_pass: authPass,
    advert_int: settings.vrrpAdvertInt ?? KEEPALIVED_DEFAULTS.vrrpAdvertInt,
  };
}

/** A notify_master path keepalived reads as one quoted string: absolute, no quote, backslash or control character. */
function notifyPath(path: string): string {
  if (!/^\/[^"\\\s]*$/.test(path))
    throw new Error(`keepalived.conf: notify_master must be an absolute path without quotes or spaces: ${JSON.stringify(path)}`);
  return path;
}

/** A Neutron host route of a VIP subnet. */
export type HostRoute = VipSubnetConfig["host_routes"][number];

/** What the file needs of a VIP's Neutron subnet. */
export type VipSubnet = VipSubnetConfig;

/**
 * What the file needs of the amphora's network configuration as the network driver answers it (Octavia's
 * AmphoraNetworkConfig.to_dict(): vip_subnet and additional_vip_data).
 */
export type AmphoraNetworkConfig = Pick<CoreNetworkConfig, "vip_subnet" | "additional_vip_data">;

export interface KeepalivedConfigInput {
  /** The load balancer: its primary VIP is vip_address. */
  lb: Pick<LoadBalancer, "vip_address">;
  /** The amphora the file is for. */
  amphora: Pick<Amphora, "role" | "vrrp_interface" | "vrrp_id" | "vrrp_priority" | "vrrp_ip">;
  /** The LB's amphorae, any status: the ALLOCATED ones with another VRRP address are its unicast peers, in this order. */
  amphorae: Pick<Amphora, "status" | "vrrp_ip">[];
  vrrpGroup: VrrpGroup;
  network: AmphoraNetworkConfig;
}

/**
 * keepalived.conf for `input.amphora`, as Octavia's build_keepalived_config. Where Octavia writes
 * "None" Ottava differs: an amphora without a role, VRRP interface, router id or priority is refused
 * (keepalived would refuse the file), and an ALLOCATED peer without a VRRP address yet is left out of
 * unicast_peer. Values are written as they are (Octavia's Jinja autoescape would HTML-escape them). Throws
 * on an address or CIDR Python's ipaddress refuses, as Octavia does.
 */
export function renderKeepalivedConfig(input: KeepalivedConfigInput, settings: Partial<KeepalivedSettings> = {}): string {
  const s = { ...KEEPALIVED_DEFAULTS, ...settings };
  const { amphora, vrrpGroup: group, network } = input;
  for (const field of ["role", "vrrp_interface", "vrrp_id", "vrrp_priority"] as const) {
    if (amphora[field] === null || amphora[field] === undefined) throw new Error(`keepalived.conf: the amphora has no ${field}`);
  }
  // Additional VIPs sorted by their address text, the primary VIP first (Octavia's interface_index order).
  const additional = [...network.additional_vip_data].sort((a, b) =>
    a.ip_address < b.ip_address ? -1 : a.ip_address > b.ip_address ? 1 : 0,
  );
  const vrrpIpv6 = ipVersion(amphora.vrrp_ip) === 6;
  const vips = [{ ip_address: input.lb.vip_address, subnet: network.vip_subnet }, ...additional].map((v) => {
    const ipv6 = ipVersion(v.ip_address) === 6;
    return {
      ip: v.ip_address,
      cidr: ipNetwork(v.subnet.cidr), // Python's ip_network(...).with_prefixlen: strict, host bits set throw
      ipv6,
      gateway: v.subnet.gateway_ip,
      hostRoutes: v.subnet.host_routes,
      excluded: ipv6 !== vrrpIpv6,
    };
  });
  const peers = input.amphorae
    .filter((a) => a.status === AMPHORA_ALLOCATED && a.vrrp_ip !== amphora.vrrp_ip && a.vrrp_ip !== null && a.vrrp_ip !== undefined)
    .map((a) => a.vrrp_ip as string);
  const intf = amphora.vrrp_interface;
  const lines = [
    "vrrp_script check_script {",
    `    script ${osPathJoin(s.basePath, "vrrp/check_script.sh")}`,
    `    interval ${s.vrrpCheckInterval}`,
    `    fall ${s.vrrpFailCount}`,
    `    rise ${s.vrrpSuccessCount}`,
    "}",
    "",
    `vrrp_instance ${group.vrrp_group_name} {`,
    `    state ${amphora.role}`,
    `    interface ${intf}`,
    `    virtual_router_id ${amphora.vrrp_id}`,
    `    priority ${amphora.vrrp_priority}`,
    "    nopreempt",
    "    accept",
    `    garp_master_refresh ${s.vrrpGarpRefreshInterval}`,
    `    garp_master_refresh_repeat ${s.vrrpGarpRefreshCount}`,
    `    advert_int ${group.advert_int}`,
    "    authentication {",
    `        auth_type ${group.vrrp_auth_type}`,
    `        auth_pass ${group.vrrp_auth_pass}`,
    "    }",
    "",
    `    unicast_src_ip ${amphora.vrrp_ip}`,
    "    unicast_peer {",
    ...peers.map((ip) => `        ${ip}`),
    "    }",
    "",
    "    virtual_ipaddress {",
    ...vips.filter((v) => !v.excluded).map((v) => `        ${v.ip}`),
    "    }",
    "",
    "    virtual_ipaddress_excluded {",
    ...vips.filter((v) => v.excluded).map((v) => `        ${v.ip}`),
    "    }",
    "",
    "    virtual_routes {",
    ...vips.flatMap((v) => [
      `        ${v.cidr} dev ${intf} src ${v.ip} scope link table 1`,
      ...(v.gateway ? [`        default via ${v.gateway} dev ${intf} onlink table 1`] : []),
      ...v.hostRoutes.map((r) => `        ${r.destination} dev ${intf} gateway ${r.nexthop} onlink table 1`),
    ]),
    "    }",
    "",
    "    virtual_rules {",
    ...vips.map((v) => `        from ${v.ip}/${v.ipv6 ? "128" : "32"} table 1 priority 100`),
    "    }",
    "",
    "    track_script {",
    "        check_script",
    "    }",
    ...(s.vrrpNotifyMaster === undefined ? [] : ["", `    notify_master "${notifyPath(s.vrrpNotifyMaster)}"`]),
    "}",
  ];
  return lines.join("\n") + "\n";
}
