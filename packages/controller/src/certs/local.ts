// The local certificate generator, as Octavia's (octavia/certificates/generator/local.py): every
// amphora gets a fresh key pair and a server certificate (CN and DNS SAN = the amphora id) signed by
// the CA of the settings ([certificates] ca_certificate / ca_private_key, inline PEM).
//
// Keys are ECDSA P-256, where Octavia makes RSA 2048: as strong or stronger (~128-bit against ~112-bit),
// accepted by the amphora agent's TLS stack (OpenSSL) like RSA, and a key pair costs about a
// millisecond instead of RSA's tens to hundreds (generated inside the build task, on every amphora
// build and rotation). The CA may be RSA or EC (an existing Octavia CA works, its key in PKCS#8,
// PKCS#1 or SEC1, encrypted or not); signatures are SHA-256, Octavia's default signing_digest.
//
// The private keys never leave the task that makes them except to the driver: not in a flow's
// state, not in a log line, not in the store.
import { randomBytes, type KeyObject, type webcrypto } from "node:crypto";
import {
  CertificateError,
  readCertificate,
  readPrivateKey,
  type CaMaterial,
  type CertGenerator,
  type Config,
  type Logger,
  type ServerPem,
} from "@ottava/core";
import { x509 } from "./x509";

const LEAF_KEY: webcrypto.EcKeyGenParams = { name: "ECDSA", namedCurve: "P-256" };
const LEAF_SIGN = { name: "ECDSA", hash: "SHA-256" };
/** A local CA is valid ten years. */
const LOCAL_CA_VALIDITY = 10 * 365 * 24 * 3600;

/** A positive 127-bit serial (Octavia: uuid4 as an integer). */
function newSerial(): string {
  const b = randomBytes(16);
  b[0] = (b[0]! & 0x7f) | 0x01; // positive, and no leading zero byte
  return b.toString("hex");
}

/** The CA of the settings, if set; a setting without its pair is a configuration error. */
export function caFromConfig(config: Pick<Config, "caCertificate" | "caPrivateKey" | "caPrivateKeyPassphrase">): CaMaterial | undefined {
  if (!config.caCertificate && !config.caPrivateKey) return undefined;
  if (!config.caCertificate || !config.caPrivateKey) {
    throw new CertificateError("OTTAVA_CA_CERTIFICATE and OTTAVA_CA_PRIVATE_KEY must be set together");
  }
  return { certificate: config.caCertificate, privateKey: config.caPrivateKey, passphrase: config.caPrivateKeyPassphrase };
}

