// The local certificate manager (octavia/certificates/manager/local.py) and its selection, its command (`npm run cert`), and pools and fully populated creates checked through it by the API.
//
// Certificates are made with openssl; Octavia's own LocalCertManager (python3-octavia) reads what
// ours stores and stores what ours reads.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CertificateError, intermediatePems, loadConfig, NEEDS_PASSPHRASE, UNREADABLE_CERT, validateCert } from "@ottava/core";
import { buildPem, createCertManager, createDrivers, LocalCertManager, noopCertManager, tlsContainer } from "../src";
import { makePki } from "./support/pki";
import { fault, inProcessApp, pick, SUBNET } from "@ottava/local/testing";

const ROOT = join(import.meta.dirname, "../../..");
let dir: string;
const pem = (name: string) => readFileSync(join(dir, name), "utf8");

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "ottava-certs-"));
  makePki(dir);
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("LocalCertManager, as Octavia's LocalCertManager", () => {
  it("store_cert writes <ref>.crt/.key/.int/.pass (0600) under storage_path; get_cert answers them, the intermediates as PEMs", async () => {
    const storagePath = join(dir, "store-1");
    const m = new LocalCertManager({ storagePath });
    const intermediates = pem("ca/ca.pem") + pem("other/ca.pem");
    const ref = await m.storeCert({
      certificate: pem("server.pem"),
      private_key: pem("server.enc.key"),
      intermediates,
      private_key_passphrase: "s3cret",
    });
    expect(ref).toMatch(/^[0-9a-f-]{36}$/);
    expect(readdirSync(storagePath).sort()).toEqual([`${ref}.crt`, `${ref}.int`, `${ref}.key`, `${ref}.pass`]);
    for (const f of readdirSync(storagePath)) expect(statSync(join(storagePath, f)).mode & 0o777).toBe(0o600);
    expect(statSync(storagePath).mode & 0o777).toBe(0o700);
    expect(await m.getCert("any-project", ref)).toEqual({
      certificate: pem("server.pem"),
      private_key: pem("server.enc.key"),
      private_key_passphrase: "s3cret",
      intermediates: [pem("ca/ca.pem").trim(), pem("other/ca.pem").trim()],
    });
    // get_secret reads <ref>.crt.
    expect(await m.getSecret("any-project", ref)).toBe(pem("server.pem"));
    const plain = await m.storeCert({ certificate: pem("server.pem"), private_key: pem("server.key") });
    expect(await m.getCert("p", plain)).toEqual({
      certificate: pem("server.pem"),
      private_key: pem("server.key"),
      private_key_passphrase: null,
      intermediates: [],
    });
  });

  it("refuses unknown references, a certificate without its key, and references that are not plain file names", async () => {
    const storagePath = join(dir, "store-2");
    const m = new LocalCertManager({ storagePath });
    const secret = await m.storeSecret(pem("ca/ca.pem"));
    expect(await m.getSecret("p", secret)).toBe(pem("ca/ca.pem"));
    await expect(m.getCert("p", secret)).rejects.toThrow(new CertificateError("Private Key could not be read."));
    await expect(m.getCert("p", "0b7c8e6e-0000-4000-8000-000000000000")).rejects.toThrow(
      new CertificateError("Certificate could not be read."),
    );
    await expect(m.getSecret("p", "nope")).rejects.toBeInstanceOf(CertificateError);
    writeFileSync(join(dir, "outside.crt"), pem("ca/ca.pem"));
    for (const ref of ["../outside", "a/b", ".hidden", "", "x".repeat(300)]) {
      await expect(m.getSecret("p", ref)).rejects.toBeInstanceOf(CertificateError);
      await expect(m.getCert("p", ref)).rejects.toBeInstanceOf(CertificateError);
    }
  });

  it("delete_cert removes what the reference names", async () => {
    const m = new LocalCertManager({ storagePath: join(dir, "store-3") });
    const ref = await m.storeCert({ certificate: pem("server.pem"), private_key: pem("server.key"), intermediates: pem("ca/ca.pem") });
    await m.deleteCert(ref);
    expect(readdirSync(join(dir, "store-3"))).toEqual([]);
    await expect(m.getCert("p", ref)).rejects.toBeInstanceOf(CertificateError);
    await expect(m.deleteCert(ref)).rejects.toBeInstanceOf(CertificateError);
  });

  it("interoperates with Octavia's LocalCertManager on the same storage_path (python3-octavia)", async () => {
    const storagePath = join(dir, "store-octavia");
    const m = new LocalCertManager({ storagePath });
    const intermediates = pem("other/ca.pem") + "\n" + pem("ca/ca.pem");
    const ours = await m.storeCert({
      certificate: pem("server.pem"),
      private_key: pem("server.enc.key"),
      intermediates,
      private_key_passphrase: "s3cret",
    });
    const script = `
import json, sys
from oslo_config import cfg
from octavia.common import config  # noqa: F401
from octavia.certificates.manager import local
spec = json.loads(sys.stdin.read())
cfg.CONF.set_override('storage_path', spec['path'], group='certificates')
c = local.LocalCertManager.get_cert(None, spec['ref'])
theirs = local.LocalCertManager.store_cert(None, spec['cert'], spec['key'], intermediates=spec['ints'], private_key_passphrase=spec['pass'])
print(json.dumps({'read': {'certificate': c.get_certificate(), 'private_key': c.get_private_key(),
                           'private_key_passphrase': c.get_private_key_passphrase(),
                           'intermediates': [i.decode() for i in c.get_intermediates()]},
                  'stored': theirs}))
`;
    const py = spawnSync("/usr/bin/python3", ["-c", script], {
      input: JSON.stringify({
        path: storagePath,
        ref: ours,
        cert: pem("server.pem"),
        key: pem("server.key"),
        ints: pem("ca/ca.pem"),
        pass: "pw",
      }),
      encoding: "utf8",
    });
    expect(py.status, py.stderr).toBe(0);
    const out = JSON.parse(py.stdout);
    // What Octavia reads from ours is what ours reads.
    expect(out.read).toEqual(await m.getCert("p", ours));
    // What Octavia stores, ours reads.
    expect(await m.getCert("p", out.stored)).toEqual({
      certificate: pem("server.pem"),
      private_key: pem("server.key"),
      private_key_passphrase: "pw",
      intermediates: [pem("ca/ca.pem").trim()],
    });
  });

  it("tlsContainer and buildPem give the HAProxy PEM Octavia's _map_cert_tls_container and build_pem give (python3-octavia)", async () => {
    const storagePath = join(dir, "store-pem");
    const m = new LocalCertManager({ storagePath });
    const refs = [
      // EC key, encrypted, with two intermediates; RSA key in PKCS#8 (openssl's default), no intermediates.
      await m.storeCert({
        certificate: pem("server.pem"),
        private_key: pem("server.enc.key"),
        intermediates: pem("ca/ca.pem") + pem("other/ca.pem"),
        private_key_passphrase: "s3cret",
      }),
      await m.storeCert({ certificate: pem("ca/ca.pem"), private_key: pem("ca/ca.key") }),
    ];
    const script = `
import json, sys
from oslo_config import cfg
from octavia.common import config  # noqa: F401
from octavia.certificates.manager import local
from octavia.common.tls_utils import cert_parser
spec = json.loads(sys.stdin.read())
cfg.CONF.set_override('storage_path', spec['path'], group='certificates')
out = []
for ref in spec['refs']:
    t = cert_parser._map_cert_tls_container(local.LocalCertManager.get_cert(None, ref))
    out.append({'id': t.id, 'primary_cn': t.primary_cn, 'pem': cert_parser.build_pem(t).decode()})
print(json.dumps(out))
`;
    const py = spawnSync("/usr/bin/python3", ["-c", script], { input: JSON.stringify({ path: storagePath, refs }), encoding: "utf8" });
    expect(py.status, py.stderr).toBe(0);
    const ours = await Promise.all(refs.map(async (ref) => tlsContainer(await m.getCert("p", ref))));
    expect(ours.map((c) => ({ id: c.id, primary_cn: c.primary_cn, pem: buildPem(c) }))).toEqual(JSON.parse(py.stdout));
    expect(ours.map((c) => c.private_key.split("\n")[0])).toEqual(["-----BEGIN EC PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----"]);
    expect(() =>
      tlsContainer({ certificate: pem("server.pem"), private_key: pem("server.enc.key"), private_key_passphrase: null, intermediates: [] }),
    ).toThrow(NEEDS_PASSPHRASE);
  });

  it("validateCert (cert_parser.validate_cert): the key must be the certificate's, decrypted with its passphrase", () => {
    expect(() => validateCert({ certificate: pem("server.pem"), private_key: pem("server.key") })).not.toThrow();
    expect(() =>
      validateCert({ certificate: pem("server.pem"), private_key: pem("server.enc.key"), private_key_passphrase: "s3cret" }),
    ).not.toThrow();
    expect(() => validateCert({ certificate: pem("server.pem"), private_key: pem("server.enc.key") })).toThrow(NEEDS_PASSPHRASE);
    expect(() => validateCert({ certificate: pem("server.pem"), private_key: pem("ca/ca.key") })).toThrow(
      "Key and x509 certificate do not match",
    );
    expect(() => validateCert({ certificate: "junk", private_key: pem("server.key") })).toThrow("Could not read X509 from PEM");
    expect(() => validateCert({ certificate: pem("server.pem"), private_key: pem("server.key"), intermediates: "junk" })).toThrow(
      UNREADABLE_CERT,
    );
    expect(intermediatePems(`junk\r\n${pem("ca/ca.pem").replace(/\n/g, "\r\n")}`)).toEqual([pem("ca/ca.pem").trim()]);
  });
});

