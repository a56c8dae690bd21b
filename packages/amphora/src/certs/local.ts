// The local certificate manager, as Octavia's local_cert_manager (octavia/certificates/manager/local.py, certificates/common/local.py): PEM files under [certificates] storage_path, referenced by id.
//
// A certificate stored under reference R is <storage>/R.crt (the certificate), R.key (its private
// key), R.int (the intermediates, when given) and R.pass (the key's passphrase, when given), each
// written readable by its owner only. get_secret reads R.crt alone: a client CA or a CRL is stored
// as a certificate without a key (storeSecret). As Octavia's, references are not tied to a project:
// they are random UUIDs, and whoever knows one may use it. Unlike Octavia's, a reference must be a
// plain file name (letters, digits, ".", "_", "-", not starting with "."): no reference reads a file
// outside the storage directory. PEM contents are never logged.
import { createHash, randomUUID } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  CertificateError,
  intermediatePems,
  readCertificate,
  readPrivateKey,
  UNREADABLE_CERT,
  type CertManager,
  type Config,
  type Logger,
  type StoredCertificate,
  type TlsCertificate,
} from "@ottava/core";
import { noopCertManager } from "../noop";

const REF = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$/;

/** The SHA-1 of a PEM, hex: the name of its file on the amphora (<digest>.pem), for a certificate (a TlsContainer's id) or a secret (_process_secret). */
export const pemDigest = (pem: string): string => createHash("sha1").update(pem, "utf8").digest("hex");

/** A certificate as the amphora driver writes it for HAProxy (Octavia's data_models.TLSContainer). Secret: never log it. */
export interface TlsContainer {
  /** The SHA-1 of the certificate PEM, hex: the name of its file on the amphora (<id>.pem). */
  id: string;
  /** The certificate's subject CN, lower case. */
  primary_cn: string;
  certificate: string;
  /** The private key, decrypted, in its traditional PEM form (PKCS#1 for RSA, SEC1 for EC; PKCS#8 otherwise). */
  private_key: string;
  intermediates: string[];
}

/**
 * cert_parser._map_cert_tls_container: what get_cert answered, the key decrypted with its passphrase
 * (prepare_private_key). Throws a CertificateError when the certificate or the key cannot be read.
 */
export function tlsContainer(cert: TlsCertificate): TlsContainer {
  const x509 = readCertificate(cert.certificate);
  const cn = /^CN=(.*)$/m.exec(x509.subject)?.[1];
  if (cn === undefined) throw new CertificateError(UNREADABLE_CERT); // get_host_names: no CN
  const key = readPrivateKey(cert.private_key ?? "", cert.private_key_passphrase);
  const type = key.asymmetricKeyType === "rsa" ? "pkcs1" : key.asymmetricKeyType === "ec" ? "sec1" : "pkcs8";
  return {
    id: pemDigest(cert.certificate),
    primary_cn: cn.toLowerCase(),
    certificate: cert.certificate,
    private_key: (key.export({ format: "pem", type }) as string).trim(),
    intermediates: [...cert.intermediates],
  };
}

/** cert_parser.build_pem: the certificate, its key, then the intermediates, one per line, as HAProxy's crt file. */
export function buildPem(c: TlsContainer): string {
  return [c.certificate, c.private_key, ...c.intermediates].join("\n") + "\n";
}

export interface LocalCertManagerOptions {
  /** [certificates] storage_path (OTTAVA_CERT_STORAGE_PATH). */
  storagePath: string;
  log?: Logger | undefined;
}

/** Octavia's LocalCertManager behind Ottava's CertManager port, with its store and delete. */
export class LocalCertManager implements CertManager {
  readonly storagePath: string;
  private readonly log: Logger | undefined;

  constructor(opts: LocalCertManagerOptions) {
    this.storagePath = opts.storagePath;
    this.log = opts.log;
  }

  private base(ref: string): string {
    if (!REF.test(ref)) throw new CertificateError(`Could not retrieve certificate: '${ref}' is not a certificate reference`);
    return join(this.storagePath, ref);
  }

  private async writeAll(files: [string, string][]): Promise<void> {
    await mkdir(this.storagePath, { recursive: true, mode: 0o700 });
    try {
      for (const [file, data] of files) await writeFile(file, data, { mode: 0o600, flag: "wx" });
    } catch (e) {
      await Promise.all(files.map(([file]) => rm(file, { force: true })));
      this.log?.error("Failed to store certificate.", { storagePath: this.storagePath, error: (e as Error).message });
      throw new CertificateError(`Failed to store certificate: ${(e as Error).message}`);
    }
  }

