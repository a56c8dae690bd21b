// The DynamoDB adapter of the LoadBalancerStore port (the tree, its lock and its amphorae): one
// generic mechanism over StoredKind descriptors.
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import { BatchGetCommand, PutCommand, TransactGetCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import {
  DELETED,
  LockConflict,
  LockLost,
  invalidMarker,
  type Amphora,
  type ItemSource,
  type SourceQuery,
  type LoadBalancer,
  type LoadBalancerStore,
  type LockRequest,
  type SortDir,
  type Versioned,
  type ChildWrite,
  type TreeItem,
  type TreeParts,
  type FlowStart,
  type TreeRecord,
  type QuotaCharge,
  type QuotaDelta,
  QuotaExceeded,
} from "@ottava/core";
import { DynamoAdapter, MAX_TRANSACTION, retryConflicts, type TransactItem } from "./client";
import { queryAll } from "./query";
import { inStorageOrder, partitions, selectedPage } from "./lists";
import {
  AMPHORA,
  amphoraAttributes,
  MEMBER,
  POOL,
  STRUCTURE_RANGES,
  TREE_KINDS,
  CLAIM_PREFIX,
  claimSk,
  memberRange,
  kindOfSk,
  LB_SK,
  LOADBALANCER,
  childSk,
  indexAttributes,
  nameAttributes,
  orderKey,
  pointerKey,
  statusAttributes,
  toRecord,
  treePk,
  updateExpression,
  type StoredKind,
} from "./items";
import { getItem, lockLostOr, ownerCheck, partition } from "./owner";
import { trailItem } from "./flow-trail";
import { exceededFields, usageKey, usageUpdate } from "./usage";

type Item = Record<string, unknown>;

export interface StoreOptions {
  tableName: string;
  /** Seconds a DELETED record stays before TTL purges it. */
  expiryAge: number;
  now?: () => Date;
}

export class DynamoStore extends DynamoAdapter<StoreOptions> implements LoadBalancerStore {
  // ---- load balancers -------------------------------------------------------------------------

  async getLoadBalancer(id: string): Promise<Versioned<LoadBalancer> | undefined> {
    const item = await getItem(this.doc, this.table, treePk(id), LB_SK);
    return item && versioned<LoadBalancer>(item);
  }

  loadBalancers(project: string | undefined): ItemSource {
    return this.source(LOADBALANCER, project, async (id) => (await this.getLoadBalancer(id))?.record);
  }

  async createLoadBalancer(
    lb: LoadBalancer,
    owner: string,
    executionArn: string,
    usage: QuotaCharge | undefined,
    trail: FlowStart,
  ): Promise<void> {
    const item = {
      ...lb,
      pk: treePk(lb.id),
      sk: LB_SK,
      kind: LOADBALANCER.kind,
      version: 1,
      lock_owner: owner,
      execution_arn: executionArn,
      ...indexAttributes(LOADBALANCER, lb, lb.provisioning_status),
    };
    const put = { TableName: this.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" };
    const items: TransactItem[] = [{ Put: put }, { Put: { TableName: this.table, Item: trailItem(lb.id, trail) } }];
    const charge = usageUpdate(this.table, usage);
    if (!charge) {
      await retryConflicts(() => this.doc.send(new TransactWriteCommand({ TransactItems: items })));
      return;
    }
    await this.transactWithUsage(items, 1, usage!, charge);
  }

  /**
   * One transaction of `items` with the usage update inserted at position `at`; a refused usage
   * condition becomes QuotaExceeded, anything else is rethrown as DynamoDB answered it.
   */
  private async transactWithUsage(items: TransactItem[], at: number, usage: QuotaCharge, update: TransactItem["Update"]) {
    const all = [...items.slice(0, at), { Update: update }, ...items.slice(at)];
    try {
      await retryConflicts(() => this.doc.send(new TransactWriteCommand({ TransactItems: all })));
    } catch (e) {
      const reasons = (e as { CancellationReasons?: { Code?: string; Item?: Record<string, unknown> }[] }).CancellationReasons;
      const before = reasons?.slice(0, at).some((r) => r?.Code === "ConditionalCheckFailed");
      const reason = reasons?.[at];
      if (!before && reason?.Code === "ConditionalCheckFailed") {
        throw new QuotaExceeded(exceededFields(usage, reason.Item ? unmarshallItem(reason.Item) : undefined));
      }
      throw e;
    }
  }

  async quotaUsage(project: string): Promise<QuotaDelta> {
    const item = await getItem(this.doc, this.table, usageKey(project).pk, usageKey(project).sk);
    const { pk: _pk, sk: _sk, ...counts } = item ?? {};
    return counts as QuotaDelta;
  }

  /** The lock alone (with its trail entry and usage): lockWith's transaction, then the LB as locked (a transaction answers no item). */
  async lock(id: string, req: LockRequest): Promise<Versioned<LoadBalancer>> {
    await this.lockWith(id, req, []);
    return (await this.getLoadBalancer(id))!;
  }

  /** The conditional update that takes an LB's lock (see README: the lock protocol). */
  private lockUpdate(id: string, req: LockRequest) {
    const status = statusAttributes(LOADBALANCER, id, req.to, this.now(), this.opts.expiryAge);
    const named = nameAttributes(LOADBALANCER, { ...(req.set ?? {}), provisioning_status: req.to });
    const update = updateExpression(
      {
        ...(req.set ?? {}),
        ...named.set,
        ...status.set,
        provisioning_status: req.to,
        lock_owner: req.owner,
        execution_arn: req.executionArn,
        updated_at: this.now().toISOString(),
      },
      [...named.remove, ...status.remove],
    );
    update.ExpressionAttributeNames["#ps"] = "provisioning_status";
    update.ExpressionAttributeNames["#v"] = "version";
    update.ExpressionAttributeValues[":one"] = 1;
    const from = req.from.map((s, i) => {
      update.ExpressionAttributeValues[`:from${i}`] = s;
      return `:from${i}`;
    });
    let condition = `attribute_exists(pk) AND #ps IN (${from.join(", ")})`;
    if (req.expectVersion !== undefined) {
      update.ExpressionAttributeValues[":ev"] = req.expectVersion;
      condition += " AND #v = :ev";
    }
    return {
      TableName: this.table,
      Key: { pk: treePk(id), sk: LB_SK },
      ...update,
      // (After the SET clause's first action: a REMOVE clause (a cleared name's index keys) may follow it.)
      UpdateExpression: update.UpdateExpression.replace(/^SET /, "SET #v = #v + :one, "),
      ConditionExpression: condition,
      ReturnValuesOnConditionCheckFailure: "ALL_OLD" as const,
    };
  }

  async abandonLock(id: string, owner: string, restore: Partial<LoadBalancer>, usage?: QuotaCharge): Promise<void> {
    const status = restore.provisioning_status
      ? statusAttributes(LOADBALANCER, id, restore.provisioning_status, this.now(), this.opts.expiryAge)
      : { set: {}, remove: [] };
    const named = nameAttributes(LOADBALANCER, restore); // a restored name goes back to its index partition
    await this.lbOwnerWrite(
      id,
      owner,
      { ...restore, ...named.set, ...status.set },
      [...named.remove, ...status.remove, "lock_owner", "execution_arn"],
      usage,
    ).catch((e) => {
      if (!(e instanceof LockLost)) throw e;
    });
  }

  async updateLoadBalancer(id: string, owner: string, set: Partial<LoadBalancer>, release = false, usage?: QuotaCharge): Promise<void> {
    const status = set.provisioning_status
      ? statusAttributes(LOADBALANCER, id, set.provisioning_status, this.now(), this.opts.expiryAge)
      : { set: {}, remove: [] };
    const named = nameAttributes(LOADBALANCER, set);
    await this.lbOwnerWrite(
      id,
      owner,
      { ...set, ...named.set, ...status.set, updated_at: this.now().toISOString() },
      [...named.remove, ...status.remove, ...(release ? ["lock_owner"] : [])],
      usage,
    );
  }

  /**
   * A write to the LB item by its lock owner; `usage` (given back, never checked) goes in the same
   * transaction, so a retried step that finds the lock gone cannot apply it twice.
   */
  private async lbOwnerWrite(id: string, owner: string, set: Item, remove: string[], usage?: QuotaCharge) {
    const charge = usageUpdate(this.table, usage && { ...usage, limits: undefined });
    if (!charge) return this.ownerWrite(LOADBALANCER, id, undefined, owner, set, remove);
    const update = updateExpression(set, remove);
    update.ExpressionAttributeValues[":owner"] = owner;
    const lbUpdate = {
      TableName: this.table,
      Key: { pk: treePk(id), sk: LB_SK },
      ...update,
      ConditionExpression: "attribute_exists(pk) AND lock_owner = :owner",
    };
    try {
      await retryConflicts(() => this.doc.send(new TransactWriteCommand({ TransactItems: [{ Update: lbUpdate }, { Update: charge }] })));
    } catch (e) {
      throw lockLostOr(e, `load balancer ${id}`);
    }
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

  async lockWith(id: string, req: LockRequest, writes: ChildWrite[]): Promise<void> {
    const lockUpdate = this.lockUpdate(id, req);
    // The flow trail's start goes with the lock: one transaction, no write of its own.
    const trail: TransactItem[] = req.trail ? [{ Put: { TableName: this.table, Item: trailItem(id, req.trail) } }] : [];
    const items = writes.flatMap((w) => this.writeItems(id, w));
    const charge = usageUpdate(this.table, req.usage);
    const first = items.slice(0, MAX_TRANSACTION - (charge ? 2 : 1) - trail.length);
    try {
      const head: TransactItem[] = [{ Update: lockUpdate }, ...trail, ...first];
      if (charge) await this.transactWithUsage(head, 1, req.usage!, charge);
      else await retryConflicts(() => this.doc.send(new TransactWriteCommand({ TransactItems: head })));
    } catch (e) {
      const reasons = (e as { CancellationReasons?: { Code?: string; Item?: Record<string, unknown> }[] }).CancellationReasons;
      if (reasons?.[0]?.Code === "ConditionalCheckFailed") {
        throw new LockConflict(reasons[0].Item ? versioned<LoadBalancer>(unmarshallItem(reasons[0].Item)) : undefined);
      }
      throw e;
    }
    await this.applyItems(id, req.owner, items.slice(first.length));
  }

  async applyAsOwner(lbId: string, owner: string, writes: ChildWrite[]): Promise<void> {
    await this.applyItems(
      lbId,
      owner,
      writes.flatMap((w) => this.writeItems(lbId, w)),
    );
  }

  /** Transaction items, each chunk with a check that `owner` still holds the lock. */
  private async applyItems(lbId: string, owner: string, items: TransactItem[]) {
    for (let i = 0; i < items.length; i += MAX_TRANSACTION - 1) {
      const chunk = items.slice(i, i + MAX_TRANSACTION - 1);
      try {
        await retryConflicts(() =>
          this.doc.send(new TransactWriteCommand({ TransactItems: [ownerCheck(this.table, lbId, owner), ...chunk] })),
        );
      } catch (e) {
        throw lockLostOr(e, `objects of load balancer ${lbId}`);
      }
    }
  }

  /** The items of one ChildWrite: a new object and its pointer, or an update of an existing one. */
  private writeItems(lbId: string, w: ChildWrite): TransactItem[] {
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
                  TableName: this.table,
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
            TableName: this.table,
            Item: { ...rec, ...key, kind: k.kind, ...indexAttributes(k, rec, String(rec[k.statusField])) },
            ConditionExpression: "attribute_not_exists(pk)",
          },
        },
        { Put: { TableName: this.table, Item: { ...pointerKey(rec.id), kind: k.kind, ref_pk: key.pk, ref_sk: key.sk } } },
        ...claim,
      ];
    }
    const status = w.set[k.statusField];
    const extra = typeof status === "string" ? statusAttributes(k, w.id, status, this.now(), this.opts.expiryAge) : { set: {}, remove: [] };
    const named = nameAttributes(k, w.set);
    const update = updateExpression({ ...w.set, ...named.set, ...extra.set, updated_at: this.now().toISOString() }, [
      ...named.remove,
      ...extra.remove,
    ]);
    return [
      {
        Update: {
          TableName: this.table,
          Key: { pk: treePk(lbId), sk: childSk(k, w.id, w.pool_id) },
          ...update,
          ConditionExpression: "attribute_exists(pk)",
        },
      },
    ];
  }

  // ---- amphorae -------------------------------------------------------------------------------

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

  async createAmphora(a: Amphora, owner: string): Promise<void> {
    const key = { pk: treePk(a.loadbalancer_id), sk: childSk(AMPHORA, a.id) };
    try {
      await retryConflicts(() =>
        this.doc.send(
          new TransactWriteCommand({
            TransactItems: [
              ownerCheck(this.table, a.loadbalancer_id, owner),
              {
                Put: {
                  TableName: this.table,
                  Item: { ...a, ...key, kind: AMPHORA.kind, ...indexAttributes(AMPHORA, a, a.status) },
                  ConditionExpression: "attribute_not_exists(pk)",
                },
              },
              { Put: { TableName: this.table, Item: { ...pointerKey(a.id), kind: AMPHORA.kind, ref_pk: key.pk, ref_sk: key.sk } } },
            ],
          }),
        ),
      );
    } catch (e) {
      throw lockLostOr(e, `amphora ${a.id} of load balancer ${a.loadbalancer_id}`);
    }
  }

  async updateAmphora(lbId: string, id: string, owner: string, set: Partial<Amphora>): Promise<void> {
    const status = amphoraAttributes(id, set, this.now(), this.opts.expiryAge);
    await this.ownerWrite(AMPHORA, lbId, id, owner, { ...set, ...status.set, updated_at: this.now().toISOString() }, status.remove);
  }

  async updateAmphoraIf(lbId: string, id: string, from: readonly string[], set: Partial<Amphora>): Promise<boolean> {
    const status = amphoraAttributes(id, set, this.now(), this.opts.expiryAge);
    const update = updateExpression({ ...set, ...status.set, updated_at: this.now().toISOString() }, status.remove);
    update.ExpressionAttributeNames["#st"] = "status";
    const values = from.map((s, i) => {
      update.ExpressionAttributeValues[`:f${i}`] = s;
      return `:f${i}`;
    });
    try {
      await retryConflicts(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: treePk(lbId), sk: childSk(AMPHORA, id) },
            ...update,
            ConditionExpression: `attribute_exists(pk) AND #st IN (${values.join(", ")})`,
          }),
        ),
      );
      return true;
    } catch (e) {
      if (e instanceof ConditionalCheckFailedException) return false;
      throw e;
    }
  }

  // ---- the generic mechanism -----------------------------------------------------------------

  /** Finds an object by its id alone: a consistent read of its pointer, then of the object. */
  private async getById(id: string, k: StoredKind): Promise<Item | undefined> {
    const ptr = await getItem(this.doc, this.table, pointerKey(id).pk, pointerKey(id).sk);
    if (!ptr || ptr.kind !== k.kind) return undefined;
    return getItem(this.doc, this.table, String(ptr.ref_pk), String(ptr.ref_sk));
  }

  /**
   * A write by the holder of an LB's lock: to the LB itself (childId undefined) with one conditional
   * update, or to a child in a transaction with a check of the lock. Never resurrects a deleted item.
   */
  private async ownerWrite(k: StoredKind, lbId: string, childId: string | undefined, owner: string, set: Item, remove: string[]) {
    const update = updateExpression(set, remove);
    const key = childId === undefined ? { pk: treePk(lbId), sk: LB_SK } : { pk: treePk(lbId), sk: childSk(k, childId) };
    const what = childId === undefined ? `load balancer ${lbId}` : `${k.kind} ${childId} of load balancer ${lbId}`;
    try {
      if (childId === undefined) {
        update.ExpressionAttributeValues[":owner"] = owner;
        await retryConflicts(() =>
          this.doc.send(
            new UpdateCommand({
              TableName: this.table,
              Key: key,
              ...update,
              ConditionExpression: "attribute_exists(pk) AND lock_owner = :owner",
            }),
          ),
        );
      } else {
        await retryConflicts(() =>
          this.doc.send(
            new TransactWriteCommand({
              TransactItems: [
                ownerCheck(this.table, lbId, owner),
                { Update: { TableName: this.table, Key: key, ...update, ConditionExpression: "attribute_exists(pk)" } },
              ],
            }),
          ),
        );
      }
    } catch (e) {
      throw lockLostOr(e, what);
    }
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

  async markLoadBalancerUnless(id: string, owner: string, set: Record<string, unknown>, unless: Record<string, string>): Promise<boolean> {
    const update = updateExpression({ ...set, updated_at: this.now().toISOString() });
    update.ExpressionAttributeValues[":owner"] = owner;
    const conditions = ["attribute_exists(pk)", "lock_owner = :owner"];
    Object.entries(unless).forEach(([k, v], i) => {
      update.ExpressionAttributeNames[`#u${i}`] = k;
      update.ExpressionAttributeValues[`:u${i}`] = v;
      conditions.push(`(attribute_not_exists(#u${i}) OR #u${i} <> :u${i})`);
    });
    try {
      await retryConflicts(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: treePk(id), sk: LB_SK },
            ...update,
            ConditionExpression: conditions.join(" AND "),
          }),
        ),
      );
      return true;
    } catch (e) {
      if (e instanceof ConditionalCheckFailedException) return false;
      throw e;
    }
  }
}

function versioned<T>(item: Item): Versioned<T> {
  return {
    record: toRecord<T>(item),
    version: Number(item.version ?? 0),
    lockOwner: item.lock_owner as string | undefined,
    executionArn: item.execution_arn as string | undefined,
  };
}

function unmarshallItem(raw: Record<string, unknown>): Item {
  // ReturnValuesOnConditionCheckFailure comes back in the low-level attribute-value format.
  return unmarshall(raw as never);
}
