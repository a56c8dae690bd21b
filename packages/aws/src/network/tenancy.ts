// Who may use what of a VPC (Octavia checks subnets, networks, ports and groups with the caller's own
// Neutron context; AWS has no projects, so tags say it).
import { PROJECT_TAG_KEY, SHARED_TAG_KEY } from "../constants";

/** EC2's tags of a resource, as DescribeX answers them. */
export type AwsTags = readonly { key: string; value: string }[];

/**
 * May `projectId` use a resource with these tags? Yes if tagged with the project or marked shared, or
 * whenever `allowInvisible` ([networking] allow_invisible_resource_usage).
 */
export function mayUse(tags: AwsTags, projectId: string, allowInvisible: boolean): boolean {
  if (allowInvisible) return true;
  return tags.some((t) => (t.key === PROJECT_TAG_KEY && t.value === projectId) || (t.key === SHARED_TAG_KEY && t.value === "true"));
}
