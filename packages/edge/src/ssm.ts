// The secrets port of @ottava/core (SecretReader) on SSM Parameter Store: each secret the decrypted
// value of its SecureString parameter, read with GetParameter as one signed request (aws-json.ts), not
// with the SDK's SSM client, whose service schema alone would add some 220 KB to the API's bundle for
// this one call. Nothing is loaded before the first read: a process that reads no parameter (the API
// under noauth, npm start) loads none of the signing code.
import type { SecretReader } from "@ottava/core";
import { awsJsonClient, type AwsJsonOptions } from "./aws-json";

/**
 * Reads SecureString (or String) parameters (`name` or `name:version`) with GetParameter, decrypted.
 * Throttling and 5xx answers are retried (3 attempts). Errors name SSM's error and the parameter,
 * never a value.
 */
export function ssmSecretReader(opts: AwsJsonOptions = {}): SecretReader {
  const call = awsJsonClient({ signingName: "ssm", targetPrefix: "AmazonSSM", jsonVersion: "1.1" }, opts);
  return async (parameter) => {
    const answer = await call("GetParameter", { Name: parameter, WithDecryption: true }, `SSM GetParameter of ${parameter}`);
    const value = (answer.Parameter as { Value?: unknown } | undefined)?.Value;
    if (typeof value !== "string") throw new Error("GetParameter answered no value");
    return value;
  };
}
