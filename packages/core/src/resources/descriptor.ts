// What the generic API machinery (lookup, lists, faults) needs to know of a resource.

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
  /** The public representation, field for field as Octavia answers it. */
  toResponse(item: T): Record<string, unknown>;
}

/** Octavia answers times as naive UTC ISO 8601 to the second: "2024-05-01T12:34:56". */
export const apiTime = <T extends string | null>(t: T): T => (t === null ? t : (t.slice(0, 19) as T));
