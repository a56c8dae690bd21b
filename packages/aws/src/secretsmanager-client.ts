// The Secrets Manager calls the drivers make, the Region's endpoint or OTTAVA_SECRETSMANAGER_ENDPOINT:
// each one signed JSON request (@ottava/edge's awsJsonClient, which the SSM reader uses too), not the
// SDK's Secrets Manager client, for the three or four operations the EC2 driver calls.
import type { Config } from "@ottava/core";
import { awsJsonClient, type AwsJsonCall, type AwsJsonOptions } from "@ottava/edge";

/**
 * A caller of Secrets Manager's operations (awsJson1_1, X-Amz-Target secretsmanager.<Operation>). Its
 * errors are named as Secrets Manager names them (ResourceExistsException, ResourceNotFoundException);
 * throttling and 5xx answers are retried, then marked unavailable, so a flow retries them.
 */
export type SecretsManagerCall = AwsJsonCall;

/** A Secrets Manager caller for the settings (`opts`: a Region and credentials other than the process's, for tests). */
export function secretsManagerClient(
  config: Pick<Config, "secretsmanagerEndpoint">,
  opts: Omit<AwsJsonOptions, "endpoint"> = {},
): SecretsManagerCall {
  return awsJsonClient(
    { signingName: "secretsmanager", targetPrefix: "secretsmanager", jsonVersion: "1.1" },
    { ...opts, ...(config.secretsmanagerEndpoint ? { endpoint: config.secretsmanagerEndpoint } : {}) },
  );
}
