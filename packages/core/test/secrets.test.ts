import { describe, expect, it } from "vitest";
import { createServer, type IncomingMessage } from "node:http";
import { SECRET_SETTINGS, configLoader, loadConfig, readSecretSettings, ssmSecretReader, type SecretReader } from "@ottava/core";

const KEY = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n";

/** A reader over a map of parameters that counts how often each is read. */
function fakeParameters(values: Record<string, string>) {
  const reads: string[] = [];
  const read: SecretReader = async (parameter) => {
    reads.push(parameter);
    const v = values[parameter];
    if (v === undefined) throw Object.assign(new Error(`Parameter ${parameter} not found.`), { name: "ParameterNotFound" });
    return v;
  };
  return { read, reads };
}

describe("secrets from SSM parameters (OTTAVA_<NAME>_PARAMETER)", () => {
  it("are read into their settings, each parameter once", async () => {
    const { read, reads } = fakeParameters({ "/ottava/dev/CaPrivateKey:3": KEY, "/ottava/dev/HeartbeatKey:1": "hb-secret" });
    const env = await readSecretSettings(
      {
        OTTAVA_CA_PRIVATE_KEY_PARAMETER: "/ottava/dev/CaPrivateKey:3",
        OTTAVA_HEARTBEAT_KEY_PARAMETER: "/ottava/dev/HeartbeatKey:1",
        OTTAVA_LOG_LEVEL: "warn",
      },
      read,
    );
    expect(env).toMatchObject({ OTTAVA_CA_PRIVATE_KEY: KEY, OTTAVA_HEARTBEAT_KEY: "hb-secret", OTTAVA_LOG_LEVEL: "warn" });
    expect(reads.sort()).toEqual(["/ottava/dev/CaPrivateKey:3", "/ottava/dev/HeartbeatKey:1"]);
    const config = loadConfig(env);
    expect(config.caPrivateKey).toBe(KEY);
    expect(config.heartbeatKey).toBe("hb-secret");
  });

  it("cover every secret setting, and the Keystone password makes a keystone configuration", async () => {
    const values = Object.fromEntries(SECRET_SETTINGS.map((name) => [`/p/${name}`, `value-of-${name}`]));
    const env = await readSecretSettings(
      {
        ...Object.fromEntries(SECRET_SETTINGS.map((name) => [`OTTAVA_${name}_PARAMETER`, `/p/${name}`])),
        OTTAVA_AUTH_STRATEGY: "keystone",
        OTTAVA_KEYSTONE_URL: "https://keystone.example/v3",
        OTTAVA_KEYSTONE_USERNAME: "octavia",
        OTTAVA_KEYSTONE_PROJECT_NAME: "service",
      },
      fakeParameters(values).read,
    );
    const config = loadConfig(env);
    expect(config.keystone?.password).toBe("value-of-KEYSTONE_PASSWORD");
    expect(config.caPrivateKeyPassphrase).toBe("value-of-CA_PRIVATE_KEY_PASSPHRASE");
    expect(config.clientCert).toBe("value-of-CLIENT_CERT");
  });

  it("read nothing, and load no SSM client, when no parameter is named (npm start's plain settings)", async () => {
    const env = { OTTAVA_CA_PRIVATE_KEY: KEY };
    const read: SecretReader = async () => {
      throw new Error("must not be called");
    };
    expect(await readSecretSettings(env, read)).toBe(env);
    expect(loadConfig(env).caPrivateKey).toBe(KEY);
  });

  it("refuse a secret set both ways", async () => {
    const { read, reads } = fakeParameters({ "/p/k": "x" });
    await expect(readSecretSettings({ OTTAVA_HEARTBEAT_KEY: "plain", OTTAVA_HEARTBEAT_KEY_PARAMETER: "/p/k" }, read)).rejects.toThrow(
      "set either OTTAVA_<NAME> or OTTAVA_<NAME>_PARAMETER, not both: OTTAVA_HEARTBEAT_KEY",
    );
    expect(reads).toEqual([]);
  });

  it("fail naming the setting and the parameter, never a value", async () => {
    const { read } = fakeParameters({ "/p/key": KEY, "/p/empty": "" });
    const missing = readSecretSettings({ OTTAVA_CA_PRIVATE_KEY_PARAMETER: "/p/key", OTTAVA_CLIENT_CERT_PARAMETER: "/p/gone" }, read);
    await expect(missing).rejects.toThrow(
      "OTTAVA_CLIENT_CERT_PARAMETER: the parameter /p/gone could not be read (ParameterNotFound: Parameter /p/gone not found.)",
    );
    await missing.catch((e: Error) => expect(e.message).not.toContain("PRIVATE KEY"));
    await expect(readSecretSettings({ OTTAVA_HEARTBEAT_KEY_PARAMETER: "/p/empty" }, read)).rejects.toThrow(
      "OTTAVA_HEARTBEAT_KEY_PARAMETER: the parameter /p/empty is empty",
    );
  });

  it("are never taken as unset: loadConfig refuses a parameter that was not read", () => {
    expect(() => loadConfig({ OTTAVA_CA_PRIVATE_KEY_PARAMETER: "/p/key" })).toThrow(
      "OTTAVA_CA_PRIVATE_KEY_PARAMETER: this process does not read secrets from parameters; set OTTAVA_CA_PRIVATE_KEY instead",
    );
    // Once read, the parameter setting may stay: it is how the value came.
    expect(loadConfig({ OTTAVA_CA_PRIVATE_KEY_PARAMETER: "/p/key", OTTAVA_CA_PRIVATE_KEY: KEY }).caPrivateKey).toBe(KEY);
  });
});

