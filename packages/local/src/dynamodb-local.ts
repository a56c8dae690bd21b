// Runs AWS DynamoDB Local (the Java jar) as a child process for local development.
//
// The jar is fetched by scripts/fetch-dynamodb-local.mjs (root `postinstall`);
// if it is missing, startDynamoDbLocal() runs that script first.

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { dirname, join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { freePort } from "@ottava/amphora/free-port";

export interface DynamoDbLocalOptions {
  /** `-inMemory`, else `-dbPath dataDir`. */
  inMemory: boolean;
  /** Absolute; created if missing; also the java process cwd (it writes dynamodb-local-metadata.json there). */
  dataDir: string;
  /** Default: a free port picked by the OS. */
  port?: number;
  /** Default: $OTTAVA_DYNAMODB_LOCAL_DIR, else <repo>/node_modules/.cache/ottava/dynamodb-local. */
  jarDir?: string;
  /** Default "java". */
  javaPath?: string;
  log?: (msg: string, extra?: Record<string, unknown>) => void;
}

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  pid: number;
  stop(): Promise<void>;
}

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = resolve(HERE, "..", "..", "..");
const FETCH_SCRIPT = resolve(HERE, "..", "scripts", "fetch-dynamodb-local.mjs");
const DEFAULT_JAR_DIR = join(REPO_ROOT, "node_modules", ".cache", "ottava", "dynamodb-local");

const JAR = "DynamoDBLocal.jar";
const LIB = "DynamoDBLocal_lib";
const READY_TIMEOUT_MS = 20_000;
const POLL_MS = 100;
const STOP_GRACE_MS = 3_000;
const OUTPUT_LINES = 50;
const AUTO_PORT_ATTEMPTS = 3;

class PortInUseError extends Error {}

export async function startDynamoDbLocal(options: DynamoDbLocalOptions): Promise<DynamoDbLocal> {
  // java runs with cwd = dataDir, so a relative -dbPath would resolve twice.
  const opts = { ...options, dataDir: resolve(options.dataDir) };
  const log = opts.log ?? (() => {});
  const jarDir = resolve(opts.jarDir ?? (process.env.OTTAVA_DYNAMODB_LOCAL_DIR || DEFAULT_JAR_DIR));
  ensureJar(jarDir, log);
  mkdirSync(opts.dataDir, { recursive: true });

  // A port picked by the OS may be taken again before java binds it: retry then.
  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? (await freePort());
    try {
      return await launch(opts, jarDir, port, log);
    } catch (err) {
      if (opts.port !== undefined || attempt >= AUTO_PORT_ATTEMPTS || !(err instanceof PortInUseError)) throw err;
      log("dynamodb-local: port taken, retrying with another one", { port });
    }
  }
}

function ensureJar(jarDir: string, log: NonNullable<DynamoDbLocalOptions["log"]>): void {
  if (existsSync(join(jarDir, JAR))) return;
  log("dynamodb-local: jar missing, fetching it", { jarDir });
  const res = spawnSync(process.execPath, [FETCH_SCRIPT], {
    stdio: "inherit",
    env: { ...process.env, OTTAVA_DYNAMODB_LOCAL_DIR: jarDir },
  });
  if (res.error || res.status !== 0 || !existsSync(join(jarDir, JAR))) {
    throw new Error(
      `DynamoDB Local is not installed in ${jarDir} and fetching it failed` +
        (res.error ? ` (${res.error.message})` : ` (exit ${res.status ?? res.signal})`) +
        `; run \`node ${FETCH_SCRIPT}\` to retry.`,
    );
  }
}

