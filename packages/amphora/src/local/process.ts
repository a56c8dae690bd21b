// One local amphora's HAProxy process, run as the amphora agent runs it (octavia/amphorae/backends/agent/api_server/loadbalancer.py: the `haproxy -c` check of each new configuration, then start or reload; haproxy.service's master-worker mode, SIGUSR2 to reload).
//
// The master runs in the foreground of its own process group (`-W`, not `-D`), a child of this
// process whose stderr is read: the master says "Loading success." or "Loading failure!" after each
// start and reload, and its [ALERT] lines say why (a port that cannot be bound, ...). A reload keeps
// the master and its listening sockets; the old worker finishes its connections. A process left by
// a previous run that died without stopping it is found through its pid file (`killStale`).
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { DriverError, type Logger } from "@ottava/core";

/** How long a start or a reload may take before it counts as failed. */
const LOADING_TIMEOUT_MS = 15_000;
/** stderr lines kept for diagnostics. */
const KEPT_LINES = 200;
/** What the master prints when a loading ends, and when it takes a reload signal. */
const LOADED = { success: "Loading success.", failure: "Loading failure!" };
const RELOADING = { reloading: "Reloading HAProxy" };
/** What the old workers print once they serve again after a failed reload. */
const RESUMED = { resumed: "Resumed frontend GLOBAL." };

export interface HaproxyFiles {
  /** The configuration files HAProxy reads, in order (written before each start or reload). */
  configs: string[];
  /** The master's pid file (`-p`). */
  pidFile: string;
  /** The working directory (the amphora's). */
  cwd: string;
}

/** The message of an [ALERT]/[WARNING]/[NOTICE] line without its tag and pid: "[ALERT]    (12) : Binding ...: cannot bind socket" → "Binding ...: cannot bind socket". */
const messageOf = (line: string) =>
  line
    .replace(/^\[[A-Z]+\]\s*\(\d+\)\s*:\s*/, "")
    // A configuration's path named by its file name alone: "[/.../<lb id>/haproxy.cfg:43]" → "[haproxy.cfg:43]".
    .replace(/\[\/[^\]\s]*\/([^/\]\s]+:\d+)\]/g, "[$1]");

/** The reason of a failed start or reload: its [ALERT] lines (the last few), else the last lines. */
function reasonOf(lines: readonly string[]): string {
  const alerts = lines.filter((l) => l.startsWith("[ALERT]")).map(messageOf);
  const picked = alerts.length ? alerts.slice(0, 4) : lines.slice(-3).map(messageOf);
  return picked.join("; ") || "no message";
}

/** Runs `binary args`, answering its exit code and its output (stdout and stderr together). */
function run(binary: string, args: string[], timeoutMs = 10_000): Promise<{ code: number | null; output: string; spawnError?: string }> {
  return new Promise((ok) => {
    execFile(binary, args, { timeout: timeoutMs, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
      ok({ code, output: `${stdout}${stderr}`, ...(typeof error?.code === "string" ? { spawnError: error.code } : {}) });
    });
  });
}

/**
 * The HAProxy version `binary` reports ("2.6.12-1+deb12u4"); fails with a message saying how to get
 * one when it cannot be run.
 */
export async function haproxyVersion(binary: string): Promise<string> {
  const r = await run(binary, ["-v"]);
  if (r.spawnError === "ENOENT" || r.spawnError === "EACCES") {
    throw new Error(
      `--dataplane haproxy runs HAProxy, and there is none at ${binary}: install it (Debian/Ubuntu: sudo apt-get install haproxy; macOS: brew install haproxy) or set OTTAVA_HAPROXY_BINARY to its path`,
    );
  }
  const m = /HA-?Proxy version (\S+)/i.exec(r.output);
  if (r.code !== 0 || !m)
    throw new Error(`${binary} -v did not report a HAProxy version (exit ${r.code}): ${r.output.trim().slice(0, 200)}`);
  const [major, minor] = m[1]!.split(".").map((n) => parseInt(n, 10));
  if (major! < 2 || (major === 2 && minor! < 2))
    throw new Error(`HAProxy ${m[1]} at ${binary} is too old: the local data plane needs 2.2 or newer (master-worker reloads)`);
  return m[1]!;
}

