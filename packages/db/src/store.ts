// The DynamoDB adapter of the LoadBalancerStore port: its reads (tree-reads.ts), and here the lock
// and every write under it — taking the lock with a change's writes, the trail's start and the quota
// charge in one transaction (lockWith), giving it back, the lock owner's writes to the LB, its tree
// and its amphorae. One generic mechanism over StoredKind descriptors; see packages/db/README.md,
// "The lock protocol".
import { TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import {
  LockConflict,
  LockLost,
  QuotaExceeded,
  type Amphora,
  type ChildWrite,
  type FlowStart,
  type LoadBalancer,
  type LoadBalancerStore,
  type LockRequest,
  type QuotaCharge,
  type QuotaDelta,
  type Versioned,
} from "@ottava/core";
import { MAX_TRANSACTION, conditionalUpdate, retryConflicts, type TransactItem } from "./client";
import {
  AMPHORA,
  amphoraAttributes,
  LB_SK,
  LOADBALANCER,
  childSk,
  childWriteItems,
  indexAttributes,
  nameAttributes,
  pointerKey,
  statusAttributes,
  treePk,
  updateExpression,
  type StoredKind,
} from "./items";
import { getItem, lockLostOr, ownerCheck } from "./owner";
import { trailItem } from "./flow-trail";
import { DynamoTreeReads, unmarshallItem, versioned, type Item } from "./tree-reads";
import { exceededFields, usageKey, usageUpdate } from "./usage";

export interface StoreOptions {
  tableName: string;
  /** Seconds a DELETED record stays before TTL purges it. */
  expiryAge: number;
  now?: () => Date;
}

export class DynamoStore extends DynamoTreeReads<StoreOptions> implements LoadBalancerStore {
  // ---- load balancers -------------------------------------------------------------------------

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

  async lockWith(id: string, req: LockRequest, writes: ChildWrite[]): Promise<void> {
    const lockUpdate = this.lockUpdate(id, req);
    // The flow trail's start goes with the lock: one transaction, no write of its own.
    const trail: TransactItem[] = req.trail ? [{ Put: { TableName: this.table, Item: trailItem(id, req.trail) } }] : [];
    const items = writes.flatMap((w) => childWriteItems(this.table, id, w, this.now, this.opts.expiryAge));
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
      writes.flatMap((w) => childWriteItems(this.table, lbId, w, this.now, this.opts.expiryAge)),
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

  // ---- amphorae -------------------------------------------------------------------------------

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
    return conditionalUpdate(this.doc, {
      TableName: this.table,
      Key: { pk: treePk(lbId), sk: childSk(AMPHORA, id) },
      ...update,
      ConditionExpression: `attribute_exists(pk) AND #st IN (${values.join(", ")})`,
    });
  }

  // ---- the generic mechanism -----------------------------------------------------------------

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

  async markLoadBalancerUnless(id: string, owner: string, set: Record<string, unknown>, unless: Record<string, string>): Promise<boolean> {
    const update = updateExpression({ ...set, updated_at: this.now().toISOString() });
    update.ExpressionAttributeValues[":owner"] = owner;
    const conditions = ["attribute_exists(pk)", "lock_owner = :owner"];
    Object.entries(unless).forEach(([k, v], i) => {
      update.ExpressionAttributeNames[`#u${i}`] = k;
      update.ExpressionAttributeValues[`:u${i}`] = v;
      conditions.push(`(attribute_not_exists(#u${i}) OR #u${i} <> :u${i})`);
    });
    return conditionalUpdate(this.doc, {
      TableName: this.table,
      Key: { pk: treePk(id), sk: LB_SK },
      ...update,
      ConditionExpression: conditions.join(" AND "),
    });
  }
}
