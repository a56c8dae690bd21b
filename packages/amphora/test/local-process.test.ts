// The local amphora's HAProxy process (packages/amphora/src/local/process.ts, as the amphora agent's start/reload/stop in api_server/loadbalancer.py) against Debian's real HAProxy.
//
// One master-worker HAProxy on a loopback address, in front of a backend HTTP server started here:
// it starts and serves; a reload keeps a request under way and serves the new configuration; a
// reload that cannot bind a port (held by another process) fails with HAProxy's reason while the
// old workers keep serving, and the check before a reload finds such a port without reloading;
// `haproxy -c` refuses a broken configuration; a start on a port already taken, or below 1024
// without root, fails with the reason; stop closes the port; a master left by a previous run is
// found through its pid file and stopped; a missing binary is reported with how to install one.
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, request, type Server } from "node:http";
import { createServer as createTcpServer, connect, type Server as TcpServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DriverError } from "@ottava/core";
import { createLogger } from "@ottava/edge";
import { freePort } from "../src/local/free-port";
import { bindsOf, checkConfig, checkNewBinds, haproxyVersion, HaproxyProcess, killStale } from "../src/local/process";

const HAPROXY = "/usr/sbin/haproxy";
const log = createLogger({ service: "test" }, "error");
// An address of its own, away from the defaults of a running `npm start` (127.0.100.0/24) and of the e2e tests.
const VIP = "127.0.103.7";

let dir: string;
let backend: Server;
let backendPort: number;
let held: TcpServer;
let heldPort: number;

const listen = (s: Server | TcpServer, host: string, port = 0) =>
  new Promise<number>((ok, fail) => {
    s.once("error", fail);
    s.listen(port, host, () => ok((s.address() as { port: number }).port));
  });

function get(port: number, path = "/"): Promise<{ status: number; body: string }> {
  return new Promise((ok, fail) => {
    const req = request({ host: VIP, port, path, agent: false }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => ok({ status: res.statusCode!, body }));
    });
    req.on("error", fail);
    req.end();
  });
}

const refused = (port: number) =>
  new Promise<boolean>((ok) => {
    const c = connect(port, VIP);
    c.once("connect", () => (c.destroy(), ok(false)));
    c.once("error", () => ok(true));
  });

/** Refused within `ms`: after a reload the old workers let go of their listeners on their own time (soft stop). */
async function refusedSoon(port: number, ms = 3000): Promise<boolean> {
  for (const until = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 50))) {
    if (await refused(port)) return true;
    if (Date.now() > until) return false;
  }
}

function config(ports: number[], extra = ""): string {
  return [
    "global",
    "    maxconn 100",
    "defaults",
    "    mode http",
    "    timeout connect 5s",
    "    timeout client 30s",
    "    timeout server 30s",
    "frontend fe",
    ...ports.map((p) => `    bind ${VIP}:${p}`),
    "    default_backend be",
    "backend be",
    `    server s1 127.0.0.1:${backendPort}`,
    extra,
    "",
  ].join("\n");
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ottava-process-"));
  // The backend answers its path; /slow answers after 700 ms (a request under way during a reload).
  backend = createHttpServer((req, res) => {
    const answer = () => res.end(`backend ${req.url}`);
    if (req.url === "/slow") setTimeout(answer, 700);
    else answer();
  });
  backendPort = await listen(backend, "127.0.0.1");
  held = createTcpServer();
  heldPort = await listen(held, VIP);
});

afterAll(async () => {
  await new Promise((ok) => backend?.close(ok));
  await new Promise((ok) => held?.close(ok));
  rmSync(dir, { recursive: true, force: true });
});

