// The TLS references of listeners and pools checked through the certificate manager, as Octavia's API does (octavia/api/v2/controllers/base.py _validate_tls_refs and _validate_client_ca_and_crl_refs).
//
// A resource's create and update are synchronous and check in Octavia's order. What they need from
// the certificate manager is read before they decide: the resource names the references
// (ChildResource.tlsRefs), resolveTlsRefs asks the manager, and the answers reach the checks as a
// TlsLookup. Without a manager, or with the no-op one, every non-empty reference resolves and the
// client CA and CRL are not read (what Ottava did before it had certificate managers).
// Secrets' contents (PEMs) are only parsed here, never logged nor kept.
import { X509Certificate, verify } from "node:crypto";
import type { CertManager } from "../drivers";
import { Fault, validation } from "../faults";
import { pyRepr } from "../compat/repr";

/** What a create or update reads from the certificate manager. */
export interface TlsRefRequest {
  /** Certificate containers, read with get_cert: a listener's default and SNI certificates, a pool's client certificate. */
  certificates: readonly unknown[];
  /** Secrets, read with get_secret: a client CA and its CRL. */
  secrets: readonly unknown[];
}

/** The certificate manager's answers for one request. */
export class TlsLookup {
  /** No certificate manager, or the no-op one: every non-empty reference resolves; secrets are not read. */
  static readonly unchecked = new TlsLookup(undefined, undefined);

  private constructor(
    private readonly certificates: ReadonlyMap<string, boolean> | undefined,
    /** ref → its PEM, or null when it could not be retrieved. */
    private readonly secrets: ReadonlyMap<string, string | null> | undefined,
  ) {}

  static of(certificates: ReadonlyMap<string, boolean>, secrets: ReadonlyMap<string, string | null>): TlsLookup {
    return new TlsLookup(certificates, secrets);
  }

  /** Whether secrets were read (a real certificate manager): their contents are then checked. */
  get checked(): boolean {
    return this.certificates !== undefined;
  }

  /** get_cert succeeded for `ref`. */
  retrievable(ref: unknown): boolean {
    if (typeof ref !== "string" || ref === "") return false;
    if (!this.certificates) return true;
    const ok = this.certificates.get(ref);
    if (ok === undefined) throw new Error(`TLS reference ${ref} was not read before the check`);
    return ok;
  }

  /** get_secret's answer for `ref`: its PEM (undefined when unchecked), or null when it could not be retrieved. */
  secret(ref: unknown): string | null | undefined {
    if (typeof ref !== "string" || ref === "") return null;
    if (!this.secrets) return undefined;
    const pem = this.secrets.get(ref);
    if (pem === undefined) throw new Error(`TLS reference ${ref} was not read before the check`);
    return pem;
  }
}

const wanted = (refs: readonly unknown[]) => [...new Set(refs.filter((r): r is string => typeof r === "string" && r !== ""))];

/**
 * Reads the request's references through the manager: get_cert for certificates, get_secret for
 * secrets. A reference whose read fails (whatever the error, as Octavia) does not resolve. Never throws.
 */
