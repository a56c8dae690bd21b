// The Secrets Manager certificate manager (OTTAVA_CERT_MANAGER=secretsmanager) against moto's Secrets Manager:
// both formats read (PKCS#12 in SecretBinary, the JSON document in SecretString), a CA and a CRL read, and
// every refusal: another project's secret, one not tagged as a certificate, an amphora's, a missing one,
// and contents that cert_parser refuses, with Octavia's messages.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, MISMATCHED_KEY, NEEDS_PASSPHRASE, UNREADABLE_CERT } from "@ottava/core";
import { SecretsManagerCertManager, readPkcs12, unreadablePkcs12 } from "../src/certs";
import { AMPHORA_TAG_KEY, CERTIFICATE_TAG_KEY, PROJECT_TAG_KEY, SHARED_TAG_KEY, STAGE_TAG_KEY, type SecretsManagerCall } from "../src";
import { startMoto, type Moto } from "./support/moto";
import { motoSecretsManager } from "./support/secrets";

const STAGE = "smcerts";
const PROJECT = "p1";
const OTHER = "p2";
let moto: Moto;
let sm: SecretsManagerCall;
let manager: SecretsManagerCertManager;
let dir: string;
const file = (name: string) => readFileSync(join(dir, name));
const text = (name: string) => readFileSync(join(dir, name), "utf8");

/** In `dir`: a CA (RSA) and its CRL, a server certificate (EC key, also encrypted with "s3cret"), another key, and PKCS#12 bundles. */
function makePki() {
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=Test CA", "-days", "2");
  writeFileSync(join(dir, "index.txt"), "");
  writeFileSync(join(dir, "crlnumber"), "01\n");
  writeFileSync(
    join(dir, "ca.cnf"),
    "[ca]\ndefault_ca = d\n[d]\ndatabase = index.txt\ncrlnumber = crlnumber\ndefault_md = sha256\ndefault_crl_days = 2\n",
  );
  openssl("ca", "-gencrl", "-config", "ca.cnf", "-keyfile", "ca.key", "-cert", "ca.pem", "-out", "ca.crl");
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  openssl("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=www.example.com");
  openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2");
  openssl("pkey", "-in", "server.key", "-aes256", "-passout", "pass:s3cret", "-out", "server.enc.key");
  openssl("genpkey", "-algorithm", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "other.key");
  const p12 = (out: string, ...args: string[]) =>
    openssl("pkcs12", "-export", "-inkey", "server.key", "-in", "server.pem", "-certfile", "ca.pem", ...args, "-out", out);
  p12("server.p12", "-passout", "pass:"); // OpenSSL 3's default: PBES2, AES-256-CBC
  p12("server-3des.p12", "-keypbe", "PBE-SHA1-3DES", "-certpbe", "PBE-SHA1-3DES", "-passout", "pass:");
  p12("server-plain.p12", "-keypbe", "NONE", "-certpbe", "NONE", "-nomac", "-passout", "pass:");
  p12("server-legacy.p12", "-legacy", "-passout", "pass:"); // RC2-40 for the certificates
  p12("server-password.p12", "-passout", "pass:s3cret");
}

const tags = (t: Record<string, string>) => Object.entries(t).map(([Key, Value]) => ({ Key, Value }));
const certificateTags = (project = PROJECT, stage = STAGE) =>
  tags({ [CERTIFICATE_TAG_KEY]: "true", [PROJECT_TAG_KEY]: project, [STAGE_TAG_KEY]: stage });
