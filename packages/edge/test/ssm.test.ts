// The secrets port on SSM (ssmSecretReader, over aws-json.ts's signed calls), against a stand-in for SSM's endpoint.
import { createServer, type IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { isUnavailable } from "@ottava/core";
import { ssmSecretReader } from "@ottava/edge";

/** A stand-in for SSM's endpoint: answers each request with the next of `answers`, and keeps what it got. */
async function ssmEndpoint(answers: { status: number; body: unknown }[]) {
  const got: { headers: IncomingMessage["headers"]; body: string }[] = [];
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const c of req) body += c;
    got.push({ headers: req.headers, body });
    const a = answers[Math.min(got.length - 1, answers.length - 1)]!;
    res.writeHead(a.status, { "content-type": "application/x-amz-json-1.1" }).end(JSON.stringify(a.body));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
  return { endpoint, got, close: () => new Promise((ok) => server.close(ok)) };
}
const credentials = async () => ({
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
  sessionToken: "session",
});

describe("ssmSecretReader", () => {
  it("asks SSM's GetParameter for the decrypted value, in one SigV4-signed request", async () => {
    const ssm = await ssmEndpoint([
      { status: 200, body: { Parameter: { Name: "/ottava/dev/ClientCert", Value: "decrypted", Version: 2 } } },
    ]);
    try {
      const read = ssmSecretReader({ endpoint: ssm.endpoint, region: "eu-west-1", credentials });
      expect(await read("/ottava/dev/ClientCert:2")).toBe("decrypted");
      expect(ssm.got).toHaveLength(1);
      const { headers, body } = ssm.got[0]!;
      expect(JSON.parse(body)).toEqual({ Name: "/ottava/dev/ClientCert:2", WithDecryption: true });
      expect(headers["x-amz-target"]).toBe("AmazonSSM.GetParameter");
      expect(headers["content-type"]).toBe("application/x-amz-json-1.1");
      expect(headers["x-amz-security-token"]).toBe("session");
      expect(headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/ssm\/aws4_request, SignedHeaders=[a-z0-9;-]*x-amz-target[a-z0-9;-]*, Signature=[0-9a-f]{64}$/,
      );
    } finally {
      await ssm.close();
    }
  });

  it("retries throttling and 5xx answers, then names SSM's error (never a value)", async () => {
    const ssm = await ssmEndpoint([
      { status: 400, body: { __type: "com.amazonaws.ssm#ThrottlingException", message: "Rate exceeded" } },
      { status: 500, body: { __type: "InternalServerError" } },
      { status: 200, body: { Parameter: { Value: "v" } } },
    ]);
    try {
      expect(await ssmSecretReader({ endpoint: ssm.endpoint, credentials })("/p/x")).toBe("v");
      expect(ssm.got).toHaveLength(3);
    } finally {
      await ssm.close();
    }
    const missing = await ssmEndpoint([{ status: 400, body: { __type: "ParameterNotFound", message: "Parameter /p/y not found." } }]);
    try {
      const read = ssmSecretReader({ endpoint: missing.endpoint, credentials });
      await expect(read("/p/y")).rejects.toMatchObject({
        name: "ParameterNotFound",
        message: "SSM GetParameter of /p/y: ParameterNotFound: Parameter /p/y not found.",
      });
      expect(missing.got).toHaveLength(1);
    } finally {
      await missing.close();
    }
  });

  it("marks throttling and 5xx that outlast the attempts, and an endpoint that does not answer, unavailable; a refusal not", async () => {
    const throttled = await ssmEndpoint([{ status: 400, body: { __type: "ThrottlingException", message: "Rate exceeded" } }]);
    const failing = await ssmEndpoint([{ status: 503, body: {} }]);
    const refusing = await ssmEndpoint([{ status: 400, body: { __type: "AccessDeniedException", message: "no" } }]);
    try {
      const errorOf = (endpoint: string) => ssmSecretReader({ endpoint, credentials })("/p/x").catch((e: unknown) => e);
      const t = await errorOf(throttled.endpoint);
      expect(t).toMatchObject({ name: "ThrottlingException" });
      expect(isUnavailable(t)).toBe(true);
      expect(throttled.got).toHaveLength(3);
      const f = await errorOf(failing.endpoint);
      expect(f).toMatchObject({ name: "HTTP503" });
      expect(isUnavailable(f)).toBe(true);
      const r = await errorOf(refusing.endpoint);
      expect(r).toMatchObject({ name: "AccessDeniedException" });
      expect(isUnavailable(r)).toBe(false);
    } finally {
      await Promise.all([throttled.close(), failing.close(), refusing.close()]);
    }
    // A port nothing listens on (the stand-in closed): refused, unavailable, the input in no message.
    const gone = await ssmSecretReader({ endpoint: refusing.endpoint, credentials })("/p/secret-name").catch((e: unknown) => e);
    expect(gone).toMatchObject({ name: "NetworkingError", message: "SSM GetParameter of /p/secret-name: fetch failed" });
    expect(isUnavailable(gone)).toBe(true);
  });

  it("fails when SSM answers no value", async () => {
    const ssm = await ssmEndpoint([{ status: 200, body: {} }]);
    try {
      await expect(ssmSecretReader({ endpoint: ssm.endpoint, credentials })("/p/x")).rejects.toThrow("GetParameter answered no value");
    } finally {
      await ssm.close();
    }
  });
});