/** `haproxy -c`: the configuration's own errors (not those of binding its addresses), as a DriverError. */
export async function checkConfig(binary: string, configs: readonly string[], args: readonly string[] = []): Promise<void> {
  const r = await run(binary, ["-c", ...args, ...configs.flatMap((c) => ["-f", c])]);
  if (r.code !== 0) throw new DriverError(`HAProxy configuration rejected: ${reasonOf(r.output.split("\n").filter(Boolean))}`);
}

/** The addresses a configuration's frontends bind (`bind <address>:<port>`), with their frontend. */
export function bindsOf(config: string): { frontend: string; address: string; port: number }[] {
  const out: { frontend: string; address: string; port: number }[] = [];
  let section = "";
  for (const line of config.split("\n")) {
    const head = /^(\S+)\s+(\S+)/.exec(line);
    if (head) section = head[1] === "frontend" || head[1] === "listen" ? head[2]! : "";
    const bind = /^\s+bind\s+(\S+):(\d+)(?:\s|$)/.exec(line);
    if (bind && section) out.push({ frontend: section, address: bind[1]!.replace(/^\[(.*)\]$/, "$1"), port: Number(bind[2]) });
  }
  return out;
}

const BIND_ERRORS: Readonly<Record<string, string>> = {
  EADDRINUSE: "Address already in use",
  EACCES: "Permission denied",
  EADDRNOTAVAIL: "Cannot assign requested address",
};

/**
 * Before a reload: binds (and lets go) each address of `config` that the running configuration does
 * not bind, failing as HAProxy would fail the reload (a port another process holds, one this user
 * may not bind) but without disturbing it: HAProxy 2.6 retries a taken port for two seconds while
 * its old workers' listeners are paused, so every listener of the amphora would refuse connections meanwhile.
 */
export async function checkNewBinds(config: string, running: string | undefined): Promise<void> {
  const held = new Set(bindsOf(running ?? "").map((b) => `${b.address}:${b.port}`));
  for (const b of bindsOf(config)) {
    if (held.has(`${b.address}:${b.port}`)) continue;
    const code = await new Promise<string | undefined>((ok) => {
      const s = createServer();
      s.once("error", (e: NodeJS.ErrnoException) => ok(e.code ?? e.message));
      s.listen({ host: b.address, port: b.port, exclusive: true }, () => s.close(() => ok(undefined)));
    });
    if (code && code in BIND_ERRORS) {
      throw new DriverError(
        `HAProxy could not load the new configuration: frontend ${b.frontend}: cannot bind socket (${BIND_ERRORS[code]}) for [${b.address}:${b.port}]`,
      );
    }
  }
}

/** Does process `pid` exist (signal 0; EPERM: it exists, as another user's)? */
export const processAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (processAlive(pid)) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}

/** The command line of a process, or undefined when there is none (Linux's /proc, else ps). */
async function commandLine(pid: number): Promise<string | undefined> {
  try {
    return (await readFile(`/proc/${pid}/cmdline`, "utf8")).replace(/\0/g, " ");
  } catch {
    const r = await run("ps", ["-o", "command=", "-p", String(pid)]);
    return r.code === 0 ? r.output.trim() : undefined;
  }
}

/**
 * Stops a HAProxy master that a previous run left (it died without stopping its amphorae): the
 * process named by `pidFile`, only if its command line names `config`. Answers whether one was stopped.
 */
