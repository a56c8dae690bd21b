// What the generic API machinery (lookup, lists, faults) needs to know of a resource.
import type { Tree } from "./child";

export interface ResourceDescriptor<T> {
  /** Storage kind, also the prefix of its keys. */
  kind: string;
  /** The name Octavia uses in messages: "Load Balancer 1234 not found." */
  displayName: string;
  /** The body's root key for one object: {"loadbalancer": {...}}. */
  root: string;
  /** The body's key for a list: {"loadbalancers": [...], "loadbalancers_links": [...]}. */
  collection: string;
  /** Its public attributes: what lists may filter, sort and select on. */
  attributes: readonly string[];
  /**
   * The public representation, field for field as Octavia answers it. Objects of a load balancer's
   * tree get the tree, for their relations (a pool's members, a listener's L7 policies, ...).
   */
  toResponse(item: T, tree?: Tree): Record<string, unknown>;
}

/** Octavia answers times as naive UTC ISO 8601 to the second: "2024-05-01T12:34:56". */
export const apiTime = <T extends string | null>(t: T): T => (t === null ? t : (t.slice(0, 19) as T));
