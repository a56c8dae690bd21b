// keepalived's LVS configuration of one UDP or SCTP listener, as Octavia's LvsJinjaTemplater (common/jinja/lvs/jinja_cfg.py, templates/keepalivedlvs.cfg.j2, base.j2, macros.j2).
import {
  intFromText,
  ipVersion,
  PENDING_DELETE,
  pyRepr,
  type HealthMonitor,
  type Listener,
  type Member,
  type Pool,
  type Tree,
} from "@ottava/core";

/** The [haproxy_amphora] setting the file is built from. */
export interface LvsSettings {
  /** [haproxy_amphora] base_path: the UDP-CONNECT check script is <base_path>/lvs/check/udp_check.sh on the amphora. */
  basePath: string;
}

/** Octavia's default (common/config.py). */
export const LVS_DEFAULTS: Readonly<LvsSettings> = Object.freeze({ basePath: "/var/lib/octavia" });

/** The network namespace of the amphora's VIP (constants.AMPHORA_NAMESPACE). */
export const AMPHORA_NAMESPACE = "amphora-haproxy";
/** keepalived's protocol of a listener (PROTOCOL_MAP): UDP and SCTP only. */
export const LVS_PROTOCOL_MAP: Readonly<Record<string, string>> = Object.freeze({ UDP: "udp", SCTP: "sctp" });
/** keepalived's lb_algo of a pool's algorithm (BALANCE_MAP); any other is wrr. */
export const LVS_BALANCE_MAP: Readonly<Record<string, string>> = Object.freeze({
  ROUND_ROBIN: "wrr",
  LEAST_CONNECTIONS: "lc",
  SOURCE_IP: "sh",
});
/** The UDP-CONNECT check script under <base_path>/lvs/check/ (CHECK_SCRIPT_NAME). */
export const LVS_CHECK_SCRIPT_NAME = "udp_check.sh";
/** The SCTP check (the amphora's amphora-health-checker). */
export const LVS_SCTP_CHECKER = "amphora-health-checker sctp";
/** SOURCE_IP persistence without a timeout or granularity (the template's defaults). */
export const LVS_DEFAULT_PERSISTENCE_TIMEOUT = 360;
export const LVS_DEFAULT_PERSISTENCE_GRANULARITY = "255.255.255.255";

/**
 * utils.expand_expected_codes: "200-204" is 200, 201, ... 204; "200, 404" is both; as a sorted set of
 * strings (text order, as Octavia sorts them).
 */
