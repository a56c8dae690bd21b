// The Secrets Manager certificate manager (OTTAVA_CERT_MANAGER=secretsmanager), in Barbican's place: Octavia's
// BarbicanCertManager (octavia/certificates/manager/barbican.py) with cert_parser's checks
// (octavia/common/tls_utils/cert_parser.py), over a Secrets Manager secret named by ARN or by name.
//
// A certificate secret holds either a PKCS#12 bundle in SecretBinary (what Octavia's Barbican manager
// reads, no passphrase) or a JSON document of PEMs in SecretString with Octavia's field names
// (certificate, private_key, intermediates, private_key_passphrase). A client CA or CRL secret holds the
// PEM itself. Barbican's ACL becomes tags: a project may read a secret only if it is tagged as a
// certificate (CERTIFICATE_TAG_KEY = "true") of this stage (STAGE_TAG_KEY, as the functions' IAM grant
// requires too) and with the project (PROJECT_TAG_KEY) or as shared (SHARED_TAG_KEY = "true"); an
// amphora's own secret is never read. Anything else answers Octavia's
// "Could not retrieve certificate: ['<ref>']". Secrets' contents are never logged.
import {
  CertificateError,
  intermediatePems,
  isUnavailable,
  pyRepr,
  validateCert,
  type CertManager,
  type Logger,
  type TlsCertificate,
} from "@ottava/core";
import { AMPHORA_TAG_KEY, CERTIFICATE_TAG_KEY, INSTANCE_ARN_TAG_KEY, PROJECT_TAG_KEY, SHARED_TAG_KEY, STAGE_TAG_KEY } from "../constants";
import type { SecretsManagerCall } from "../secretsmanager-client";
import { Pkcs12Error, readPkcs12 } from "./pkcs12";

/** Octavia's CertificateRetrievalException for one reference (its list as Python prints it). */
export const retrievalError = (ref: string) => new CertificateError(`Could not retrieve certificate: ${pyRepr([ref])}`);

type Tags = { Key?: string; Value?: string }[];

const tagOf = (tags: Tags, key: string) => tags.find((t) => t.Key === key)?.Value;

/** Do these tags make a secret a certificate secret of `stage`: tagged as a certificate of the stage, and no amphora's? */
export function isCertificateSecret(tags: Tags, stage: string): boolean {
  if (tagOf(tags, AMPHORA_TAG_KEY) !== undefined || tagOf(tags, INSTANCE_ARN_TAG_KEY) !== undefined) return false;
  return tagOf(tags, CERTIFICATE_TAG_KEY) === "true" && tagOf(tags, STAGE_TAG_KEY) === stage;
}

/** May `projectId` of `stage` read a secret with these tags? A certificate secret of the stage, the project's or shared. */
export function mayReadCertificate(tags: Tags, projectId: string, stage: string): boolean {
  if (!isCertificateSecret(tags, stage)) return false;
  return tagOf(tags, PROJECT_TAG_KEY) === projectId || tagOf(tags, SHARED_TAG_KEY) === "true";
}

/** A PKCS#12 bundle read as get_cert answers it (no passphrase: its key comes out decrypted); Octavia's UnreadablePKCS12 as a CertificateError. */
export function readPkcs12Certificate(der: Buffer): TlsCertificate {
  try {
    return { ...readPkcs12(der), private_key_passphrase: null };
  } catch (e) {
    if (e instanceof Pkcs12Error) throw new CertificateError(e.message);
    throw e;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const optionalString = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);

/** The JSON format of a certificate secret (docs/data-plane.md), read into what get_cert answers. */
export function readJsonCertificate(text: string): TlsCertificate {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new CertificateError(
      "The certificate secret is not a JSON document (expected certificate, private_key, intermediates, private_key_passphrase)",
    );
  }
  if (!isObject(doc) || typeof doc.certificate !== "string" || typeof doc.private_key !== "string")
    throw new CertificateError("The certificate secret must give certificate and private_key, each a PEM string");
  const ints = doc.intermediates;
  if (ints != null && typeof ints !== "string" && !(Array.isArray(ints) && ints.every((i) => typeof i === "string")))
    throw new CertificateError("The certificate secret's intermediates must be a PEM string or a list of PEM strings");
  if (doc.private_key_passphrase != null && typeof doc.private_key_passphrase !== "string")
    throw new CertificateError("The certificate secret's private_key_passphrase must be a string");
  return {
    certificate: doc.certificate,
    private_key: doc.private_key,
    private_key_passphrase: optionalString(doc.private_key_passphrase),
    intermediates: ints == null ? [] : intermediatePems(ints as string | string[]),
  };
}

export interface SecretsManagerCertManagerOptions {
  /** Secrets Manager (secretsManagerClient). */
  secrets: SecretsManagerCall;
  /** OTTAVA_STAGE: only certificate secrets tagged with it are read. */
  stage: string;
  log?: Logger | undefined;
}

/** Octavia's BarbicanCertManager behind Ottava's CertManager port, on Secrets Manager. */
export class SecretsManagerCertManager implements CertManager {
  private readonly sm: SecretsManagerCall;
  private readonly stage: string;
  private readonly log: Logger | undefined;

  constructor(opts: SecretsManagerCertManagerOptions) {
    this.sm = opts.secrets;
    this.stage = opts.stage;
    this.log = opts.log;
  }

  /** The secret's value, once its tags allow `projectId` to read it; Octavia's retrieval error otherwise. */
  private async value(projectId: string, ref: string): Promise<{ text?: string; binary?: Buffer }> {
    if (!ref) throw retrievalError(ref);
    let answer: Record<string, unknown>;
    try {
      const described = await this.sm("DescribeSecret", { SecretId: ref }, `Secrets Manager DescribeSecret of ${ref}`);
      if (described.DeletedDate != null || !mayReadCertificate((described.Tags ?? []) as Tags, projectId, this.stage)) {
        this.log?.info("Certificate secret refused: not tagged as a certificate of this stage for the project.", { ref, projectId });
        throw retrievalError(ref);
      }
      // By the ARN DescribeSecret answered: the secret whose tags were read is the one read.
      const arn = typeof described.ARN === "string" ? described.ARN : ref;
      answer = await this.sm("GetSecretValue", { SecretId: arn }, `Secrets Manager GetSecretValue of ${ref}`);
    } catch (e) {
      if (e instanceof CertificateError || isUnavailable(e)) throw e;
      this.log?.warn("Failed to load certificate secret.", { ref, error: (e as Error).name });
      throw retrievalError(ref);
    }
    if (typeof answer.SecretBinary === "string") return { binary: Buffer.from(answer.SecretBinary, "base64") };
    if (typeof answer.SecretString === "string") return { text: answer.SecretString };
    throw retrievalError(ref);
  }

  /** get_cert: a PKCS#12 bundle (SecretBinary) or the JSON document (SecretString), checked as cert_parser.validate_cert. */
  async getCert(projectId: string, ref: string): Promise<TlsCertificate> {
    this.log?.info("Loading certificate secret from Secrets Manager.", { ref });
    const { text, binary } = await this.value(projectId, ref);
    const cert = binary ? readPkcs12Certificate(binary) : readJsonCertificate(text!);
    validateCert(cert);
    return cert;
  }

  /** get_secret: a client CA or CRL, the PEM the secret holds. */
  async getSecret(projectId: string, ref: string): Promise<string> {
    this.log?.info("Loading secret from Secrets Manager.", { ref });
    const { text, binary } = await this.value(projectId, ref);
    return text ?? binary!.toString("utf8");
  }
}
