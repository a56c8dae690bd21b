// keepalived.conf of an ACTIVE_STANDBY amphora (its VRRP instance), as Octavia's KeepalivedJinjaTemplater (amphorae/drivers/keepalived/jinja/jinja_cfg.py, templates/keepalived_base.template).
import { AMPHORA_ALLOCATED, type Amphora, type LoadBalancer } from "@ottava/core";
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

/** A Neutron host route of a VIP subnet. */
export interface HostRoute {
  destination: string;
  nexthop: string;
}

/** What the file needs of a VIP's Neutron subnet. */
export interface VipSubnet {
  cidr: string;
  gateway_ip: string | null;
  host_routes: HostRoute[];
}

/**
 * The amphora's network configuration as the network driver answers it (Octavia's
 * AmphoraNetworkConfig.to_dict(): vip_subnet and additional_vip_data).
 */
export interface AmphoraNetworkConfig {
  vip_subnet: VipSubnet;
  additional_vip_data: { ip_address: string; subnet: VipSubnet }[];
}

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
      cidr: ipNetworkWithPrefixlen(v.subnet.cidr),
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
    "}",
  ];
  return lines.join("\n") + "\n";
}

// --- Python's ipaddress (3.11), as Octavia validates and normalizes addresses with it. -------------

/** An IPv4 address as ipaddress.IPv4Address parses it (four decimal octets, no leading zeros), or undefined. */
function parseIpv4(text: string): number | undefined {
  const octets = text.split(".");
  if (octets.length !== 4) return undefined;
  let value = 0;
  for (const o of octets) {
    if (!/^[0-9]{1,3}$/.test(o) || (o.length > 1 && o[0] === "0")) return undefined;
    const n = Number(o);
    if (n > 255) return undefined;
    value = value * 256 + n;
  }
  return value;
}

/** An IPv6 address (no scope) as ipaddress.IPv6Address._ip_int_from_string parses it, or undefined. */
function parseIpv6(text: string): bigint | undefined {
  if (!text) return undefined;
  const parts = text.split(":");
  if (parts.length < 3) return undefined;
  if (parts[parts.length - 1]!.includes(".")) {
    const v4 = parseIpv4(parts.pop()!);
    if (v4 === undefined) return undefined;
    parts.push(((v4 >>> 16) & 0xffff).toString(16), (v4 & 0xffff).toString(16));
  }
  if (parts.length > 9) return undefined;
  let skip: number | undefined;
  for (let i = 1; i < parts.length - 1; i++) {
    if (parts[i] === "") {
      if (skip !== undefined) return undefined;
      skip = i;
    }
  }
  let hi: number;
  let lo: number;
  let skipped: number;
  if (skip !== undefined) {
    hi = skip;
    lo = parts.length - skip - 1;
    if (parts[0] === "" && --hi) return undefined;
    if (parts[parts.length - 1] === "" && --lo) return undefined;
    skipped = 8 - (hi + lo);
    if (skipped < 1) return undefined;
  } else {
    if (parts.length !== 8 || parts[0] === "" || parts[7] === "") return undefined;
    hi = 8;
    lo = 0;
    skipped = 0;
  }
  const hextet = (h: string) => (/^[0-9a-fA-F]{1,4}$/.test(h) ? BigInt(parseInt(h, 16)) : undefined);
  let value = 0n;
  for (let i = 0; i < hi; i++) {
    const h = hextet(parts[i]!);
    if (h === undefined) return undefined;
    value = (value << 16n) | h;
  }
  value <<= 16n * BigInt(skipped);
  for (let i = parts.length - lo; i < parts.length; i++) {
    const h = hextet(parts[i]!);
    if (h === undefined) return undefined;
    value = (value << 16n) | h;
  }
  return value;
}

/** An IPv6 address with its optional %scope, as IPv6Address takes it. */
function parseIpv6WithScope(text: string): { value: bigint; scope: string | undefined } | undefined {
  if (text.includes("/")) return undefined;
  const at = text.indexOf("%");
  const scope = at < 0 ? undefined : text.slice(at + 1);
  if (scope !== undefined && (scope === "" || scope.includes("%"))) return undefined;
  const value = parseIpv6(at < 0 ? text : text.slice(0, at));
  return value === undefined ? undefined : { value, scope };
}

