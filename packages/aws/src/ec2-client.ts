// The EC2 client the drivers call: the Region's endpoint, or OTTAVA_EC2_ENDPOINT.
import { EC2Client } from "@aws-sdk/client-ec2";
import type { Config } from "@ottava/core";
import { workloadUserAgent } from "@ottava/edge";

/**
 * An EC2 client for the settings. `decorate` is done to it before its first request: the process's
 * classifyUnavailable (@ottava/edge), so that throttling and server errors, once the SDK's retries are
 * spent, are retried by the flows, as on every client the product builds.
 */
export function ec2Client(config: Pick<Config, "ec2Endpoint">, decorate: AwsClientDecorator = () => {}): EC2Client {
  const client = new EC2Client(config.ec2Endpoint ? { endpoint: config.ec2Endpoint } : {});
  // The calling workload in the User-Agent (@ottava/edge's workloadUserAgent), as on the product's other
  // AWS calls: after the SDK's own user agent is set, and unsigned by SigV4.
  client.middlewareStack.add(
    (next) => (args) => {
      const headers = (args.request as { headers?: Record<string, string> }).headers;
      if (headers) headers["user-agent"] = `${headers["user-agent"] ?? ""} ${workloadUserAgent()}`.trim();
      return next(args);
    },
    { step: "finalizeRequest", name: "ottavaWorkloadUserAgent" },
  );
  decorate(client);
  return client;
}

/** What a process does to the AWS clients the drivers make (ec2Client's `decorate`). */
export type AwsClientDecorator = (client: EC2Client) => void;
