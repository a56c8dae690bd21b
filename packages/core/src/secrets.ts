// The settings that are secrets, and how a process on AWS reads them. Locally (`npm start`) each is its
// plain setting, OTTAVA_<NAME>, as any other. On AWS no secret is ever in a function's environment: the
// stacks put each in an SSM Parameter Store SecureString and give a function OTTAVA_<NAME>_PARAMETER (the
// parameter's name, with its version: `/ottava/prod/CaPrivateKey:3`) only if the function needs it; the
// function reads it once, when it first needs its settings (`configLoader`), and keeps it for its life.
// A changed secret is a new parameter version, so a new function configuration: every warm function is
// replaced, none keeps the old value.
//
// The SSM reader's modules are imported only when a parameter is to be read: a process that reads none (npm start,
// the API under noauth, the housekeeping jobs) never loads it.
import { createHash, createHmac } from "node:crypto";
import { SECRET_SETTINGS, loadConfig, parameterSetting, type Config } from "./config";

/** Reads one secret: the decrypted value of an SSM parameter (`name` or `name:version`). */
export type SecretReader = (parameter: string) => Promise<string>;

type Env = Record<string, string | undefined>;
const set = (v: string | undefined): v is string => v !== undefined && v !== "";

/**
 * The environment with every secret that has an OTTAVA_<NAME>_PARAMETER read into OTTAVA_<NAME>, each
 * parameter read once, all at the same time. A secret set both ways is refused (which one was meant?).
 * Errors name the setting and the parameter, never a value.
 */
export async function readSecretSettings(env: Env, read?: SecretReader): Promise<Env> {
  const wanted = SECRET_SETTINGS.filter((name) => set(env[parameterSetting(name)]));
  if (wanted.length === 0) return env;
  const both = wanted.filter((name) => set(env[`OTTAVA_${name}`]));
  if (both.length)
    throw new Error(`set either OTTAVA_<NAME> or OTTAVA_<NAME>_PARAMETER, not both: ${both.map((n) => `OTTAVA_${n}`).join(", ")}`);
  const reader = read ?? (await ssmSecretReader());
  const values = await Promise.all(
    wanted.map(async (name) => {
      const parameter = env[parameterSetting(name)]!;
      let value: string;
      try {
        value = await reader(parameter);
      } catch (e) {
        throw new Error(
          `${parameterSetting(name)}: the parameter ${parameter} could not be read (${(e as Error)?.name ?? "Error"}: ${(e as Error)?.message ?? String(e)})`,
          { cause: e },
        );
      }
      if (value === "") throw new Error(`${parameterSetting(name)}: the parameter ${parameter} is empty`);
      return [`OTTAVA_${name}`, value] as const;
    }),
  );
  return { ...env, ...Object.fromEntries(values) };
}

/** Where and as whom GetParameter is asked (tests give a local endpoint and fixed credentials). */
export interface SsmReaderOptions {
  /** Default: SSM's regional endpoint, https://ssm.<region>.amazonaws.com/. */
  endpoint?: string;
  /** Default: AWS_REGION. */
  region?: string;
  /** Default: the SDK's provider chain (on Lambda and ECS, the function's or task's role). */
  credentials?: () => Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken?: string }>;
}

/** SHA-256 and HMAC-SHA256 as SignatureV4 asks for them (its `sha256` constructor), from node:crypto. */
type SourceData = string | ArrayBuffer | ArrayBufferView;
const bytes = (d: SourceData) =>
  typeof d === "string" ? d : d instanceof ArrayBuffer ? new Uint8Array(d) : new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
class Sha256 {
  private readonly hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash("sha256") : createHmac("sha256", bytes(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {}
}

const GET_PARAMETER_ATTEMPTS = 3;

/**
 * Reads SecureString (or String) parameters with SSM's GetParameter, decrypted: one HTTPS request signed
 * with the SDK's SigV4 signer and credential chain (already in every bundle, for DynamoDB), not the
 * SDK's SSM client, whose service schema alone would add some 220 KB to the API's bundle for this one
 * call. Throttling and 5xx answers are retried (3 attempts). Errors name SSM's error and the parameter,
 * never a value.
 */
export async function ssmSecretReader(opts: SsmReaderOptions = {}): Promise<SecretReader> {
  const [{ SignatureV4 }, credentials] = await Promise.all([
    import("@smithy/signature-v4"),
    opts.credentials ?? import("@aws-sdk/credential-provider-node").then((m) => m.defaultProvider()),
  ]);
  const region = opts.region ?? process.env.AWS_REGION ?? "us-east-1";
  const url = new URL(opts.endpoint ?? `https://ssm.${region}.amazonaws.com/`);
  const signer = new SignatureV4({ service: "ssm", region, credentials, sha256: Sha256 });
  return async (parameter) => {
    const body = JSON.stringify({ Name: parameter, WithDecryption: true });
    for (let attempt = 1; ; attempt++) {
      const signed = await signer.sign({
        method: "POST",
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port ? { port: Number(url.port) } : {}),
        path: url.pathname,
        query: {},
        headers: { host: url.host, "content-type": "application/x-amz-json-1.1", "x-amz-target": "AmazonSSM.GetParameter" },
        body,
      });
      const res = await fetch(url, { method: "POST", headers: signed.headers, body });
      const text = await res.text();
      let answer: { Parameter?: { Value?: unknown }; __type?: string; message?: string; Message?: string } = {};
      try {
        answer = text ? JSON.parse(text) : {};
      } catch {
        // an answer that is not JSON: its status says the rest
      }
      if (res.ok) {
        const value = answer.Parameter?.Value;
        if (typeof value !== "string") throw new Error("GetParameter answered no value");
        return value;
      }
      const name =
        String(answer.__type ?? "")
          .split("#")
          .pop() || `HTTP${res.status}`;
      if ((res.status >= 500 || /Throttl/.test(name)) && attempt < GET_PARAMETER_ATTEMPTS) {
        await new Promise((ok) => setTimeout(ok, 100 * 2 ** attempt));
        continue;
      }
      const message = answer.message ?? answer.Message;
      throw Object.assign(new Error(`SSM GetParameter of ${parameter}: ${name}${message ? `: ${message}` : ""}`), { name });
    }
  };
}

/**
 * The process's settings, its secrets read first (readSecretSettings), made once: every call answers
 * the same settings. A failure (SSM unreachable, a parameter missing) is not kept: the next call tries
 * again, so a Lambda whose first invocation failed does not fail every later one.
 */
export function configLoader(env: Env = process.env, read?: SecretReader): () => Promise<Config> {
  let loading: Promise<Config> | undefined;
  return () => {
    loading ??= readSecretSettings(env, read)
      .then((resolved) => loadConfig(resolved))
      .catch((e: unknown) => {
        loading = undefined;
        throw e;
      });
    return loading;
  };
}