/** str(IPv6Address): lower-case hextets, the first longest run of two or more zero hextets as "::". */
function formatIpv6(value: bigint, scope: string | undefined): string {
  const hextets = Array.from({ length: 8 }, (_, i) => ((value >> BigInt(16 * (7 - i))) & 0xffffn).toString(16));
  let bestStart = -1;
  let bestLen = 0;
  let start = -1;
  let len = 0;
  hextets.forEach((h, i) => {
    if (h === "0") {
      len++;
      if (start === -1) start = i;
      if (len > bestLen) {
        bestLen = len;
        bestStart = start;
      }
    } else {
      len = 0;
      start = -1;
    }
  });
  let parts: string[] = hextets;
  if (bestLen > 1) {
    const end = bestStart + bestLen;
    parts = [...hextets.slice(0, bestStart), "", ...hextets.slice(end)];
    if (end === 8) parts.push("");
    if (bestStart === 0) parts.unshift("");
  }
  return parts.join(":") + (scope ? `%${scope}` : "");
}

/** ipaddress.ip_address(text).version: 4 or 6; throws as Python does on anything else (None included). */
export function ipVersion(text: string | null | undefined): 4 | 6 {
  if (typeof text === "string" && !text.includes("/")) {
    if (parseIpv4(text) !== undefined) return 4;
    if (parseIpv6WithScope(text) !== undefined) return 6;
  }
  throw new Error(`${JSON.stringify(text ?? null)} does not appear to be an IPv4 or IPv6 address`);
}

/**
 * ipaddress.ip_network(cidr).with_prefixlen (strict): the network as Python writes it, "10.0.0.0/24",
 * "2001:db8::/64". An IPv4 mask may be a prefix length, a netmask or a host mask; no prefix is /32 or
 * /128. Throws as Python does when the address has host bits set or the text is no network.
 */
export function ipNetworkWithPrefixlen(cidr: string): string {
  const parts = cidr.split("/");
  const bad = () => new Error(`${JSON.stringify(cidr)} does not appear to be an IPv4 or IPv6 network`);
  if (parts.length > 2) throw bad();
  const [address, mask] = parts as [string, string | undefined];
  const prefixFrom = (text: string, max: number) => (/^[0-9]+$/.test(text) && Number(text) <= max ? Number(text) : undefined);
  const v4 = parseIpv4(address);
  if (v4 !== undefined) {
    let prefix = mask === undefined ? 32 : prefixFrom(mask, 32);
    if (prefix === undefined) {
      const m = parseIpv4(mask!);
      prefix = m === undefined ? undefined : (prefixFromMask(m) ?? prefixFromMask(~m >>> 0));
    }
    if (prefix !== undefined) {
      const netmask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
      if ((v4 & netmask) >>> 0 !== v4) throw new Error(`${address}/${prefix} has host bits set`);
      return `${address}/${prefix}`;
    }
  }
  const v6 = parseIpv6WithScope(address);
  if (v6 === undefined) throw bad();
  const prefix = mask === undefined ? 128 : prefixFrom(mask, 128);
  if (prefix === undefined) throw bad();
  const hostBits = (1n << BigInt(128 - prefix)) - 1n;
  const text = `${formatIpv6(v6.value, v6.scope)}/${prefix}`;
  if ((v6.value & hostBits) !== 0n) throw new Error(`${text} has host bits set`);
  return text;
}

/** IPv4Network._prefix_from_ip_int: the prefix length of a contiguous netmask, else undefined. */
function prefixFromMask(mask: number): number | undefined {
  let trailingZeros = 0;
  while (trailingZeros < 32 && ((mask >>> trailingZeros) & 1) === 0) trailingZeros++;
  const prefix = 32 - trailingZeros;
  const leadingOnes = trailingZeros === 32 ? 0 : mask >>> trailingZeros;
  const allOnes = prefix === 32 ? 0xffffffff : 2 ** prefix - 1;
  return leadingOnes === allOnes ? prefix : undefined;
}
