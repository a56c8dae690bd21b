export * from "./noop";
export * from "./drivers";
export * from "./api-drivers";
export {
  AmphoraApiClient,
  AmphoraApiError,
  AmphoraUnreachable,
  AmpConnectionRetry,
  API_VERSION as AMPHORA_API_VERSION,
  OCTAVIA_API_CLIENT,
} from "./rest/client";
export type { AgentTls, AgentTarget, AgentResponse, AmphoraApiClientOptions, RetryPolicy, TimeoutDict } from "./rest/client";
export {
  HaproxyAmphoraLoadBalancerDriver,
  createRestAmphoraDriver,
  derivedVrrpGroup,
  hasAgent,
  CLIENT_CERT_CN,
  VRRP_NOTIFY_MASTER_SCRIPT,
} from "./rest/driver";
export type { AgentConnectivity, NetworkConfigSource, RestAmphoraDriverOptions, RestDriverSetup } from "./rest/driver";
export * from "./certs/local";
export * from "./local/heartbeat";
export * from "./local/haproxy-query";
export { renderKeepalivedConfig, newVrrpGroup, KEEPALIVED_DEFAULTS, VRRP_AUTH_DEFAULT, VRRP_AUTH_AH, VRRP_ID } from "./render/keepalived";
export type { KeepalivedConfigInput, KeepalivedSettings, VrrpGroup, AmphoraNetworkConfig, VipSubnet, HostRoute } from "./render/keepalived";
export {
  renderLvsConfig,
  expandExpectedCodes,
  LVS_DEFAULTS,
  AMPHORA_NAMESPACE,
  LVS_PROTOCOL_MAP,
  LVS_BALANCE_MAP,
  LVS_CHECK_SCRIPT_NAME,
  LVS_SCTP_CHECKER,
  LVS_DEFAULT_PERSISTENCE_TIMEOUT,
  LVS_DEFAULT_PERSISTENCE_GRANULARITY,
} from "./render/lvs";
export type { LvsSettings } from "./render/lvs";
export { renderAgentConfig, AGENT_CONFIG_DEFAULTS } from "./render/agent-config";
export type { AgentConfigInput, AgentConfigSettings } from "./render/agent-config";
export * from "./render/haproxy";
export { LocalDataplane } from "./local/dataplane";
export { freePort } from "./local/free-port";
export type { LocalDataplaneOptions } from "./local/dataplane";
export type { VipAllocations } from "./local/network";
export { processAlive } from "./local/process";