export async function resolveTlsRefs(
  manager: CertManager | undefined,
  projectId: string,
  request: TlsRefRequest | undefined,
): Promise<TlsLookup> {
  if (!manager || manager.noop || !request) return TlsLookup.unchecked;
  const certificates = new Map<string, boolean>();
  const secrets = new Map<string, string | null>();
  await Promise.all([
    ...wanted(request.certificates).map(async (ref) => {
      certificates.set(
        ref,
        await manager.getCert(projectId, ref).then(
          () => true,
          () => false,
        ),
      );
    }),
    ...wanted(request.secrets).map(async (ref) => {
      secrets.set(ref, await manager.getSecret(projectId, ref).catch(() => null));
    }),
  ]);
  return TlsLookup.of(certificates, secrets);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The references of a fully populated load-balancer create (its listeners, their default and redirect
 * pools, the top-level pools), as given: each object's create then checks its own.
 */
export function graphTlsRefs(listeners: unknown, pools: unknown): TlsRefRequest {
  const certificates: unknown[] = [];
  const secrets: unknown[] = [];
  const pool = (p: unknown) => {
    if (!isObject(p)) return;
    certificates.push(p.tls_container_ref);
    secrets.push(p.ca_tls_container_ref, p.crl_container_ref);
  };
  for (const l of Array.isArray(listeners) ? listeners : []) {
    if (!isObject(l)) continue;
    certificates.push(l.default_tls_container_ref, ...(Array.isArray(l.sni_container_refs) ? l.sni_container_refs : []));
    secrets.push(l.client_ca_tls_container_ref, l.client_crl_container_ref);
    pool(l.default_pool);
    for (const policy of Array.isArray(l.l7policies) ? l.l7policies : []) if (isObject(policy)) pool(policy.redirect_pool);
  }
  for (const p of Array.isArray(pools) ? pools : []) pool(p);
  return { certificates, secrets };
}

/** _validate_tls_refs: every reference must be retrievable, else 400 "Could not retrieve certificate: [<the others>]". */
export function checkTlsRefs(lookup: TlsLookup, refs: readonly unknown[]): void {
  const bad = refs.filter((r) => !lookup.retrievable(r));
  if (bad.length > 0) throw new Fault(400, `Could not retrieve certificate: ${pyRepr(bad)}`);
}

/**
 * _validate_client_ca_and_crl_refs: the CA (and the CRL, if any) must be retrievable secrets, the CA
 * an X.509 certificate in PEM, the CRL a PEM CRL signed by that CA; Octavia's messages otherwise.
 */
export function checkClientCaAndCrl(lookup: TlsLookup, caRef: unknown, crlRef: unknown): void {
  const caPem = lookup.secret(caRef);
  const crlPem = crlRef ? lookup.secret(crlRef) : undefined;
  const bad = [...(caPem === null ? [caRef] : []), ...(crlRef && crlPem === null ? [crlRef] : [])];
  if (bad.length > 0) throw new Fault(400, `Could not retrieve certificate: ${pyRepr(bad)}`);
  if (!lookup.checked || typeof caPem !== "string") return;

  let ca: X509Certificate;
  try {
    ca = new X509Certificate(pemBlock(caPem, ["CERTIFICATE", "X509 CERTIFICATE"], "BEGIN CERTIFICATE/END CERTIFICATE", "certificate"));
  } catch (e) {
    throw validation(
      `The client authentication CA certificate is invalid. It must be a valid x509 PEM format certificate. Error: ${asn1Error(e)}`,
    );
  }
  if (typeof crlPem !== "string" || crlPem === "") return;
  let crl: ReturnType<typeof readCrl>;
  try {
    crl = readCrl(pemBlock(crlPem, ["X509 CRL"], "BEGIN X509 CRL/END X509", "CRL"));
  } catch (e) {
    throw validation(
      `The client authentication certificate revocation list is invalid. It must be a valid x509 PEM format certificate revocation list. Error: ${asn1Error(e)}`,
    );
  }
  if (!signatureValid(crl, ca)) throw validation("The CRL specified is not valid for client certificate authority reference supplied.");
}

// ---- PEM and DER, as far as python-cryptography's load_pem_x509_certificate / load_pem_x509_crl go ----

/** A PEM error carrying python-cryptography's own message. */
class PemError extends Error {}

const PEM_BLOCK = /-----BEGIN ([^-\r\n]+)-----\r?\n([\s\S]*?)-----END \1-----/g;

/** The DER of the first PEM block tagged one of `tags`, with cryptography's messages when there is none. */
function pemBlock(pem: string, tags: readonly string[], delimiters: string, what: string): Buffer {
  const blocks = [...pem.matchAll(PEM_BLOCK)];
  if (blocks.length === 0) {
    throw new PemError(
      "Unable to load PEM file. See https://cryptography.io/en/latest/faq/#why-can-t-i-import-my-pem-file for more details. MalformedFraming",
    );
  }
  const block = blocks.find((b) => tags.includes(b[1]!));
  if (!block) throw new PemError(`Valid PEM but no ${delimiters} delimiters. Are you sure this is a ${what}?`);
  return Buffer.from(block[2]!.replace(/\s+/g, ""), "base64");
}

const asn1Error = (e: unknown) => (e instanceof PemError ? e.message : `error parsing asn1 value: ${(e as Error).message}`);

interface Der {
  tag: number;
  /** where its header starts, its content starts, and it ends */
  from: number;
  start: number;
  end: number;
}

function der(buf: Buffer, at: number, tag: number, what: string): Der {
  if (at + 2 > buf.length) throw new Error(`${what}: truncated`);
  if (buf[at] !== tag) throw new Error(`${what}: unexpected tag 0x${buf[at]!.toString(16)}`);
  let len = buf[at + 1]!;
  let start = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || start + n > buf.length) throw new Error(`${what}: invalid length`);
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[start + i]!;
    start += n;
  }
  const end = start + len;
  if (end > buf.length) throw new Error(`${what}: truncated`);
  return { tag, from: at, start, end };
}

function oid(bytes: Buffer): string {
  const parts: number[] = [];
  let v = 0;
  for (const b of bytes) {
    v = v * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  const first = parts.shift() ?? 0;
  const a = first < 80 ? Math.floor(first / 40) : 2;
  return [a, first - 40 * a, ...parts].join(".");
}

/** CertificateList ::= SEQUENCE { tbsCertList, signatureAlgorithm, signatureValue BIT STRING } */
function readCrl(buf: Buffer) {
  const list = der(buf, 0, 0x30, "CertificateList");
  if (list.end !== buf.length) throw new Error("CertificateList: extra data");
  const tbs = der(buf, list.start, 0x30, "TBSCertList");
  const alg = der(buf, tbs.end, 0x30, "AlgorithmIdentifier");
  const algOid = der(buf, alg.start, 0x06, "algorithm");
  const algorithm = oid(buf.subarray(algOid.start, algOid.end));
  const sig = der(buf, alg.end, 0x03, "signatureValue");
  if (sig.end !== list.end || buf[sig.start] !== 0) throw new Error("signatureValue: invalid");
  return { tbs: buf.subarray(tbs.from, tbs.end), algorithm, signature: buf.subarray(sig.start + 1, sig.end) };
}

/** Signature algorithms → digest (null: the key's own, EdDSA). */
const SIGNATURE_DIGESTS: Record<string, string | null> = {
  "1.2.840.113549.1.1.5": "sha1",
  "1.2.840.113549.1.1.14": "sha224",
  "1.2.840.113549.1.1.11": "sha256",
  "1.2.840.113549.1.1.12": "sha384",
  "1.2.840.113549.1.1.13": "sha512",
  "1.2.840.10045.4.1": "sha1",
  "1.2.840.10045.4.3.1": "sha224",
  "1.2.840.10045.4.3.2": "sha256",
  "1.2.840.10045.4.3.3": "sha384",
  "1.2.840.10045.4.3.4": "sha512",
  "1.3.101.112": null,
  "1.3.101.113": null,
};

/** crl.is_signature_valid(ca.public_key()): false for a signature the CA's key did not make (or an algorithm not listed above). */
function signatureValid(crl: ReturnType<typeof readCrl>, ca: X509Certificate): boolean {
  const digest = SIGNATURE_DIGESTS[crl.algorithm];
  if (digest === undefined) return false;
  try {
    return verify(digest, crl.tbs, ca.publicKey, crl.signature);
  } catch {
    return false;
  }
}
