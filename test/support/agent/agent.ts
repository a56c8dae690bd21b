// Test scaffolding: Octavia's real amphora agent (/usr/bin/amphora-agent, Debian's python3-octavia) in its own PID and mount namespaces (PID 1: ./systemd), a client network namespace joined to the amphora's VIP interface by a veth pair, and member servers there.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const HERE = new URL(".", import.meta.url).pathname;
const SCAFFOLDING = ["systemd", "service", "systemctl", "sysctl", "noop"];

/** Why the real agent cannot run here, or undefined when it can. */
export function agentUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return "not root (namespaces, veth pairs)";
  // The agent's info asks dpkg for keepalived's and ipvsadm's versions, as an amphora has them (.ci/run installs them).
  for (const bin of [
    "/usr/bin/amphora-agent",
    "/usr/bin/unshare",
    "/usr/bin/nsenter",
    "/usr/sbin/haproxy",
    "/usr/sbin/keepalived",
    "/usr/sbin/ipvsadm",
    "/usr/sbin/ip",
    "/usr/bin/python3",
  ]) {
    if (!existsSync(bin)) return `${bin} is missing`;
  }
  return undefined;
}

/** Runs a command to its end: its output, or an error with its stderr (unless `allowFail`). */
export function run(cmd: string, args: string[], allowFail = false): string {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  if (r.status !== 0 && !allowFail) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr || r.error?.message}`);
  return r.stdout;
}

/** Where the amphora's config drive puts the agent's files (Octavia's CertComputeCreate), inside its namespaces. */
export const AGENT_CONFIG_PATH = "/etc/octavia/amphora-agent.conf";
export const AGENT_SERVER_PEM_PATH = "/etc/octavia/certs/server.pem";
export const AGENT_CLIENT_CA_PATH = "/etc/octavia/certs/client_ca.pem";

export interface AmphoraAgent {
  /** The state directory on the host: the stand-ins, agent.log, syslog.log. */
  dir: string;
  port: number;
  /** The host PID of the namespaces' PID 1. */
  pid(): number;
  /** A file inside the amphora's namespaces (its private /etc, /var, ...). */
  read(path: string): string | undefined;
  exists(path: string): boolean;
  /** Runs a command in the amphora's mount namespace (e.g. `ip netns exec amphora-haproxy ...`). */
  exec(args: string[]): { status: number | null; stdout: string; stderr: string };
  /** The last lines of the agent's and the namespace's logs, for a failure message. */
  logs(): string;
  stop(): Promise<void>;
}

/**
 * Starts the agent with its config drive: amphora-agent.conf (`agentConfig(port)`, the test renders
 * it for a free port on 127.0.0.1), its server certificate and key (`serverPem`) and the CA of the
 * controller's client certificates (`clientCa`). PID 1 runs as long as this process holds its standard input.
 */
export async function startAmphoraAgent(opts: {
  agentConfig: (port: number) => string;
  serverPem: string;
  clientCa: string;
}): Promise<AmphoraAgent> {
  const dir = scaffolding();
  const port = await freePort();
  // PID 1 moves these into the amphora's /etc/octavia.
  writeFileSync(join(dir, "server.pem"), opts.serverPem, { mode: 0o600 });
  writeFileSync(join(dir, "client_ca.pem"), opts.clientCa);
  writeFileSync(join(dir, "amphora-agent.conf"), opts.agentConfig(port), { mode: 0o600 });
  return startNamespaces(dir, port, [], "agent.log");
}

/** An instance of the EC2 test bed (test/support/bed): an amphora's namespaces with a network namespace of their own, booted as an instance boots. */
export interface AmphoraInstance extends AmphoraAgent {
  /** The network namespace, for nsenter (`--net=<netns>`) and `ip link ... netns <pid>`. */
  netns: string;
  /** Starts the boot: the bed has plugged the instance's network. */
  go(): void;
}

/**
 * Starts an instance's namespaces (PID, mount, UTS and network): `image` is laid into its root (path →
 * content, with the mode after a colon in the key's end, e.g. "/usr/local/sbin/x:755"), then, once go() is
 * called, the `boot` commands run in order (output in boot.log), as the instance's init would run them.
 * Nothing of the boot is done by the harness. `port` is where the agent will listen, for `logs` and tests.
 */
export async function startInstance(opts: { image: Record<string, string>; boot: string[][]; port: number }): Promise<AmphoraInstance> {
  const dir = scaffolding();
  for (const [key, content] of Object.entries(opts.image)) {
    const [path, mode] = key.split(":") as [string, string | undefined];
    const file = join(dir, "image", path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content, { mode: mode ? parseInt(mode, 8) : 0o644 });
    if (mode) chmodSync(file, parseInt(mode, 8));
  }
  writeFileSync(join(dir, "boot"), JSON.stringify(opts.boot));
  const agent = await startNamespaces(dir, opts.port, ["--net", "--uts"], "boot.log");
  return { ...agent, netns: `/proc/${agent.pid()}/ns/net`, go: () => writeFileSync(join(dir, "go"), "") };
}

function scaffolding(): string {
  const dir = mkdtempSync(join(tmpdir(), "ottava-amphora-"));
  for (const name of SCAFFOLDING) {
    copyFileSync(join(HERE, name), join(dir, name));
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

/** Starts PID 1 (./systemd) in new PID and mount namespaces (and `more`), on the state directory `dir`; `log` is the first log logs() shows. */
async function startNamespaces(dir: string, port: number, more: string[], log: string): Promise<AmphoraAgent> {
  const proc: ChildProcess = spawn(
    "/usr/bin/unshare",
    ["--pid", "--mount", ...more, "--fork", "--mount-proc", "--propagation", "private", "--kill-child", join(dir, "systemd"), dir],
    {
      stdio: ["pipe", "ignore", "pipe"],
      // An amphora's init starts with an environment of its own, not the test's.
      env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", LANG: "C.UTF-8" },
    },
  );
  let stderr = "";
  proc.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  let init = 0;
  const pid = () => {
    if (!init) {
      // unshare's only child is the namespaces' PID 1.
      const children = run("/usr/bin/pgrep", ["-P", String(proc.pid)], true)
        .trim()
        .split("\n")
        .filter(Boolean);
      init = Number(children[0] ?? 0);
    }
    return init;
  };
  const root = (path: string) => `/proc/${pid()}/root${path}`;
  const tail = (file: string, n = 40) => {
    try {
      return readFileSync(file, "utf8").split("\n").slice(-n).join("\n");
    } catch {
      return "(none)";
    }
  };
  const agent: AmphoraAgent = {
    dir,
    port,
    pid,
    read: (path) => {
      try {
        return readFileSync(root(path), "utf8");
      } catch {
        return undefined;
      }
    },
    exists: (path) => existsSync(root(path)),
    exec: (args) => {
      const r = spawnSync("/usr/bin/nsenter", [`--target=${pid()}`, "--mount", "--", ...args], { encoding: "utf8", timeout: 15_000 });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    },
    logs: () =>
      [
        `--- unshare stderr\n${stderr}`,
        `--- ${log}\n${tail(join(dir, log))}`,
        `--- syslog\n${tail(join(dir, "syslog.log"), 15)}`,
        ...["amphora-agent", "haproxy", "amphora-netns", "octavia-keepalived"].map(
          (u) => `--- units ${u}\n${run("/bin/sh", ["-c", `cat ${root("/run/ottava-units")}/${u}*.log 2>/dev/null | tail -20`], true)}`,
        ),
      ].join("\n"),
    stop: async () => {
      proc.stdin?.end(); // PID 1 leaves when its input closes; the kernel then ends the namespace
      const timer = setTimeout(() => proc.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  for (let i = 0; i < 100 && !pid(); i++) await new Promise((r) => setTimeout(r, 50));
  if (!pid()) {
    await agent.stop();
    throw new Error(`the agent's namespaces did not start: ${stderr}`);
  }
  return agent;
}

