// `npm run cert`: stores certificates in the local certificate manager (Octavia's local_cert_manager, octavia/certificates/manager/local.py store_cert) and prints their references for listeners and pools.
// With OTTAVA_CERT_MANAGER=secretsmanager it stores them in Secrets Manager instead, for a project (or
// shared), as Barbican's store_cert does for a tenant: tenants have no AWS access, an operator stores them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CertificateError, loadConfig, pemSecret, validateCert, type Config, type StoredCertificate } from "@ottava/core";
import { LocalCertManager } from "@ottava/amphora";
import type { CertificateOwner } from "@ottava/aws/certs/store";

const USAGE = `Usage: npm run cert -- <command> [options]

  store --cert CERT.pem --key KEY.pem [--intermediates CHAIN.pem] [--passphrase-file FILE] [OWNER]
        stores a server certificate and its key (checked to match) and prints its reference:
        a listener's default_tls_container_ref or sni_container_refs, a pool's tls_container_ref
  store --pkcs12 BUNDLE.p12 OWNER
        (secretsmanager only) stores a PKCS#12 bundle without a passphrase as it is, in SecretBinary,
        the format Octavia's Barbican manager reads: openssl pkcs12 -export -passout pass: ...
  store-secret --file CA_OR_CRL.pem [OWNER]
        stores a client CA or a CRL and prints its reference: a listener's client_ca_tls_container_ref
        or client_crl_container_ref, a pool's ca_tls_container_ref or crl_container_ref
  delete REF
        removes what a reference names

  --data-dir DIR    npm start's data directory (OTTAVA_DATA_DIR, default .ottava): the certificates
                    are kept in DIR/certificates unless OTTAVA_CERT_STORAGE_PATH says where
  -h, --help        this text

Ottava reads them when started with OTTAVA_CERT_MANAGER=local (and the same data directory).

With OTTAVA_CERT_MANAGER=secretsmanager the command writes Secrets Manager secrets instead (the
endpoint OTTAVA_SECRETSMANAGER_ENDPOINT, else AWS_REGION's; the credentials of the environment; the
stage OTTAVA_STAGE), named ottava/<stage>/certificates/<uuid>, and prints the secret's ARN. OWNER,
required there, says which projects may use it:
  --project ID      the project's (tag ottava:project = ID)
  --shared          every project's (tag ottava:shared = true)
  --kms-key-id KEY  encrypt with this customer-managed KMS key (id, ARN or alias) instead of the account's
                    aws/secretsmanager key; Ottava's functions then need kms:Decrypt on it
                    (OTTAVA_CERT_KMS_KEY_ARNS at deploy)
delete then schedules the secret's deletion (Secrets Manager's recovery window); Ottava refuses it at once.
`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

