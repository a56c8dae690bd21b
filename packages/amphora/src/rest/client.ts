// The amphora agent's REST client, as Octavia's AmphoraAPIClientBase and AmphoraAPIClient1_0 (amphorae/drivers/haproxy/rest_api_driver.py): API 1.0 over mutual TLS.
//
// One file, long as it is: the transport (TLS, retries, Octavia's error mapping) and the API 1.0 calls are
// read beside Octavia's two client classes, which share one file too; each call is a line or two over request().
import { Agent, request as httpsRequest } from "node:https";
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import { checkServerIdentity, type PeerCertificate } from "node:tls";
import { DriverError, type Amphora, type Logger } from "@ottava/core";

/** The API the client speaks (the agent's api_server.VERSION). */
export const API_VERSION = "1.0";
/** Octavia's User-Agent, word for word (its constants.API_VERSION is 0.5). */
export const OCTAVIA_API_CLIENT = "Octavia HaProxy Rest Client/0.5 (https://wiki.openstack.org/wiki/Octavia)";
/** The agent's answer bodies kept at most (a GET of a large HAProxy configuration fits). */
const MAX_BODY = 16 * 1024 * 1024;
/** The agent's message and details quoted in an error at most (an `haproxy -c` output can be long). */
const MAX_DETAILS = 2000;

/** The client's side of the mutual TLS: the CA the agents' certificates are checked against, and Ottava's certificate and key. Secret: never log it. */
export interface AgentTls {
  /** [haproxy_amphora] server_ca: PEM. */
  ca: string;
  /** [haproxy_amphora] client_cert: the certificate (and any chain) and its private key, PEM, in one text as Octavia's client.pem. */
  clientPem: string;
}

/** How one call retries: attempts, seconds between them. */
export interface RetryPolicy {
  maxRetries: number;
  retryInterval: number;
}

/** Octavia's timeout_dict: the settings of one call, where they differ from the client's. Seconds. */
export interface TimeoutDict {
  reqConnTimeout?: number;
  reqReadTimeout?: number;
  connMaxRetries?: number;
  connRetryInterval?: number;
}

export interface AmphoraApiClientOptions {
  /** [haproxy_amphora] bind_port. */
  port: number;
  /** Resolved on the first call (issuing Ottava's client certificate may take a moment); a failure is tried again on the next call. */
  tls: AgentTls | (() => Promise<AgentTls>);
  /** [haproxy_amphora] rest_request_conn_timeout, rest_request_read_timeout: seconds. */
  connTimeout: number;
  readTimeout: number;
  /** Calls to live amphorae: active_connection_max_retries, active_connection_retry_interval. */
  retries: RetryPolicy;
  /** [haproxy_amphora] lb_network_interface: the scope of IPv6 link-local addresses. */
  lbNetworkInterface?: string;
  log?: Logger;
}

/** What the client needs of an amphora: its id (the name its certificate must carry) and its management address. */
export type AgentTarget = Pick<Amphora, "id" | "lb_network_ip">;

export interface AgentResponse {
  status: number;
  headers: IncomingMessage["headers"];
  body: Buffer;
  /** The body as JSON, or undefined when it is not JSON. */
  json(): unknown;
}

/**
 * The agent answered a status Octavia's check_exception maps to an exception (400 InvalidRequest,
 * 401, 403, 404 NotFound, 405, 409 Conflict, 500, 503). Its name stays DriverError, as the flows see it.
 */
export class AmphoraApiError extends DriverError {
  constructor(
    readonly amphoraId: string,
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly kind: string,
    details: string,
  ) {
    super(`Amphora ${amphoraId}: ${method} ${path} answered ${status} ${kind}${details ? `: ${details}` : ""}`);
  }
}

/** Octavia's TimeOutException: every attempt of a call failed to reach the agent. */
export class AmphoraUnreachable extends DriverError {
  constructor(
    readonly amphoraId: string,
    message: string,
  ) {
    super(message);
  }
}

/** Octavia's AmpConnectionRetry: one attempt did not reach the agent and the caller retries itself (the flows' wait for a booting amphora). */
export class AmpConnectionRetry extends DriverError {
  constructor(
    readonly amphoraId: string,
    message: string,
  ) {
    super(message);
  }
}

/** An attempt that did not reach the agent (Octavia: requests.ConnectionError, requests.Timeout, SSL errors among them): retried. */
class ConnectionFailure extends Error {}