/** Creates a secret and answers its ARN. */
async function secret(name: string, value: { SecretString: string } | { SecretBinary: Buffer }, t = certificateTags()): Promise<string> {
  const body = "SecretBinary" in value ? { SecretBinary: value.SecretBinary.toString("base64") } : value;
  const answer = await sm("CreateSecret", { Name: name, ...body, Tags: t }, "test");
  return String(answer.ARN);
}
const json = (doc: Record<string, unknown>) => ({ SecretString: JSON.stringify(doc) });
const refused = (ref: string) => `Could not retrieve certificate: ['${ref}']`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ottava-sm-certs-"));
  makePki();
  moto = await startMoto();
  sm = motoSecretsManager(moto);
  manager = new SecretsManagerCertManager({ secrets: sm, stage: STAGE });
}, 60_000);
afterAll(async () => {
  await moto?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the PKCS#12 reader", () => {
  it("reads OpenSSL 3's default bundle, a 3DES one and an unencrypted one: the certificate, its key and the others", () => {
    for (const name of ["server.p12", "server-3des.p12", "server-plain.p12"]) {
      const p12 = readPkcs12(file(name));
      expect(p12.certificate).toBe(text("server.pem").trim());
      expect(p12.intermediates).toEqual([text("ca.pem").trim()]);
      expect(p12.private_key).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n[\s\S]*-----END EC PRIVATE KEY-----$/);
    }
  });
  it("refuses a bundle under a password, an RC2 one and bytes that are no bundle, with Octavia's UnreadablePKCS12", () => {
    expect(() => readPkcs12(file("server-password.p12"))).toThrow(unreadablePkcs12("Invalid password or PKCS12 data"));
    expect(() => readPkcs12(file("server-legacy.p12"))).toThrow(/^The PKCS12 bundle is unreadable\. .*RC2/);
    expect(() => readPkcs12(Buffer.from("not a bundle"))).toThrow(/^The PKCS12 bundle is unreadable\./);
  });
});