export async function killStale(pidFile: string, config: string): Promise<boolean> {
  let pid: number;
  try {
    pid = Number((await readFile(pidFile, "utf8")).trim().split("\n")[0]);
  } catch {
    return false;
  }
  if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid || !processAlive(pid)) return false;
  const cmd = await commandLine(pid);
  if (!cmd || !cmd.includes(config)) return false;
  process.kill(pid, "SIGTERM");
  if (!(await waitGone(pid, 5000))) process.kill(pid, "SIGKILL");
  await waitGone(pid, 2000);
  return true;
}

export class HaproxyProcess {
  private child: ChildProcess | undefined;
  /** Resolves once the master has exited and its stderr is read to the end. */
  private closed: Promise<void> = Promise.resolve();
  private lines: string[] = [];
  /** Lines seen since the process started (a count over the whole stream, not an index into `lines`). */
  private seen = 0;
  private watchers = new Set<() => void>();
  private lineListeners: ((line: string) => void)[] = [];
  /** Started successfully and not being stopped: an exit now is news. */
  private serving = false;

  constructor(
    private readonly binary: string,
    private readonly files: HaproxyFiles,
    private readonly log: Logger,
    /** What the log lines name (the amphora). */
    private readonly name: string,
    /** More arguments: `-L <local peer>`, `-n <maxconn>`. */
    readonly args: readonly string[] = [],
  ) {}

