// Test scaffolding: an in-memory stand-in of the amphora agent's API 1.0 (octavia/amphorae/backends/agent/api_server/server.py routes) over mutual TLS, recording what the REST driver asks; the real agent is driven by test/agent.e2e.test.ts.
// Like the agent, it takes a haproxy.cfg only if the real `haproxy -c` does, so every configuration a
// driver test uploads is checked.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createServer, type Server } from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { createLocalCa, LocalCertGenerator } from "@ottava/controller";
import type { CaMaterial } from "@ottava/core";
import { AmphoraApiClient, CLIENT_CERT_CN, HaproxyAmphoraLoadBalancerDriver, haproxyPeerName, noopDrivers } from "../../src";
import { haproxyCheck } from "./haproxy-check";

export interface TestPki {
  ca: CaMaterial;
  /** A certificate and key (PEM) for `cn`, signed by the CA. */
  issue(cn: string): Promise<string>;
}

export async function testPki(): Promise<TestPki> {
  const ca = await createLocalCa({ commonName: "Ottava REST driver test CA" });
  const gen = new LocalCertGenerator(() => ca);
  return { ca, issue: async (cn) => (await gen.generateServerPem(cn, 3600)).pem };
}

export interface AgentCall {
  method: string;
  path: string;
  body: string;
  clientCn: string | undefined;
}

/** Answers a call instead of the stand-in's own logic: [status, JSON body], or undefined to go on. */
export type Override = (call: AgentCall) => [number, unknown] | undefined;

export interface FakeAgent {
  port: number;
  calls: AgentCall[];
  /** Certificate files by "<lb id>/<file name>". */
  certs: Map<string, string>;
  /** HAProxy configurations by LB id. */
  haproxy: Map<string, string>;
  /** UDP/SCTP listener configurations by listener id. */
  lvs: Map<string, string>;
  vrrpConfig: string | undefined;
  agentConfig: string | undefined;
  serverPem: string | undefined;
  plugged: Map<string, Record<string, unknown>>;
  override: Override | undefined;
  close(): Promise<void>;
}

const md5 = (s: string) => createHash("md5").update(s, "utf8").digest("hex");

export async function startFakeAgent(opts: {
  pki: TestPki;
  amphoraId: string;
  host?: string;
  port?: number;
  haproxyVersion?: string;
}): Promise<FakeAgent> {
  const pem = await opts.pki.issue(opts.amphoraId);
  const sockets = new Set<Socket>();
  const agent: FakeAgent = {
    port: 0,
    calls: [],
    certs: new Map(),
    haproxy: new Map(),
    lvs: new Map(),
    vrrpConfig: undefined,
    agentConfig: undefined,
    serverPem: undefined,
    plugged: new Map(),
    override: undefined,
    close: async () => {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "Content-Type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const route = (call: AgentCall, res: ServerResponse) => {
    const over = agent.override?.(call);
    if (over) return reply(res, over[0], over[1]);
    const { method, path, body } = call;
    let m: RegExpExecArray | null;
    if (method === "GET" && path === "/") return reply(res, 200, { api_version: "1.0" });
    if (method === "GET" && path === "/1.0/info")
      return reply(res, 200, { hostname: "amphora", haproxy_version: opts.haproxyVersion ?? "2.6.12-1+deb12u4", api_version: "1.0" });
    if (method === "PUT" && (m = /^\/1\.0\/loadbalancer\/([^/]+)\/([^/]+)\/haproxy$/.exec(path))) {
      if (m[1] !== opts.amphoraId) return reply(res, 400, { message: "wrong amphora" });
      const lb = m[2]!;
      return void checkConfig(body, agent.certs, opts.amphoraId).then((refused) => {
        if (refused !== undefined) return reply(res, 400, { message: "Invalid request", details: refused });
        agent.haproxy.set(lb, body);
        reply(res, 202, { message: "OK" });
      });
    }
    if ((m = /^\/1\.0\/loadbalancer\/([^/]+)\/certificates\/([^/]+)$/.exec(path))) {
      const key = `${m[1]}/${m[2]}`;
      if (method === "PUT") {
        agent.certs.set(key, body);
        return reply(res, 200, { message: "OK" });
      }
      if (method === "GET")
        return agent.certs.has(key)
          ? reply(res, 200, { md5sum: md5(agent.certs.get(key)!) })
          : reply(res, 404, { message: "Certificate Not Found" });
      if (method === "DELETE") {
        agent.certs.delete(key);
        return reply(res, 200, { message: "OK" });
      }
    }
    if (method === "PUT" && (m = /^\/1\.0\/loadbalancer\/([^/]+)\/(start|stop|reload)$/.exec(path))) {
      if (!agent.haproxy.has(m[1]!) && !agent.lvs.has(m[1]!)) return reply(res, 404, { message: "Loadbalancer Not Found" });
      return reply(res, 202, { message: "OK" });
    }
    if (method === "PUT" && (m = /^\/1\.0\/listeners\/([^/]+)\/([^/]+)\/udp_listener$/.exec(path))) {
      agent.lvs.set(m[2]!, body);
      return reply(res, 200, { message: "OK" });
    }
    if (method === "DELETE" && (m = /^\/1\.0\/listeners\/([^/]+)$/.exec(path))) {
      agent.haproxy.delete(m[1]!);
      agent.lvs.delete(m[1]!);
      return reply(res, 200, { message: "OK" });
    }
    if (method === "GET" && path === "/1.0/listeners")
      return reply(
        res,
        200,
        [...agent.lvs.keys()].map((uuid) => ({ status: "ACTIVE", uuid, type: "UDP" })),
      );
    if (method === "POST" && (m = /^\/1\.0\/plug\/vip\/(.+)$/.exec(path))) {
      const info = JSON.parse(body) as Record<string, unknown>;
      if ([...agent.plugged.values()].some((p) => p.mac_address === info.mac_address))
        return reply(res, 409, { message: "Interface already exists" });
      agent.plugged.set(m[1]!, info);
      return reply(res, 202, { message: "OK" });
    }
    if (method === "PUT" && path === "/1.0/vrrp/upload") {
      agent.vrrpConfig = body;
      return reply(res, 200, { message: "OK" });
    }
    if (method === "PUT" && /^\/1\.0\/vrrp\/(start|stop|reload)$/.test(path)) return reply(res, 202, { message: "OK" });
    if (method === "PUT" && path === "/1.0/certificate") {
      agent.serverPem = body;
      return reply(res, 202, { message: "OK" });
    }
    if (method === "PUT" && path === "/1.0/config") {
      agent.agentConfig = body;
      return reply(res, 202, { message: "OK" });
    }
    reply(res, 404, { error: "404 Not Found", http_code: 404 });
  };
  const server: Server = createServer(
    { cert: pem, key: pem, ca: opts.pki.ca.certificate, requestCert: true, rejectUnauthorized: true },
    (req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        const call = {
          method: req.method!,
          path: req.url!,
          body: Buffer.concat(chunks).toString("utf8"),
          clientCn: [peer?.subject?.CN].flat()[0],
        };
        agent.calls.push(call);
        route(call, res);
      });
    },
  );
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, opts.host ?? "127.0.0.1", () => resolve());
  });
  agent.port = (server.address() as AddressInfo).port;
  return agent;
}