describe("HaproxyProcess", () => {
  it("starts, reloads without dropping a request under way, refuses a port it cannot bind, and stops", async () => {
    const port = await freePort(VIP);
    const files = { configs: [join(dir, "a.cfg")], pidFile: join(dir, "a.pid"), cwd: dir };
    writeFileSync(files.configs[0]!, config([port]));
    const haproxy = new HaproxyProcess(HAPROXY, files, log, "amphora-a");
    await haproxy.start();
    try {
      expect(haproxy.running).toBe(true);
      expect(await get(port, "/one")).toEqual({ status: 200, body: "backend /one" });
      const master = haproxy.pid;

      // A reload while a request is under way: the request completes, the new port serves, the master stays.
      const second = await freePort(VIP);
      const slow = get(port, "/slow");
      await new Promise((r) => setTimeout(r, 150));
      writeFileSync(files.configs[0]!, config([port, second]));
      await haproxy.reload();
      expect(await slow).toEqual({ status: 200, body: "backend /slow" });
      expect(await get(second, "/two")).toEqual({ status: 200, body: "backend /two" });
      expect(haproxy.pid).toBe(master);

      // A port held by another process: the reload fails with HAProxy's reason, the old workers keep serving.
      writeFileSync(files.configs[0]!, config([port, second, heldPort]));
      const failed = await haproxy.reload().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(failed).toBeInstanceOf(DriverError);
      expect((failed as Error).message).toMatch(
        new RegExp(`cannot bind socket \\(Address already in use\\).*${VIP.replace(/\./g, "\\.")}:${heldPort}`),
      );
      expect(await get(port, "/three")).toEqual({ status: 200, body: "backend /three" });
      expect(haproxy.running).toBe(true);

      // Back to a configuration it can load.
      writeFileSync(files.configs[0]!, config([port]));
      await haproxy.reload();
      expect(await refusedSoon(second)).toBe(true);
      expect(await get(port, "/four")).toEqual({ status: 200, body: "backend /four" });
    } finally {
      await haproxy.stop();
    }
    expect(haproxy.running).toBe(false);
    expect(await refused(port)).toBe(true);
  });

  it("fails a start on a port already taken, with the reason", async () => {
    const files = { configs: [join(dir, "b.cfg")], pidFile: join(dir, "b.pid"), cwd: dir };
    writeFileSync(files.configs[0]!, config([heldPort]));
    const haproxy = new HaproxyProcess(HAPROXY, files, log, "amphora-b");
    await expect(haproxy.start()).rejects.toThrow(/HAProxy could not start: .*cannot bind socket \(Address already in use\)/);
    expect(haproxy.running).toBe(false);
  });

  // As root HAProxy may bind any port; run as nobody (setpriv), it may not bind one below 1024.
  it.skipIf(process.getuid?.() !== 0 || !existsSync("/usr/bin/setpriv"))(
    "fails a start on a port it may not bind (below 1024 without root), with the reason",
    async () => {
      const own = mkdtempSync(join(tmpdir(), "ottava-process-nobody-"));
      try {
        chmodSync(own, 0o777);
        const wrapper = join(own, "haproxy-as-nobody");
        writeFileSync(wrapper, `#!/bin/sh\nexec /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups ${HAPROXY} "$@"\n`, {
          mode: 0o755,
        });
        const files = { configs: [join(own, "low.cfg")], pidFile: join(own, "low.pid"), cwd: own };
        writeFileSync(files.configs[0]!, config([80]), { mode: 0o644 });
        const haproxy = new HaproxyProcess(wrapper, files, log, "amphora-low");
        await expect(haproxy.start()).rejects.toThrow(`cannot bind socket (Permission denied) for [${VIP}:80]`);
      } finally {
        rmSync(own, { recursive: true, force: true });
      }
    },
  );

  it("finds, before a reload, a new port that cannot be bound, without touching the running HAProxy", async () => {
    const free = await freePort(VIP);
    expect(bindsOf(config([free, heldPort]))).toEqual([
      { frontend: "fe", address: VIP, port: free },
      { frontend: "fe", address: VIP, port: heldPort },
    ]);
    await expect(checkNewBinds(config([free, heldPort]), config([free]))).rejects.toThrow(
      `HAProxy could not load the new configuration: frontend fe: cannot bind socket (Address already in use) for [${VIP}:${heldPort}]`,
    );
    // A port the running configuration binds already is not tried.
    await checkNewBinds(config([free, heldPort]), config([heldPort]));
  });

  it("checks a configuration with haproxy -c", async () => {
    const good = join(dir, "good.cfg");
    const bad = join(dir, "bad.cfg");
    writeFileSync(good, config([await freePort(VIP)]));
    writeFileSync(bad, config([await freePort(VIP)], "    balance no-such-algorithm"));
    await checkConfig(HAPROXY, [good]);
    await expect(checkConfig(HAPROXY, [bad])).rejects.toThrow(/HAProxy configuration rejected: .*balance only supports/);
  });

  it("stops a master a previous run left behind, found through its pid file", async () => {
    const port = await freePort(VIP);
    const cfg = join(dir, "stale.cfg");
    const pidFile = join(dir, "stale.pid");
    writeFileSync(cfg, config([port]));
    // As a crashed Ottava leaves it: a daemonized master nobody will stop.
    await new Promise<void>((ok, fail) => {
      const p = spawn(HAPROXY, ["-W", "-D", "-f", cfg, "-p", pidFile], { stdio: "ignore" });
      p.once("exit", (code) => (code === 0 ? ok() : fail(new Error(`haproxy -D exited ${code}`))));
    });
    expect(await get(port)).toMatchObject({ status: 200 });
    expect(await killStale(pidFile, join(dir, "other.cfg"))).toBe(false); // not the configuration it runs: left alone
    expect(await killStale(pidFile, cfg)).toBe(true);
    expect(await refused(port)).toBe(true);
    expect(await killStale(pidFile, cfg)).toBe(false);
  });

  it("reports the version, and a missing binary with how to get one", async () => {
    expect(await haproxyVersion(HAPROXY)).toMatch(/^2\.\d+\./);
    await expect(haproxyVersion(join(dir, "no-haproxy"))).rejects.toThrow(
      /there is none at .*no-haproxy: install it \(Debian\/Ubuntu: sudo apt-get install haproxy/,
    );
  });
});
