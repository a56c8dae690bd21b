// Amphora certificates (octavia/certificates): the CA that signs the amphora agents' server
// certificates, and the port of the generator that issues them (Octavia's cert_generator).

/** A CA as the settings give it ([certificates] ca_certificate, ca_private_key, ca_private_key_passphrase, inline PEM). */
export interface CaMaterial {
  certificate: string;
  /** Secret: never logged, never put in a flow's state. */
  privateKey: string;
  passphrase?: string | undefined;
}

/** A server certificate and its key: what an amphora agent serves TLS with. */
export interface ServerPem {
  /** The certificate, then its private key (PEM), as Octavia's server.pem. Secret: never logged, never in a flow's state. */
  pem: string;
  /** The certificate's notAfter (ISO 8601): what the amphora record keeps as cert_expiration. */
  expiration: string;
}

export interface CertGenerator {
  /** A new key pair and a certificate for `cn` (the amphora id), signed by the CA, valid `validity` seconds from `now`. */
  generateServerPem(cn: string, validity: number, now?: Date): Promise<ServerPem>;
}

/** The CA is missing or unusable: a configuration error (not retried by the flows). */
export class CertificateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CertificateError";
  }
}