/** Creates a self-signed CA (ECDSA P-256): what `npm start` uses when no CA is configured. */
export async function createLocalCa(opts: { commonName?: string; validity?: number; now?: Date } = {}): Promise<CaMaterial> {
  const lib = await x509();
  const keys = (await crypto.subtle.generateKey(LEAF_KEY, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
  const notBefore = wholeSecond(opts.now ?? new Date());
  const cert = await lib.X509CertificateGenerator.createSelfSigned({
    serialNumber: newSerial(),
    name: [{ CN: [opts.commonName ?? "Ottava local CA"] }],
    keys,
    notBefore,
    notAfter: new Date(notBefore.getTime() + (opts.validity ?? LOCAL_CA_VALIDITY) * 1000),
    signingAlgorithm: LEAF_SIGN,
    extensions: [
      new lib.BasicConstraintsExtension(true, 0, true),
      new lib.KeyUsagesExtension(lib.KeyUsageFlags.keyCertSign | lib.KeyUsageFlags.cRLSign, true),
      await lib.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
  return { certificate: `${cert.toString("pem")}\n`, privateKey: `${lib.PemConverter.encode(pkcs8, "PRIVATE KEY")}\n` };
}

interface LoadedCa {
  cert: import("@peculiar/x509").X509Certificate;
  signingKey: webcrypto.CryptoKey;
  signingAlgorithm: webcrypto.Algorithm | webcrypto.EcdsaParams;
}

/** The WebCrypto algorithm a CA key signs with (SHA-256), from the key's type. */
function signingAlgorithmOf(key: KeyObject): {
  importAlg: webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams;
  sign: webcrypto.Algorithm | webcrypto.EcdsaParams;
} {
  if (key.asymmetricKeyType === "rsa") {
    const alg = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
    return { importAlg: alg, sign: alg };
  }
  if (key.asymmetricKeyType === "ec") {
    const curve = { prime256v1: "P-256", secp384r1: "P-384", secp521r1: "P-521" }[String(key.asymmetricKeyDetails?.namedCurve)];
    if (curve) return { importAlg: { name: "ECDSA", namedCurve: curve }, sign: { name: "ECDSA", hash: "SHA-256" } };
  }
  const type = [key.asymmetricKeyType, key.asymmetricKeyDetails?.namedCurve].filter(Boolean).join(" ");
  throw new CertificateError(`the CA private key's type (${type}) is not supported: use RSA, or EC P-256, P-384 or P-521`);
}

/** Reads and checks a CA: the key must open (with its passphrase) and belong to the certificate. */
async function loadCa(ca: CaMaterial): Promise<LoadedCa> {
  const lib = await x509();
  // Node's message says nothing of the key; ours says even less.
  const key = readPrivateKey(
    ca.privateKey,
    ca.passphrase,
    "the CA private key (OTTAVA_CA_PRIVATE_KEY) could not be read: not a PEM private key, or a wrong or missing passphrase",
  );
  const certificate = readCertificate(ca.certificate, "the CA certificate (OTTAVA_CA_CERTIFICATE) is not a PEM certificate");
  if (!certificate.checkPrivateKey(key)) {
    throw new CertificateError("the CA private key does not belong to the CA certificate");
  }
  const { importAlg, sign } = signingAlgorithmOf(key);
  const signingKey = await crypto.subtle.importKey("pkcs8", key.export({ type: "pkcs8", format: "der" }), importAlg, false, ["sign"]);
  return { cert: new lib.X509Certificate(ca.certificate), signingKey, signingAlgorithm: sign };
}

const wholeSecond = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000);

/** Issues amphora server certificates with a CA, read once (on first use) from `source`. */
export class LocalCertGenerator implements CertGenerator {
  private loaded: Promise<LoadedCa> | undefined;

  constructor(private readonly source: () => CaMaterial | Promise<CaMaterial>) {}

  private ca(): Promise<LoadedCa> {
    this.loaded ??= (async () => loadCa(await this.source()))().catch((e) => {
      this.loaded = undefined; // a CA that could not be read is read again next time
      throw e;
    });
    return this.loaded;
  }

  async generateServerPem(cn: string, validity: number, now = new Date()): Promise<ServerPem> {
    const lib = await x509();
    const ca = await this.ca();
    const keys = (await crypto.subtle.generateKey(LEAF_KEY, true, ["sign", "verify"])) as webcrypto.CryptoKeyPair;
    const notBefore = wholeSecond(now);
    const notAfter = new Date(notBefore.getTime() + validity * 1000);
    const cert = await lib.X509CertificateGenerator.create({
      serialNumber: newSerial(),
      subject: [{ CN: [cn] }],
      issuer: ca.cert.subject,
      notBefore,
      notAfter,
      publicKey: keys.publicKey,
      signingKey: ca.signingKey,
      signingAlgorithm: ca.signingAlgorithm,
      extensions: [
        new lib.BasicConstraintsExtension(false, undefined, true),
        new lib.SubjectAlternativeNameExtension([{ type: "dns", value: cn }]),
        // Octavia's usages, less keyEncipherment and dataEncipherment, which RFC 5480 forbids for EC keys.
        new lib.KeyUsagesExtension(lib.KeyUsageFlags.digitalSignature | lib.KeyUsageFlags.keyAgreement, true),
        new lib.ExtendedKeyUsageExtension([lib.ExtendedKeyUsage.serverAuth, lib.ExtendedKeyUsage.clientAuth], true),
        await lib.SubjectKeyIdentifierExtension.create(keys.publicKey),
        await lib.AuthorityKeyIdentifierExtension.create(ca.cert.publicKey),
      ],
    });
    const pkcs8 = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
    return { pem: `${cert.toString("pem")}\n${lib.PemConverter.encode(pkcs8, "PRIVATE KEY")}\n`, expiration: notAfter.toISOString() };
  }
}

/** A CA, or how to get it on first use (e.g. `() => loadOrCreateLocalCa(dataDir)`: nothing is made before an amphora needs it). */
export type CaSource = CaMaterial | (() => Promise<CaMaterial>);

let ephemeral: Promise<CaMaterial> | undefined;

/**
 * The generator a process's tasks issue certificates with: the settings' CA, else the CA given (npm
 * start: its local CA). Without either, a task Lambda cannot issue (a CertificateError says which settings
 * are missing); any other process uses a CA of its own, in memory, made on first use (with a warning:
 * its certificates verify against no CA another process knows).
 */
export function certGenerator(config: Config, log: Logger, ca?: CaSource): CertGenerator {
  const configured = caFromConfig(config);
  if (configured) return new LocalCertGenerator(() => configured);
  if (ca) return new LocalCertGenerator(typeof ca === "function" ? ca : () => ca);
  if (process.env.AWS_LAMBDA_FUNCTION_NAME) {
    return new LocalCertGenerator(() => {
      throw new CertificateError("no CA to sign amphora certificates with: set OTTAVA_CA_CERTIFICATE and OTTAVA_CA_PRIVATE_KEY");
    });
  }
  return new LocalCertGenerator(() => {
    if (!ephemeral) {
      log.warn(
        "no CA configured (OTTAVA_CA_CERTIFICATE, OTTAVA_CA_PRIVATE_KEY): amphora certificates are signed by a CA made for this process, in memory",
      );
      ephemeral = createLocalCa({ commonName: "Ottava ephemeral CA" });
    }
    return ephemeral;
  });
}
