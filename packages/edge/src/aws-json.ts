// Calls to AWS services' JSON protocols (awsJson1_0 and awsJson1_1: SSM, DynamoDB, Step Functions, …),
// each one signed POST (aws-signed.ts) naming its operation in X-Amz-Target.
import { awsPost, type AwsOptions } from "./aws-signed";

/** Where and as whom a service is called (aws-signed.ts's options). */
export type AwsJsonOptions = AwsOptions;

/** A service of the JSON protocols: the name it signs with, its X-Amz-Target prefix and its protocol's version. */
export interface AwsJsonService {
  signingName: string;
  targetPrefix: string;
  jsonVersion: "1.0" | "1.1";
}

/**
 * Calls `operation` with `input` and answers the service's answer, parsed. Throttling and 5xx answers
 * are retried (3 attempts), then marked unavailable; any error is thrown named as the service names
 * it, its message `label` (what the call was, e.g. `SSM GetParameter of /p/x`), the error's name and
 * the service's message, never the input.
 */
export type AwsJsonCall = (operation: string, input: unknown, label: string) => Promise<Record<string, unknown>>;

const parse = (text: string): Record<string, unknown> => {
  try {
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    return {}; // an answer that is not JSON: its status says the rest
  }
};

/** A caller of a service's operations. */
export function awsJsonClient({ signingName, targetPrefix, jsonVersion }: AwsJsonService, opts: AwsJsonOptions = {}): AwsJsonCall {
  const post = awsPost(signingName, opts);
  return async (operation, input, label) => {
    const headers = { "content-type": `application/x-amz-json-${jsonVersion}`, "x-amz-target": `${targetPrefix}.${operation}` };
    const text = await post(headers, JSON.stringify(input), label, (status, text) => {
      const answer = parse(text);
      const name =
        String(answer.__type ?? "")
          .split("#")
          .pop() || `HTTP${status}`;
      return { name, message: answer.message ?? answer.Message };
    });
    return parse(text);
  };
}
