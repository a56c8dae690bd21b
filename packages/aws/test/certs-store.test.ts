// `npm run cert` with OTTAVA_CERT_MANAGER=secretsmanager against moto's Secrets Manager, run as an operator
// runs it (a child process, its settings in the environment): what it stores the Secrets Manager certificate
// manager reads for the project and refuses for another; a shared secret is every project's; a CA and a CRL;
// what the manager would refuse is not written; delete touches certificate secrets only.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MISMATCHED_KEY, NEEDS_PASSPHRASE, UNREADABLE_CERT } from "@ottava/core";
import { SecretsManagerCertManager } from "../src/certs";
import { certificateSecretName } from "../src/certs/store";
import { AMPHORA_TAG_KEY, CERTIFICATE_TAG_KEY, PROJECT_TAG_KEY, SHARED_TAG_KEY, STAGE_TAG_KEY, type SecretsManagerCall } from "../src";
import { awsJsonClient } from "@ottava/edge";
import { MOTO_CLIENT, startMoto, type Moto } from "./support/moto";
import { runCertCommand } from "./support/cert-command";
import { motoSecretsManager } from "./support/secrets";

const STAGE = "certstore";
const PROJECT = "p1";
const OTHER = "p2";
let moto: Moto;
let sm: SecretsManagerCall;
let manager: SecretsManagerCertManager;
let dir: string;
const f = (name: string) => join(dir, name);
const text = (name: string) => readFileSync(f(name), "utf8");
const refused = (ref: string) => `Could not retrieve certificate: ['${ref}']`;

/** `npm run cert -- <args>` as an operator runs it. */
const cert = (...args: string[]) => runCertCommand(moto, STAGE, ...args);