/**
 * A client network namespace with one end of a veth pair; the other end stays in the host namespace
 * for the agent to plug (as the VIP interface, or a member network's). The namespace has no name: a
 * process holds it while this process holds its standard input, so nothing outlives the test, even
 * when it is killed.
 */
export interface ClientNetwork {
  /** The host end: the amphora's port (its VIP port, or a member network's). */
  hostIf: string;
  mac: string;
  /** The end in the client namespace. */
  peerIf: string;
  /** Runs a command in the client namespace. */
  exec(args: string[], timeoutMs?: number): { status: number | null; stdout: string; stderr: string };
  /** A member: an HTTP server in the client namespace answering `name` to every GET. */
  member(address: string, port: number, name: string): Promise<void>;
  /** GET <url> from the client namespace: status and body (a CA for HTTPS, `host` for its SNI and name check). */
  get(url: string, opts?: { ca?: string; host?: string }): { status: number; body: string; error?: string };
  remove(): void;
}

const MEMBER = `
import http.server, socketserver, ssl, sys, threading
address, port, name = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", str(len(name))); self.end_headers(); self.wfile.write(name)
    def log_message(self, *a): pass
socketserver.TCPServer.allow_reuse_address = True
srv = http.server.ThreadingHTTPServer((address, port), H)
if len(sys.argv) > 5:
    # HTTPS: each connection's handshake in its own thread, at its first read, so no client holds up the others.
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(sys.argv[4], sys.argv[5])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
threading.Thread(target=srv.serve_forever, daemon=True).start()
print("ready", flush=True)
while sys.stdin.buffer.read1(4096): pass
`;

