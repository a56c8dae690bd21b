// Calls to AWS services' Query protocol (EC2's, and the awsQuery of STS, SQS, …): each one signed POST
// (aws-signed.ts) of the action and its parameters form-encoded, answered in XML (xml.ts). For the few
// EC2 calls the API makes (the profile checks, the VPC network driver's look-ups), where the SDK's
// EC2 client would add about 1 MB to its bundle and does not tree-shake.
import { awsPost, type AwsOptions } from "./aws-signed";
import { parseXml, xmlFind, xmlText, type XmlElement } from "./xml";

export type { XmlElement } from "./xml";
export { xmlChild, xmlFind, xmlItems, xmlText } from "./xml";

/** A service of the Query protocol: the name it signs with and its API version (EC2: "ec2", "2016-11-15"). */
export interface AwsQueryService {
  signingName: string;
  version: string;
}

/**
 * Calls `action` with `params` (the Query protocol's flattened names: "InstanceType.1",
 * "Filter.1.Name", "Filter.1.Value.1", …) and answers the answer's root element. Errors are thrown as
 * aws-signed.ts throws them, named by the answer's <Error><Code> (EC2's <Response><Errors><Error>, or
 * <ErrorResponse><Error>): throttling, 5xx answers and lost connections are retried, then marked
 * unavailable.
 */
export type AwsQueryCall = (action: string, params: Record<string, string>, label: string) => Promise<XmlElement>;

function errorOf(status: number, text: string) {
  let error: XmlElement | undefined;
  try {
    error = xmlFind(parseXml(text), "Error");
  } catch {
    // an answer that is not XML: its status says the rest
  }
  return { name: xmlText(error, "Code") || `HTTP${status}`, message: xmlText(error, "Message") };
}

/** A caller of a Query service's actions, at `opts.endpoint` (EC2: OTTAVA_EC2_ENDPOINT) or the Region's endpoint. */
export function awsQueryClient({ signingName, version }: AwsQueryService, opts: AwsOptions = {}): AwsQueryCall {
  const post = awsPost(signingName, opts);
  return async (action, params, label) => {
    const body = new URLSearchParams({ Action: action, Version: version, ...params }).toString();
    const text = await post({ "content-type": "application/x-www-form-urlencoded; charset=utf-8" }, body, label, errorOf);
    return parseXml(text);
  };
}
