// An amphora's secret (the boot contract of docs/data-plane.md): what Octavia's CertComputeCreate puts in
// the config drive, kept in Secrets Manager instead, one secret an amphora, named
// ottava/<stage>/amphora/<id>, bound to its instance by the tag ottava:instance-arn, which the amphora
// role's policy compares with the calling instance's ARN. Its value is never logged nor returned.
import type { Tag } from "@aws-sdk/client-ec2";
import { INSTANCE_ARN_TAG_KEY } from "../constants";
import type { SecretsManagerCall } from "../secretsmanager-client";

/** What the amphora's configure step reads from its secret (ottava-amphora-configure). */
export interface AmphoraSecretValue {
  /** The agent's server certificate and key, PEM: /etc/octavia/certs/server.pem. */
  server_pem: string;
  /** amphora-agent.conf (the heartbeat key in it): /etc/octavia/amphora-agent.conf. */
  agent_conf: string;
}

const errorName = (e: unknown) => (e as { name?: unknown } | null)?.name;

export class AmphoraSecrets {
  constructor(private readonly call: SecretsManagerCall) {}

  /**
   * Makes the secret, tagged `tags`. A retry finds it made (ResourceExistsException) and puts the new
   * value in it: the secret holds what the latest build handed over (a retried build has a new certificate).
   */
  async create(name: string, value: AmphoraSecretValue, tags: Tag[]): Promise<void> {
    const SecretString = JSON.stringify(value);
    try {
      await this.call(
        "CreateSecret",
        { Name: name, SecretString, Description: "Ottava amphora: agent certificate and configuration", Tags: tags },
        `Secrets Manager CreateSecret of ${name}`,
      );
    } catch (e) {
      if (errorName(e) !== "ResourceExistsException") throw e;
      await this.call("PutSecretValue", { SecretId: name, SecretString }, `Secrets Manager PutSecretValue of ${name}`);
    }
  }

  /** Binds the secret to its instance: the tag ottava:instance-arn, which lets that instance's role read it. */
  async bind(name: string, instanceArn: string): Promise<void> {
    await this.call(
      "TagResource",
      { SecretId: name, Tags: [{ Key: INSTANCE_ARN_TAG_KEY, Value: instanceArn }] },
      `Secrets Manager TagResource of ${name}`,
    );
  }

  /** Deletes the secret at once (no recovery window); a secret already gone is deleted. */
  async delete(name: string): Promise<void> {
    try {
      await this.call("DeleteSecret", { SecretId: name, ForceDeleteWithoutRecovery: true }, `Secrets Manager DeleteSecret of ${name}`);
    } catch (e) {
      if (errorName(e) !== "ResourceNotFoundException") throw e;
    }
  }
}