async function launch(
  opts: DynamoDbLocalOptions,
  jarDir: string,
  port: number,
  log: NonNullable<DynamoDbLocalOptions["log"]>,
): Promise<DynamoDbLocal> {
  const javaPath = opts.javaPath ?? "java";
  const args = [
    // Quick start-up for a local emulator: the C1 compiler only and the serial collector (~1 s less).
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    `-Djava.library.path=${join(jarDir, LIB)}`,
    "-jar",
    join(jarDir, JAR),
    "-port",
    String(port),
    "-disableTelemetry",
    "-sharedDb",
    ...(opts.inMemory ? ["-inMemory"] : ["-dbPath", opts.dataDir]),
  ];
  const started = Date.now();
  log("dynamodb-local: starting", { port, inMemory: opts.inMemory, dataDir: opts.dataDir });

  const child = spawn(javaPath, args, { cwd: opts.dataDir, detached: false, stdio: ["ignore", "pipe", "pipe"] });
  guardChild(child);

  // Keep the tail of stdout+stderr for error messages. The pipes stay drained for
  // the child's whole life, so java never blocks on a full pipe.
  const output: string[] = [];
  const pushLine = (line: string) => {
    output.push(line);
    if (output.length > OUTPUT_LINES) output.shift();
  };
  const capture = (stream: Readable | null) => {
    if (!stream) return;
    let partial = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      const lines = (partial + chunk).split(/\r?\n/);
      partial = lines.pop() ?? "";
      for (const line of lines) pushLine(line);
    });
    stream.on("end", () => {
      if (partial) pushLine(partial);
      partial = "";
    });
  };
  capture(child.stdout);
  capture(child.stderr);
  const tail = () => (output.length ? `\n--- DynamoDB Local output ---\n${output.join("\n")}` : "");
  // Java does not exit when Jetty cannot bind (non-daemon threads linger), so watch the output.
  const bindFailed = () => output.some((l) => /BindException|Address already in use|Failed to bind/i.test(l));

  let spawnError: NodeJS.ErrnoException | undefined;
  let exited = false;
  let ready = false;
  let stopping = false;
  let stopPromise: Promise<void> | undefined;
  const exitPromise = new Promise<void>((resolveExit) => {
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      if (exited) return;
      exited = true;
      unguardChild(child);
      if (ready && !stopping) log("dynamodb-local: exited unexpectedly", { code, signal, output: output.slice(-10) });
      resolveExit();
    };
    // 'close' waits for stdio to end too, so the captured output is complete.
    child.once("close", onExit);
    child.once("error", (err: NodeJS.ErrnoException) => {
      spawnError ??= err;
      // If spawning failed there is no process and maybe no 'close'.
      if (child.pid === undefined) onExit(null, null);
    });
  });

  const stop = (): Promise<void> => {
    stopPromise ??= (async () => {
      stopping = true;
      if (exited) return;
      setRef(child, true); // keep this process alive until the child is really gone
      child.kill("SIGTERM");
      const timer = setTimeout(() => {
        if (!exited) child.kill("SIGKILL");
      }, STOP_GRACE_MS);
      try {
        await exitPromise;
      } finally {
        clearTimeout(timer);
        unguardChild(child); // the exit hook stays until the child is gone, covering the grace period
      }
    })();
    return stopPromise;
  };

  const deadline = started + READY_TIMEOUT_MS;
  try {
    for (;;) {
      if (spawnError) {
        const hint =
          spawnError.code === "ENOENT"
            ? ` — \`${javaPath}\` was not found; DynamoDB Local needs a Java runtime: install Java 17 (e.g. \`apt-get install openjdk-17-jre-headless\`, \`brew install openjdk@17\`) or pass javaPath`
            : "";
        throw new Error(`could not start DynamoDB Local: ${spawnError.message}${hint}${tail()}`);
      }
      if (exited) {
        await exitPromise; // output is complete
        const msg = `DynamoDB Local exited during startup (${child.signalCode ?? `code ${child.exitCode}`})${tail()}`;
        throw bindFailed() ? new PortInUseError(msg) : new Error(msg);
      }
      if (bindFailed()) {
        throw new PortInUseError(`DynamoDB Local could not listen on port ${port}${tail()}`);
      }
      if (Date.now() >= deadline) {
        throw new Error(`DynamoDB Local did not become ready on port ${port} within ${READY_TIMEOUT_MS / 1000}s${tail()}`);
      }
      if ((await tcpAccepts(port)) && (await httpAnswers(port)) && !exited && !bindFailed()) break;
      await sleep(POLL_MS);
    }
  } catch (err) {
    await stop();
    throw err;
  }

  ready = true;
  // From now on the child alone does not keep this process alive: if the parent
  // finishes without calling stop(), the 'exit' hook kills java.
  setRef(child, false);
  const pid = child.pid as number;
  log("dynamodb-local: ready", { port, pid, ms: Date.now() - started });
  return { endpoint: `http://127.0.0.1:${port}`, port, pid, stop };
}

function setRef(child: ChildProcess, ref: boolean): void {
  for (const h of [child, child.stdout, child.stderr] as Array<{ ref?: () => void; unref?: () => void } | null>) {
    if (ref) h?.ref?.();
    else h?.unref?.();
  }
}

// --- never leave a Java process behind --------------------------------------
//
// 'exit' covers normal termination and process.exit(). A fatal signal with no
// handler (e.g. `kill <pid>` or SIGHUP) ends Node without 'exit', so while java
// runs we also listen for those signals; if no one else handles the signal we
// kill java and re-raise it, keeping Node's default behaviour. If the app has
// its own handler, it decides (and process.exit() then triggers the 'exit' hook).

const liveChildren = new Set<ChildProcess>();
const FATAL_SIGNALS: NodeJS.Signals[] = process.platform === "win32" ? ["SIGINT", "SIGHUP"] : ["SIGINT", "SIGTERM", "SIGHUP"];

function killAllSync(): void {
  for (const child of liveChildren) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill("SIGKILL");
      } catch {
        // already gone
      }
    }
  }
  liveChildren.clear();
}

function onFatalSignal(signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) > 1) return; // the app handles it
  killAllSync();
  removeHooks();
  process.kill(process.pid, signal);
}

function guardChild(child: ChildProcess): void {
  if (liveChildren.size === 0) {
    process.on("exit", killAllSync);
    for (const s of FATAL_SIGNALS) process.on(s, onFatalSignal);
  }
  liveChildren.add(child);
}

function unguardChild(child: ChildProcess): void {
  if (liveChildren.delete(child) && liveChildren.size === 0) removeHooks();
}

function removeHooks(): void {
  process.off("exit", killAllSync);
  for (const s of FATAL_SIGNALS) process.off(s, onFatalSignal);
}

function tcpAccepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host: "127.0.0.1", port });
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(1_000, () => finish(false));
    socket.once("connect", () => finish(true));
    socket.once("error", () => finish(false));
  });
}

/**
 * POSTs a ListTables call; true once DynamoDB Local answers with any HTTP status
 * (it always sets x-amzn-RequestId, which tells it apart from some other server
 * that might hold the port). Without an Authorization header it answers 400
 * MissingAuthenticationToken; with this dummy one, 200.
 */
function httpAnswers(port: number): Promise<boolean> {
  return new Promise((done) => {
    const body = "{}";
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/",
        agent: false,
        timeout: 2_000,
        headers: {
          "Content-Type": "application/x-amz-json-1.0",
          "X-Amz-Target": "DynamoDB_20120810.ListTables",
          Authorization: "AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x",
          "Content-Length": Buffer.byteLength(body),
          Connection: "close",
        },
      },
      (res) => {
        res.resume();
        done(res.headers["x-amzn-requestid"] !== undefined);
      },
    );
    req.once("timeout", () => req.destroy());
    req.once("error", () => done(false));
    req.once("close", () => done(false)); // no-op if already answered
    req.end(body);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
