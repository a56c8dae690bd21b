// Calls to AWS services' JSON protocols (awsJson1_0 and awsJson1_1: SSM, DynamoDB, Step Functions, …),
// each one HTTPS POST naming its operation in X-Amz-Target, signed with the SDK's SigV4 signer, SHA-256
// and credential chain (already in every bundle, for DynamoDB) and sent with fetch: for the call or two
// a process makes of a service whose SDK client would bring its whole service schema into the bundle.
// The signer's and the credential chain's modules are imported at the first call: a process that makes
// none never loads them.
import { markUnavailable } from "@ottava/core";
import { Sha256 } from "@smithy/core/checksum";
import type { SignatureV4 } from "@smithy/signature-v4";

/** Where and as whom a service is called (tests give a local endpoint and fixed credentials). */
export interface AwsJsonOptions {
  /** Default: the service's regional endpoint, https://<signing name>.<region>.amazonaws.com/. */
  endpoint?: string;
  /** Default: AWS_REGION. */
  region?: string;
  /** Default: the SDK's provider chain (on Lambda and ECS, the function's or task's role). */
  credentials?: () => Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken?: string }>;
}

/** A service of the JSON protocols: the name it signs with, its X-Amz-Target prefix and its protocol's version. */
export interface AwsJsonService {
  signingName: string;
  targetPrefix: string;
  jsonVersion: "1.0" | "1.1";
}

/**
 * Calls `operation` with `input` and answers the service's answer, parsed. Throttling and 5xx answers
 * are retried (3 attempts); any other error is thrown named as the service names it, its message
 * `label` (what the call was, e.g. `SSM GetParameter of /p/x`), the error's name and the service's
 * message, never the input. Throttling and 5xx answers still failing after the attempts, and a service
 * that cannot be reached, are marked unavailable (@ottava/core's markUnavailable), as
 * classifyUnavailable marks the SDK's: a flow retries them, the API answers them 503.
 */
export type AwsJsonCall = (operation: string, input: unknown, label: string) => Promise<Record<string, unknown>>;

const ATTEMPTS = 3;

/** A caller of a service's operations (its signer made at the first call, then kept). */
export function awsJsonClient({ signingName, targetPrefix, jsonVersion }: AwsJsonService, opts: AwsJsonOptions = {}): AwsJsonCall {
  const region = opts.region ?? process.env.AWS_REGION ?? "us-east-1";
  const url = new URL(opts.endpoint ?? `https://${signingName}.${region}.amazonaws.com/`);
  let signing: Promise<SignatureV4> | undefined;
  return async (operation, input, label) => {
    signing ??= Promise.all([
      import("@smithy/signature-v4"),
      opts.credentials ?? import("@aws-sdk/credential-provider-node").then((m) => m.defaultProvider()),
    ]).then(([{ SignatureV4 }, credentials]) => new SignatureV4({ service: signingName, region, credentials, sha256: Sha256 }));
    const signer = await signing;
    const body = JSON.stringify(input);
    for (let attempt = 1; ; attempt++) {
      const signed = await signer.sign({
        method: "POST",
        protocol: url.protocol,
        hostname: url.hostname,
        ...(url.port ? { port: Number(url.port) } : {}),
        path: url.pathname,
        query: {},
        headers: {
          host: url.host,
          "content-type": `application/x-amz-json-${jsonVersion}`,
          "x-amz-target": `${targetPrefix}.${operation}`,
        },
        body,
      });
      let res: Response;
      try {
        res = await fetch(url, { method: "POST", headers: signed.headers, body });
      } catch (e) {
        // No answer (refused, reset, DNS): the cause says which, never the input.
        const cause = (e as { cause?: { code?: unknown } }).cause;
        const code = typeof cause?.code === "string" ? cause.code : "NetworkError";
        throw markUnavailable(Object.assign(new Error(`${label}: ${code}`, { cause: e }), { name: code }));
      }
      const text = await res.text();
      let answer: Record<string, unknown> & { __type?: unknown; message?: unknown; Message?: unknown } = {};
      try {
        answer = text ? JSON.parse(text) : {};
      } catch {
        // an answer that is not JSON: its status says the rest
      }
      if (res.ok) return answer;
      const name =
        String(answer.__type ?? "")
          .split("#")
          .pop() || `HTTP${res.status}`;
      const unavailable = res.status >= 500 || /Throttl/.test(name);
      if (unavailable && attempt < ATTEMPTS) {
        await new Promise((ok) => setTimeout(ok, 100 * 2 ** attempt));
        continue;
      }
      const message = answer.message ?? answer.Message;
      const error = Object.assign(new Error(`${label}: ${name}${message ? `: ${message}` : ""}`), { name });
      throw unavailable ? markUnavailable(error) : error;
    }
  };
}
