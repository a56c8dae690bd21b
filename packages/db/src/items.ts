// How domain records become items: keys, index attributes, internal attributes.
import { CHILD_KINDS, DELETED, NESTED_KINDS, PENDING_STATUSES, type ChildWrite } from "@ottava/core";
import type { TransactItem } from "./client";
import { INDEXES, SHARDS, TTL_ATTRIBUTE } from "./table";

/** What the storage layer knows of a kind of record. */
export interface StoredKind {
  kind: string;
  /** Sort-key prefix of the kind inside its load balancer's partition. */
  prefix: string;
  /** The attribute that carries the lifecycle status (provisioning_status, or status for amphorae). */
  statusField: string;
  /**
   * Listed only under its parent (a pool's members, a policy's rules: Octavia has no top-level list of
   * them), read from the tree: never in the list indexes (byProject, byShard, byName), so that none of
   * its writes also writes index copies (on AWS each is billed as a write of the whole item).
   */
  nested?: true;
}

export const LOADBALANCER: StoredKind = { kind: "loadbalancer", prefix: "LB", statusField: "provisioning_status" };
export const AMPHORA: StoredKind = { kind: "amphora", prefix: "AMP", statusField: "status" };

/** The sort-key prefix of each kind of an LB's tree (CHILD_KINDS in @ottava/core) inside its partition. */
const CHILD_PREFIX: Readonly<Record<string, string>> = {
  listener: "LISTENER",
  pool: "POOL",
  member: "MEMBER",
  healthmonitor: "HM",
  l7policy: "L7POLICY",
  l7rule: "L7RULE",
};
const CHILDREN: Record<string, StoredKind> = Object.fromEntries(
  CHILD_KINDS.map((kind) => {
    const prefix = CHILD_PREFIX[kind];
    if (!prefix) throw new Error(`no sort-key prefix for kind ${kind}`);
    return [kind, { kind, prefix, statusField: "provisioning_status", ...(NESTED_KINDS.has(kind) ? { nested: true as const } : {}) }];
  }),
);
export const LISTENER = CHILDREN.listener!;
export const POOL = CHILDREN.pool!;
export const MEMBER = CHILDREN.member!;

/** Every kind that lives in a load balancer's partition, by kind name: its amphorae and the objects of its tree. */
export const TREE_KINDS: Record<string, StoredKind> = { [AMPHORA.kind]: AMPHORA, ...CHILDREN };
/** The kind of a tree item by its sort key; undefined for what is not a record (a member's address claim). */
export const kindOfSk = (sk: string) => Object.values(TREE_KINDS).find((k) => sk.startsWith(`${k.prefix}#`));

/** The partition of a load balancer's whole tree. */
export const treePk = (lbId: string) => `LB#${lbId}`;
export const LB_SK = "LB";
/**
 * A child's sort key: `<PREFIX>#<id>`; a member's is under its pool, `MEMBER#<pool id>#<id>`, so that
 * a pool's members are one key range (`memberRange`) and never read with the rest of the structure.
 */
export function childSk(k: StoredKind, id: string, poolId?: string): string {
  if (k !== MEMBER) return `${k.prefix}#${id}`;
  if (!poolId) throw new Error(`the key of member ${id} needs its pool`);
  return `${memberRange(poolId)}${id}`;
}
export const memberRange = (poolId: string) => `${MEMBER.prefix}#${poolId}#`;
/**
 * The claim of a member's (address, protocol_port) in its pool: `MEMBERADDR#<pool>#<address>#<port>`,
 * holding `member_id`. Written with every member; a claim whose member is DELETED is free again (so
 * no delete has to remove it). Sorts outside every kind's prefix, so tree reads leave it out.
 */
export const CLAIM_PREFIX = "MEMBERADDR#";
export const claimSk = (poolId: string, address: string, port: number) => `${CLAIM_PREFIX}${poolId}#${address}#${port}`;
/**
 * The structure of a tree: every object but members (and their claims) and amphorae, in two key
 * ranges around them (HM#, L7POLICY#, L7RULE#, LB, LISTENER# sort before MEMBER; POOL# after it).
 */
export const STRUCTURE_RANGES: readonly { from: string; to: string }[] = [
  { from: "HM#", to: "MEMBER#" },
  { from: "POOL#", to: "POOL$" },
];
/**
 * Whether a key is one DynamoDB takes: a partition key of at most 2048 bytes and a sort key of at most
 * 1024 (UTF-8). A longer one (an id or marker of thousands of characters in a request) names no item, so
 * a read by it finds nothing rather than failing (DynamoDB would refuse the request: a 500).
 */
export const keyFits = (pk: string, sk = "") => Buffer.byteLength(pk) <= 2048 && Buffer.byteLength(sk) <= 1024;

/** The pointer that finds any object by its id alone. */
export const pointerKey = (id: string) => ({ pk: `ID#${id}`, sk: "ID" });