describe("selection: OTTAVA_CERT_MANAGER and OTTAVA_CERT_STORAGE_PATH", () => {
  it("noop by default; local with a storage path, refused without one", () => {
    expect(createDrivers(loadConfig({})).certificates).toBe(noopCertManager);
    const local = createDrivers(loadConfig({ OTTAVA_CERT_MANAGER: "local", OTTAVA_CERT_STORAGE_PATH: join(dir, "sel") })).certificates;
    expect(local).toBeInstanceOf(LocalCertManager);
    expect((local as LocalCertManager).storagePath).toBe(join(dir, "sel"));
    expect(() => createCertManager(loadConfig({ OTTAVA_CERT_MANAGER: "local" }))).toThrow("OTTAVA_CERT_STORAGE_PATH");
    expect(() => loadConfig({ OTTAVA_CERT_MANAGER: "barbican" })).toThrow("OTTAVA_CERT_MANAGER must be one of noop, local, secretsmanager");
  });

  it("secretsmanager: a manager whose code (@ottava/aws/certs) is loaded at its first read, not before", () => {
    const sm = createDrivers(loadConfig({ OTTAVA_CERT_MANAGER: "secretsmanager" })).certificates;
    expect(sm.noop).toBeUndefined();
    expect(sm).not.toBeInstanceOf(LocalCertManager);
    expect(typeof sm.getCert).toBe("function");
  });

  it("the no-op manager accepts any non-empty reference and reads nothing", async () => {
    expect(noopCertManager.noop).toBe(true);
    await expect(noopCertManager.getCert("p", "anything")).resolves.toEqual({
      certificate: "",
      private_key: null,
      private_key_passphrase: null,
      intermediates: [],
    });
    await expect(noopCertManager.getCert("p", "")).rejects.toBeInstanceOf(CertificateError);
    await expect(noopCertManager.getSecret("p", "")).rejects.toBeInstanceOf(CertificateError);
  });
});

