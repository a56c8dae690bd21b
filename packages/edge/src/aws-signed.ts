// One signed POST to an AWS service, for the few calls a process makes of a service whose SDK client
// would bring its whole service schema into the bundle: signed with the SDK's SigV4 signer, SHA-256
// and credential chain (already in every bundle, for DynamoDB) and sent with fetch. The protocols on
// top of it: aws-json.ts (SSM, ...) and aws-query.ts (EC2). The signer's and the credential chain's
// modules are imported at the first call: a process that makes none never loads them.
import { markUnavailable } from "@ottava/core";
import { Sha256 } from "@smithy/core/checksum";
import type { SignatureV4 } from "@smithy/signature-v4";
import { workloadUserAgent } from "./workload";

/** Where and as whom a service is called (tests give a local endpoint and fixed credentials). */
export interface AwsOptions {
  /** Default: the service's regional endpoint, https://<signing name>.<region>.amazonaws.com/. */
  endpoint?: string | undefined;
  /** Default: AWS_REGION. */
  region?: string | undefined;
  /** Default: the SDK's provider chain (on Lambda and ECS, the function's or task's role). */
  credentials?: () => Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken?: string }>;
}

/** A service's error as its answer names it. */
export interface AwsError {
  name: string;
  message?: unknown;
}

/**
 * Sends `body` with `headers` (and host), signed; answers the text of a 2xx answer. Throttling
 * (an error named Throttl…, or RequestLimitExceeded), 5xx answers and lost connections are retried (3
 * attempts), then thrown marked unavailable (@ottava/core's markUnavailable: the API answers 503, a
 * task's flow retries). An error is named as the service names it (`errorOf` reads it from the
 * answer), its message `label` (what the call was), the name and the service's message, never the body.
 */
export type AwsPost = (
  headers: Record<string, string>,
  body: string,
  label: string,
  errorOf: (status: number, text: string) => AwsError,
) => Promise<string>;

const ATTEMPTS = 3;
const THROTTLED = /Throttl|^RequestLimitExceeded$|^SlowDown$/;

/** A sender of signed requests to the service signing as `signingName` (its signer made at the first call, then kept). */
export function awsPost(signingName: string, opts: AwsOptions = {}): AwsPost {
  const region = opts.region ?? process.env.AWS_REGION ?? "us-east-1";
  const url = new URL(opts.endpoint ?? `https://${signingName}.${region}.amazonaws.com/`);
  let signing: Promise<SignatureV4> | undefined;
  return async (headers, body, label, errorOf) => {
    signing ??= Promise.all([
      import("@smithy/signature-v4"),
      opts.credentials ?? import("@aws-sdk/credential-provider-node").then((m) => m.defaultProvider()),
    ]).then(([{ SignatureV4 }, credentials]) => new SignatureV4({ service: signingName, region, credentials, sha256: Sha256 }));
    const signer = await signing;
    for (let attempt = 1; ; attempt++) {
      const signed = await signer.sign({
        method: "POST",
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port ? { port: Number(url.port) } : {}),
        path: url.pathname,
        query: {},
        headers: { host: url.host, ...headers },
        body,
      });
      let error: Error & { name: string };
      let unavailable: boolean;
      try {
        // The workload in the User-Agent (./workload.ts), which SigV4 leaves unsigned.
        const res = await fetch(url, { method: "POST", headers: { ...signed.headers, "user-agent": workloadUserAgent() }, body });
        const text = await res.text();
        if (res.ok) return text;
        const { name, message } = errorOf(res.status, text);
        error = Object.assign(new Error(`${label}: ${name}${message ? `: ${String(message)}` : ""}`), { name });
        unavailable = res.status >= 500 || THROTTLED.test(name);
      } catch (e) {
        // No answer: the connection was refused, reset or timed out.
        error = Object.assign(new Error(`${label}: ${(e as Error).message}`, { cause: e }), { name: "NetworkingError" });
        unavailable = true;
      }
      if (!unavailable) throw error;
      if (attempt >= ATTEMPTS) throw markUnavailable(error);
      await new Promise((ok) => setTimeout(ok, 100 * 2 ** attempt));
    }
  };
}
