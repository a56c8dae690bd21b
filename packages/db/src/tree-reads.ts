// The reads of the LoadBalancerStore port: an LB, the parts of its tree a change reads, its whole
// tree, any object by its id, the lists, an LB's amphorae. None takes or checks the lock, none
// writes: DynamoStore (store.ts) adds the lock and every write under it on top of them. See
// packages/db/README.md, "What a change reads".
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { BatchGetCommand, TransactGetCommand } from "@aws-sdk/lib-dynamodb";
import {
  DELETED,
  invalidMarker,
  type Amphora,
  type ItemSource,
  type LoadBalancer,
  type SortDir,
  type SourceQuery,
  type TreeItem,
  type TreeParts,
  type TreeRecord,
  type Versioned,
} from "@ottava/core";
import { DynamoAdapter, MAX_TRANSACTION, retryConflicts, type AdapterOptions } from "./client";
import { queryAll } from "./query";
import { inStorageOrder, partitions, selectedPage } from "./lists";
import {
  AMPHORA,
  CLAIM_PREFIX,
  LB_SK,
  LOADBALANCER,
  MEMBER,
  POOL,
  STRUCTURE_RANGES,
  TREE_KINDS,
  childSk,
  claimSk,
  kindOfSk,
  memberRange,
  orderKey,
  pointerKey,
  toRecord,
  treePk,
  type StoredKind,
} from "./items";
import { getItem, partition } from "./owner";

export type Item = Record<string, unknown>;

export class DynamoTreeReads<O extends AdapterOptions = AdapterOptions> extends DynamoAdapter<O> {
  async getLoadBalancer(id: string): Promise<Versioned<LoadBalancer> | undefined> {
    const item = await getItem(this.doc, this.table, treePk(id), LB_SK);
    return item && versioned<LoadBalancer>(item);
  }

  loadBalancers(project: string | undefined): ItemSource {
    return this.source(LOADBALANCER, project, async (id) => (await this.getLoadBalancer(id))?.record);
  }

  async readParts(lbId: string, parts: TreeParts): Promise<{ lb: Versioned<LoadBalancer> | undefined; items: TreeItem[] }> {
    const pk = treePk(lbId);
    const keys = [
      ...(parts.structure ? [] : (parts.pools ?? []).map((p) => ({ pk, sk: childSk(POOL, p) }))),
      ...(parts.members ?? []).map((m) => ({ pk, sk: childSk(MEMBER, m.id, m.pool_id) })),
      ...(parts.claims ?? []).map((c) => ({ pk, sk: claimSk(c.pool_id, c.address, c.protocol_port) })),
    ];
    // Items by key alone (a member's pool, the member, its claim): one snapshot with the LB.
    if (!parts.structure && !parts.poolMembers && keys.length < MAX_TRANSACTION) {
      const [lbItem, ...read] = await this.snapshot([{ pk, sk: LB_SK }, ...keys]);
      return lbItem
        ? {
            lb: versioned<LoadBalancer>(lbItem),
            items: await this.withClaimHolders(
              pk,
              read.filter((i): i is Item => i !== undefined),
            ),
          }
        : { lb: undefined, items: [] };
    }
    // Otherwise the LB first: whatever changes after this read takes the lock and moves its version.
    const lbItem = await getItem(this.doc, this.table, pk, LB_SK);
    if (!lbItem) return { lb: undefined, items: [] };
    const reads: Promise<Item[]>[] = [];
    if (parts.structure) {
      for (const r of STRUCTURE_RANGES) {
        reads.push(
          queryAll(this.doc, {
            TableName: this.table,
            KeyConditionExpression: "pk = :pk AND sk BETWEEN :from AND :to",
            ExpressionAttributeValues: { ":pk": pk, ":from": r.from, ":to": r.to },
            ConsistentRead: true,
          }),
        );
      }
    }
    if (keys.length) reads.push(this.getItems(keys));
    if (parts.poolMembers) for (const p of parts.pools ?? []) reads.push(partition(this.doc, this.table, lbId, memberRange(p)));
    return { lb: versioned<LoadBalancer>(lbItem), items: await this.withClaimHolders(pk, (await Promise.all(reads)).flat()) };
  }

  /**
   * The records among items read, with the member each claim names (it may be DELETED: then the
   * claim is free); claims themselves are no records.
   */
  private async withClaimHolders(pk: string, read: Item[]): Promise<TreeItem[]> {
    const claimed = read.filter((i) => String(i.sk).startsWith(CLAIM_PREFIX));
    const holders = claimed.length
      ? await this.getItems(claimed.map((c) => ({ pk, sk: childSk(MEMBER, String(c.member_id), String(c.pool_id)) })))
      : [];
    const items: TreeItem[] = [];
    const seen = new Set<string>();
    for (const item of [...read, ...holders]) {
      const k = kindOfSk(String(item.sk));
      if (!k || seen.has(String(item.sk))) continue;
      seen.add(String(item.sk));
      items.push({ kind: k.kind, record: toRecord<TreeRecord>(item) });
    }
    return items;
  }

