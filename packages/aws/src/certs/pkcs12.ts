// A PKCS#12 bundle read without a passphrase, as Octavia's PKCS12Cert (octavia/certificates/common/pkcs12.py:
// cryptography's pkcs12.load_pkcs12(data, None)): the certificate, its private key and the other certificates.
//
// node:crypto has no PKCS#12 reader, so this walks the DER itself (RFC 7292) and decrypts with node:crypto:
// PBES2 (PBKDF2 with HMAC-SHA-1/224/256/384/512, AES-CBC or 3DES), which OpenSSL 3 writes by default, and
// PKCS#12's own PBE with SHA-1 and 3DES (`-legacy`, older tools). RC2 (the oldest tools' certificate
// encryption) is not in Node's OpenSSL: such a bundle is refused. The MAC is checked, as OpenSSL's
// PKCS12_parse does, with no password and with the empty one; key material is never logged.
import {
  X509Certificate,
  createDecipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  pbkdf2Sync,
  timingSafeEqual,
  type KeyObject,
} from "node:crypto";

/** Octavia's UnreadablePKCS12 message. */
export const unreadablePkcs12 = (error: string) =>
  `The PKCS12 bundle is unreadable. Please check the PKCS12 bundle validity. In addition, make sure it does not require a pass phrase. Error: ${error}`;

export class Pkcs12Error extends Error {
  constructor(error: string) {
    super(unreadablePkcs12(error));
    this.name = "Pkcs12Error";
  }
}

/** What a bundle holds, as PKCS12Cert answers it (PEMs without a trailing newline, the key in its traditional form). */
export interface Pkcs12Contents {
  certificate: string;
  private_key: string;
  intermediates: string[];
}

// ---- DER ----

interface Tlv {
  tag: number;
  /** The contents (for a constructed value, its encoded children). */
  value: Buffer;
  /** The whole encoding, tag and length included. */
  raw: Buffer;
}

function readTlv(buf: Buffer, at: number): Tlv & { end: number } {
  if (at + 2 > buf.length) throw new Pkcs12Error("truncated DER");
  const tag = buf[at]!;
  if ((tag & 0x1f) === 0x1f) throw new Pkcs12Error("unsupported DER tag");
  let len = buf[at + 1]!;
  let start = at + 2;
  if (len === 0x80) throw new Pkcs12Error("indefinite lengths (BER) are not supported");
  if (len > 0x80) {
    const n = len & 0x7f;
    if (n > 4 || start + n > buf.length) throw new Pkcs12Error("bad DER length");
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[start + i]!;
    start += n;
  }
  const end = start + len;
  if (end > buf.length) throw new Pkcs12Error("truncated DER");
  return { tag, value: buf.subarray(start, end), raw: buf.subarray(at, end), end };
}

/** The one value `buf` holds (nothing may follow it). */
function one(buf: Buffer, tag?: number): Tlv {
  const t = readTlv(buf, 0);
  if (t.end !== buf.length) throw new Pkcs12Error("trailing data after a DER value");
  return expect(t, tag);
}

function expect(t: Tlv, tag?: number): Tlv {
  if (tag !== undefined && t.tag !== tag) throw new Pkcs12Error(`unexpected DER tag 0x${t.tag.toString(16)}`);
  return t;
}

/** The children of a constructed value. */
function children(t: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let at = 0; at < t.value.length;) {
    const c = readTlv(t.value, at);
    out.push(c);
    at = c.end;
  }
  return out;
}

const SEQ = 0x30;
const SET = 0x31;
const OCTETS = 0x04;
const INT = 0x02;
const OID_TAG = 0x06;

function oid(t: Tlv): string {
  const b = expect(t, OID_TAG).value;
  if (b.length === 0) throw new Pkcs12Error("empty OID");
  const parts = [Math.floor(b[0]! / 40), b[0]! % 40];
  let n = 0;
  for (const byte of b.subarray(1)) {
    n = n * 128 + (byte & 0x7f);
    if (!(byte & 0x80)) {
      parts.push(n);
      n = 0;
    }
  }
  return parts.join(".");
}

