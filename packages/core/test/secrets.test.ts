// The secrets read from their parameters before the settings (readSecretSettings, configLoader), through
// the SecretReader port; its SSM adapter is tested in packages/edge/test/ssm.test.ts.
import { describe, expect, it } from "vitest";
import { SECRET_SETTINGS, configLoader, loadConfig, readSecretSettings, type SecretReader } from "@ottava/core";

const KEY = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n";

/** A reader that must not be called. */
const unused: SecretReader = async () => {
  throw new Error("must not be called");
};

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
    expect(await readSecretSettings(env, unused)).toBe(env);
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
    await expect(configLoader({ OTTAVA_LOG_LEVEL: "loud" }, unused)()).rejects.toThrow(
      "OTTAVA_LOG_LEVEL must be one of debug, info, warn, error, not 'loud'",
    );
  });
});