const readPem = (file: string, what: string) => {
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    fail(`Could not read the ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
};

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      cert: { type: "string" },
      key: { type: "string" },
      intermediates: { type: "string" },
      "passphrase-file": { type: "string" },
      file: { type: "string" },
      "data-dir": { type: "string" },
      pkcs12: { type: "string" },
      "kms-key-id": { type: "string" },
      project: { type: "string" },
      shared: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    process.stdout.write(USAGE);
    if (!command && !values.help) process.exit(1);
    return;
  }
  const config = loadConfig();
  const secretsManager = config.certManager === "secretsmanager";
  if (!secretsManager && (values.project !== undefined || values.shared))
    fail("--project and --shared are for OTTAVA_CERT_MANAGER=secretsmanager: the local manager's certificates are every project's");
  if (!secretsManager && (values.pkcs12 !== undefined || values["kms-key-id"] !== undefined))
    fail("--pkcs12 and --kms-key-id are for OTTAVA_CERT_MANAGER=secretsmanager: the local manager keeps PEM files");
  const owner = (): CertificateOwner => {
    if (values.project !== undefined && values.shared) fail("give --project or --shared, not both");
    if (values.project) return { projectId: values.project };
    if (values.shared) return { shared: true };
    fail(`${command} needs --project ID or --shared with OTTAVA_CERT_MANAGER=secretsmanager (see --help)`);
  };
  const store: Store = secretsManager ? await secretsManagerStore(config, values["kms-key-id"]) : localStore(config, values["data-dir"]);

  if (command === "store" && values.pkcs12 !== undefined) {
    if (values.cert || values.key || values.intermediates || values["passphrase-file"])
      fail("store takes --pkcs12 or --cert and --key, not both (see --help)");
    const who = owner();
    let der: Buffer;
    try {
      der = readFileSync(values.pkcs12);
    } catch (e) {
      fail(`Could not read the PKCS#12 bundle ${values.pkcs12}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    process.stdout.write(`${await notStored(store.storePkcs12(who, der))}\n`);
  } else if (command === "store") {
    if (!values.cert || !values.key) fail("store needs --cert and --key (see --help)");
    const who = secretsManager ? owner() : null;
    const stored = {
      certificate: readPem(values.cert, "certificate"),
      private_key: readPem(values.key, "private key"),
      intermediates: values.intermediates ? readPem(values.intermediates, "intermediates") : null,
      // The passphrase file's content, without its final newline.
      private_key_passphrase: values["passphrase-file"]
        ? readPem(values["passphrase-file"], "passphrase file").replace(/\r?\n$/, "")
        : null,
    };
    process.stdout.write(`${await notStored(store.storeCert(who, stored))}\n`);
  } else if (command === "store-secret") {
    if (!values.file) fail("store-secret needs --file (see --help)");
    const who = secretsManager ? owner() : null;
    process.stdout.write(`${await notStored(store.storeSecret(who, readPem(values.file, "file")))}\n`);
  } else if (command === "delete") {
    if (rest.length !== 1) fail("delete needs one reference (see --help)");
    await store.delete(rest[0]!);
  } else {
    fail(`Unknown command '${command}' (see --help)`);
  }
}

/** Where the command stores: the local manager's directory, or Secrets Manager for an owner. Each checks what it is given before it writes. */
interface Store {
  storeCert(owner: CertificateOwner | null, material: StoredCertificate): Promise<string>;
  storeSecret(owner: CertificateOwner | null, pem: string): Promise<string>;
  storePkcs12(owner: CertificateOwner, der: Buffer): Promise<string>;
  delete(ref: string): Promise<void>;
}

/** A store's answer; its refusal of what the manager would refuse (a CertificateError, nothing written) ends the command. */
async function notStored<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (e) {
    if (e instanceof CertificateError) fail(`Not stored: ${e.message}`);
    throw e;
  }
}

function localStore(config: Config, dataDirOption: string | undefined): Store {
  const dataDir = dataDirOption ?? process.env.OTTAVA_DATA_DIR ?? ".ottava";
  const manager = new LocalCertManager({ storagePath: config.certStoragePath ?? join(dataDir, "certificates") });
  return {
    storeCert: async (_owner, material) => {
      validateCert(material);
      return manager.storeCert(material);
    },
    storeSecret: async (_owner, pem) => manager.storeSecret(pemSecret(pem)),
    storePkcs12: () => fail("--pkcs12 is for OTTAVA_CERT_MANAGER=secretsmanager"),
    delete: (ref) => manager.deleteCert(ref),
  };
}

/** Secrets Manager (@ottava/aws/certs/store, loaded only here): the secret's ARN is the reference. */
async function secretsManagerStore(config: Config, kmsKeyId: string | undefined): Promise<Store> {
  const { certificateSecretStore } = await import("@ottava/aws/certs/store");
  const store = certificateSecretStore(config, kmsKeyId);
  return {
    storeCert: (owner, material) => store.storeCert(owner!, material),
    storeSecret: (owner, pem) => store.storeSecret(owner!, pem),
    storePkcs12: (owner, der) => store.storePkcs12(owner, der),
    delete: async (ref) => {
      try {
        await store.delete(ref);
      } catch (e) {
        if (e instanceof CertificateError) fail(e.message);
        throw e;
      }
    },
  };
}

main().catch((e) => fail(`npm run cert failed: ${e instanceof Error ? e.message : String(e)}`));
