// The kinds of a load balancer's tree, once. Each fact of a kind is written on its descriptor (its
// name, its display name, the quota it counts against) or its ChildResource (listed only under its
// parent: `scope`); every table of kinds is derived here: Octavia's names in faults, the quota
// fields and their names in "Quota has been met", the child flows (@ottava/controller), the kinds
// stored in an LB's partition (@ottava/db). packages/core/test/kinds.test.ts holds them to the
// tables they replaced.
import type { ChildResource } from "./child";
import type { QuotaField } from "./quota";
import { healthMonitorResource } from "./healthmonitor";
import { l7PolicyResource } from "./l7policy";
import { l7RuleResource } from "./l7rule";
import { listenerResource } from "./listener";
import { loadBalancerDescriptor } from "./loadbalancer";
import { memberResource } from "./member";
import { poolResource } from "./pool";

/** Every object of a load balancer's tree the API creates, updates and deletes (services/children.ts), in Octavia's order. */
export const CHILD_RESOURCES: readonly ChildResource<any, any, any>[] = [
  listenerResource,
  poolResource,
  memberResource,
  healthMonitorResource,
  l7PolicyResource,
  l7RuleResource,
];

/** Their kinds: each has a create, an update and a delete flow (`<kind>-<action>`). */
export const CHILD_KINDS: readonly string[] = CHILD_RESOURCES.map((r) => r.descriptor.kind);

/** Kinds listed only under their parent (a pool's members, a policy's rules), never in a list index. */
export const NESTED_KINDS: ReadonlySet<string> = new Set(CHILD_RESOURCES.filter((r) => r.scope).map((r) => r.descriptor.kind));

/** The load balancer and its tree's objects: what the lock, the quotas and their faults know. */
const LB_DESCRIPTORS = [loadBalancerDescriptor, ...CHILD_RESOURCES.map((r) => r.descriptor)];

const DISPLAY = new Map(LB_DESCRIPTORS.map((d) => [d.kind, d.displayName]));
/** The name Octavia gives a kind in its messages: "Health Monitor 1234 not found." */
export const displayName = (kind: string) => DISPLAY.get(kind) ?? kind;

/** The quota each kind counts against. */
export const QUOTA_FIELD: Readonly<Record<string, QuotaField>> = Object.fromEntries(
  LB_DESCRIPTORS.flatMap((d) => (d.quotaField ? [[d.kind, d.quotaField]] : [])),
);

/** Each quota field as Octavia names the resource in "Quota has been met for resources: ...". */
export const QUOTA_RESOURCE: Readonly<Record<QuotaField, string>> = Object.fromEntries(
  LB_DESCRIPTORS.flatMap((d) => (d.quotaField ? [[d.quotaField, d.displayName]] : [])),
) as Record<QuotaField, string>;
