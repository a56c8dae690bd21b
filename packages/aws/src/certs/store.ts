// What `npm run cert` does with OTTAVA_CERT_MANAGER=secretsmanager: an operator stores a certificate (or a
// client CA or CRL) for a project, since tenants have no AWS access. Barbican's store_cert and
// store_secret, on Secrets Manager: the secret is written in the JSON format the manager reads
// (docs/data-plane.md), tagged as a certificate of the project (or shared) and of the stage, after the
// manager's own checks of what it will read; its ARN is the reference. An entry of its own
// (@ottava/aws/certs/store): the command needs it, the API's and task functions' bundles do not.
import { randomUUID } from "node:crypto";
import { CertificateError, pemSecret, validateCert, type Config, type StoredCertificate } from "@ottava/core";
import { CERTIFICATE_TAG_KEY, PROJECT_TAG_KEY, SHARED_TAG_KEY, STAGE_TAG_KEY } from "../constants";
import { secretsManagerClient, type SecretsManagerCall } from "../secretsmanager-client";
import { isCertificateSecret, readJsonCertificate, readPkcs12Certificate } from "./secretsmanager";

/**
 * A certificate secret's name: ottava/<stage>/certificates/<uuid>. The stage keeps stages' certificates
 * apart (and a read policy can be scoped to the prefix); the prefix is not the amphorae's
 * (ottava/<stage>/amphora/), which the task functions may write and the orphan sweep deletes; and a
 * generated id, as Barbican's references are, says nothing of the project or the host names to whoever
 * may list secrets, and never collides.
 */
export const certificateSecretName = (stage: string, id: string = randomUUID()) => `ottava/${stage}/certificates/${id}`;

/** Who may use a stored secret: one project, or every project (the operator's shared certificates). */
export type CertificateOwner = { projectId: string } | { shared: true };

type Tag = { Key: string; Value: string };

/** A certificate secret's tags: a certificate, of the stage, and the project's (or shared). */
export function certificateSecretTags(stage: string, owner: CertificateOwner): Tag[] {
  return [
    { Key: CERTIFICATE_TAG_KEY, Value: "true" },
    "projectId" in owner ? { Key: PROJECT_TAG_KEY, Value: owner.projectId } : { Key: SHARED_TAG_KEY, Value: "true" },
    { Key: STAGE_TAG_KEY, Value: stage },
  ];
}

/**
 * The JSON document of a certificate secret, once the manager's own read of it (readJsonCertificate,
 * then cert_parser's validate_cert) accepts it: a certificate the manager would refuse is never stored.
 */
function certificateSecretJson(m: StoredCertificate): string {
  const json = JSON.stringify({
    certificate: m.certificate,
    private_key: m.private_key,
    ...(m.intermediates ? { intermediates: m.intermediates } : {}),
    ...(m.private_key_passphrase ? { private_key_passphrase: m.private_key_passphrase } : {}),
  });
  validateCert(readJsonCertificate(json));
  return json;
}

/**
 * A PKCS#12 bundle's bytes (SecretBinary, what Octavia's Barbican manager reads), once the manager's own
 * read of it (readPkcs12, no passphrase, then validate_cert) accepts it.
 */
function pkcs12SecretValue(der: Buffer): Buffer {
  validateCert(readPkcs12Certificate(der));
  return der;
}

const errorName = (e: unknown) => (e as { name?: unknown } | null)?.name;

/** The operator's side of the certificate manager: stores and deletes certificate secrets of a stage. */
export class CertificateSecretStore {
  /**
   * `kmsKeyId`: the KMS key the secrets are encrypted with (CreateSecret's KmsKeyId), a customer-managed
   * key; the account's aws/secretsmanager key when unset. Readers of a secret under a customer-managed key
   * need kms:Decrypt on it (docs/data-plane.md, "Encryption keys").
   */
  constructor(
    private readonly sm: SecretsManagerCall,
    private readonly stage: string,
    private readonly kmsKeyId?: string,
  ) {}

  private async create(
    owner: CertificateOwner,
    value: { SecretString: string } | { SecretBinary: Buffer },
    Description: string,
  ): Promise<string> {
    const id = randomUUID();
    const Name = certificateSecretName(this.stage, id);
    // The id as the version's token: a CreateSecret the client retries after a lost answer is the same request.
    const answer = await this.sm(
      "CreateSecret",
      {
        Name,
        ClientRequestToken: id,
        ...("SecretBinary" in value ? { SecretBinary: value.SecretBinary.toString("base64") } : value),
        ...(this.kmsKeyId ? { KmsKeyId: this.kmsKeyId } : {}),
        Description,
        Tags: certificateSecretTags(this.stage, owner),
      },
      `Secrets Manager CreateSecret of ${Name}`,
    );
    if (typeof answer.ARN !== "string") throw new Error(`Secrets Manager CreateSecret of ${Name} answered no ARN`);
    return answer.ARN;
  }

  /** store_cert: the certificate (checked as the manager will check it), its key, intermediates and passphrase; answers the ARN. */
  async storeCert(owner: CertificateOwner, material: StoredCertificate): Promise<string> {
    return this.create(owner, { SecretString: certificateSecretJson(material) }, "Ottava TLS certificate (npm run cert)");
  }

  /** store_cert of a PKCS#12 bundle (no passphrase, checked as the manager will read it), kept as is in SecretBinary; answers the ARN. */
  async storePkcs12(owner: CertificateOwner, der: Buffer): Promise<string> {
    return this.create(owner, { SecretBinary: pkcs12SecretValue(der) }, "Ottava TLS certificate, PKCS#12 (npm run cert)");
  }

  /** store_secret: a client CA or CRL, the PEM itself; answers the ARN. */
  async storeSecret(owner: CertificateOwner, pem: string): Promise<string> {
    return this.create(owner, { SecretString: pemSecret(pem) }, "Ottava client CA or CRL (npm run cert)");
  }

  /**
   * delete_cert: schedules the deletion of a certificate secret (Secrets Manager's default recovery
   * window; the manager refuses it at once). Only a secret tagged as a certificate of the stage, and no amphora's.
   */
  async delete(ref: string): Promise<void> {
    let described: Record<string, unknown>;
    try {
      described = await this.sm("DescribeSecret", { SecretId: ref }, `Secrets Manager DescribeSecret of ${ref}`);
    } catch (e) {
      if (errorName(e) === "ResourceNotFoundException") throw new CertificateError(`No certificate secret ${ref}`);
      throw e;
    }
    if (!isCertificateSecret((described.Tags ?? []) as { Key?: string; Value?: string }[], this.stage))
      throw new CertificateError(
        `${ref} is not a certificate secret of stage ${this.stage} (tagged ${CERTIFICATE_TAG_KEY} = true, ${STAGE_TAG_KEY} = ${this.stage}): not deleted`,
      );
    await this.sm("DeleteSecret", { SecretId: String(described.ARN ?? ref) }, `Secrets Manager DeleteSecret of ${ref}`);
  }
}

/** The store for the settings: OTTAVA_SECRETSMANAGER_ENDPOINT (else the Region's), OTTAVA_STAGE; `kmsKeyId`, a customer-managed key. */
export const certificateSecretStore = (config: Pick<Config, "secretsmanagerEndpoint" | "stage">, kmsKeyId?: string) =>
  new CertificateSecretStore(secretsManagerClient(config), config.stage, kmsKeyId);