/** The names of the secrets moto holds. */
async function secretNames(): Promise<string[]> {
  const out = (await sm("ListSecrets", { MaxResults: 100 }, "test")) as { SecretList?: { Name?: string }[] };
  return (out.SecretList ?? []).map((s) => String(s.Name)).sort();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ottava-sm-store-"));
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=Test CA", "-days", "2");
  writeFileSync(f("index.txt"), "");
  writeFileSync(f("crlnumber"), "01\n");
  writeFileSync(
    f("ca.cnf"),
    "[ca]\ndefault_ca = d\n[d]\ndatabase = index.txt\ncrlnumber = crlnumber\ndefault_md = sha256\ndefault_crl_days = 2\n",
  );
  openssl("ca", "-gencrl", "-config", "ca.cnf", "-keyfile", "ca.key", "-cert", "ca.pem", "-out", "ca.crl");
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  openssl("req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=www.example.com");
  openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2");
  openssl("pkey", "-in", "server.key", "-aes256", "-passout", "pass:s3cret", "-out", "server.enc.key");
  openssl("genpkey", "-algorithm", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "other.key");
  // PKCS#12 bundles: without a passphrase (what the manager reads), and with one (refused).
  const p12 = ["pkcs12", "-export", "-inkey", "server.key", "-in", "server.pem", "-certfile", "ca.pem"];
  openssl(...p12, "-passout", "pass:", "-out", "server.p12");
  openssl(...p12, "-passout", "pass:s3cret", "-out", "server.pass.p12");
  writeFileSync(f("pass.txt"), "s3cret\n");
  writeFileSync(f("wrong-pass.txt"), "nope\n");
  writeFileSync(f("garbage.pem"), "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
  moto = await startMoto();
  sm = motoSecretsManager(moto);
  manager = new SecretsManagerCertManager({ secrets: sm, stage: STAGE });
}, 60_000);
afterAll(async () => {
  await moto?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("npm run cert -- store, OTTAVA_CERT_MANAGER=secretsmanager", () => {
  it("writes a tagged secret for the project and prints its ARN: the manager reads it for the project, refuses it for another", async () => {
    const run = cert(
      "store",
      "--project",
      PROJECT,
      "--cert",
      f("server.pem"),
      "--key",
      f("server.enc.key"),
      "--passphrase-file",
      f("pass.txt"),
      "--intermediates",
      f("ca.pem"),
    );
    expect(run.status, run.stderr).toBe(0);
    const arn = run.stdout.trim();
    expect(arn).toMatch(new RegExp(`^arn:aws:secretsmanager:us-east-1:\\d{12}:secret:ottava/${STAGE}/certificates/[0-9a-f-]{36}-\\w{6}$`));
    expect(run.stdout + run.stderr).not.toContain("PRIVATE KEY");

    const described = await sm("DescribeSecret", { SecretId: arn }, "test");
    expect(String(described.Name)).toMatch(new RegExp(`^${certificateSecretName(STAGE, "")}[0-9a-f-]{36}$`));
    expect(described.Tags).toEqual(
      expect.arrayContaining([
        { Key: CERTIFICATE_TAG_KEY, Value: "true" },
        { Key: PROJECT_TAG_KEY, Value: PROJECT },
        { Key: STAGE_TAG_KEY, Value: STAGE },
      ]),
    );
    expect((described.Tags as { Key: string }[]).map((t) => t.Key)).not.toContain(SHARED_TAG_KEY);
    // The JSON format of docs/data-plane.md, Octavia's field names.
    const value = await sm("GetSecretValue", { SecretId: arn }, "test");
    expect(JSON.parse(String(value.SecretString))).toEqual({
      certificate: text("server.pem"),
      private_key: text("server.enc.key"),
      intermediates: text("ca.pem"),
      private_key_passphrase: "s3cret",
    });

    for (const ref of [arn, String(described.Name)]) {
      expect(await manager.getCert(PROJECT, ref)).toEqual({
        certificate: text("server.pem"),
        private_key: text("server.enc.key"),
        private_key_passphrase: "s3cret",
        intermediates: [text("ca.pem").trim()],
      });
    }
    await expect(manager.getCert(OTHER, arn)).rejects.toThrow(refused(arn));
  });

  it("--shared: every project may use it", async () => {
    const run = cert("store", "--shared", "--cert", f("server.pem"), "--key", f("server.key"));
    expect(run.status, run.stderr).toBe(0);
    const arn = run.stdout.trim();
    const described = await sm("DescribeSecret", { SecretId: arn }, "test");
    expect((described.Tags as { Key: string }[]).map((t) => t.Key)).not.toContain(PROJECT_TAG_KEY);
    expect(described.Tags).toEqual(expect.arrayContaining([{ Key: SHARED_TAG_KEY, Value: "true" }]));
    for (const project of [PROJECT, OTHER]) expect((await manager.getCert(project, arn)).certificate).toBe(text("server.pem"));
  });

  it("--pkcs12: the bundle as it is, in SecretBinary, which the manager reads; --kms-key-id puts it under a customer-managed key", async () => {
    const kms = awsJsonClient(
      { signingName: "kms", targetPrefix: "TrentService", jsonVersion: "1.1" },
      { endpoint: moto.endpoint, region: MOTO_CLIENT.region, credentials: async () => MOTO_CLIENT.credentials },
    );
    const keyArn = String(((await kms("CreateKey", { Description: "certificates" }, "test")).KeyMetadata as { Arn: string }).Arn);
    const run = cert("store", "--project", PROJECT, "--pkcs12", f("server.p12"), "--kms-key-id", keyArn);
    expect(run.status, run.stderr).toBe(0);
    const arn = run.stdout.trim();
    expect(arn).toContain(`:secret:ottava/${STAGE}/certificates/`);
    const described = await sm("DescribeSecret", { SecretId: arn }, "test");
    expect(described.KmsKeyId).toBe(keyArn);
    expect(described.Tags).toEqual(expect.arrayContaining([{ Key: PROJECT_TAG_KEY, Value: PROJECT }]));
    const value = await sm("GetSecretValue", { SecretId: arn }, "test");
    expect(value.SecretString).toBeUndefined();
    expect(Buffer.from(String(value.SecretBinary), "base64").equals(readFileSync(f("server.p12")))).toBe(true);
    expect(await manager.getCert(PROJECT, arn)).toMatchObject({
      certificate: text("server.pem").trim(),
      intermediates: [text("ca.pem").trim()],
      private_key_passphrase: null,
    });
    await expect(manager.getCert(OTHER, arn)).rejects.toThrow(refused(arn));
  });

  it("store-secret: a client CA and a CRL, the PEM itself, for the project", async () => {
    for (const name of ["ca.pem", "ca.crl"]) {
      const run = cert("store-secret", "--project", PROJECT, "--file", f(name));
      expect(run.status, run.stderr).toBe(0);
      const arn = run.stdout.trim();
      expect(arn).toContain(`:secret:ottava/${STAGE}/certificates/`);
      expect(await manager.getSecret(PROJECT, arn)).toBe(text(name));
      await expect(manager.getSecret(OTHER, arn)).rejects.toThrow(refused(arn));
    }
  });

  it("writes nothing for what the manager would refuse, nor without an owner, and says why", async () => {
    const before = await secretNames();
    const store = (...args: string[]) => cert("store", "--project", PROJECT, ...args);
    expect(store("--cert", f("server.pem"), "--key", f("other.key"))).toEqual({
      status: 1,
      stdout: "",
      stderr: `Not stored: ${MISMATCHED_KEY}`,
    });
    expect(store("--cert", f("server.pem"), "--key", f("server.enc.key")).stderr).toBe(`Not stored: ${NEEDS_PASSPHRASE}`);
    expect(store("--cert", f("server.pem"), "--key", f("server.enc.key"), "--passphrase-file", f("wrong-pass.txt")).stderr).toBe(
      `Not stored: ${NEEDS_PASSPHRASE}`,
    );
    expect(store("--cert", f("garbage.pem"), "--key", f("server.key")).stderr).toBe(`Not stored: ${UNREADABLE_CERT}`);
    expect(store("--cert", f("server.pem"), "--key", f("server.key"), "--intermediates", f("garbage.pem")).stderr).toBe(
      `Not stored: ${UNREADABLE_CERT}`,
    );
    expect(cert("store-secret", "--project", PROJECT, "--file", f("server.key")).stderr).toBe(
      "Not stored: the file holds no PEM certificate or CRL",
    );
    // A bundle with a passphrase: Octavia's Barbican manager reads PKCS#12 without one.
    const withPass = store("--pkcs12", f("server.pass.p12"));
    expect(withPass.status).toBe(1);
    expect(withPass.stderr).toMatch(/^Not stored: .*PKCS12/);
    expect(store("--pkcs12", f("server.p12"), "--cert", f("server.pem")).stderr).toBe(
      "store takes --pkcs12 or --cert and --key, not both (see --help)",
    );
    const noOwner = cert("store", "--cert", f("server.pem"), "--key", f("server.key"));
    expect({ status: noOwner.status, stderr: noOwner.stderr }).toEqual({
      status: 1,
      stderr: "store needs --project ID or --shared with OTTAVA_CERT_MANAGER=secretsmanager (see --help)",
    });
    expect(cert("store", "--project", PROJECT, "--shared", "--cert", f("server.pem"), "--key", f("server.key")).stderr).toBe(
      "give --project or --shared, not both",
    );
    expect(await secretNames()).toEqual(before);
  });

  it("delete: the manager refuses the secret at once; a secret that is no certificate, or an amphora's, is left alone", async () => {
    const arn = cert("store", "--project", PROJECT, "--cert", f("server.pem"), "--key", f("server.key")).stdout.trim();
    const deleted = cert("delete", arn);
    expect(deleted.status, deleted.stderr).toBe(0);
    await expect(manager.getCert(PROJECT, arn)).rejects.toThrow(refused(arn));

    const amphora = `ottava/${STAGE}/amphora/a1`;
    await sm(
      "CreateSecret",
      {
        Name: amphora,
        SecretString: "{}",
        Tags: [
          { Key: CERTIFICATE_TAG_KEY, Value: "true" },
          { Key: AMPHORA_TAG_KEY, Value: "a1" },
        ],
      },
      "test",
    );
    await sm("CreateSecret", { Name: "someone/else", SecretString: "x" }, "test");
    for (const ref of [amphora, "someone/else"]) {
      expect(cert("delete", ref)).toEqual({
        status: 1,
        stdout: "",
        stderr: `${ref} is not a certificate secret of stage ${STAGE} (tagged ${CERTIFICATE_TAG_KEY} = true, ${STAGE_TAG_KEY} = ${STAGE}): not deleted`,
      });
      expect((await sm("DescribeSecret", { SecretId: ref }, "test")).DeletedDate ?? null).toBeNull();
    }
    expect(cert("delete", "missing/secret").stderr).toBe("No certificate secret missing/secret");
  });
});