describe("npm run cert", () => {
  const cert = (env: Record<string, string>, ...args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "packages/local/src/cert.ts"), ...args], {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...process.env, ...env },
    });
  const f = (name: string) => join(dir, name);

  it("store prints the reference of what it stored in <data dir>/certificates; the manager reads it", async () => {
    const args = [
      "store",
      "--cert",
      f("server.pem"),
      "--key",
      f("server.enc.key"),
      "--passphrase-file",
      f("pass.txt"),
      "--intermediates",
      f("ca/ca.pem"),
      "--data-dir",
      f("data"),
    ];
    const run = cert({}, ...args);
    expect(run.status).toBe(1); // no passphrase file yet
    expect(run.stderr).toContain(`Could not read the passphrase file ${f("pass.txt")}: ENOENT`);
    writeFileSync(f("pass.txt"), "s3cret\n");
    const ok = cert({}, ...args);
    expect(ok.status, ok.stderr).toBe(0);
    const ref = ok.stdout.trim();
    expect(ref).toMatch(/^[0-9a-f-]{36}$/);
    expect(ok.stdout + ok.stderr).not.toContain("PRIVATE KEY");
    const m = new LocalCertManager({ storagePath: join(dir, "data/certificates") });
    expect(await m.getCert("p", ref)).toMatchObject({
      certificate: pem("server.pem"),
      private_key_passphrase: "s3cret",
      intermediates: [pem("ca/ca.pem").trim()],
    });

    const secret = cert({ OTTAVA_CERT_STORAGE_PATH: f("elsewhere") }, "store-secret", "--file", f("ca/ca.crl"));
    expect(secret.status, secret.stderr).toBe(0);
    expect(await new LocalCertManager({ storagePath: join(dir, "elsewhere") }).getSecret("p", secret.stdout.trim())).toBe(pem("ca/ca.crl"));

    const deleted = cert({}, "delete", ref, "--data-dir", f("data"));
    expect(deleted.status, deleted.stderr).toBe(0);
    await expect(m.getCert("p", ref)).rejects.toBeInstanceOf(CertificateError);
  });

  it("refuses a key that is not the certificate's, and says how to use it", () => {
    const run = cert({}, "store", "--cert", f("server.pem"), "--key", f("ca/ca.key"), "--data-dir", f("data-2"));
    expect({ status: run.status, stderr: run.stderr.trim(), stdout: run.stdout }).toEqual({
      status: 1,
      stderr: "Not stored: Key and x509 certificate do not match",
      stdout: "",
    });
    expect(cert({}, "--help").stdout).toContain("Usage: npm run cert -- <command>");
    // Owners are Secrets Manager's tags: the local manager has none to write.
    expect(
      cert({}, "store", "--project", "p", "--cert", f("server.pem"), "--key", f("server.key"), "--data-dir", f("data-2")).stderr,
    ).toContain("--project and --shared are for OTTAVA_CERT_MANAGER=secretsmanager");
  });
});

