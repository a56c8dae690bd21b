// Runs the real `openstack` CLI against Ottava under `auth_type: none`: a clouds.yaml in a temporary
// HOME whose `auth.endpoint` is the Neutron/Keystone stand-in and whose load-balancer endpoint is Ottava.
import { execFile } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** sitecustomize.py that shortens the CLI's --wait polling interval (see the file). */
const PYTHON_SHIM = fileURLToPath(new URL("./python", import.meta.url));

export const CLOUD = "ottava";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface Cli {
  home: string;
  cloudsYaml: string;
  /** Runs `openstack --os-cloud ottava --debug ...args` (the debug log goes to stderr); never throws on a non-zero exit. */
  run(args: string[], timeoutMs?: number): Promise<CliResult>;
  /** Runs and requires exit 0; answers stdout. */
  ok(args: string[], timeoutMs?: number): Promise<string>;
  /** Runs with `-f json`, requires exit 0, answers the parsed output. */
  json<T = any>(args: string[], timeoutMs?: number): Promise<T>;
  dispose(): void;
}

export function cloudsYaml(standInUrl: string, ottavaUrl: string): string {
  return [
    "clouds:",
    `  ${CLOUD}:`,
    "    auth_type: none",
    "    auth:",
    `      endpoint: ${standInUrl}`,
    `    load_balancer_endpoint_override: ${ottavaUrl}`,
    "    region_name: RegionOne",
    "    interface: public",
    "",
  ].join("\n");
}

export class CliError extends Error {
  constructor(
    readonly args: string[],
    readonly result: CliResult,
  ) {
    super(
      `openstack ${args.join(" ")} exited ${result.code} after ${result.ms} ms\n--- HTTP exchanges ---\n${exchanges(result.stderr)}\n--- stdout ---\n${result.stdout}`,
    );
  }
}

/**
 * The HTTP exchanges of a `--debug` run (REQ/RESP/RESP BODY lines) and its last lines: what the
 * client sent, what it was answered and what it made of it.
 */
export function exchanges(stderr: string, width = 1500): string {
  const lines = stderr.split("\n");
  const http = lines.filter((l) => /^(REQ|RESP|RESP BODY): /.test(l)).map((l) => (l.length > width ? `${l.slice(0, width)}…` : l));
  const tail = lines.filter((l) => l.trim() !== "").slice(-4);
  return [...http, "...", ...tail].join("\n");
}

export function makeCli(
  standInUrl: string,
  ottavaUrl: string,
  { timeoutMs: defaultTimeoutMs = 30_000, pollSeconds = 0.2, parallel = Math.max(2, availableParallelism()) } = {},
): Cli {
  const home = mkdtempSync(join(tmpdir(), "ottava-cli-"));
  const dir = join(home, ".config", "openstack");
  mkdirSync(dir, { recursive: true });
  const cloudsYamlPath = join(dir, "clouds.yaml");
  writeFileSync(cloudsYamlPath, cloudsYaml(standInUrl, ottavaUrl));

  // Only what the CLI needs: no OS_* from the caller's environment leaks in.
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    LANG: "C.UTF-8",
    LC_ALL: "C.UTF-8",
    OS_CLIENT_CONFIG_FILE: cloudsYamlPath,
    OS_CLOUD: CLOUD,
    PYTHONWARNINGS: "ignore",
    PYTHONPATH: PYTHON_SHIM,
    // No __pycache__ beside the shim in the repository.
    PYTHONDONTWRITEBYTECODE: "1",
    OTTAVA_CLI_POLL_SECONDS: String(pollSeconds),
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
  };

  // Python start-up is CPU-bound: at most `parallel` CLI processes at once, so that a command's
  // timeout measures the command and not the queue.
  let running = 0;
  const queue: (() => void)[] = [];
  const slot = async () => {
    if (running < parallel) running++;
    else await new Promise<void>((go) => queue.push(go)); // handed over by release()
  };
  const release = () => {
    const next = queue.shift();
    if (next) next();
    else running--;
  };

  const run = async (args: string[], timeoutMs = defaultTimeoutMs) => {
    await slot();
    try {
      return await spawnCli(args, timeoutMs);
    } finally {
      release();
    }
  };

  const spawnCli = (args: string[], timeoutMs: number) =>
    new Promise<CliResult>((ok) => {
      const started = Date.now();
      execFile(
        "openstack",
        ["--os-cloud", CLOUD, "--debug", ...args],
        { env, cwd: home, timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 16 << 20 },
        (err, stdout, stderr) => {
          const e = err as (NodeJS.ErrnoException & { code?: number | string; killed?: boolean }) | null;
          let code = 0;
          if (e) code = typeof e.code === "number" ? e.code : -1;
          if (e?.killed) stderr += `\n[killed after ${timeoutMs} ms timeout]`;
          const ms = Date.now() - started;
          if (process.env.OTTAVA_CLI_TRACE) process.stderr.write(`[cli ${ms} ms, exit ${code}] openstack ${args.join(" ")}\n`);
          ok({ code, stdout, stderr, ms });
        },
      );
    });

  const ok = async (args: string[], timeoutMs?: number) => {
    const r = await run(args, timeoutMs);
    if (r.code !== 0) throw new CliError(args, r);
    return r.stdout;
  };

  return {
    home,
    cloudsYaml: cloudsYamlPath,
    run,
    ok,
    async json(args, timeoutMs) {
      const out = await ok([...args, "-f", "json"], timeoutMs);
      try {
        return JSON.parse(out);
      } catch {
        throw new Error(`openstack ${args.join(" ")} -f json printed no JSON:\n${out}`);
      }
    },
    dispose() {
      rmSync(home, { recursive: true, force: true });
    },
  };
}