function int(t: Tlv): number {
  const b = expect(t, INT).value;
  if (b.length > 6) throw new Pkcs12Error("integer too large");
  return b.reduce((n, byte) => n * 256 + byte, 0);
}

/** An OCTET STRING's bytes, primitive or constructed (BER's segments, as some encoders write). */
function octets(t: Tlv, tag = OCTETS): Buffer {
  if (t.tag === tag) return t.value;
  if (t.tag === (tag | 0x20)) return Buffer.concat(children(t).map((c) => octets(c)));
  throw new Pkcs12Error(`unexpected DER tag 0x${t.tag.toString(16)}`);
}

/** An [0] EXPLICIT wrapper's one child. */
function explicit0(t: Tlv): Tlv {
  const [c] = children(expect(t, 0xa0));
  if (!c) throw new Pkcs12Error("empty [0]");
  return c;
}

// ---- the OIDs ----

const DATA = "1.2.840.113549.1.7.1";
const ENCRYPTED_DATA = "1.2.840.113549.1.7.6";
const KEY_BAG = "1.2.840.113549.1.12.10.1.1";
const SHROUDED_KEY_BAG = "1.2.840.113549.1.12.10.1.2";
const CERT_BAG = "1.2.840.113549.1.12.10.1.3";
const X509_CERT = "1.2.840.113549.1.9.22.1";
const PBES2 = "1.2.840.113549.1.5.13";
const PBKDF2 = "1.2.840.113549.1.5.12";
const PBE_SHA1_3DES = ["1.2.840.113549.1.12.1.3", "1.2.840.113549.1.12.1.4"];
const PBE_SHA1_RC2 = ["1.2.840.113549.1.12.1.5", "1.2.840.113549.1.12.1.6"];
const HASHES: Record<string, string> = {
  "1.3.14.3.2.26": "sha1",
  "2.16.840.1.101.3.4.2.4": "sha224",
  "2.16.840.1.101.3.4.2.1": "sha256",
  "2.16.840.1.101.3.4.2.2": "sha384",
  "2.16.840.1.101.3.4.2.3": "sha512",
};
const HMACS: Record<string, string> = {
  "1.2.840.113549.2.7": "sha1",
  "1.2.840.113549.2.8": "sha224",
  "1.2.840.113549.2.9": "sha256",
  "1.2.840.113549.2.10": "sha384",
  "1.2.840.113549.2.11": "sha512",
};
const CIPHERS: Record<string, { name: string; keyLength: number }> = {
  "2.16.840.1.101.3.4.1.2": { name: "aes-128-cbc", keyLength: 16 },
  "2.16.840.1.101.3.4.1.22": { name: "aes-192-cbc", keyLength: 24 },
  "2.16.840.1.101.3.4.1.42": { name: "aes-256-cbc", keyLength: 32 },
  "1.2.840.113549.3.7": { name: "des-ede3-cbc", keyLength: 24 },
};

// ---- keys from the password ----

/**
 * The password's forms: none (OpenSSL's NULL) and the empty one. PKCS#12's own KDF takes it as a
 * BMPString with its terminator (the empty one: two zero bytes), PBKDF2 as its bytes (nothing either way).
 */
interface Password {
  bmp: Buffer;
  utf8: Buffer;
}
const PASSWORDS: Password[] = [
  { bmp: Buffer.alloc(0), utf8: Buffer.alloc(0) },
  { bmp: Buffer.alloc(2), utf8: Buffer.alloc(0) },
];

