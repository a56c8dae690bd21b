// The REST amphora driver's client (Octavia's AmphoraAPIClient1_0) against local HTTPS servers with mutual TLS: every API 1.0 call's method, path and body, the certificates both ways, and the retries and timeouts.
import { createServer as createHttpsServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLocalCa, LocalCertGenerator } from "@ottava/controller";
import type { CaMaterial, Logger } from "@ottava/core";
import {
  AmphoraApiClient,
  AmphoraApiError,
  AmphoraUnreachable,
  AmpConnectionRetry,
  OCTAVIA_API_CLIENT,
  splitPem,
  type AgentTls,
} from "../src/rest/client";

const AMP = "6f1e2d3c-4b5a-4978-8a69-5b4c3d2e1f00";
const OTHER = "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d";

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
  clientCn: string | undefined;
}
type Handler = (req: IncomingMessage, body: string, res: ServerResponse, n: number) => void;

let ca: CaMaterial;
let tls: AgentTls;
let serverPem: { cert: string; key: string };
const servers: (Server | TcpServer)[] = [];
const sockets = new Set<Socket>();

/** An agent stand-in: HTTPS with a certificate for `cn`, client certificates required from `clientCa`. */
async function agentServer(handler: Handler, opts: { cert?: { cert: string; key: string }; clientCa?: string } = {}) {
  const seen: Seen[] = [];
  let tlsErrors = 0;
  const { cert, key } = opts.cert ?? serverPem;
  const server = createHttpsServer(
    { cert, key, ca: opts.clientCa ?? ca.certificate, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body, clientCn: [peer?.subject?.CN].flat()[0] });
        handler(req, body, res, seen.length);
      });
    },
  );
  server.on("tlsClientError", () => tlsErrors++);
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { port: (server.address() as AddressInfo).port, seen, tlsErrors: () => tlsErrors };
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(body));
}

function captureLog() {
  const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
  const log: Logger = {
    debug: (message, fields) => void lines.push({ level: "debug", message, fields }),
    info: (message, fields) => void lines.push({ level: "info", message, fields }),
    warn: (message, fields) => void lines.push({ level: "warn", message, fields }),
    error: (message, fields) => void lines.push({ level: "error", message, fields }),
    child: () => log,
  };
  return { log, lines };
}

const clients: AmphoraApiClient[] = [];
function client(port: number, over: Partial<ConstructorParameters<typeof AmphoraApiClient>[0]> = {}) {
  // Timeouts well above any answer of the local stand-ins, even on a loaded machine; the timeout tests set their own.
  const c = new AmphoraApiClient({ port, tls, connTimeout: 5, readTimeout: 5, retries: { maxRetries: 3, retryInterval: 0.05 }, ...over });
  clients.push(c);
  return c;
}
const amp = { id: AMP, lb_network_ip: "127.0.0.1" };

beforeAll(async () => {
  ca = await createLocalCa({ commonName: "Ottava test CA" });
  const gen = new LocalCertGenerator(() => ca);
  serverPem = splitPem((await gen.generateServerPem(AMP, 3600)).pem);
  tls = { ca: ca.certificate, clientPem: (await gen.generateServerPem("ottava-controller", 3600)).pem };
});

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  for (const s of servers) if ("closeAllConnections" in s) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

