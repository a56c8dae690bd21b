// Backend servers and clients for the data plane's tests with real traffic (what an Octavia pool's members and its users are): HTTP and TCP servers on loopback that say who answered, and a client that counts.
import { createServer as createHttpServer, request, type IncomingHttpHeaders, type Server } from "node:http";
import { request as httpsRequest } from "node:https";
import { connect, createServer as createTcpServer, type Server as TcpServer } from "node:net";

export interface HttpBackend {
  name: string;
  port: number;
  /** GET /health answers 200 while true, 500 otherwise (a health monitor's view). */
  healthy: boolean;
  close(): Promise<void>;
}

const listen = (s: Server | TcpServer, host = "127.0.0.1") =>
  new Promise<number>((ok, fail) => {
    s.once("error", fail);
    s.listen(0, host, () => ok((s.address() as { port: number }).port));
  });

const closeServer = (s: Server | TcpServer) =>
  new Promise<void>((ok) => {
    (s as Server).closeAllConnections?.();
    s.close(() => ok());
  });

/**
 * An HTTP member on 127.0.0.1: every path answers its name; /health answers as `healthy` says;
 * /slow answers after 800 ms (a request under way while the configuration changes).
 */
export async function startHttpBackend(name: string): Promise<HttpBackend> {
  const backend = { name, port: 0, healthy: true } as HttpBackend;
  const server = createHttpServer((req, res) => {
    if (req.url === "/health") {
      res.statusCode = backend.healthy ? 200 : 500;
      res.end(backend.healthy ? "ok" : "sick");
    } else if (req.url === "/slow") {
      setTimeout(() => res.end(name), 800);
    } else {
      res.end(name);
    }
  });
  backend.port = await listen(server);
  backend.close = () => closeServer(server);
  return backend;
}

/** A TCP member: answers every chunk with `<name>:` and the chunk. */
export async function startTcpBackend(name: string): Promise<{ name: string; port: number; close(): Promise<void> }> {
  const server = createTcpServer((socket) => {
    socket.on("data", (d) => socket.write(Buffer.concat([Buffer.from(`${name}:`), d])));
    socket.on("error", () => undefined);
  });
  const port = await listen(server);
  return { name, port, close: () => closeServer(server) };
}

export interface HttpAnswer {
  status: number;
  body: string;
  headers: IncomingHttpHeaders;
}

export interface GetOptions {
  headers?: Record<string, string>;
  /** The client's source address (SOURCE_IP persistence). */
  localAddress?: string;
  /** HTTPS: the CA to trust and the name to ask for (SNI); answers the server certificate's SHA-256 fingerprint too. */
  tls?: { ca: string; servername: string };
}

/** One GET on a new connection. */
export function get(host: string, port: number, path = "/", opts: GetOptions = {}): Promise<HttpAnswer & { fingerprint?: string }> {
  return new Promise((ok, fail) => {
    const base = { host, port, path, headers: opts.headers, agent: false as const, localAddress: opts.localAddress, timeout: 5000 };
    const req = opts.tls ? httpsRequest({ ...base, ca: opts.tls.ca, servername: opts.tls.servername }) : request(base);
    req.on("response", (res) => {
      let body = "";
      const fingerprint = opts.tls ? (res.socket as import("node:tls").TLSSocket).getPeerCertificate().fingerprint256 : undefined;
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => ok({ status: res.statusCode!, body, headers: res.headers, ...(fingerprint ? { fingerprint } : {}) }));
    });
    req.on("timeout", () => req.destroy(new Error(`GET http://${host}:${port}${path} timed out`)));
    req.on("error", fail);
    req.end();
  });
}

/** `n` GETs one after the other: how many each answer body got (statuses other than 200 count as "<status>"). */
export async function tally(host: string, port: number, n: number, path = "/", opts: GetOptions = {}): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const r = await get(host, port, path, opts);
    const key = r.status === 200 ? r.body : String(r.status);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** Sends `data` over TCP and answers the first reply. */
export function tcpExchange(host: string, port: number, data: string): Promise<string> {
  return new Promise((ok, fail) => {
    const c = connect(port, host, () => c.write(data));
    c.setTimeout(5000, () => c.destroy(new Error("TCP exchange timed out")));
    c.once("data", (d) => {
      c.end();
      ok(d.toString());
    });
    c.once("error", fail);
  });
}

/** Whether a TCP connection to host:port is refused (nothing listens). */
export function refused(host: string, port: number): Promise<boolean> {
  return new Promise((ok) => {
    const c = connect(port, host);
    c.once("connect", () => {
      c.destroy();
      ok(false);
    });
    c.once("error", () => ok(true));
  });
}

/** Polls `fn` until it answers something truthy (or `timeoutMs` passes: fails with `what`). */
export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 15_000, everyMs = 100): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as T;
    } catch (e) {
      last = e;
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