const GET = `
import json, socket, ssl, sys, urllib.parse
url, ca, host = sys.argv[1], sys.argv[2], sys.argv[3]
timeout = float(sys.argv[4]) if len(sys.argv) > 4 else 5
u = urllib.parse.urlsplit(url)
try:
    conn = socket.create_connection((u.hostname, u.port or (443 if u.scheme == "https" else 80)), timeout=timeout)
    if u.scheme == "https":
        ctx = ssl.create_default_context(cafile=ca)
        conn = ctx.wrap_socket(conn, server_hostname=host or u.hostname)
    conn.sendall(f"GET {u.path or '/'} HTTP/1.0\\r\\nHost: {host or u.hostname}\\r\\n\\r\\n".encode())
    data = b""
    while chunk := conn.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\\r\\n\\r\\n")
    print(json.dumps({"status": int(head.split()[1]), "body": body.decode()}))
except Exception as e:
    print(json.dumps({"status": 0, "body": "", "error": f"{type(e).__name__}: {e}"}))
`;
import { freePort } from "@ottava/amphora/free-port";

/** A server's certificate and its key: PEM files' paths. */
export interface ServerTls {
  cert: string;
  key: string;
}

/**
 * An HTTP server in the network namespace of `nsenter` (nsenter's option, e.g. "--net=/proc/<pid>/ns/net") on
 * address:port, answering `body` to every GET (over TLS with `tls`); it runs while this process holds its
 * standard input (end it with stdin.end() or kill). Resolves once it listens.
 */
