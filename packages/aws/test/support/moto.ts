// moto_server for one test file: its own process on a free port of loopback (or of the address given), with AMI and instance-type
// validation on (../shared/notes/aws-emulation.md), stopped by the file. Its recorder keeps the request
// bodies, for the parameters moto accepts and ignores (ClientToken, MetadataOptions, Placement).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A request moto recorded: its EC2 Query API parameters ("Action", "ImageId", "TagSpecification.1.Tag.1.Key", ...). */
export interface RecordedRequest {
  method: string;
  url: string;
  params: Record<string, string>;
  /** The request body as sent (to look for text that must not be in any request). */
  body: string;
  /** The JSON protocols' operation (X-Amz-Target: "secretsmanager.CreateSecret"), if any. */
  target: string | undefined;
  /** Its User-Agent: Ottava's name their workload (`ottava/<workload>`, @ottava/edge workloadUserAgent). */
  userAgent: string;
}

export interface Moto {
  endpoint: string;
  /** Clears the emulator's state (POST /moto-api/reset). */
  reset(): Promise<void>;
  /** Starts recording afresh: what was recorded before is dropped. */
  record(): Promise<void>;
  /** The requests recorded since record(). */
  recorded(): Promise<RecordedRequest[]>;
  stop(): Promise<void>;
}

/** Credentials and Region for an SDK client pointed at the emulator (it accepts any). */
export const MOTO_CLIENT = { region: "us-east-1", credentials: { accessKeyId: "testing", secretAccessKey: "testing" } };

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const addr = server.address();
      server.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no free port"))));
    });
  });
}

/** Starts moto on `host` (default 127.0.0.1; the EC2 test bed gives its controller address). */
/**
 * Runs moto_server (its arguments) as long as its standard input is open, then stops it: moto goes with
 * the test process, even when that is killed (a bed's moto listens on an address that goes with it).
 * It leaves with moto's exit code when moto ends first.
 */
const WATCH = `
import os, signal, subprocess, sys, threading
moto = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL)
def stop(*_):
    moto.terminate()
    try:
        moto.wait(5)
    except subprocess.TimeoutExpired:
        moto.kill()
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
def watch():
    while sys.stdin.buffer.read1(4096):
        pass
    stop()
threading.Thread(target=watch, daemon=True).start()
os._exit(moto.wait())
`;

export async function startMoto(opts: { host?: string } = {}): Promise<Moto> {
  const host = opts.host ?? "127.0.0.1";
  const port = await freePort(host);
  const dir = mkdtempSync(join(tmpdir(), "ottava-moto-"));
  const endpoint = `http://${host}:${port}`;
  let stderr = "";
  const child: ChildProcess = spawn("python3", ["-c", WATCH, "moto_server", "-H", host, "-p", String(port)], {
    cwd: dir,
    env: {
      ...process.env,
      MOTO_ENABLE_AMI_VALIDATION: "true",
      MOTO_EC2_ENABLE_INSTANCE_TYPE_VALIDATION: "true",
      MOTO_RECORDER_FILEPATH: join(dir, "recording"),
    },
    stdio: ["pipe", "ignore", "pipe"],
  });
  child.stderr!.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const api = async (path: string, method = "POST") => {
    const res = await fetch(`${endpoint}/moto-api${path}`, { method });
    if (!res.ok) throw new Error(`moto ${path}: ${res.status}`);
    return res.text();
  };
  // It listens after 1-2 s (more on a loaded machine).
  for (const started = Date.now(); ;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited (${child.exitCode}): ${stderr}`);
    try {
      await api("/", "GET");
      break;
    } catch {
      if (Date.now() - started > 30_000) {
        child.stdin!.end();
        throw new Error(`moto_server did not answer on ${endpoint} within 30 s: ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    endpoint,
    reset: async () => void (await api("/reset")),
    record: async () => {
      await api("/recorder/reset-recording");
      await api("/recorder/start-recording");
    },
    recorded: async () =>
      (await api("/recorder/download-recording", "GET"))
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const e = JSON.parse(line) as {
            method: string;
            url: string;
            body: string | null;
            body_encoded: boolean;
            headers?: Record<string, string>;
          };
          const body = e.body_encoded ? Buffer.from(e.body ?? "", "base64").toString("utf8") : (e.body ?? "");
          const header = (name: string) => Object.entries(e.headers ?? {}).find(([k]) => k.toLowerCase() === name)?.[1];
          const target = header("x-amz-target");
          const userAgent = header("user-agent") ?? "";
          return { method: e.method, url: e.url, body, target, userAgent, params: Object.fromEntries(new URLSearchParams(body)) };
        }),
    stop: async () => {
      child.stdin!.end(); // the watcher stops moto and leaves
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Makes an IAM instance profile in the emulator (it refuses RunInstances with a profile it does not
 * know): one Query API call, its signature a stand-in (moto checks none; it reads the service from the
 * credential scope).
 */
export async function createInstanceProfile(moto: Pick<Moto, "endpoint">, name: string): Promise<void> {
  const res = await fetch(moto.endpoint, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      authorization: `AWS4-HMAC-SHA256 Credential=testing/20260101/${MOTO_CLIENT.region}/iam/aws4_request, SignedHeaders=host, Signature=0`,
    },
    body: new URLSearchParams({ Action: "CreateInstanceProfile", Version: "2010-05-08", InstanceProfileName: name }).toString(),
  });
  if (!res.ok) throw new Error(`moto CreateInstanceProfile ${name}: ${res.status} ${await res.text()}`);
}
