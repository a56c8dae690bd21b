// The vpc network driver as its tests make it (over edge's EC2 Query client to the test proxy, with
// quick retries), and what they read of the proxy's calls and of EC2's answers.
import { awsQueryClient } from "@ottava/edge/aws-query";
import { EC2_API_VERSION } from "../../src/profiles";
import { VpcNetworkDriver, type AwsIds, type VpcNetworkSettings } from "../../src/network";
import type { Ec2Proxy } from "./ec2-proxy";
import { MOTO_CLIENT } from "./moto";

/** A driver whose EC2 calls go through `proxy`, its ids in `ids`; deletes retried 3 times, 20 ms apart. */
export function vpcTestDriver(proxy: Pick<Ec2Proxy, "endpoint">, ids: AwsIds, settings: VpcNetworkSettings): VpcNetworkDriver {
  const ec2 = awsQueryClient(
    { signingName: "ec2", version: EC2_API_VERSION },
    { endpoint: proxy.endpoint, region: MOTO_CLIENT.region, credentials: async () => MOTO_CLIENT.credentials },
  );
  return new VpcNetworkDriver(ec2, settings, { ids, maxRetries: 3, retryIntervalMs: 20 });
}

/** The calls `proxy` saw that change something, each as its action, the ENI, attachment or group it named, and its status. */
export const proxyWrites = (proxy: Pick<Ec2Proxy, "calls">): string[] =>
  proxy.calls
    .filter((c) => !c.action.startsWith("Describe"))
    .map((c) => [c.action, c.params.NetworkInterfaceId ?? c.params.AttachmentId ?? c.params.GroupId, c.status].filter(Boolean).join(" "));

type Tagged = { Tags?: { Key?: string; Value?: string }[]; TagSet?: { Key?: string; Value?: string }[] };
/** An ENI's (TagSet) or a group's (Tags) tags, by key. */
export const tagsOf = (r: Tagged): Record<string, string | undefined> =>
  Object.fromEntries((r.TagSet ?? r.Tags ?? []).map((t) => [t.Key, t.Value]));