describe("configLoader", () => {
  it("reads the parameters once per process, however often it is asked", async () => {
    const { read, reads } = fakeParameters({ "/p/hb": "hb-secret" });
    const config = configLoader({ OTTAVA_HEARTBEAT_KEY_PARAMETER: "/p/hb" }, read);
    const [a, b] = await Promise.all([config(), config()]);
    const c = await config();
    expect(a.heartbeatKey).toBe("hb-secret");
    expect(b).toBe(a);
    expect(c).toBe(a);
    expect(reads).toEqual(["/p/hb"]);
  });

  it("tries again after a failure instead of keeping it", async () => {
    let calls = 0;
    const read: SecretReader = async () => {
      calls++;
      if (calls === 1) throw Object.assign(new Error("Rate exceeded"), { name: "ThrottlingException" });
      return "hb-secret";
    };
    const config = configLoader({ OTTAVA_HEARTBEAT_KEY_PARAMETER: "/p/hb" }, read);
    await expect(config()).rejects.toThrow("ThrottlingException: Rate exceeded");
    expect((await config()).heartbeatKey).toBe("hb-secret");
    expect(calls).toBe(2);
  });

  it("fails on a bad setting as loadConfig does", async () => {
    await expect(configLoader({ OTTAVA_LOG_LEVEL: "loud" })()).rejects.toThrow(
      "OTTAVA_LOG_LEVEL must be one of debug, info, warn, error, not 'loud'",
    );
  });
});

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
      const read = await ssmSecretReader({ endpoint: ssm.endpoint, region: "eu-west-1", credentials });
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
      expect(await (await ssmSecretReader({ endpoint: ssm.endpoint, credentials }))("/p/x")).toBe("v");
      expect(ssm.got).toHaveLength(3);
    } finally {
      await ssm.close();
    }
    const missing = await ssmEndpoint([{ status: 400, body: { __type: "ParameterNotFound", message: "Parameter /p/y not found." } }]);
    try {
      const read = await ssmSecretReader({ endpoint: missing.endpoint, credentials });
      await expect(read("/p/y")).rejects.toMatchObject({
        name: "ParameterNotFound",
        message: "SSM GetParameter of /p/y: ParameterNotFound: Parameter /p/y not found.",
      });
      expect(missing.got).toHaveLength(1);
    } finally {
      await missing.close();
    }
  });

  it("fails when SSM answers no value", async () => {
    const ssm = await ssmEndpoint([{ status: 200, body: {} }]);
    try {
      await expect((await ssmSecretReader({ endpoint: ssm.endpoint, credentials }))("/p/x")).rejects.toThrow(
        "GetParameter answered no value",
      );
    } finally {
      await ssm.close();
    }
  });
});