/** RFC 7292 appendix B.2: PKCS#12's key derivation (id 1: key, 2: IV, 3: MAC key). */
function pkcs12Kdf(hash: string, password: Buffer, salt: Buffer, id: number, iterations: number, size: number): Buffer {
  const u = createHash(hash).digest().length;
  const v = hash === "sha384" || hash === "sha512" ? 128 : 64;
  const d = Buffer.alloc(v, id);
  const fill = (src: Buffer) => {
    if (src.length === 0) return Buffer.alloc(0);
    const out = Buffer.alloc(v * Math.ceil(src.length / v));
    for (let i = 0; i < out.length; i++) out[i] = src[i % src.length]!;
    return out;
  };
  const i = Buffer.concat([fill(salt), fill(password)]);
  const out: Buffer[] = [];
  for (let got = 0; got < size; got += u) {
    let a = createHash(hash).update(d).update(i).digest();
    for (let n = 1; n < iterations; n++) a = createHash(hash).update(a).digest();
    out.push(a);
    const b = fill(a);
    for (let j = 0; j < i.length; j += v) {
      let carry = 1;
      for (let k = v - 1; k >= 0; k--) {
        carry += i[j + k]! + b[k]!;
        i[j + k] = carry & 0xff;
        carry >>= 8;
      }
    }
  }
  return Buffer.concat(out).subarray(0, size);
}

function decipher(name: string, key: Buffer, iv: Buffer, data: Buffer): Buffer {
  try {
    const d = createDecipheriv(name, key, iv);
    return Buffer.concat([d.update(data), d.final()]);
  } catch {
    throw new Pkcs12Error("Invalid password or PKCS12 data");
  }
}

/** Decrypts `data` under the AlgorithmIdentifier `alg` with `password`. */
function decrypt(alg: Tlv, data: Buffer, password: Password): Buffer {
  const [algOid, params] = children(expect(alg, SEQ));
  const name = oid(algOid!);
  if (PBE_SHA1_3DES.includes(name)) {
    const [salt, iterations] = children(expect(params!, SEQ));
    const n = int(iterations!);
    const s = octets(salt!);
    const keyLength = name === PBE_SHA1_3DES[0] ? 24 : 16;
    let key = pkcs12Kdf("sha1", password.bmp, s, 1, n, keyLength);
    if (keyLength === 16) key = Buffer.concat([key, key.subarray(0, 8)]);
    return decipher("des-ede3-cbc", key, pkcs12Kdf("sha1", password.bmp, s, 2, n, 8), data);
  }
  if (name === PBES2) {
    const [kdf, scheme] = children(expect(params!, SEQ));
    const [kdfOid, kdfParams] = children(expect(kdf!, SEQ));
    if (oid(kdfOid!) !== PBKDF2) throw new Pkcs12Error(`unsupported key derivation ${oid(kdfOid!)}`);
    const [schemeOid, iv] = children(expect(scheme!, SEQ));
    const cipher = CIPHERS[oid(schemeOid!)];
    if (!cipher) throw new Pkcs12Error(`unsupported cipher ${oid(schemeOid!)}`);
    const [salt, iterations, ...rest] = children(expect(kdfParams!, SEQ));
    let prf = "sha1";
    for (const r of rest) {
      if (r.tag === SEQ) {
        const p = HMACS[oid(children(r)[0]!)];
        if (!p) throw new Pkcs12Error("unsupported PBKDF2 PRF");
        prf = p;
      }
    }
    const key = pbkdf2Sync(password.utf8, octets(salt!), int(iterations!), cipher.keyLength, prf);
    return decipher(cipher.name, key, octets(iv!), data);
  }
  if (PBE_SHA1_RC2.includes(name))
    throw new Pkcs12Error("RC2 encryption is not supported (write the bundle with AES: OpenSSL 3's default)");
  throw new Pkcs12Error(`unsupported encryption ${name}`);
}

/** Checks the MAC (MacData) over the AuthenticatedSafe and answers the password it was made with. */
function macPassword(macData: Tlv | undefined, authSafe: Buffer): Password {
  if (!macData) return PASSWORDS[1]!;
  const [digestInfo, salt, iterations] = children(expect(macData, SEQ));
  const [alg, digest] = children(expect(digestInfo!, SEQ));
  const hash = HASHES[oid(children(expect(alg!, SEQ))[0]!)];
  if (!hash) throw new Pkcs12Error("unsupported MAC digest");
  const expected = octets(digest!);
  const n = iterations ? int(iterations) : 1;
  for (const password of PASSWORDS) {
    const key = pkcs12Kdf(hash, password.bmp, octets(salt!), 3, n, expected.length);
    const mac = createHmac(hash, key).update(authSafe).digest();
    if (mac.length === expected.length && timingSafeEqual(mac, expected)) return password;
  }
  throw new Pkcs12Error("Invalid password or PKCS12 data");
}