  /** Items by key in one serializable read (TransactGetItems): undefined where absent. */
  private async snapshot(keys: { pk: string; sk: string }[]): Promise<(Item | undefined)[]> {
    const out = await retryConflicts(() =>
      this.doc.send(new TransactGetCommand({ TransactItems: keys.map((Key) => ({ Get: { TableName: this.table, Key } })) })),
    );
    return (out.Responses ?? []).map((r) => r.Item as Item | undefined);
  }

  async memberIds(lbId: string, poolId: string): Promise<string[]> {
    const items = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :p)",
      ExpressionAttributeValues: { ":pk": treePk(lbId), ":p": memberRange(poolId), ":deleted": DELETED },
      FilterExpression: "#ps <> :deleted",
      ProjectionExpression: "id",
      ExpressionAttributeNames: { "#ps": "provisioning_status" },
      ConsistentRead: true,
    });
    return items.map((i) => String(i.id));
  }

  /** Items by key (consistent), 100 a BatchGetItem; what DynamoDB leaves unprocessed is asked again. */
  private async getItems(keys: { pk: string; sk: string }[]): Promise<Item[]> {
    const out: Item[] = [];
    for (let i = 0; i < keys.length; i += 100) {
      let ask: Record<string, unknown>[] = keys.slice(i, i + 100);
      while (ask.length) {
        const res = await this.doc.send(new BatchGetCommand({ RequestItems: { [this.table]: { Keys: ask, ConsistentRead: true } } }));
        out.push(...((res.Responses?.[this.table] ?? []) as Item[]));
        ask = (res.UnprocessedKeys?.[this.table]?.Keys ?? []) as Record<string, unknown>[];
      }
    }
    return out;
  }

  async tree(lbId: string): Promise<{ lb: Versioned<LoadBalancer> | undefined; items: TreeItem[] }> {
    let lb: Versioned<LoadBalancer> | undefined;
    const items: TreeItem[] = [];
    for (const item of await partition(this.doc, this.table, lbId)) {
      if (item.sk === LB_SK) lb = versioned<LoadBalancer>(item);
      else {
        const k = kindOfSk(String(item.sk));
        if (k) items.push({ kind: k.kind, record: toRecord<TreeRecord>(item) });
      }
    }
    return { lb, items };
  }

  async getChild(kind: string, id: string): Promise<{ record: TreeRecord; lbId: string } | undefined> {
    const k = TREE_KINDS[kind];
    if (!k) throw new Error(`unknown kind ${kind}`);
    const item = await this.getById(id, k);
    return item && { record: toRecord<TreeRecord>(item), lbId: String(item.pk).slice("LB#".length) };
  }

  children(kind: string, project: string | undefined): ItemSource {
    const k = TREE_KINDS[kind];
    if (!k) throw new Error(`unknown kind ${kind}`);
    return this.source(k, project, async (id) => (await this.getChild(kind, id))?.record as { id: string; created_at: string } | undefined);
  }

  async getAmphora(id: string): Promise<Amphora | undefined> {
    const item = await this.getById(id, AMPHORA);
    return item && toRecord<Amphora>(item);
  }

  amphorae(project: string | undefined): ItemSource {
    return this.source(AMPHORA, project, (id) => this.getAmphora(id));
  }

  async amphoraeOf(lbId: string): Promise<Amphora[]> {
    return (await partition(this.doc, this.table, lbId, `${AMPHORA.prefix}#`)).map((i) => toRecord<Amphora>(i));
  }

  /** Finds an object by its id alone: a consistent read of its pointer, then of the object. */
  protected async getById(id: string, k: StoredKind): Promise<Item | undefined> {
    const ptr = await getItem(this.doc, this.table, pointerKey(id).pk, pointerKey(id).sk);
    if (!ptr || ptr.kind !== k.kind) return undefined;
    return getItem(this.doc, this.table, String(ptr.ref_pk), String(ptr.ref_sk));
  }

  /**
   * Items of a kind in storage order: one project's from its index partition, or every project's by
   * merging the shards of the admin index. `after` is a marker id, resumed from its (created_at, id).
   */
  private source(
    k: StoredKind,
    project: string | undefined,
    find: (id: string) => Promise<{ id: string; created_at: string } | undefined>,
  ): ItemSource {
    const self = this;
    return async function* (order: SortDir, after: string | undefined, query?: SourceQuery) {
      // `?name=`: the byName partitions of those names; else the project's, or every shard (src/lists.ts).
      const parts = partitions(k, project, query?.names);
      if (query?.select) {
        yield* selectedPage(self.doc, self.table, k, parts, query.select);
        return;
      }
      let from: string | undefined;
      if (after !== undefined) {
        const marker = await find(after);
        if (!marker) throw invalidMarker(after);
        from = orderKey(marker.created_at, marker.id);
      }
      for await (const item of inStorageOrder(self.doc, self.table, parts, order, from, query?.limit)) yield toRecord<Item>(item);
    };
  }
}

/** A record as read, with what the lock protocol keeps on its item. */
export function versioned<T>(item: Item): Versioned<T> {
  return {
    record: toRecord<T>(item),
    version: Number(item.version ?? 0),
    lockOwner: item.lock_owner as string | undefined,
    executionArn: item.execution_arn as string | undefined,
  };
}

/** An item as ReturnValuesOnConditionCheckFailure answers it: in the low-level attribute-value format. */
export function unmarshallItem(raw: Record<string, unknown>): Item {
  return unmarshall(raw as never);
}