describe("get_cert", () => {
  it("reads a PKCS#12 bundle in SecretBinary, by name and by ARN", async () => {
    const arn = await secret("tls/p12", { SecretBinary: file("server.p12") });
    for (const ref of ["tls/p12", arn]) {
      const cert = await manager.getCert(PROJECT, ref);
      expect(cert.certificate).toBe(text("server.pem").trim());
      expect(cert.intermediates).toEqual([text("ca.pem").trim()]);
      expect(cert.private_key_passphrase).toBeNull();
      expect(cert.private_key).toContain("BEGIN EC PRIVATE KEY");
    }
  });

  it("reads the JSON document in SecretString: the intermediates as PEMs, an encrypted key with its passphrase", async () => {
    await secret(
      "tls/json",
      json({
        certificate: text("server.pem"),
        private_key: text("server.enc.key"),
        private_key_passphrase: "s3cret",
        intermediates: text("ca.pem"),
      }),
    );
    const cert = await manager.getCert(PROJECT, "tls/json");
    expect(cert).toEqual({
      certificate: text("server.pem"),
      private_key: text("server.enc.key"),
      private_key_passphrase: "s3cret",
      intermediates: [text("ca.pem").trim()],
    });
    await secret(
      "tls/json-list",
      json({ certificate: text("server.pem"), private_key: text("server.key"), intermediates: [text("ca.pem")] }),
    );
    expect((await manager.getCert(PROJECT, "tls/json-list")).intermediates).toEqual([text("ca.pem").trim()]);
  });

  it("reads a shared secret for any project", async () => {
    await secret(
      "tls/shared",
      { SecretBinary: file("server.p12") },
      tags({ [CERTIFICATE_TAG_KEY]: "true", [SHARED_TAG_KEY]: "true", [STAGE_TAG_KEY]: STAGE }),
    );
    expect((await manager.getCert(OTHER, "tls/shared")).certificate).toBe(text("server.pem").trim());
  });

  it("refuses another project's secret, another stage's, one not tagged as a certificate, an amphora's and a missing one, with Octavia's message", async () => {
    await secret("tls/theirs", { SecretBinary: file("server.p12") });
    await expect(manager.getCert(OTHER, "tls/theirs")).rejects.toThrow(refused("tls/theirs"));
    await secret("tls/other-stage", { SecretBinary: file("server.p12") }, certificateTags(PROJECT, "prod"));
    await expect(manager.getCert(PROJECT, "tls/other-stage")).rejects.toThrow(refused("tls/other-stage"));
    await secret("tls/untagged", { SecretBinary: file("server.p12") }, []);
    await expect(manager.getCert(PROJECT, "tls/untagged")).rejects.toThrow(refused("tls/untagged"));
    await secret("tls/not-a-cert", { SecretBinary: file("server.p12") }, tags({ [PROJECT_TAG_KEY]: PROJECT }));
    await expect(manager.getCert(PROJECT, "tls/not-a-cert")).rejects.toThrow(refused("tls/not-a-cert"));
    await secret("ottava/stage/amphora/a1", json({ certificate: text("server.pem"), private_key: text("server.key") }), [
      ...certificateTags(),
      { Key: AMPHORA_TAG_KEY, Value: "a1" },
    ]);
    await expect(manager.getCert(PROJECT, "ottava/stage/amphora/a1")).rejects.toThrow(refused("ottava/stage/amphora/a1"));
    await expect(manager.getCert(PROJECT, "tls/missing")).rejects.toThrow(refused("tls/missing"));
    await expect(manager.getCert(PROJECT, "")).rejects.toThrow(refused(""));
  });

  it("refuses contents cert_parser refuses: malformed JSON, a bad PEM, a wrong passphrase, a key of another certificate, a bundle under a password", async () => {
    await secret("tls/malformed", { SecretString: "{not json" });
    await expect(manager.getCert(PROJECT, "tls/malformed")).rejects.toThrow(/is not a JSON document/);
    await secret("tls/fields", json({ certificate: text("server.pem") }));
    await expect(manager.getCert(PROJECT, "tls/fields")).rejects.toThrow(/must give certificate and private_key/);
    await secret(
      "tls/bad-pem",
      json({ certificate: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", private_key: text("server.key") }),
    );
    await expect(manager.getCert(PROJECT, "tls/bad-pem")).rejects.toThrow(UNREADABLE_CERT);
    await secret("tls/bad-int", json({ certificate: text("server.pem"), private_key: text("server.key"), intermediates: "garbage" }));
    await expect(manager.getCert(PROJECT, "tls/bad-int")).rejects.toThrow(UNREADABLE_CERT);
    await secret(
      "tls/wrong-pass",
      json({ certificate: text("server.pem"), private_key: text("server.enc.key"), private_key_passphrase: "nope" }),
    );
    await expect(manager.getCert(PROJECT, "tls/wrong-pass")).rejects.toThrow(NEEDS_PASSPHRASE);
    await secret("tls/no-pass", json({ certificate: text("server.pem"), private_key: text("server.enc.key") }));
    await expect(manager.getCert(PROJECT, "tls/no-pass")).rejects.toThrow(NEEDS_PASSPHRASE);
    await secret("tls/mismatch", json({ certificate: text("server.pem"), private_key: text("other.key") }));
    await expect(manager.getCert(PROJECT, "tls/mismatch")).rejects.toThrow(MISMATCHED_KEY);
    await secret("tls/p12-password", { SecretBinary: file("server-password.p12") });
    await expect(manager.getCert(PROJECT, "tls/p12-password")).rejects.toThrow(unreadablePkcs12("Invalid password or PKCS12 data"));
  });
});

describe("get_secret", () => {
  it("reads a client CA and a CRL: the PEM the secret holds", async () => {
    await secret("tls/ca", { SecretString: text("ca.pem") });
    await secret("tls/crl", { SecretString: text("ca.crl") });
    expect(await manager.getSecret(PROJECT, "tls/ca")).toBe(text("ca.pem"));
    expect(await manager.getSecret(PROJECT, "tls/crl")).toBe(text("ca.crl"));
  });
  it("refuses another project's CA and an untagged one", async () => {
    await secret("tls/ca-theirs", { SecretString: text("ca.pem") }, certificateTags(OTHER));
    await expect(manager.getSecret(PROJECT, "tls/ca-theirs")).rejects.toThrow(refused("tls/ca-theirs"));
    await secret("tls/ca-untagged", { SecretString: text("ca.pem") }, []);
    await expect(manager.getSecret(PROJECT, "tls/ca-untagged")).rejects.toThrow(refused("tls/ca-untagged"));
  });
});

it("OTTAVA_CERT_MANAGER=secretsmanager is a setting", () => {
  expect(loadConfig({ OTTAVA_CERT_MANAGER: "secretsmanager" }).certManager).toBe("secretsmanager");
});