  /** The master's pid while it runs. */
  get pid(): number | undefined {
    return this.child && this.child.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  get running(): boolean {
    return this.pid !== undefined;
  }

  /** Starts the master on the configuration in place; fails (DriverError) with HAProxy's reason. */
  async start(): Promise<void> {
    if (this.running) throw new Error(`HAProxy of ${this.name} is already running`);
    this.lines = [];
    this.seen = 0;
    this.serving = false;
    // -Ws as the amphora's haproxy.service: master-worker, in the foreground whatever the configuration's `daemon` says.
    const args = ["-Ws", ...this.files.configs.flatMap((c) => ["-f", c]), "-p", this.files.pidFile, ...this.args];
    // Its own process group: a terminal's Ctrl-C reaches Ottava, which stops the amphorae itself.
    const child = spawn(this.binary, args, { cwd: this.files.cwd, detached: true, stdio: ["ignore", "ignore", "pipe"] });
    this.child = child;
    let partial = "";
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop()!;
      for (const line of parts) this.push(line);
    });
    child.once("error", (e) => this.push(`[ALERT] (0) : ${e.message}`));
    this.closed = new Promise<void>((ok) =>
      child.once("close", (code, signal) => {
        if (partial) this.push(partial);
        if (this.serving) this.log.warn("HAProxy exited", { amphora: this.name, code, signal, reason: reasonOf(this.lines.slice(-20)) });
        this.serving = false;
        ok();
      }),
    );
    // Neither the process nor its pipe keeps Ottava alive: stop() ends them.
    child.unref();
    (child.stderr as unknown as { unref(): void }).unref();
    const outcome = await this.waitFor(0, LOADED, LOADING_TIMEOUT_MS);
    if (outcome.what !== "success") {
      await this.stop(0);
      throw new DriverError(`HAProxy could not start: ${outcome.what === "timeout" ? "no answer in 15 s" : reasonOf(this.lines)}`);
    }
    this.serving = true;
    this.log.debug("HAProxy started", { amphora: this.name, pid: child.pid });
  }

  /**
   * Reloads the configuration in place (SIGUSR2 to the master): new workers take the listening
   * sockets, the old ones finish their connections. Fails (DriverError) with HAProxy's reason; the
   * old workers then go on serving the previous configuration.
   */
  async reload(): Promise<void> {
    const pid = this.pid;
    if (pid === undefined) throw new Error(`HAProxy of ${this.name} is not running`);
    // A master that has just loaded may not handle signals yet, and drops them: the signal is sent
    // again until the master says it is reloading.
    let taken: Awaited<ReturnType<HaproxyProcess["waitFor"]>> | undefined;
    for (let attempt = 0; attempt < 20 && taken?.what !== "reloading"; attempt++) {
      if (taken?.what === "exit") break;
      process.kill(pid, "SIGUSR2");
      taken = await this.waitFor(this.seen, RELOADING, 300);
    }
    if (taken?.what !== "reloading") throw new DriverError("HAProxy did not take the reload signal");
    const outcome = await this.waitFor(taken.at, LOADED, LOADING_TIMEOUT_MS);
    if (outcome.what === "success") return;
    // The old workers paused their listeners for the new ones, and resume them after the failure
    // (their CLI frontend, GLOBAL, last): connections are refused until then.
    if (outcome.what === "failure") await this.waitFor(outcome.at, RESUMED, 2000, true);
    throw new DriverError(
      `HAProxy could not load the new configuration: ${outcome.what === "timeout" ? "no answer in 15 s" : reasonOf(this.since(taken.at))}`,
    );
  }

  /**
   * Stops the master: a soft stop (SIGUSR1: the listeners close at once, connections under way
   * finish) for up to `graceMs`, then a hard one (SIGTERM), then SIGKILL to its whole process group.
   * A master that has just loaded may drop a signal: each is sent again until it exits.
   */
  async stop(graceMs = 2000): Promise<void> {
    this.serving = false;
    const pid = this.pid;
    if (pid === undefined) return this.closed;
    let exited = false;
    void this.closed.then(() => (exited = true));
    const signal = (target: number, s: NodeJS.Signals) => {
      try {
        process.kill(target, s);
      } catch {
        /* already gone */
      }
    };
    // These timers keep the process alive: a stop must end before Ottava exits.
    const repeat = async (s: NodeJS.Signals, ms: number) => {
      for (const until = Date.now() + ms; !exited && Date.now() < until;) {
        signal(pid, s);
        await Promise.race([this.closed, new Promise((ok) => setTimeout(ok, 250))]);
      }
      return exited;
    };
    if (graceMs > 0 && (await repeat("SIGUSR1", graceMs))) return;
    if (await repeat("SIGTERM", 3000)) return;
    signal(-pid, "SIGKILL");
    await Promise.race([this.closed, new Promise((ok) => setTimeout(ok, 3000))]);
  }

  /** Calls `fn` with each stderr line from now on (HAProxy's messages, and its connection logs when it logs to stderr). */
  onLine(fn: (line: string) => void): void {
    this.lineListeners.push(fn);
  }

  /** The last stderr lines (diagnostics; HAProxy never prints key material there). */
  recentLines(): string[] {
    return [...this.lines];
  }

  private since(from: number): string[] {
    return this.lines.slice(Math.max(0, this.lines.length - (this.seen - from)));
  }

  private push(line: string) {
    for (const fn of this.lineListeners) fn(line);
    this.lines.push(line);
    if (this.lines.length > KEPT_LINES) this.lines.shift();
    this.seen++;
    for (const w of [...this.watchers]) w();
  }

  /**
   * Waits for the first of the master's lines (any process's with `anyProcess`) after line `from`
   * that holds one of `patterns` (the key of the one found, and the line count just after it), or
   * its exit, or the timeout.
   */
  private waitFor(
    from: number,
    patterns: Record<string, string>,
    timeoutMs: number,
    anyProcess = false,
  ): Promise<{ what: string; at: number }> {
    const masterPid = anyProcess ? undefined : this.child?.pid;
    return new Promise((ok) => {
      let finished = false;
      const done = (what: string, at: number) => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        this.watchers.delete(check);
        ok({ what, at });
      };
      const check = () => {
        const fresh = this.since(from);
        fresh.forEach((line, i) => {
          if (masterPid !== undefined && !line.includes(`(${masterPid})`)) return;
          const found = Object.keys(patterns).find((k) => line.includes(patterns[k]!));
          if (found) done(found, this.seen - fresh.length + i + 1);
        });
      };
      const timer = setTimeout(() => done("timeout", this.seen), timeoutMs);
      this.watchers.add(check);
      void this.closed.then(() => {
        check();
        done("exit", this.seen);
      });
      check();
    });
  }
}