export function serveHttp(nsenter: string, address: string, port: number, body: string, tls?: ServerTls): Promise<ChildProcess> {
  const args = [address, String(port), body, ...(tls ? [tls.cert, tls.key] : [])];
  return new Promise<ChildProcess>((resolve, reject) => {
    const p = spawn("/usr/bin/nsenter", [nsenter, "--", "/usr/bin/python3", "-c", MEMBER, ...args], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let err = "";
    p.stderr!.on("data", (d) => (err += d));
    p.stdout!.once("data", () => resolve(p));
    p.once("exit", (code) => reject(new Error(`the HTTP server ${address}:${port} (${body}) exited (${code}): ${err}`)));
  });
}

/**
 * GET <url> from the network namespace of `nsenter`: status and body (status 0 and `error` when it failed; a
 * CA for HTTPS, `host` for its SNI and name check; `timeoutS` for the connection and each read, default 5).
 */
export function httpGet(
  nsenter: string,
  url: string,
  opts: { ca?: string; host?: string; timeoutS?: number } = {},
): { status: number; body: string; error?: string } {
  const args = [nsenter, "--", "/usr/bin/python3", "-c", GET, url, opts.ca ?? "", opts.host ?? "", String(opts.timeoutS ?? 5)];
  const r = spawnSync("/usr/bin/nsenter", args, {
    encoding: "utf8",
    timeout: 15_000,
  });
  try {
    return JSON.parse(r.stdout) as { status: number; body: string; error?: string };
  } catch {
    return { status: 0, body: "", error: r.stderr || r.error?.message };
  }
}

const HOLD = "import sys\nwhile sys.stdin.buffer.read1(4096): pass\n";

/**
 * A network namespace without a name, held by a process (its `pid`) while this process holds the
 * holder's standard input: it goes, with every interface in it and the peers of its veth pairs, when
 * the holder ends, even when the test is killed.
 */
export interface NetnsHolder {
  pid: number;
  /** nsenter's option for the namespace. */
  nsenter: string;
  /** Ends the holder (the namespace goes with its last process). */
  release(): void;
}

/** Starts a holder of a new network namespace and waits until the namespace is its own. */
export async function holdNetns(): Promise<NetnsHolder> {
  const holder = spawn("/usr/bin/unshare", ["--net", "--", "/usr/bin/python3", "-c", HOLD], { stdio: ["pipe", "ignore", "ignore"] });
  const release = () => {
    holder.stdin?.end();
    holder.kill("SIGKILL");
  };
  const own = readlinkSync("/proc/self/ns/net");
  const ns = () => {
    try {
      return readlinkSync(`/proc/${holder.pid}/ns/net`);
    } catch {
      return own;
    }
  };
  for (let i = 0; i < 100 && ns() === own; i++) await new Promise((r) => setTimeout(r, 20));
  if (ns() === own) {
    release();
    throw new Error("the network namespace did not come up");
  }
  return { pid: holder.pid!, nsenter: `--net=/proc/${holder.pid}/ns/net`, release };
}

/**
 * The veth pair of a client network, its host end (the port the agent plugs, moved into the amphora's
 * namespace with its interface index) given an index below 256: Octavia 11's amphora-interface waits for
 * an address with `ipr.get_addr(idx)`, which pyroute2 takes as the address family, a byte, so an index
 * over 255 fails the plug ("ubyte format requires 0 <= number <= 255"). A host that has made a few
 * hundred interfaces (the test beds do) hands out such indexes; an amphora's few interfaces never do.
 * An index another interface took meanwhile is refused by ip ("File exists"), and the next is tried.
 */
function addLowIndexVeth(hostIf: string, peer: string, holderPid: number) {
  const index = (name: string) => Number(readFileSync(`/sys/class/net/${name}/ifindex`, { encoding: "utf8", flag: "r" }));
  const taken = new Set(readdirSync("/sys/class/net").flatMap((n) => (existsSync(`/sys/class/net/${n}/ifindex`) ? [index(n)] : [])));
  const free = Array.from({ length: 255 - 64 }, (_, i) => 64 + i).filter((i) => !taken.has(i));
  for (const candidate of free.slice(0, 20)) {
    const added = spawnSync(
      "/usr/sbin/ip",
      ["link", "add", hostIf, "index", String(candidate), "type", "veth", "peer", "name", peer, "netns", String(holderPid)],
      {
        encoding: "utf8",
      },
    );
    if (added.status === 0) return;
    if (!/exists/i.test(added.stderr)) throw new Error(`ip link add ${hostIf}: ${added.stderr}`);
  }
  throw new Error(`no free interface index below 256 for ${hostIf}`);
}

export async function clientNetwork(address: string, prefix: number): Promise<ClientNetwork> {
  const tag = randomBytes(4).toString("hex");
  const hostIf = `otv${tag}a`;
  const peer = `otv${tag}b`;
  const members: ChildProcess[] = [];
  const holder = await holdNetns();
  const nsenter = holder.nsenter;
  const net: ClientNetwork = {
    hostIf,
    mac: "",
    peerIf: peer,
    exec: (args, timeoutMs = 15_000) => {
      const r = spawnSync("/usr/bin/nsenter", [nsenter, "--", ...args], { encoding: "utf8", timeout: timeoutMs });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    },
    member: async (addr, port, name) => void members.push(await serveHttp(nsenter, addr, port, name)),
    get: (url, opts = {}) => httpGet(nsenter, url, opts),
    remove: () => {
      for (const m of members) {
        m.stdin?.end();
        m.kill("SIGKILL");
      }
      holder.release();
      // Gone with the namespace's last process; deleted here when it was never plugged.
      run("/usr/sbin/ip", ["link", "del", hostIf], true);
    },
  };
  try {
    const inNs = (...args: string[]) => run("/usr/bin/nsenter", [nsenter, "--", "/usr/sbin/ip", ...args]);
    addLowIndexVeth(hostIf, peer, holder.pid);
    inNs("addr", "add", `${address}/${prefix}`, "dev", peer);
    inNs("link", "set", peer, "up");
    inNs("link", "set", "lo", "up");
    net.mac = readFileSync(`/sys/class/net/${hostIf}/address`, "utf8").trim();
  } catch (e) {
    net.remove();
    throw e;
  }
  return net;
}
