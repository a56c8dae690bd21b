// Octavia's cert_parser (octavia/common/tls_utils/cert_parser.py) for PEM input, with its exceptions'
// messages (octavia/common/exceptions.py): what every certificate manager checks of what it stores or
// reads (the local one, the Secrets Manager one, `npm run cert`), and what the amphora drivers read a
// certificate with. Secrets (keys, passphrases) are only parsed here, never logged.
import { createPrivateKey, X509Certificate, type KeyObject } from "node:crypto";
import { CertificateError } from "./certificates";
import type { TlsCertificate } from "./drivers";

/** UnreadableCert. */
export const UNREADABLE_CERT = "Could not read X509 from PEM";
/** NeedsPassphrase. */
export const NEEDS_PASSPHRASE = "Passphrase needed to decrypt key but client did not provide one.";
/** MisMatchedKey. */
export const MISMATCHED_KEY = "Key and x509 certificate do not match";

const X509_BEGIN = "-----BEGIN CERTIFICATE-----";
const X509_END = "-----END CERTIFICATE-----";

/** _get_x509_from_pem_bytes: a PEM certificate, read; a CertificateError saying `message` when it is not one. */
export function readCertificate(pem: string, message: string = UNREADABLE_CERT): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch {
    throw new CertificateError(message);
  }
}

/** _read_private_key: a PEM private key, decrypted with its passphrase when one is given; a CertificateError saying `message` when it cannot be read. */
export function readPrivateKey(pem: string, passphrase: string | null | undefined, message: string = NEEDS_PASSPHRASE): KeyObject {
  try {
    return createPrivateKey({ key: pem, format: "pem", ...(passphrase ? { passphrase } : {}) });
  } catch {
    throw new CertificateError(message);
  }
}

/**
 * get_intermediates_pems for PEM input: each BEGIN/END CERTIFICATE block (_split_x509s, line by line),
 * parsed and written again as PEM without its trailing newline (_prepare_x509_cert). A list is taken as
 * its PEMs concatenated. UnreadableCert for a block that is not a certificate, and for text without one
 * (Octavia would read it as a PKCS#7 bundle, which Ottava does not read).
 */
export function intermediatePems(intermediates: string | readonly string[]): string[] {
  const text = typeof intermediates === "string" ? intermediates : intermediates.join("\n");
  if (text.trim() === "") return [];
  if (!text.includes(X509_BEGIN)) throw new CertificateError(UNREADABLE_CERT);
  const blocks: string[] = [];
  let current: string[] | undefined;
  for (const line of text.replace(/\r/g, "").split("\n")) {
    if (current) {
      current.push(line);
      if (line === X509_END) {
        blocks.push(current.join("\n"));
        current = undefined;
      }
    } else if (line === X509_BEGIN) current = [line];
  }
  return blocks.map((b) => readCertificate(b).toString().trim());
}

const PEM_SECRET = /-----BEGIN (CERTIFICATE|X509 CERTIFICATE|X509 CRL)-----/;

/** A client CA or CRL as it is stored (get_secret's value): the PEM itself, which must hold a certificate or a CRL. */
export function pemSecret(pem: string): string {
  if (!PEM_SECRET.test(pem)) throw new CertificateError("the file holds no PEM certificate or CRL");
  return pem;
}

/** What a certificate is stored with (Octavia's store_cert arguments), PEMs. Secret: never log it. */
export interface StoredCertificate {
  /** The certificate. */
  certificate: string;
  /** Its private key (encrypted when `private_key_passphrase` is given). */
  private_key: string;
  /** The intermediates, PEM blocks concatenated in order. */
  intermediates?: string | null | undefined;
  private_key_passphrase?: string | null | undefined;
}

/**
 * validate_cert: the certificate is an X.509 PEM, the intermediates too, and the private key (decrypted
 * with the passphrase) is the certificate's. A CertificateError with Octavia's message says which is wrong.
 */
export function validateCert(c: StoredCertificate | TlsCertificate): void {
  const x509 = readCertificate(c.certificate);
  if (c.intermediates) intermediatePems(c.intermediates);
  const key = readPrivateKey(c.private_key ?? "", c.private_key_passphrase);
  if (!x509.checkPrivateKey(key)) throw new CertificateError(MISMATCHED_KEY);
}
