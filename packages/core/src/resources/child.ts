// What a resource of a load balancer's tree (listener, pool, member, health monitor, L7 policy,
// L7 rule) tells the one generic mechanism (services/children.ts) that creates, updates, deletes,
// shows and lists all of them under the LB's lock.
import type * as z from "zod";
import { notFound } from "../faults";
import type { RequestContext } from "../policy";
import type { TreeItem, TreeParts, TreeRecord } from "../ports";
import type { LoadBalancer } from "./loadbalancer";
import type { ResourceDescriptor } from "./descriptor";
import type { TlsLookup, TlsRefRequest } from "./tls-refs";

export interface ChildRef {
  kind: string;
  id: string;
}

/** A load balancer's whole tree as read (one Query), with lookups. DELETED objects are left out. */
export class Tree {
  readonly items: TreeItem[];
  constructor(
    readonly lb: LoadBalancer,
    items: TreeItem[],
  ) {
    this.items = items.filter((i) => i.record.provisioning_status !== "DELETED" && i.kind !== "amphora");
  }

  of<T = TreeRecord>(kind: string): T[] {
    return this.items.filter((i) => i.kind === kind).map((i) => i.record as unknown as T);
  }

  get<T = TreeRecord>(kind: string, id: string): T | undefined {
    return this.items.find((i) => i.kind === kind && i.record.id === id)?.record as T | undefined;
  }

  /** The object, or Octavia's 404 "<resource> <id> not found." when the tree does not hold it. */
  require(kind: string, id: string, resource: string): TreeRecord {
    const found = this.get(kind, id);
    if (!found) throw notFound(resource, id);
    return found;
  }
}

export interface CreateInput<Post> {
  body: Post;
  tree: Tree;
  ctx: RequestContext;
  /** The new object's id and creation time, chosen by the mechanism. */
  id: string;
  now: string;
  /** Path parameters (pool_id for members, l7policy_id for rules). */
  params: Record<string, string>;
  /**
   * The load balancer's flavor metadata (its flavor profile's flavor_data), {} when it has no flavor
   * or the flavor is gone, as Octavia's FlavorRepository.get_flavor_metadata_dict (e.g. allow_member_sriov).
   * Read only for a create that `readsFlavor`; {} otherwise.
   */
  flavor: Readonly<Record<string, unknown>>;
  /** The certificate manager's answers for what `tlsRefs` named; absent: any non-empty reference resolves. */
  certs?: TlsLookup;
}

export interface ChildResource<T extends TreeRecord = TreeRecord, Post = unknown, Put = unknown> {
  descriptor: ResourceDescriptor<T>;
  /** wsme's argument name in messages, e.g. "listener_" -> "Unknown attribute for argument listener_.listener: x". */
  argument: string;
  post: z.ZodType<Post>;
  put: z.ZodType<Put>;
  /**
   * The object a new one hangs from, to find its load balancer: {kind: "loadbalancer", id} for a
   * listener, the pool for a member or a health monitor, the listener for an L7 policy, ...
   * Unknown parents answer 404 "<Parent> <id> not found." (or what `parentMissing` says).
   */
  parentOf(body: Post, params: Record<string, string>): ChildRef;
  /** Validates a create against the tree (400/409 Faults with Octavia's messages) and builds the record, PENDING_CREATE/OFFLINE. */
  create(input: CreateInput<Post>): T;
  /** Does this create's decision depend on the LB's flavor metadata (two more reads)? */
  readsFlavor?(body: Post): boolean;
  /**
   * The TLS references a create or an update checks through the certificate manager (Octavia's
   * _validate_tls_refs, _validate_client_ca_and_crl_refs): read before it decides, handed to it as `certs`.
   */
  tlsRefs?(input: { action: "create"; body: Post } | { action: "update"; body: Put; record: T }): TlsRefRequest;
  /** Validates an update of `record` and answers the fields it changes. */
  update(input: { body: Put; record: T; tree: Tree; ctx: RequestContext; certs?: TlsLookup }): Partial<T>;
  /** Objects that go PENDING_UPDATE while this one changes (its listener, pool, L7 policy, as Octavia). */
  parents(record: T, tree: Tree): ChildRef[];
  /** Objects deleted with it (a pool's members and monitor, a policy's rules, a listener's policies). */
  cascade?(record: T, tree: Tree): ChildRef[];
  /** Refuses a delete that Octavia refuses (400/409 Fault). */
  checkDelete?(record: T, tree: Tree): void;
  /**
   * What its rules read of the tree besides the LB (ports.ts TreeParts); by default the structure,
   * every object but members and amphorae. A member reads its pool alone.
   */
  reads?(op: { action: "create"; body: Post; params: Record<string, string> } | { action: "update" | "delete"; record: T }): TreeParts;
  /** Pools deleted with all their members (read by their key range when its flow ends, not at the lock). */
  emptiesPools?(record: T): string[];
  /** Extra writes a create/update/delete makes to other objects (e.g. a pool becoming a listener's default pool). */
  sideEffects?(action: "create" | "update" | "delete", record: T, tree: Tree): { kind: string; id: string; set: Record<string, unknown> }[];
  /** For nested collections (members of a pool, rules of a policy): where they hang. */
  scope?: ChildScope;
}

/** A nested collection's parent: the path parameter naming it, the record field it filters on, its kind. */
export interface ChildScope {
  param: string;
  field: string;
  parentKind: string;
  /** The parent's name in the 404 Octavia's parent controller answers for an unknown one (its _lookup): "Pool", "L7Policy". */
  parentName: string;
}
