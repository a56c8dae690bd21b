// `npm run cert`: stores certificates in the local certificate manager (Octavia's local_cert_manager, octavia/certificates/manager/local.py store_cert) and prints their references for listeners and pools.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "@ottava/core";
import { LocalCertManager, validateCertificate } from "@ottava/amphora";

const USAGE = `Usage: npm run cert -- <command> [options]

  store --cert CERT.pem --key KEY.pem [--intermediates CHAIN.pem] [--passphrase-file FILE]
        stores a server certificate and its key (checked to match) and prints its reference:
        a listener's default_tls_container_ref or sni_container_refs, a pool's tls_container_ref
  store-secret --file CA_OR_CRL.pem
        stores a client CA or a CRL and prints its reference: a listener's client_ca_tls_container_ref
        or client_crl_container_ref, a pool's ca_tls_container_ref or crl_container_ref
  delete REF
        removes what a reference names

  --data-dir DIR    npm start's data directory (OTTAVA_DATA_DIR, default .ottava): the certificates
                    are kept in DIR/certificates unless OTTAVA_CERT_STORAGE_PATH says where
  -h, --help        this text

Ottava reads them when started with OTTAVA_CERT_MANAGER=local (and the same data directory).
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
  const dataDir = values["data-dir"] ?? process.env.OTTAVA_DATA_DIR ?? ".ottava";
  const manager = new LocalCertManager({ storagePath: config.certStoragePath ?? join(dataDir, "certificates") });

  if (command === "store") {
    if (!values.cert || !values.key) fail("store needs --cert and --key (see --help)");
    const stored = {
      certificate: readPem(values.cert, "certificate"),
      private_key: readPem(values.key, "private key"),
      intermediates: values.intermediates ? readPem(values.intermediates, "intermediates") : null,
      // The passphrase file's content, without its final newline.
      private_key_passphrase: values["passphrase-file"]
        ? readPem(values["passphrase-file"], "passphrase file").replace(/\r?\n$/, "")
        : null,
    };
    try {
      validateCertificate(stored);
    } catch (e) {
      fail(`Not stored: ${(e as Error).message}`);
    }
    process.stdout.write(`${await manager.storeCert(stored)}\n`);
  } else if (command === "store-secret") {
    if (!values.file) fail("store-secret needs --file (see --help)");
    const pem = readPem(values.file, "file");
    if (!/-----BEGIN (CERTIFICATE|X509 CERTIFICATE|X509 CRL)-----/.test(pem)) fail("Not stored: the file holds no PEM certificate or CRL");
    process.stdout.write(`${await manager.storeSecret(pem)}\n`);
  } else if (command === "delete") {
    if (rest.length !== 1) fail("delete needs one reference (see --help)");
    await manager.deleteCert(rest[0]!);
  } else {
    fail(`Unknown command '${command}' (see --help)`);
  }
}

main().catch((e) => fail(`npm run cert failed: ${e instanceof Error ? e.message : String(e)}`));