export function expandExpectedCodes(codes: string): string[] {
  const out = new Set<string>();
  for (const code of codes.split(/, */)) {
    if (!code) continue;
    if (code.includes("-")) {
      const [low, high] = code.split("-") as [string, string];
      for (let i = pythonIntText(low); i <= pythonIntText(high); i++) out.add(String(i));
    } else {
      out.add(code);
    }
  }
  return [...out].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Python's int() of a decimal text, raising as Python does. */
function pythonIntText(text: string): number {
  const n = intFromText(text);
  if (n === undefined) throw new Error(`invalid literal for int() with base 10: ${pyRepr(text)}`);
  return n;
}

/** Jinja's default(value, true): the value unless it is falsy. */
const orDefault = <T, D>(value: T | null | undefined, fallback: D): T | D => (value ? value : fallback);

/**
 * The keepalived LVS configuration of the UDP or SCTP listener `listenerId` of `tree` (one file per
 * listener), as Octavia's LvsJinjaTemplater.build_config: a virtual server group per IP version of the
 * LB's VIPs, the listener's default pool's members of that version as real servers, checked as the
 * pool's health monitor says (UDP-CONNECT, SCTP, HTTP GET, TCP). Objects being deleted (PENDING_DELETE)
 * are left out. The health monitor's url_path is written as it is (Octavia's Jinja autoescape would
 * HTML-escape it). Throws where Octavia does: a listener or pool protocol other than UDP or SCTP, an
 * address Python's ipaddress refuses.
 */
export function renderLvsConfig(tree: Tree, listenerId: string, settings: Partial<LvsSettings> = {}): string {
  const s = { ...LVS_DEFAULTS, ...settings };
  const lb = tree.lb;
  const listener = tree.get<Listener>("listener", listenerId);
  if (!listener) throw new Error(`listener ${listenerId} is not in load balancer ${lb.id}'s tree`);
  const mode = protocolMode(listener.protocol);
  const poolRecord = listener.default_pool_id ? tree.get<Pool>("pool", listener.default_pool_id) : undefined;
  const pool = poolRecord && poolRecord.provisioning_status !== PENDING_DELETE ? transformPool(tree, poolRecord, s) : undefined;
  const vips = [lb.vip_address, ...lb.additional_vips.map((v) => v.ip_address)].map((ip) => ({ ip, version: ipVersion(ip) }));
  const connectionLimit = listener.connection_limit && listener.connection_limit > -1 ? listener.connection_limit : undefined;

  const lines = [
    `# Configuration for Loadbalancer ${lb.id}`,
    listener.admin_state_up ? `# Configuration for Listener ${listener.id}` : `# Listener ${listener.id} is disabled`,
    "",
    `net_namespace ${AMPHORA_NAMESPACE}`,
  ];
  if (!(lb.admin_state_up && listener.admin_state_up) || !pool) return lines.join("\n") + "\n";
  const hm = pool.healthMonitor?.admin_state_up ? pool.healthMonitor : undefined;
  for (const version of [4, 6] as const) {
    const groupVips = vips.filter((v) => v.version === version);
    if (groupVips.length === 0) continue;
    lines.push(
      "",
      `virtual_server_group ipv${version}-group {`,
      ...groupVips.map((v) => `    ${v.ip} ${listener.protocol_port}`),
      "}",
      "",
      `virtual_server group ipv${version}-group {`,
      `    lb_algo ${pool.lbAlgo}`,
      "    lb_kind NAT",
      `    protocol ${mode.toUpperCase()}`,
    );
    const sp = pool.record.session_persistence;
    if (sp && sp.type === "SOURCE_IP") {
      lines.push(
        `    persistence_timeout ${orDefault(sp.persistence_timeout, LVS_DEFAULT_PERSISTENCE_TIMEOUT)}`,
        `    persistence_granularity ${orDefault(sp.persistence_granularity, LVS_DEFAULT_PERSISTENCE_GRANULARITY)}`,
      );
    }
    if (hm) {
      lines.push(`    delay_loop ${hm.delay}`, `    delay_before_retry ${hm.delay}`);
      if (hm.max_retries_down) lines.push(`    retry ${hm.max_retries_down}`);
    }
    lines.push(
      "",
      pool.record.admin_state_up ? `    # Configuration for Pool ${pool.record.id}` : `    # Pool ${pool.record.id} is disabled`,
    );
    if (hm) lines.push(`    # Configuration for HealthMonitor ${hm.id}`);
    if (pool.record.admin_state_up) {
      for (const m of pool.members.filter((m) => m.version === version))
        lines.push(...realServer(m.record, hm, pool.checkScript, connectionLimit));
    }
    lines.push("}");
  }
  return lines.join("\n") + "\n";
}

function protocolMode(protocol: string): string {
  const mode = Object.hasOwn(LVS_PROTOCOL_MAP, protocol) ? LVS_PROTOCOL_MAP[protocol] : undefined;
  if (!mode) throw new Error(`${protocol} is not a protocol keepalived's LVS serves (UDP, SCTP)`);
  return mode;
}

interface LvsPool {
  record: Pool;
  lbAlgo: string;
  members: { record: Member; version: 4 | 6 }[];
  healthMonitor: (HealthMonitor & { codes: string[] }) | undefined;
  /** The UDP-CONNECT check script's path. */
  checkScript: string;
}

/** Octavia's _transform_pool: its members (but those being deleted) and monitor (unless being deleted). */
function transformPool(tree: Tree, pool: Pool, s: LvsSettings): LvsPool {
  protocolMode(pool.protocol);
  const members = tree
    .of<Member>("member")
    .filter((m) => m.pool_id === pool.id && m.provisioning_status !== PENDING_DELETE)
    .map((record) => ({ record, version: ipVersion(record.address) }));
  const hm = tree.of<HealthMonitor>("healthmonitor").find((h) => h.pool_id === pool.id);
  return {
    record: pool,
    lbAlgo:
      (Object.hasOwn(LVS_BALANCE_MAP, pool.lb_algorithm) ? LVS_BALANCE_MAP[pool.lb_algorithm] : undefined) ?? LVS_BALANCE_MAP.ROUND_ROBIN!,
    members,
    // Octavia's _transform_health_monitor: an HTTP monitor's expected codes, expanded.
    healthMonitor:
      hm && hm.provisioning_status !== PENDING_DELETE
        ? { ...hm, codes: hm.type === "HTTP" && hm.expected_codes ? expandExpectedCodes(hm.expected_codes) : [] }
        : undefined,
    checkScript: `${s.basePath}/lvs/check/${LVS_CHECK_SCRIPT_NAME}`,
  };
}

/** A member's real_server block (or the line saying it is disabled). */
function realServer(
  m: Member,
  hm: (HealthMonitor & { codes: string[] }) | undefined,
  checkScript: string,
  connectionLimit: number | undefined,
): string[] {
  if (!m.admin_state_up) return [`    # Member ${m.id} is disabled`];
  const ip = orDefault(m.monitor_address, m.address);
  const port = orDefault(m.monitor_port, m.protocol_port);
  const lines = [
    `    # Configuration for Member ${m.id}`,
    `    real_server ${m.address} ${m.protocol_port} {`,
    `        weight ${m.weight}`,
  ];
  if (connectionLimit) lines.push(`        uthreshold ${connectionLimit}`);
  const connect = [`            connect_ip ${ip}`, `            connect_port ${port}`, `            connect_timeout ${hm?.timeout}`];
  if (hm?.type === "UDP-CONNECT") {
    lines.push(
      "        MISC_CHECK {",
      `            misc_path "${checkScript} ${ip} ${port}"`,
      `            misc_timeout ${hm.timeout}`,
      "        }",
    );
  } else if (hm?.type === "SCTP") {
    lines.push(
      "        MISC_CHECK {",
      `            misc_path "${LVS_SCTP_CHECKER} -t ${hm.timeout} ${ip} ${port}"`,
      `            misc_timeout ${hm.timeout + 1}`,
      "        }",
    );
  } else if (hm?.type === "HTTP" && hm.http_method === "GET") {
    lines.push("        HTTP_GET {");
    for (const code of hm.codes) {
      lines.push("            url {", `              path ${hm.url_path ?? "None"}`, `              status_code ${code}`, "            }");
    }
    lines.push(...connect, "        }");
  } else if (hm?.type === "TCP") {
    lines.push("        TCP_CHECK {", ...connect, "        }");
  }
  lines.push("    }");
  return lines;
}