describe("the API reads pools' and fully populated creates' references through the local manager", () => {
  type App = Awaited<ReturnType<typeof inProcessApp>>;
  let t: App;
  let m: LocalCertManager;
  let lbId: string;

  beforeAll(async () => {
    const storagePath = join(dir, "api-store");
    t = await inProcessApp({ OTTAVA_CERT_MANAGER: "local", OTTAVA_CERT_STORAGE_PATH: storagePath });
    m = new LocalCertManager({ storagePath });
    const lb = await t.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET } });
    lbId = lb.body.loadbalancer.id;
    await t.settle();
  });

  const pool = (fields: Record<string, unknown>) => ({
    pool: { loadbalancer_id: lbId, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", ...fields },
  });

  it("a pool's client certificate, CA and CRL (_validate_create_pool, _validate_pool_PUT)", async () => {
    const clientCert = await m.storeCert({ certificate: pem("server.pem"), private_key: pem("server.key") });
    const ca = await m.storeSecret(pem("ca/ca.pem"));
    const crl = await m.storeSecret(pem("ca/ca.crl"));
    const otherCrl = await m.storeSecret(pem("other/ca.crl"));
    expect(pick(await t.call("POST", "/v2/lbaas/pools", pool({ tls_enabled: true, tls_container_ref: "missing" })))).toEqual(
      fault(400, "Could not retrieve certificate: ['missing']"),
    );
    expect(
      pick(await t.call("POST", "/v2/lbaas/pools", pool({ tls_enabled: true, ca_tls_container_ref: ca, crl_container_ref: otherCrl }))),
    ).toEqual(fault(400, "Validation failure: The CRL specified is not valid for client certificate authority reference supplied."));
    expect(pick(await t.call("POST", "/v2/lbaas/pools", pool({ ca_tls_container_ref: "no-ca", crl_container_ref: "no-crl" })))).toEqual(
      fault(400, "Could not retrieve certificate: ['no-ca', 'no-crl']"),
    );
    const created = await t.call(
      "POST",
      "/v2/lbaas/pools",
      pool({ tls_enabled: true, tls_container_ref: clientCert, ca_tls_container_ref: ca, crl_container_ref: crl }),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.pool).toMatchObject({ tls_container_ref: clientCert, ca_tls_container_ref: ca, crl_container_ref: crl });
    await t.settle();
    const id = created.body.pool.id;
    expect(pick(await t.call("PUT", `/v2/lbaas/pools/${id}`, { pool: { tls_container_ref: "gone" } }))).toEqual(
      fault(400, "Could not retrieve certificate: ['gone']"),
    );
    // The CA in force is re-read on update (Octavia's ca_ref from the pool): removed from the store, the update fails.
    await m.deleteCert(crl).catch(() => undefined);
    expect(pick(await t.call("PUT", `/v2/lbaas/pools/${id}`, { pool: { name: "renamed" } }))).toEqual(
      fault(400, `Could not retrieve certificate: ['${crl}']`),
    );
    const fine = await t.call("PUT", `/v2/lbaas/pools/${id}`, { pool: { name: "renamed", crl_container_ref: null } });
    expect(fine.status, JSON.stringify(fine.body)).toBe(200);
    await t.settle();
  });

  it("a fully populated load balancer: each listener's and pool's references, refused before anything is written", async () => {
    const cert = await m.storeCert({ certificate: pem("server.pem"), private_key: pem("server.key") });
    const body = (ref: string, poolRef: string) => ({
      loadbalancer: {
        vip_subnet_id: SUBNET,
        listeners: [
          {
            protocol: "TERMINATED_HTTPS",
            protocol_port: 443,
            default_tls_container_ref: ref,
            default_pool: { name: "web", protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", tls_enabled: true, tls_container_ref: poolRef },
          },
        ],
      },
    });
    expect(pick(await t.call("POST", "/v2/lbaas/loadbalancers", body("missing", cert)))).toEqual(
      fault(400, "Could not retrieve certificate: ['missing']"),
    );
    expect(pick(await t.call("POST", "/v2/lbaas/loadbalancers", body(cert, "missing-too")))).toEqual(
      fault(400, "Could not retrieve certificate: ['missing-too']"),
    );
    const ok = await t.call("POST", "/v2/lbaas/loadbalancers", body(cert, cert));
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body.loadbalancer.listeners).toHaveLength(1);
    await t.settle();
  });
});
