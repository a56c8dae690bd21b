// The amphora agent's configuration file (amphora-agent.conf), as Octavia's AgentJinjaTemplater (amphorae/backends/agent/agent_jinja_cfg.py, templates/amphora_agent_conf.template).
import { HEARTBEAT_INTERVAL, type Amphora } from "@ottava/core";
import { pyStrip } from "./common";

/** The controller's settings the file hands to the amphora agent ([DEFAULT], [haproxy_amphora], [health_manager], [amphora_agent]). */
export interface AgentConfigSettings {
  /** [DEFAULT] debug. */
  debug: boolean;
  /** [haproxy_amphora] base_cert_dir. */
  baseCertDir: string;
  /** [haproxy_amphora] base_path. */
  basePath: string;
  /** [haproxy_amphora] bind_host: the address the agent's API listens on. */
  bindHost: string;
  /** [haproxy_amphora] bind_port: the agent API's port. */
  bindPort: number;
  /** [haproxy_amphora] haproxy_cmd. */
  haproxyCmd: string;
  /** [haproxy_amphora] respawn_count. */
  respawnCount: number;
  /** [haproxy_amphora] respawn_interval. */
  respawnInterval: number;
  /** [haproxy_amphora] use_upstart (deprecated in Octavia, still written). */
  useUpstart: boolean;
  /** [amphora_agent] user_log_facility: LOG_LOCAL0..7 of tenant traffic logs. */
  userLogFacility: number;
  /** [amphora_agent] administrative_log_facility: LOG_LOCAL0..7 of the amphora's own logs. */
  administrativeLogFacility: number;
  /** [health_manager] heartbeat_interval: seconds between the amphora's heartbeats. */
  heartbeatInterval: number;
  /** [amphora_agent] agent_server_ca: the CA the agent checks the controller's client certificates with. */
  agentServerCa: string;
  /** [amphora_agent] agent_server_cert: the agent's server certificate and key. */
  agentServerCert: string;
  /** [amphora_agent] agent_server_network_dir: written only when set. */
  agentServerNetworkDir: string | null;
  /** [amphora_agent] agent_request_read_timeout, seconds. */
  agentRequestReadTimeout: number;
  /** [amphora_agent] amphora_udp_driver (deprecated in Octavia, still written). */
  amphoraUdpDriver: string;
  /** [amphora_agent] agent_tls_protocol: the lowest TLS version the agent's API accepts. */
  agentTlsProtocol: string;
}

/** Octavia's defaults (common/config.py, oslo.log's debug). */
export const AGENT_CONFIG_DEFAULTS: Readonly<AgentConfigSettings> = Object.freeze({
  debug: false,
  baseCertDir: "/var/lib/octavia/certs",
  basePath: "/var/lib/octavia",
  bindHost: "::",
  bindPort: 9443,
  haproxyCmd: "/usr/sbin/haproxy",
  respawnCount: 2,
  respawnInterval: 2,
  useUpstart: true,
  userLogFacility: 0,
  administrativeLogFacility: 1,
  heartbeatInterval: HEARTBEAT_INTERVAL,
  agentServerCa: "/etc/octavia/certs/client_ca.pem",
  agentServerCert: "/etc/octavia/certs/server.pem",
  agentServerNetworkDir: null,
  agentRequestReadTimeout: 180,
  amphoraUdpDriver: "keepalived_lvs",
  agentTlsProtocol: "TLSv1.2",
});

export interface AgentConfigInput {
  /** The amphora the file is for (amphora_id). */
  amphora: Pick<Amphora, "id">;
  /** [controller_worker] loadbalancer_topology: its load balancer's, SINGLE or ACTIVE_STANDBY. */
  topology: string;
  /** [health_manager] controller_ip_port_list: where the amphora sends its heartbeats ("ip:port", "[ipv6]:port"). */
  controllerIpPortList: readonly string[];
  /** [health_manager] heartbeat_key: the HMAC key of the heartbeats, null when unset (written "None", as Octavia does). Secret: never log it. */
  heartbeatKey: string | null;
}

/**
 * amphora-agent.conf for an amphora, as Octavia's build_agent_config (what AmphoraConfigUpdate pushes to
 * the agent, and what a new amphora boots with). Where Octavia's file does not read back as what it was
 * rendered from, Ottava writes it so that oslo.config, as the agent loads it, reads the same values:
 * values verbatim (Octavia's Jinja autoescape HTML-escapes &<>"'), a $ that oslo.config would substitute
 * ($$, $name, ${name}) as $$, a value quoted when oslo.config would strip its surrounding blanks or quotes; and the log
 * facilities, which Octavia writes only under [haproxy_amphora] where nothing reads them, also under
 * [amphora_agent] where the agent reads them, when they are not the agent's defaults. Throws on a value
 * no file can carry (a line break, a "\$"); the message never includes the heartbeat key.
 */