type DriverOptions = ConstructorParameters<typeof HaproxyAmphoraLoadBalancerDriver>[0];

/**
 * The REST amphora driver talking to an agent on `port` with a client certificate of `pki` (1 s to
 * connect, `readTimeout` s to read, 2 retries 50 ms apart); the caller closes `client`.
 */
export async function agentDriver(
  pki: TestPki,
  port: number,
  { readTimeout = 2, ...over }: Partial<DriverOptions> & { readTimeout?: number } = {},
): Promise<{ client: AmphoraApiClient; driver: HaproxyAmphoraLoadBalancerDriver }> {
  const client = new AmphoraApiClient({
    port,
    tls: { ca: pki.ca.certificate, clientPem: await pki.issue(CLIENT_CERT_CN) },
    connTimeout: 1,
    readTimeout,
    retries: { maxRetries: 2, retryInterval: 0.05 },
  });
  return {
    client,
    driver: new HaproxyAmphoraLoadBalancerDriver({
      client,
      certManager: noopDrivers().certificates,
      network: noopDrivers().network,
      ...over,
    }),
  };
}

/**
 * What the agent's upload_haproxy_config does before it takes a configuration: `haproxy -c -L <peer>
 * -f <cfg> -f <user-group cfg>` with Debian's HAProxy, the certificates this stand-in holds written
 * where the configuration and its crt-lists name them (/var/lib/octavia/certs/<lb>/<file>, here under
 * a temporary directory). Answers HAProxy's output when it refuses the configuration, undefined when it takes it.
 * A configuration without any frontend (every listener admin-down) "will not start" and is taken, as
 * the renderer's own test takes it (HaproxyCheck.valid).
 */
async function checkConfig(config: string, certs: Map<string, string>, amphoraId: string): Promise<string | undefined> {
  const dir = mkdtempSync(join(tmpdir(), "ottava-fake-agent-"));
  try {
    const here = (text: string) => text.replaceAll("/var/lib/octavia/certs/", `${dir}/certs/`); // a crt-list names its files too
    for (const [key, pem] of certs) {
      mkdirSync(dirname(join(dir, "certs", key)), { recursive: true });
      writeFileSync(join(dir, "certs", key), here(pem));
    }
    writeFileSync(join(dir, "haproxy.cfg"), here(config));
    const check = await haproxyCheck(join(dir, "haproxy.cfg"), haproxyPeerName(amphoraId));
    return check.valid ? undefined : check.output;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