  /** store_cert: writes the certificate's files under a new reference (a UUID) and answers it. */
  async storeCert(c: StoredCertificate): Promise<string> {
    const ref = randomUUID();
    const base = this.base(ref);
    this.log?.info("Storing certificate data on the local filesystem.", { ref });
    const files: [string, string][] = [
      [`${base}.crt`, c.certificate],
      [`${base}.key`, c.private_key],
    ];
    if (c.intermediates) files.push([`${base}.int`, c.intermediates]);
    if (c.private_key_passphrase) files.push([`${base}.pass`, c.private_key_passphrase]);
    await this.writeAll(files);
    return ref;
  }

  /** A secret get_secret reads (a client CA or a CRL, PEM): written as <ref>.crt alone. Answers its reference. */
  async storeSecret(pem: string): Promise<string> {
    const ref = randomUUID();
    this.log?.info("Storing secret data on the local filesystem.", { ref });
    await this.writeAll([[`${this.base(ref)}.crt`, pem]]);
    return ref;
  }

  /** get_cert: the certificate and key (both required), the intermediates split into PEMs and the passphrase (when stored). */
  async getCert(_projectId: string, ref: string): Promise<TlsCertificate> {
    const base = this.base(ref);
    this.log?.debug("Loading certificate from the local filesystem.", { ref });
    const certificate = await this.read(`${base}.crt`, ref, "Certificate could not be read.");
    const private_key = await this.read(`${base}.key`, ref, "Private Key could not be read.");
    const ints = await this.optional(`${base}.int`);
    let intermediates: string[] = [];
    if (ints !== undefined) {
      try {
        intermediates = intermediatePems(ints);
      } catch (e) {
        throw new CertificateError(`Intermediates of ${ref} could not be read: ${(e as Error).message}`);
      }
    }
    const private_key_passphrase = (await this.optional(`${base}.pass`)) ?? null;
    return { certificate, private_key, private_key_passphrase, intermediates };
  }

  /** get_secret: the PEM of <ref>.crt (a client CA or a CRL). */
  async getSecret(_projectId: string, ref: string): Promise<string> {
    this.log?.debug("Loading secret from the local filesystem.", { ref });
    return this.read(`${this.base(ref)}.crt`, ref, "Secret could not be read.");
  }

  /** delete_cert: removes the reference's files (the certificate must exist; key, intermediates and passphrase go if present). */
  async deleteCert(ref: string): Promise<void> {
    const base = this.base(ref);
    this.log?.info("Deleting certificate from the local filesystem.", { ref });
    try {
      await rm(`${base}.crt`);
    } catch (e) {
      this.log?.error("Failed to delete certificate", { ref, error: (e as NodeJS.ErrnoException).code });
      throw new CertificateError(`Failed to delete certificate ${ref}`);
    }
    await Promise.all(["key", "int", "pass"].map((ext) => rm(`${base}.${ext}`, { force: true })));
  }

  private async read(file: string, ref: string, message: string): Promise<string> {
    try {
      return await readFile(file, "utf8");
    } catch (e) {
      this.log?.info("Failed to read certificate file", { ref, error: (e as NodeJS.ErrnoException).code });
      throw new CertificateError(message);
    }
  }

  /** A file get_cert reads if it can (Octavia passes over any error reading the intermediates or the passphrase). */
  private async optional(file: string): Promise<string | undefined> {
    return readFile(file, "utf8").catch(() => undefined);
  }
}

/**
 * [certificates] cert_manager as the settings pick it: OTTAVA_CERT_MANAGER=noop (the default: any
 * non-empty reference is accepted, nothing is read), local (OTTAVA_CERT_STORAGE_PATH must be set) or
 * secretsmanager (Secrets Manager, OTTAVA_SECRETSMANAGER_ENDPOINT or the Region's: @ottava/aws/certs,
 * a chunk loaded at the first read).
 */
export function createCertManager(
  config: Pick<Config, "certManager" | "certStoragePath" | "secretsmanagerEndpoint" | "stage">,
  log?: Logger,
): CertManager {
  if (config.certManager === "noop") return noopCertManager;
  if (config.certManager === "secretsmanager") return secretsManagerCerts(config, log);
  if (!config.certStoragePath)
    throw new Error("OTTAVA_CERT_STORAGE_PATH ([certificates] storage_path) must be set when OTTAVA_CERT_MANAGER is local");
  return new LocalCertManager({ storagePath: config.certStoragePath, log });
}

/** The Secrets Manager certificate manager (@ottava/aws/certs), loaded on its first call. */
function secretsManagerCerts(config: Pick<Config, "secretsmanagerEndpoint" | "stage">, log?: Logger): CertManager {
  let manager: Promise<CertManager> | undefined;
  const load = () => (manager ??= import("@ottava/aws/certs").then((m) => m.secretsManagerCertManager(config, log)));
  return {
    getCert: async (projectId, ref) => (await load()).getCert(projectId, ref),
    getSecret: async (projectId, ref) => (await load()).getSecret(projectId, ref),
  };
}
