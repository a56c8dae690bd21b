// Starts the local stack exactly as `npm start` does (node --import tsx packages/local/src/main.ts),
// on a free port, and stops it with a signal.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface Stack {
  url: string;
  proc: ChildProcess;
  /** The stack's process group (with `detached`): its node process and DynamoDB Local's Java. */
  pgid: number | undefined;
  output: () => string;
  readyMs: number;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** With `detached`: sends `signal` to the whole process group (a crash: SIGKILL reaches Java too); answers when node has exited. */
  killGroup(signal: NodeJS.Signals): Promise<void>;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
}

/**
 * `detached`: the stack runs in a session and process group of its own (setsid: node's spawn makes
 * the child its leader, so the group's id is its pid), which `killGroup` signals whole. `noLowPorts`:
 * the stack may not bind ports below 1024, as a newcomer without root runs `npm start`; as root it keeps
 * its uid (and so reads the checkout and the toolchain wherever they are) but loses CAP_NET_BIND_SERVICE
 * through util-linux's setpriv, for itself and every HAProxy it runs.
 */
export async function startStack(
  args: string[] = ["--in-memory"],
  env: Record<string, string> = {},
  opts: { detached?: boolean; noLowPorts?: boolean } = {},
): Promise<Stack> {
  const started = Date.now();
  const node = [process.execPath, "--import", "tsx", "packages/local/src/main.ts", "--port", "0", ...args];
  const dropBind = opts.noLowPorts && process.getuid?.() === 0;
  const argv = dropBind ? ["setpriv", "--inh-caps=-net_bind_service", "--bounding-set=-net_bind_service", "--", ...node] : node;
  const proc = spawn(argv[0]!, argv.slice(1), {
    cwd: ROOT,
    env: { ...process.env, OTTAVA_LOG_LEVEL: "warn", OTTAVA_HEARTBEAT_PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: opts.detached ?? false,
  });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((ok) => proc.once("exit", (code) => ok(code)));
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => {
      proc.kill("SIGTERM"); // never leave a half-started stack (and its Java) behind
      fail(new Error(`not ready in 50 s:\n${out}`));
    }, 50_000);
    const check = () => {
      const m = /serving the Octavia v2 API on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(m[1]!);
      }
    };
    proc.stdout!.on("data", check);
    void exited.then((code) => fail(new Error(`exited with ${code}:\n${out}`)));
  });
  const readyMs = Date.now() - started;
  return {
    url,
    proc,
    pgid: opts.detached ? proc.pid : undefined,
    readyMs,
    output: () => out,
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null) proc.kill(signal);
      return exited;
    },
    async killGroup(signal) {
      if (!opts.detached || proc.pid === undefined) throw new Error("killGroup needs a stack started detached");
      try {
        process.kill(-proc.pid, signal);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ESRCH") throw e; // the group is gone already
      }
      await exited;
    },
    async call(method, path, body, headers = {}) {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { "content-type": "application/json", "x-project-id": "e2e-project", ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
  };
}

/** Polls a load balancer until it leaves PENDING_*; answers its last state. */
export async function waitSettled(stack: Stack, id: string, timeoutMs = 20_000): Promise<{ status: number; body: any }> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await stack.call("GET", `/v2/lbaas/loadbalancers/${id}`);
    if (res.status !== 200 || !String(res.body.loadbalancer.provisioning_status).startsWith("PENDING_")) return res;
    if (Date.now() > until) throw new Error(`load balancer ${id} still ${res.body.loadbalancer.provisioning_status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pids of the DynamoDB Local (Java) processes serving `dataDir`. */
export function javaFor(dataDir: string): string[] {
  try {
    return execFileSync("pgrep", ["-f", `DynamoDBLocal.jar .*${dataDir}`], { encoding: "utf8" })
      .trim()
      .split("\n")
      .filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}