/** Attributes that belong to storage, not to the record. */
export const INTERNAL = new Set([
  "pk",
  "sk",
  ...Object.values(INDEXES).flatMap((i) => [i.pk, i.sk]),
  "kind",
  "version",
  "lock_owner",
  "execution_arn",
  TTL_ATTRIBUTE,
]);

export function shardOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0;
  return h % SHARDS;
}

export const orderKey = (createdAt: string, id: string) => `${createdAt}#${id}`;

/**
 * Index attributes of a live item; a record in PENDING_* is also in the pending index, a record with
 * a name (a non-empty string) in the name index. A nested kind is in no list index.
 */
export function indexAttributes(
  k: StoredKind,
  rec: { id: string; project_id: string; created_at: string; name?: unknown },
  status: string,
) {
  if (k.nested) return pendingAttributes(k, rec.id, status).set;
  const order = orderKey(rec.created_at, rec.id);
  return {
    [INDEXES.byProject.pk]: `${k.kind}#${rec.project_id}`,
    [INDEXES.byProject.sk]: order,
    [INDEXES.byShard.pk]: `${k.kind}#${shardOf(rec.id)}`,
    [INDEXES.byShard.sk]: order,
    ...(isIndexedName(rec.name) ? { [INDEXES.byName.pk]: namePartition(k.kind, rec.name), [INDEXES.byName.sk]: order } : {}),
    ...pendingAttributes(k, rec.id, status).set,
  };
}

/** byName index: the partition of a kind's live items named `name`. */
export const namePartition = (kind: string, name: string) => `${kind}#${name}`;
/** Only a name that is a non-empty string is indexed (`?name=` with an empty value reads the lists' own index). */
export const isIndexedName = (name: unknown): name is string => typeof name === "string" && name !== "";

/** A value an update copies from another attribute of the same item (`SET a = b`). */
export class CopyOf {
  constructor(readonly attribute: string) {}
}

/**
 * What an update that sets `set` does to the name index: a new non-empty name moves the item to that
 * name's partition (its sort key copied from the byProject one, which every live item has), an empty
 * or null name takes it out. Nothing when `name` is not written, or when the item goes DELETED (which
 * removes every index key: statusAttributes), or for a nested kind.
 */
export function nameAttributes(k: StoredKind, set: Record<string, unknown>): { set: Record<string, unknown>; remove: string[] } {
  if (k.nested || !Object.hasOwn(set, "name") || set[k.statusField] === DELETED) return { set: {}, remove: [] };
  const name = set.name;
  if (!isIndexedName(name)) return { set: {}, remove: [INDEXES.byName.pk, INDEXES.byName.sk] };
  return { set: { [INDEXES.byName.pk]: namePartition(k.kind, name), [INDEXES.byName.sk]: new CopyOf(INDEXES.byProject.sk) }, remove: [] };
}

/** The heartbeat index attributes of an amphora last heard at `at` (ISO): written with its last_heartbeat. */
export function heartbeatAttributes(amphoraId: string, at: string) {
  return { last_heartbeat: at, [INDEXES.byHeartbeat.pk]: `HB#${shardOf(amphoraId)}`, [INDEXES.byHeartbeat.sk]: at };
}

/** Kinds housekeeping purges by themselves once DELETED (the other kinds go with their LB's partition). */
const PURGED_KINDS = new Set([LOADBALANCER.kind, AMPHORA.kind]);

/** housekeeping index: the partition of DELETED items of a kind (one of SHARDS). */
export const deletedPartition = (kind: string, shard: number) => `DELETED#${kind}#${shard}`;
/** housekeeping index: the partition of amphorae by certificate expiry (one of SHARDS). */
export const certPartition = (shard: number) => `CERT#${shard}`;
/** housekeeping index sort key: an instant (ISO 8601, UTC, milliseconds: fixed width, so it sorts as time), then the id. */
export const deadlineKey = (at: string, id: string) => `${at}#${id}`;

/** The housekeeping index attributes of an amphora whose certificate expires at `expiration` (ISO). */
export function certAttributes(amphoraId: string, expiration: string) {
  return { [INDEXES.housekeeping.pk]: certPartition(shardOf(amphoraId)), [INDEXES.housekeeping.sk]: deadlineKey(expiration, amphoraId) };
}

/**
 * What a status change does to the sparse indexes and the TTL. A DELETED item leaves every index; a
 * DELETED load balancer or amphora enters the housekeeping index under its deletion time, for the purge.
 */
export function statusAttributes(
  k: StoredKind,
  id: string,
  status: string,
  now: Date,
  expiryAge: number,
): { set: Record<string, unknown>; remove: string[] } {
  if (status === DELETED) {
    const purge = PURGED_KINDS.has(k.kind)
      ? { [INDEXES.housekeeping.pk]: deletedPartition(k.kind, shardOf(id)), [INDEXES.housekeeping.sk]: deadlineKey(now.toISOString(), id) }
      : {};
    return {
      set: { [TTL_ATTRIBUTE]: Math.floor(now.getTime() / 1000) + expiryAge, ...purge },
      remove: Object.values(INDEXES).flatMap((i) => [i.pk, i.sk]),
    };
  }
  return pendingAttributes(k, id, status);
}