describe("AmphoraApiClient (API 1.0)", () => {
  it("sends every call as AmphoraAPIClient1_0 does: method, path, body, User-Agent, over mutual TLS", async () => {
    const agent = await agentServer((req, _body, res) => {
      if (req.url === "/1.0/info") return json(res, 200, { hostname: "amp", haproxy_version: "2.6.12", api_version: "1.0" });
      if (req.url === "/") return json(res, 200, { api_version: "1.0" });
      if (req.url?.startsWith("/1.0/loadbalancer/lb1/certificates/") && req.method === "GET") return json(res, 200, { md5sum: "abc" });
      if (req.url === "/1.0/listeners" && req.method === "GET") return json(res, 200, [{ status: "ACTIVE", uuid: "l1", type: "HTTP" }]);
      if (req.url === "/1.0/interface/10.0.0.5") return json(res, 200, { interface: "eth1" });
      json(res, 202, { message: "OK" });
    });
    const c = client(agent.port);
    expect(await c.getApiVersion(amp)).toEqual({ api_version: "1.0" });
    expect(await c.getInfo(amp)).toMatchObject({ api_version: "1.0", haproxy_version: "2.6.12" });
    await c.getDetails(amp);
    await c.uploadConfig(amp, "lb1", "global\n    daemon\n");
    await c.reloadListener(amp, "lb1");
    await c.startListener(amp, "lb1");
    await c.stopListener(amp, "lb1");
    await c.uploadCertPem(amp, "lb1", "c1.pem", "PEM-1");
    expect(await c.getCertMd5sum(amp, "lb1", "c1.pem", [404])).toBe("abc");
    await c.deleteCertPem(amp, "lb1", "c1.pem");
    await c.updateCertForRotation(amp, "SERVER-PEM");
    await c.deleteListener(amp, "lb1");
    expect(await c.getAllListeners(amp)).toEqual([{ status: "ACTIVE", uuid: "l1", type: "HTTP" }]);
    await c.plugVip(amp, "203.0.113.10", { subnet_cidr: "203.0.113.0/24", gateway: "203.0.113.1", mac_address: "fa:16:3e:00:00:01" });
    await c.plugNetwork(amp, { mac_address: "fa:16:3e:00:00:02", fixed_ips: [] });
    await c.uploadVrrpConfig(amp, "vrrp_instance x {}\n");
    await c.startVrrp(amp);
    await c.reloadVrrp(amp);
    await c.stopVrrp(amp);
    expect(await c.getInterface(amp, "10.0.0.5")).toEqual({ interface: "eth1" });
    await c.uploadUdpConfig(amp, "l2", "virtual_server {}\n");
    await c.updateAgentConfig(amp, "[DEFAULT]\ndebug = False\n");

    expect(agent.seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      "GET /",
      "GET /1.0/info",
      "GET /1.0/details",
      `PUT /1.0/loadbalancer/${AMP}/lb1/haproxy`,
      "PUT /1.0/loadbalancer/lb1/reload",
      "PUT /1.0/loadbalancer/lb1/start",
      "PUT /1.0/loadbalancer/lb1/stop",
      "PUT /1.0/loadbalancer/lb1/certificates/c1.pem",
      "GET /1.0/loadbalancer/lb1/certificates/c1.pem",
      "DELETE /1.0/loadbalancer/lb1/certificates/c1.pem",
      "PUT /1.0/certificate",
      "DELETE /1.0/listeners/lb1",
      "GET /1.0/listeners",
      "POST /1.0/plug/vip/203.0.113.10",
      "POST /1.0/plug/network",
      "PUT /1.0/vrrp/upload",
      "PUT /1.0/vrrp/start",
      "PUT /1.0/vrrp/reload",
      "PUT /1.0/vrrp/stop",
      "GET /1.0/interface/10.0.0.5",
      `PUT /1.0/listeners/${AMP}/l2/udp_listener`,
      "PUT /1.0/config",
    ]);
    for (const s of agent.seen) {
      expect(s.headers["user-agent"]).toBe(OCTAVIA_API_CLIENT);
      expect(s.clientCn).toBe("ottava-controller");
    }
    const byUrl = (m: string, u: string) => agent.seen.find((s) => s.method === m && s.url === u)!;
    expect(byUrl("PUT", `/1.0/loadbalancer/${AMP}/lb1/haproxy`).body).toBe("global\n    daemon\n");
    expect(byUrl("PUT", "/1.0/loadbalancer/lb1/certificates/c1.pem").body).toBe("PEM-1");
    expect(byUrl("PUT", "/1.0/certificate").body).toBe("SERVER-PEM");
    expect(byUrl("PUT", "/1.0/config").body).toBe("[DEFAULT]\ndebug = False\n");
    expect(byUrl("PUT", "/1.0/loadbalancer/lb1/reload").headers["content-length"]).toBe("0");
    const plug = byUrl("POST", "/1.0/plug/vip/203.0.113.10");
    expect(plug.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(plug.body)).toEqual({ subnet_cidr: "203.0.113.0/24", gateway: "203.0.113.1", mac_address: "fa:16:3e:00:00:01" });
    // A raw text body carries no JSON content type (requests' data=).
    expect(byUrl("PUT", "/1.0/vrrp/upload").headers["content-type"]).toBeUndefined();
  });

  it("builds Octavia's base URLs: IPv6 in brackets, link-local with the lb_network_interface", () => {
    const c = client(9443, { lbNetworkInterface: "o-hm0" });
    expect(c.baseUrl("192.0.2.7")).toBe("https://192.0.2.7:9443/1.0/");
    expect(c.baseUrl("2001:db8::7")).toBe("https://[2001:db8::7]:9443/1.0/");
    expect(c.baseUrl("fe80::f816:3eff:fe00:1")).toBe("https://[fe80::f816:3eff:fe00:1%o-hm0]:9443/1.0/");
    expect(c.baseUrl("192.0.2.7", null)).toBe("https://192.0.2.7:9443/");
  });

  it("refuses an agent whose certificate does not name the amphora (Octavia checks the hostname against the amphora id)", async () => {
    const agent = await agentServer((_req, _b, res) => json(res, 200, { api_version: "1.0" }));
    // Attempts of a TLS handshake take real time: the interval leaves room for one (the retry budget is 2 x 0.5 s).
    const c = client(agent.port, { retries: { maxRetries: 2, retryInterval: 0.5 } });
    const err = await c.getInfo({ id: OTHER, lb_network_ip: "127.0.0.1" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AmphoraUnreachable);
    expect((err as Error).name).toBe("DriverError");
    expect((err as Error).message).toMatch(
      new RegExp(`Amphora ${OTHER} at 127.0.0.1:${agent.port}: contacting the amphora timed out .*2 attempts.*${OTHER}`),
    );
    expect(agent.seen).toHaveLength(0);
  });

  it("refuses an agent certificate signed by another CA, and the agent refuses a client certificate of another CA", async () => {
    const other = await createLocalCa({ commonName: "Someone else's CA" });
    const gen = new LocalCertGenerator(() => other);
    const foreign = splitPem((await gen.generateServerPem(AMP, 3600)).pem);
    const impostor = await agentServer((_req, _b, res) => json(res, 200, {}), { cert: foreign });
    await expect(client(impostor.port, { retries: { maxRetries: 1, retryInterval: 0.01 } }).getInfo(amp)).rejects.toThrow(
      /self-signed certificate|unable to verify|unable to get local issuer/,
    );
    expect(impostor.seen).toHaveLength(0);

    const strict = await agentServer((_req, _b, res) => json(res, 200, {}), { clientCa: other.certificate });
    await expect(client(strict.port, { retries: { maxRetries: 2, retryInterval: 0.01 } }).getInfo(amp)).rejects.toBeInstanceOf(
      AmphoraUnreachable,
    );
    expect(strict.seen).toHaveLength(0);
    expect(strict.tlsErrors()).toBeGreaterThanOrEqual(1);
  });

  it("retries a refused connection active_connection_max_retries times, active_connection_retry_interval apart, then fails as DriverError", async () => {
    const tcp = createTcpServer();
    await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
    const port = (tcp.address() as AddressInfo).port;
    await new Promise((r) => tcp.close(r)); // nothing listens there now
    const { log, lines } = captureLog();
    const c = client(port, { retries: { maxRetries: 4, retryInterval: 0.25 }, log });
    const t0 = Date.now();
    const err = await c.reloadListener(amp, "lb1").catch((e: unknown) => e);
    const ms = Date.now() - t0;
    expect(err).toBeInstanceOf(AmphoraUnreachable);
    expect((err as Error).message).toMatch(/4 attempts; last: .*ECONNREFUSED/);
    expect(lines.filter((l) => l.message === "Could not connect to instance. Retrying.")).toHaveLength(4);
    expect(lines.filter((l) => l.level === "error")).toHaveLength(1);
    expect(ms).toBeGreaterThanOrEqual(730); // three waits of 250 ms between four attempts
    expect(ms).toBeLessThan(5000); // not Octavia's 5 s between attempts
  });

  it("with raise_retry_exception fails at the first unreachable attempt, without waiting (the flow waits)", async () => {
    const tcp = createTcpServer();
    await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
    const port = (tcp.address() as AddressInfo).port;
    await new Promise((r) => tcp.close(r));
    const c = client(port, { retries: { maxRetries: 10, retryInterval: 5 } });
    const t0 = Date.now();
    const err = await c.getInfo(amp, { raiseRetryException: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AmpConnectionRetry);
    expect(Date.now() - t0).toBeLessThan(4000); // no 5 s wait
  });

  it("retries a 404 that is not the agent's (no JSON) and the agent's 'No suitable network interface found'; any other 404 is NotFound at once", async () => {
    const agent = await agentServer((req, _b, res, n) => {
      if (req.url === "/1.0/info") {
        if (n === 1) {
          res.writeHead(404, { "Content-Type": "text/html" });
          return res.end("<h1>Not Found</h1>");
        }
        if (n === 2) return json(res, 404, { message: "Error", details: "No suitable network interface found" });
        return json(res, 200, { api_version: "1.0" });
      }
      json(res, 404, { message: "Loadbalancer Not Found", details: "No loadbalancer with UUID: lb9" });
    });
    // Room for the two retries on a loaded machine: the default 3 × 0.05 s gives up once two attempts
    // (each a TLS handshake) have taken 0.15 s, which a busy 2-core machine once took.
    const c = client(agent.port, { retries: { maxRetries: 20, retryInterval: 0.05 } });
    expect(await c.getInfo(amp)).toEqual({ api_version: "1.0" });
    expect(agent.seen).toHaveLength(3);

    const err = await c.reloadListener(amp, "lb9").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AmphoraApiError);
    expect(err).toMatchObject({ name: "DriverError", status: 404, kind: "NotFound" });
    expect((err as Error).message).toBe(
      `Amphora ${AMP}: PUT /1.0/loadbalancer/lb9/reload answered 404 NotFound: Loadbalancer Not Found: No loadbalancer with UUID: lb9`,
    );
    expect(agent.seen).toHaveLength(4);
    // Version discovery does not retry a 404 either (retry_404=False).
    await expect(c.getApiVersion(amp)).rejects.toMatchObject({ status: 404 });
    expect(agent.seen).toHaveLength(5);
    // DELETE of a listener or certificate ignores the 404.
    await c.deleteListener(amp, "lb9");
    await c.deleteCertPem(amp, "lb9", "x.pem");
    expect(await c.getCertMd5sum(amp, "lb9", "x.pem", [404])).toBeNull();
  });

  it("maps the statuses Octavia's check_exception raises to DriverErrors, not retried, and never quotes a request body", async () => {
    const statuses: Record<string, [number, unknown]> = {
      "/1.0/loadbalancer/lb1/certificates/c.pem": [400, { message: "Filename has wrong format" }],
      "/1.0/plug/vip/203.0.113.10": [409, { message: "Interface already exists" }],
      "/1.0/vrrp/start": [500, { message: "Failed to start octavia-keepalived service", details: "keepalived: not found" }],
      "/1.0/config": [503, { message: "busy" }],
      "/1.0/certificate": [401, {}],
      "/1.0/listeners/l1": [405, {}],
      "/1.0/details": [403, {}],
    };
    const agent = await agentServer((req, _b, res) => {
      const [status, body] = statuses[req.url!] ?? [200, {}];
      json(res, status, body);
    });
    const c = client(agent.port);
    const secret = "-----BEGIN PRIVATE KEY-----\nTOPSECRET\n-----END PRIVATE KEY-----\n";
    const cases: [Promise<unknown>, number, string][] = [
      [c.uploadCertPem(amp, "lb1", "c.pem", secret), 400, "InvalidRequest"],
      [c.plugVip(amp, "203.0.113.10", {}), 409, "Conflict"],
      [c.startVrrp(amp), 500, "InternalServerError"],
      [c.updateAgentConfig(amp, `[health_manager]\nheartbeat_key = ${secret}`), 503, "ServiceUnavailable"],
      [c.updateCertForRotation(amp, secret), 401, "Unauthorized"],
      [c.getListenerStatus(amp, "l1"), 405, "InvalidRequest"],
      [c.getDetails(amp), 403, "Forbidden"],
    ];
    for (const [p, status, kind] of cases) {
      const err = (await p.catch((e: unknown) => e)) as AmphoraApiError;
      expect(err).toBeInstanceOf(AmphoraApiError);
      expect(err).toMatchObject({ name: "DriverError", status, kind, amphoraId: AMP });
      expect(err.message).not.toContain("TOPSECRET");
    }
    expect(agent.seen).toHaveLength(cases.length); // none retried
    const vrrp = (await c.startVrrp(amp).catch((e: unknown) => e)) as Error;
    expect(vrrp.message).toBe(
      `Amphora ${AMP}: PUT /1.0/vrrp/start answered 500 InternalServerError: Failed to start octavia-keepalived service: keepalived: not found`,
    );
  });

  it("retries an answer slower than rest_request_read_timeout", async () => {
    const agent = await agentServer((_req, _b, res, n) => {
      if (n === 1) setTimeout(() => json(res, 200, { late: true }), 600);
      else json(res, 200, { api_version: "1.0" });
    });
    const c = client(agent.port, { readTimeout: 0.2, retries: { maxRetries: 3, retryInterval: 0.2 } });
    expect(await c.getInfo(amp)).toEqual({ api_version: "1.0" });
    expect(agent.seen).toHaveLength(2);
  });

  it("gives up when another wait would pass max_retries x retry_interval, when each attempt takes its timeout", async () => {
    const agent = await agentServer(() => {
      /* never answers */
    });
    const c = client(agent.port, { readTimeout: 0.3, retries: { maxRetries: 5, retryInterval: 0.1 } });
    const t0 = Date.now();
    const err = await c.getInfo(amp).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AmphoraUnreachable);
    expect((err as Error).message).toMatch(/2 attempts; last: read timeout \(0.3 s\)/);
    expect(agent.seen).toHaveLength(2); // not 5: after the second 0.3 s attempt the 0.5 s budget is spent
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it("counts a TCP connection whose TLS handshake never comes under rest_request_conn_timeout", async () => {
    const held: Socket[] = [];
    const tcp = createTcpServer((s) => held.push(s)); // accepts, says nothing
    servers.push(tcp);
    await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
    const c = client((tcp.address() as AddressInfo).port, {
      connTimeout: 0.2,
      readTimeout: 5,
      retries: { maxRetries: 2, retryInterval: 0.3 },
    });
    const t0 = Date.now();
    const err = await c.getInfo(amp).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AmphoraUnreachable);
    expect((err as Error).message).toMatch(/2 attempts; last: connect timeout \(0.2 s\)/);
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(held.length).toBe(2);
    for (const s of held) s.destroy();
  });

  it("refuses a client certificate setting without its key", () => {
    expect(() => splitPem(tls.clientPem.replace(/-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----\n?/, ""))).toThrow(
      /OTTAVA_CLIENT_CERT/,
    );
    const { cert, key } = splitPem(tls.clientPem);
    expect(cert).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(key).toMatch(/^-----BEGIN PRIVATE KEY-----/);
  });
});