export function renderAgentConfig(input: AgentConfigInput, settings: Partial<AgentConfigSettings> = {}): string {
  const s = { ...AGENT_CONFIG_DEFAULTS, ...settings };
  const v = (value: string, what: string) => osloValue(value, what);
  const n = (value: number, what: string) => {
    if (!Number.isInteger(value)) throw new Error(`amphora-agent.conf: ${what} must be an integer, not ${value}`);
    return String(value);
  };
  const bool = (value: boolean) => (value ? "True" : "False");
  const facility = (value: number, what: string) => {
    if (!Number.isInteger(value) || value < 0 || value > 7) throw new Error(`amphora-agent.conf: ${what} must be 0..7, not ${value}`);
    return String(value);
  };
  for (const item of input.controllerIpPortList) {
    if (!/^[^\s,"'$\\]+$/.test(item)) throw new Error(`amphora-agent.conf: ${JSON.stringify(item)} is not a health manager address`);
  }
  const userFacility = facility(s.userLogFacility, "user_log_facility");
  const adminFacility = facility(s.administrativeLogFacility, "administrative_log_facility");
  const lines = [
    "[DEFAULT]",
    `debug = ${bool(s.debug)}`,
    "use_syslog = True",
    `syslog_log_facility = LOG_LOCAL${adminFacility}`,
    "",
    "[haproxy_amphora]",
    `base_cert_dir = ${v(s.baseCertDir, "base_cert_dir")}`,
    `base_path = ${v(s.basePath, "base_path")}`,
    `bind_host = ${v(s.bindHost, "bind_host")}`,
    `bind_port = ${n(s.bindPort, "bind_port")}`,
    `haproxy_cmd = ${v(s.haproxyCmd, "haproxy_cmd")}`,
    `respawn_count = ${n(s.respawnCount, "respawn_count")}`,
    `respawn_interval = ${n(s.respawnInterval, "respawn_interval")}`,
    `use_upstart = ${bool(s.useUpstart)}`,
    `user_log_facility = ${userFacility}`,
    `administrative_log_facility = ${adminFacility}`,
    "",
    "[health_manager]",
    `controller_ip_port_list = ${input.controllerIpPortList.join(", ")}`,
    `heartbeat_interval = ${n(s.heartbeatInterval, "heartbeat_interval")}`,
    `heartbeat_key = ${input.heartbeatKey === null ? "None" : v(input.heartbeatKey, "the heartbeat key")}`,
    "",
    "[amphora_agent]",
    `agent_server_ca = ${v(s.agentServerCa, "agent_server_ca")}`,
    `agent_server_cert = ${v(s.agentServerCert, "agent_server_cert")}`,
    ...(s.agentServerNetworkDir ? [`agent_server_network_dir = ${v(s.agentServerNetworkDir, "agent_server_network_dir")}`] : []),
    `agent_request_read_timeout = ${n(s.agentRequestReadTimeout, "agent_request_read_timeout")}`,
    `amphora_id = ${v(input.amphora.id, "amphora_id")}`,
    `amphora_udp_driver = ${v(s.amphoraUdpDriver, "amphora_udp_driver")}`,
    `agent_tls_protocol = ${v(s.agentTlsProtocol, "agent_tls_protocol")}`,
    ...(s.userLogFacility !== AGENT_CONFIG_DEFAULTS.userLogFacility ||
    s.administrativeLogFacility !== AGENT_CONFIG_DEFAULTS.administrativeLogFacility
      ? [`user_log_facility = ${userFacility}`, `administrative_log_facility = ${adminFacility}`]
      : []),
    "",
    "[controller_worker]",
    `loadbalancer_topology = ${v(input.topology, "loadbalancer_topology")}`,
  ];
  return lines.join("\n") + "\n";
}

/**
 * A "$" that oslo.config's substitution (string.Template, idpattern [_a-z][\._a-z0-9]*, IGNORECASE: four
 * non-ASCII letters fold into it) takes as the start of "$$", "$name" or "${name}". Any other "$" is
 * read as it is.
 */
const SUBSTITUTED_DOLLAR =
  /\$(?=\$|[_a-zA-Z\u0130\u0131\u017f\u212a]|\{[_a-zA-Z\u0130\u0131\u017f\u212a][._a-zA-Z0-9\u0130\u0131\u017f\u212a]*\})/g;

/**
 * A value as oslo.config reads it back, written on one line: a "$" it would substitute doubled, in
 * double quotes when its ends are blanks or the same quote (which the parser strips). `what` names it
 * in errors, never the value itself (it may be the heartbeat key).
 */
export function osloValue(value: string, what: string): string {
  if (/[\r\n]/.test(value)) throw new Error(`amphora-agent.conf: ${what} cannot be written: it has a line break`);
  // oslo.config reads "\$" as "$$" before substituting: no text reads back as a "\" before a "$".
  if (value.includes("\\$")) throw new Error(`amphora-agent.conf: ${what} cannot be written: it has "\\$"`);
  const escaped = value.replace(SUBSTITUTED_DOLLAR, "$$$$");
  const first = escaped[0];
  const last = escaped[escaped.length - 1];
  // oslo.config's parser strips a value's ends of Python's str.strip() whitespace, and of matching quotes.
  if (first !== undefined && (pyStrip(escaped) !== escaped || (first === last && (first === '"' || first === "'")))) {
    return `"${escaped}"`;
  }
  return escaped;
}