/** The index attributes of an amphora update: its status's, and its certificate expiry's while it is not DELETED. */
export function amphoraAttributes(
  id: string,
  set: { status?: string | undefined; cert_expiration?: string | null | undefined },
  now: Date,
  expiryAge: number,
): { set: Record<string, unknown>; remove: string[] } {
  const out = set.status ? statusAttributes(AMPHORA, id, set.status, now, expiryAge) : { set: {}, remove: [] as string[] };
  if (typeof set.cert_expiration === "string" && set.status !== DELETED) Object.assign(out.set, certAttributes(id, set.cert_expiration));
  return out;
}

/**
 * A load balancer in PENDING_* is in the pending index (what stuck-state repair reads; its tree is
 * repaired with it). Other kinds never are: their status changes write no index entry.
 */
function pendingAttributes(k: StoredKind, id: string, status: string) {
  if (k !== LOADBALANCER) return { set: {} as Record<string, unknown>, remove: [] as string[] };
  if (PENDING_STATUSES.includes(status)) {
    return { set: { [INDEXES.pending.pk]: `PENDING#${shardOf(id)}`, [INDEXES.pending.sk]: `${k.kind}#${id}` }, remove: [] as string[] };
  }
  return { set: {} as Record<string, unknown>, remove: [INDEXES.pending.pk, INDEXES.pending.sk] };
}

/**
 * The transaction items of one ChildWrite in the LB `lbId`'s partition: a new object with its id
 * pointer (and a member's address claim), or an update of an existing one (never recreating it).
 */
export function childWriteItems(table: string, lbId: string, w: ChildWrite, now: () => Date, expiryAge: number): TransactItem[] {
  const k = TREE_KINDS[w.kind];
  if (!k) throw new Error(`unknown kind ${w.kind}`);
  if ("put" in w) {
    const rec = w.put;
    const key = { pk: treePk(lbId), sk: childSk(k, rec.id, rec.pool_id as string | undefined) };
    // A member claims its (address, port) in its pool, taking over any claim of a DELETED member.
    const claim: TransactItem[] =
      k === MEMBER
        ? [
            {
              Put: {
                TableName: table,
                Item: {
                  pk: key.pk,
                  sk: claimSk(String(rec.pool_id), String(rec.address), Number(rec.protocol_port)),
                  kind: "claim",
                  member_id: rec.id,
                  pool_id: rec.pool_id,
                },
              },
            },
          ]
        : [];
    return [
      {
        Put: {
          TableName: table,
          Item: { ...rec, ...key, kind: k.kind, ...indexAttributes(k, rec, String(rec[k.statusField])) },
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
      { Put: { TableName: table, Item: { ...pointerKey(rec.id), kind: k.kind, ref_pk: key.pk, ref_sk: key.sk } } },
      ...claim,
    ];
  }
  const status = w.set[k.statusField];
  const extra = typeof status === "string" ? statusAttributes(k, w.id, status, now(), expiryAge) : { set: {}, remove: [] };
  const named = nameAttributes(k, w.set);
  const update = updateExpression({ ...w.set, ...named.set, ...extra.set, updated_at: now().toISOString() }, [
    ...named.remove,
    ...extra.remove,
  ]);
  return [
    {
      Update: {
        TableName: table,
        Key: { pk: treePk(lbId), sk: childSk(k, w.id, w.pool_id) },
        ...update,
        ConditionExpression: "attribute_exists(pk)",
      },
    },
  ];
}

export function toRecord<T>(item: Record<string, unknown>): T {
  return Object.fromEntries(Object.entries(item).filter(([k]) => !INTERNAL.has(k))) as T;
}

/** Builds an UpdateExpression from attributes to set and to remove. */
export function updateExpression(set: Record<string, unknown>, remove: string[] = []) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  let i = 0;
  for (const [k, v] of Object.entries(set)) {
    if (v === undefined) continue;
    names[`#s${i}`] = k;
    if (v instanceof CopyOf) {
      names[`#c${i}`] = v.attribute;
      sets.push(`#s${i} = #c${i}`);
    } else {
      values[`:s${i}`] = v;
      sets.push(`#s${i} = :s${i}`);
    }
    i++;
  }
  const removes = remove
    .filter((k) => !(k in set))
    .map((k, j) => {
      names[`#r${j}`] = k;
      return `#r${j}`;
    });
  const expr = [sets.length ? `SET ${sets.join(", ")}` : "", removes.length ? `REMOVE ${removes.join(", ")}` : ""]
    .filter(Boolean)
    .join(" ");
  return { UpdateExpression: expr, ExpressionAttributeNames: names, ExpressionAttributeValues: values };
}
