// What the tests of the amphora image scripts (packages/aws/image/) share: where the scripts are, and an amphora's secret made in moto as the EC2 compute driver makes it (the boot contract).
import { fileURLToPath } from "node:url";

/** packages/aws/image/: install.sh, ottava-amphora-configure, ottava-vrrp-master, amphora-agent.service. */
export const IMAGE_DIR = fileURLToPath(new URL("../../image/", import.meta.url));

/** The SecretString of an amphora's secret: the agent's certificate and key, and its amphora-agent.conf. */
export const amphoraSecretString = (serverPem: string, agentConf: string) =>
  JSON.stringify({ server_pem: serverPem, agent_conf: agentConf });

/**
 * CreateSecret in moto (Secrets Manager's JSON protocol; moto reads the service from the credential scope
 * and checks no signature). Test support: the product's own client makes the real ones.
 */
export async function createMotoSecret(endpoint: string, name: string, secretString: string, region = "us-east-1"): Promise<string> {
  const res = await fetch(`${endpoint}/`, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-amz-json-1.1",
      "X-Amz-Target": "secretsmanager.CreateSecret",
      Authorization: `AWS4-HMAC-SHA256 Credential=testing/20260101/${region}/secretsmanager/aws4_request, SignedHeaders=host, Signature=00`,
    },
    body: JSON.stringify({ Name: name, SecretString: secretString }),
  });
  const body = await res.text();
  if (!res.ok) throw new Error(`moto CreateSecret ${name}: ${res.status} ${body}`);
  return (JSON.parse(body) as { ARN: string }).ARN;
}