// ---- the bundle ----

const pem = (label: string, der: Buffer) =>
  `-----BEGIN ${label}-----\n${der
    .toString("base64")
    .match(/.{1,64}/g)!
    .join("\n")}\n-----END ${label}-----`;

/** Reads a PKCS#12 bundle protected by no password (or the empty one). Throws a Pkcs12Error. */
export function readPkcs12(data: Buffer): Pkcs12Contents {
  try {
    return read(data);
  } catch (e) {
    if (e instanceof Pkcs12Error) throw e;
    throw new Pkcs12Error((e as Error).message);
  }
}

function read(data: Buffer): Pkcs12Contents {
  const [version, authSafe, macData] = children(one(data, SEQ));
  if (int(version!) !== 3) throw new Pkcs12Error("not a PKCS12 bundle (version is not 3)");
  const [contentType, content] = children(expect(authSafe!, SEQ));
  if (oid(contentType!) !== DATA) throw new Pkcs12Error("public-key integrity mode is not supported");
  const safeBytes = octets(explicit0(content!));
  const password = macPassword(macData, safeBytes);

  const certs: X509Certificate[] = [];
  const keys: KeyObject[] = [];
  for (const info of children(one(safeBytes, SEQ))) {
    const [infoType, infoContent] = children(expect(info, SEQ));
    let safeContents: Buffer;
    if (oid(infoType!) === DATA) safeContents = octets(explicit0(infoContent!));
    else if (oid(infoType!) === ENCRYPTED_DATA) {
      const [, eci] = children(expect(explicit0(infoContent!), SEQ));
      const [, alg, encrypted] = children(expect(eci!, SEQ));
      if (!encrypted) throw new Pkcs12Error("encrypted data without content");
      safeContents = decrypt(alg!, octets(encrypted, 0x80), password);
    } else throw new Pkcs12Error(`unsupported content type ${oid(infoType!)}`);
    for (const bag of children(one(safeContents, SEQ))) {
      const [bagId, bagValue] = children(expect(bag, SEQ));
      const value = explicit0(bagValue!);
      switch (oid(bagId!)) {
        case KEY_BAG:
          keys.push(createPrivateKey({ key: value.raw, format: "der", type: "pkcs8" }));
          break;
        case SHROUDED_KEY_BAG: {
          const [alg, encrypted] = children(expect(value, SEQ));
          keys.push(createPrivateKey({ key: decrypt(alg!, octets(encrypted!), password), format: "der", type: "pkcs8" }));
          break;
        }
        case CERT_BAG: {
          const [certId, certValue] = children(expect(value, SEQ));
          if (oid(certId!) === X509_CERT) certs.push(new X509Certificate(octets(explicit0(certValue!))));
          break;
        }
        default: // CRLs, secrets and nested bags: cryptography reads none of them either
      }
    }
  }
  const key = keys[0];
  if (!key) throw new Pkcs12Error("no private key in the bundle");
  const index = certs.findIndex((c) => c.checkPrivateKey(key));
  if (index < 0) throw new Pkcs12Error("no certificate of the private key in the bundle");
  const type = key.asymmetricKeyType === "rsa" ? "pkcs1" : key.asymmetricKeyType === "ec" ? "sec1" : "pkcs8";
  return {
    certificate: certs[index]!.toString().trim(),
    private_key: (key.export({ format: "pem", type }) as string).trim(),
    intermediates: certs.filter((_, i) => i !== index).map((c) => pem("CERTIFICATE", c.raw)),
  };
}