/** Octavia's check_exception: the statuses that raise, by the name of Octavia's exception. */
const RAISED: Record<number, string> = {
  400: "InvalidRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "InvalidRequest",
  409: "Conflict",
  500: "InternalServerError",
  503: "ServiceUnavailable",
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** fe80::/10 (Octavia's utils.is_ipv6_lla). */
function isIpv6LinkLocal(ip: string): boolean {
  if (isIP(ip) !== 6) return false;
  const first = parseInt(ip.split(":")[0] || "0", 16);
  return (first & 0xffc0) === 0xfe80;
}

/** Splits a PEM holding certificates and a private key (Octavia's client.pem) into the two. */
export function splitPem(pem: string): { cert: string; key: string } {
  const blocks = pem.match(/-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/g) ?? [];
  const cert = blocks.filter((b) => b.startsWith("-----BEGIN CERTIFICATE-----")).join("\n");
  const key = blocks.find((b) => /^-----BEGIN (?:[A-Z0-9]+ )?PRIVATE KEY-----/.test(b));
  if (!cert || !key)
    throw new DriverError("the amphora agent client certificate (OTTAVA_CLIENT_CERT) must hold a PEM certificate and its private key");
  return { cert: `${cert}\n`, key: `${key}\n` };
}

/** The agent's message and details of an error answer, for an error message (never a request body: those hold keys). */
function detailsOf(r: AgentResponse): string {
  const j = r.json() as { message?: unknown; details?: unknown; error?: unknown } | undefined;
  const text =
    j && typeof j === "object"
      ? [j.message, j.details, j.error].filter((v) => typeof v === "string" && v).join(": ")
      : r.body.toString("utf8");
  return text.length > MAX_DETAILS ? `${text.slice(0, MAX_DETAILS)}...` : text;
}

export class AmphoraApiClient {
  private agent: Promise<Agent> | undefined;

  constructor(private readonly opts: AmphoraApiClientOptions) {}

  /** The address to connect to: a link-local IPv6 address with its interface (Octavia's lb_network_interface). */
  private hostOf(ip: string): string {
    return isIpv6LinkLocal(ip) ? `${ip}%${this.opts.lbNetworkInterface ?? "o-hm0"}` : ip;
  }

  /** Octavia's _base_url: https://<ip>:<port>/[<version>/], an IPv6 address in brackets, a link-local one with its interface. */
  baseUrl(ip: string, apiVersion: string | null = API_VERSION): string {
    const host = isIP(ip) === 6 ? `[${this.hostOf(ip)}]` : ip;
    return `https://${host}:${this.opts.port}/${apiVersion ? `${apiVersion}/` : ""}`;
  }

  private tlsAgent(): Promise<Agent> {
    this.agent ??= (async () => {
      const tls = typeof this.opts.tls === "function" ? await this.opts.tls() : this.opts.tls;
      const { cert, key } = splitPem(tls.clientPem);
      // requests' Session keeps connections, but the agent (gunicorn, sync worker) closes each one.
      return new Agent({ keepAlive: false, ca: tls.ca, cert, key, minVersion: "TLSv1.2" });
    })().catch((e) => {
      this.agent = undefined;
      throw e;
    });
    return this.agent;
  }

  /** Closes the client's connections. */
  close(): void {
    void this.agent?.then(
      (a) => a.destroy(),
      () => undefined,
    );
    this.agent = undefined;
  }

  /** One attempt: answers the response, or throws ConnectionFailure when the agent could not be reached (or did not answer in time). */
  private async attempt(
    amp: AgentTarget,
    method: string,
    path: string,
    body: Buffer | undefined,
    headers: Record<string, string>,
    connMs: number,
    readMs: number,
  ): Promise<AgentResponse> {
    const agent = await this.tlsAgent();
    return new Promise<AgentResponse>((resolve, reject) => {
      let settled = false;
      const fail = (e: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(connectTimer);
        req.destroy();
        reject(e);
      };
      const req = httpsRequest({
        method,
        host: this.hostOf(amp.lb_network_ip!),
        port: this.opts.port,
        path,
        agent,
        headers: { ...headers, ...(body ? { "Content-Length": String(body.length) } : { "Content-Length": "0" }) },
        // Octavia's CustomHostNameCheckingAdapter: the certificate must name the amphora, whatever address it answers on.
        checkServerIdentity: (_host: string, cert: PeerCertificate) => checkServerIdentity(amp.id, cert),
      });
      // The connect timeout covers TCP and the TLS handshake; then the read timeout is the longest silence.
      const connectTimer = setTimeout(() => fail(new ConnectionFailure(`connect timeout (${connMs / 1000} s)`)), connMs);
      const connected = () => {
        clearTimeout(connectTimer);
        req.setTimeout(readMs, () => fail(new ConnectionFailure(`read timeout (${readMs / 1000} s)`)));
      };
      req.on("socket", (socket) => {
        if (req.reusedSocket) connected();
        else socket.once("secureConnect", connected);
      });
      req.on("error", (e) => fail(new ConnectionFailure(e.message)));
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY) fail(new DriverError(`Amphora ${amp.id}: ${method} ${path} answered more than ${MAX_BODY} bytes`));
          else chunks.push(c);
        });
        res.on("error", (e) => fail(new ConnectionFailure(e.message)));
        res.on("end", () => {
          if (settled) return;
          settled = true;
          clearTimeout(connectTimer);
          req.setTimeout(0);
          const buf = Buffer.concat(chunks);
          let parsed: { v: unknown } | undefined;
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: buf,
            json() {
              if (!parsed) {
                try {
                  parsed = { v: JSON.parse(buf.toString("utf8")) };
                } catch {
                  parsed = { v: undefined };
                }
              }
              return parsed.v;
            },
          });
        });
      });
      req.end(body);
    });
  }

  /**
   * Octavia's AmphoraAPIClientBase.request: up to connMaxRetries attempts, connRetryInterval seconds
   * apart, while the agent cannot be reached or answers a 404 that is not its own (not JSON: the agent
   * is not up yet; "No suitable network interface found": its network is not). A call gives up sooner
   * when another wait would take it past connMaxRetries x connRetryInterval seconds, so that a call
   * whose attempts each hit a timeout stays within its task's time. With `raiseRetryException` the
   * first failed attempt throws AmpConnectionRetry (the caller waits and asks again).
   */
  async request(
    method: "GET" | "PUT" | "POST" | "DELETE",
    amp: AgentTarget,
    path: string,
    opts: {
      body?: string | Buffer;
      json?: unknown;
      timeoutDict?: TimeoutDict;
      retry404?: boolean;
      raiseRetryException?: boolean;
      apiVersion?: string | null;
    } = {},
  ): Promise<AgentResponse> {
    if (!amp.lb_network_ip) throw new DriverError(`Amphora ${amp.id} has no management address (lb_network_ip)`);
    const t = opts.timeoutDict ?? {};
    const connMs = (t.reqConnTimeout ?? this.opts.connTimeout) * 1000;
    const readMs = (t.reqReadTimeout ?? this.opts.readTimeout) * 1000;
    const maxRetries = t.connMaxRetries ?? this.opts.retries.maxRetries;
    const intervalMs = (t.connRetryInterval ?? this.opts.retries.retryInterval) * 1000;
    const apiVersion = opts.apiVersion === undefined ? API_VERSION : opts.apiVersion;
    const urlPath = `/${apiVersion ? `${apiVersion}/` : ""}${path}`;
    const where = `${this.baseUrl(amp.lb_network_ip, null).slice("https://".length, -1)}`;
    const headers: Record<string, string> = { "User-Agent": OCTAVIA_API_CLIENT, Accept: "*/*" };
    let body: Buffer | undefined;
    if (opts.json !== undefined) {
      body = Buffer.from(JSON.stringify(opts.json), "utf8");
      headers["Content-Type"] = "application/json";
    } else if (opts.body !== undefined) {
      body = typeof opts.body === "string" ? Buffer.from(opts.body, "utf8") : opts.body;
    }
    const started = Date.now();
    let last = "no attempt made";
    let attempts = 0;
    for (let i = 0; i < Math.max(1, maxRetries); i++) {
      attempts++;
      try {
        const r = await this.attempt(amp, method, urlPath, body, headers, connMs, readMs);
        if (r.status === 404) {
          if (opts.retry404 === false) throw new AmphoraApiError(amp.id, method, urlPath, 404, RAISED[404]!, detailsOf(r));
          if (!String(r.headers["content-type"] ?? "").includes("application/json"))
            throw new ConnectionFailure("Amphora agent not ready (404 without JSON)");
          const details = (r.json() as { details?: unknown } | undefined)?.details;
          if (typeof details === "string" && details.includes("No suitable network interface found")) {
            throw new ConnectionFailure("Amphora network interface not found");
          }
        }
        return r;
      } catch (e) {
        if (!(e instanceof ConnectionFailure)) throw e;
        last = e.message;
        this.opts.log?.warn("Could not connect to instance. Retrying.", {
          amphoraId: amp.id,
          method,
          path: urlPath,
          attempt: attempts,
          error: e.message,
        });
        if (opts.raiseRetryException)
          throw new AmpConnectionRetry(amp.id, `Amphora ${amp.id} at ${where} could not be reached: ${e.message}`);
        const overBudget = intervalMs > 0 && Date.now() - started + intervalMs > maxRetries * intervalMs;
        if (i + 1 >= maxRetries || overBudget) break;
        await sleep(intervalMs);
      }
    }
    this.opts.log?.error("Connection retries exhausted. The amphora is unavailable.", { amphoraId: amp.id, attempts, error: last });
    throw new AmphoraUnreachable(
      amp.id,
      `Amphora ${amp.id} at ${where}: contacting the amphora timed out (${method} ${urlPath}, ${attempts} attempt${attempts === 1 ? "" : "s"}; last: ${last})`,
    );
  }

  /** Octavia's check_exception: throws AmphoraApiError for a status it maps, unless `ignore` lists it. */
  check(amp: AgentTarget, method: string, path: string, r: AgentResponse, ignore: readonly number[] = []): AgentResponse {
    const kind = RAISED[r.status];
    if (kind && !ignore.includes(r.status)) throw new AmphoraApiError(amp.id, method, path, r.status, kind, detailsOf(r));
    return r;
  }

  private async call(
    method: "GET" | "PUT" | "POST" | "DELETE",
    amp: AgentTarget,
    path: string,
    opts: Parameters<AmphoraApiClient["request"]>[3] & { ignore?: readonly number[] } = {},
  ) {
    return this.check(amp, method, `/${API_VERSION}/${path}`, await this.request(method, amp, path, opts), opts.ignore);
  }

  // ---- AmphoraAPIClientBase ------------------------------------------------------------------------

  /** GET / (version discovery): the agent's {"api_version": "1.0"}; a 404 is NotFound, not retried. */
  async getApiVersion(
    amp: AgentTarget,
    opts: { timeoutDict?: TimeoutDict; raiseRetryException?: boolean } = {},
  ): Promise<{ api_version: string }> {
    const r = await this.request("GET", amp, "", { ...opts, retry404: false, apiVersion: null });
    return this.check(amp, "GET", "/", r).json() as { api_version: string };
  }

  // ---- AmphoraAPIClient1_0 -------------------------------------------------------------------------

  /** PUT loadbalancer/{amphora_id}/{lb_id}/haproxy: the agent checks it (`haproxy -c`) and installs it. */
  async uploadConfig(amp: AgentTarget, loadbalancerId: string, config: string, timeoutDict?: TimeoutDict): Promise<void> {
    await this.call("PUT", amp, `loadbalancer/${amp.id}/${loadbalancerId}/haproxy`, { body: config, timeoutDict });
  }

  /** GET loadbalancer/{lb_id}/haproxy: the configuration the agent holds. */
  async getConfig(amp: AgentTarget, loadbalancerId: string): Promise<string> {
    return (await this.call("GET", amp, `loadbalancer/${loadbalancerId}/haproxy`)).body.toString("utf8");
  }

  /** GET listeners/{listener_id}. */
  async getListenerStatus(amp: AgentTarget, listenerId: string): Promise<unknown> {
    return (await this.call("GET", amp, `listeners/${listenerId}`)).json();
  }

  /** PUT loadbalancer/{object_id}/{start|stop|reload}: an LB's HAProxy or a UDP/SCTP listener's keepalived. */
  private async action(action: "start" | "stop" | "reload", amp: AgentTarget, objectId: string, timeoutDict?: TimeoutDict): Promise<void> {
    await this.call("PUT", amp, `loadbalancer/${objectId}/${action}`, { timeoutDict });
  }
  startListener = (amp: AgentTarget, objectId: string, timeoutDict?: TimeoutDict) => this.action("start", amp, objectId, timeoutDict);
  stopListener = (amp: AgentTarget, objectId: string, timeoutDict?: TimeoutDict) => this.action("stop", amp, objectId, timeoutDict);
  reloadListener = (amp: AgentTarget, objectId: string, timeoutDict?: TimeoutDict) => this.action("reload", amp, objectId, timeoutDict);

  /** PUT loadbalancer/{lb_id}/certificates/{filename}: a PEM for HAProxy (secret: never logged). */
  async uploadCertPem(amp: AgentTarget, loadbalancerId: string, filename: string, pem: string | Buffer): Promise<void> {
    await this.call("PUT", amp, `loadbalancer/${loadbalancerId}/certificates/${filename}`, { body: pem });
  }

  /** GET loadbalancer/{lb_id}/certificates/{filename}: the file's MD5, or null for a status in `ignore` (404: no such file). */
  async getCertMd5sum(amp: AgentTarget, loadbalancerId: string, filename: string, ignore: readonly number[] = []): Promise<string | null> {
    const r = await this.call("GET", amp, `loadbalancer/${loadbalancerId}/certificates/${filename}`, { ignore });
    if (ignore.includes(r.status)) return null;
    const md5 = (r.json() as { md5sum?: unknown } | undefined)?.md5sum;
    return typeof md5 === "string" ? md5 : null;
  }

  /** DELETE loadbalancer/{lb_id}/certificates/{filename} (a 404 is fine). */
  async deleteCertPem(amp: AgentTarget, loadbalancerId: string, filename: string): Promise<void> {
    await this.call("DELETE", amp, `loadbalancer/${loadbalancerId}/certificates/${filename}`, { ignore: [404] });
  }

  /** PUT certificate: the agent's own server certificate and key (Octavia's update_cert_for_rotation). Secret: never logged. */
  async updateCertForRotation(amp: AgentTarget, pem: string): Promise<void> {
    await this.call("PUT", amp, "certificate", { body: pem });
  }

  /** DELETE listeners/{object_id}: an LB's HAProxy (by the LB's id) or a UDP/SCTP listener (by its id); a 404 is fine. */
  async deleteListener(amp: AgentTarget, objectId: string): Promise<void> {
    await this.call("DELETE", amp, `listeners/${objectId}`, { ignore: [404] });
  }

  /** GET info: hostname, haproxy_version, api_version (and the LVS packages' versions). */
  async getInfo(
    amp: AgentTarget,
    opts: { timeoutDict?: TimeoutDict; raiseRetryException?: boolean } = {},
  ): Promise<Record<string, unknown>> {
    return (await this.call("GET", amp, "info", opts)).json() as Record<string, unknown>;
  }

  /** GET details: info, networks, load, listeners, ... */
  async getDetails(amp: AgentTarget): Promise<Record<string, unknown>> {
    return (await this.call("GET", amp, "details")).json() as Record<string, unknown>;
  }

  /** GET listeners: every listener the agent runs, [{status, uuid, type}]. */
  async getAllListeners(amp: AgentTarget): Promise<{ status: string; uuid: string; type: string }[]> {
    return (await this.call("GET", amp, "listeners")).json() as { status: string; uuid: string; type: string }[];
  }

  /** POST plug/network: a member network port. */
  async plugNetwork(amp: AgentTarget, port: Record<string, unknown>): Promise<void> {
    await this.call("POST", amp, "plug/network", { json: port });
  }

  /** POST plug/vip/{vip}: the VIP's interface (net_info: subnet_cidr, gateway, mac_address, vrrp_ip, mtu, host_routes, additional_vips). */
  async plugVip(amp: AgentTarget, vip: string, netInfo: Record<string, unknown>): Promise<void> {
    await this.call("POST", amp, `plug/vip/${vip}`, { json: netInfo });
  }

  /** PUT vrrp/upload: keepalived.conf. */
  async uploadVrrpConfig(amp: AgentTarget, config: string): Promise<void> {
    await this.call("PUT", amp, "vrrp/upload", { body: config });
  }

  private async vrrpAction(action: "start" | "stop" | "reload", amp: AgentTarget, timeoutDict?: TimeoutDict): Promise<void> {
    await this.call("PUT", amp, `vrrp/${action}`, { timeoutDict });
  }
  startVrrp = (amp: AgentTarget, timeoutDict?: TimeoutDict) => this.vrrpAction("start", amp, timeoutDict);
  stopVrrp = (amp: AgentTarget, timeoutDict?: TimeoutDict) => this.vrrpAction("stop", amp, timeoutDict);
  reloadVrrp = (amp: AgentTarget, timeoutDict?: TimeoutDict) => this.vrrpAction("reload", amp, timeoutDict);

  /** GET interface/{ip}: {"interface": name} of the interface holding the address. */
  async getInterface(amp: AgentTarget, ipAddr: string, timeoutDict?: TimeoutDict): Promise<{ interface?: string }> {
    return (await this.call("GET", amp, `interface/${ipAddr}`, { timeoutDict })).json() as { interface?: string };
  }

  /** PUT listeners/{amphora_id}/{listener_id}/udp_listener: a UDP or SCTP listener's keepalived (LVS) configuration. */
  async uploadUdpConfig(amp: AgentTarget, listenerId: string, config: string, timeoutDict?: TimeoutDict): Promise<void> {
    await this.call("PUT", amp, `listeners/${amp.id}/${listenerId}/udp_listener`, { body: config, timeoutDict });
  }

  /** PUT config: the whole amphora-agent.conf (secret: it holds the heartbeat key). */
  async updateAgentConfig(amp: AgentTarget, agentConfig: string, timeoutDict?: TimeoutDict): Promise<void> {
    await this.call("PUT", amp, "config", { body: agentConfig, timeoutDict });
  }
}
