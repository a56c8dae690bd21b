// The DynamoDB adapter of housekeeping's port. What to purge and what to rotate comes from the sparse
// housekeeping index (see table.ts and ../README.md): `DELETED#<kind>#<shard>` partitions hold DELETED
// load balancers and amphorae under their deletion time, `CERT#<shard>` partitions live amphorae
// under their certificate's expiry; a Query per shard reads only what is due. Every delete and every
// rotation write is conditioned on what made it due, so a stale index entry (indexes are eventually
// consistent) or a second housekeeper at the same moment changes nothing it should not.
import { BatchWriteCommand, DeleteCommand, GetCommand, TransactWriteCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { AMPHORA_ALLOCATED, DELETED, type Amphora, type DeletedRef, type HousekeepingStore } from "@ottava/core";
import { DynamoAdapter, conditionalUpdate, conditionally, retryConflicts } from "./client";
import {
  AMPHORA,
  LB_SK,
  LOADBALANCER,
  TREE_KINDS,
  certAttributes,
  certPartition,
  childSk,
  deletedPartition,
  pointerKey,
  toRecord,
  treePk,
  updateExpression,
} from "./items";
import { queryAll, queryIndex } from "./query";
import { INDEXES, SHARDS } from "./table";

type Item = Record<string, unknown>;
type Key = { pk: string; sk: string };

/** DynamoDB's limit of requests in one BatchWriteItem. */
const BATCH = 25;

export class DynamoHousekeepingStore extends DynamoAdapter implements HousekeepingStore {
  constructor(doc: DynamoDBDocumentClient, table: string, now?: () => Date) {
    super(doc, { tableName: table, now });
  }

  // ---- purge ------------------------------------------------------------------------------------

  deletedLoadBalancers(before: string): AsyncIterable<DeletedRef> {
    return this.deleted(LOADBALANCER.kind, before, (item) => String(item.id));
  }

  deletedAmphorae(before: string): AsyncIterable<DeletedRef> {
    return this.deleted(AMPHORA.kind, before, (item) => String(item.loadbalancer_id));
  }

  private async *deleted(kind: string, before: string, lbOf: (item: Item) => string): AsyncGenerator<DeletedRef> {
    for (let s = 0; s < SHARDS; s++) {
      // Sort keys are `<deleted at>#<id>`: those below `before` went DELETED strictly before it.
      for await (const item of queryIndex(this.doc, this.table, "housekeeping", deletedPartition(kind, s), "desc", before)) {
        yield { id: String(item.id), lbId: lbOf(item), deletedAt: String(item[INDEXES.housekeeping.sk]).split("#")[0]! };
      }
    }
  }

  async purgeLoadBalancer(lbId: string, before: string): Promise<boolean> {
    const lb = (await this.doc.send(new GetCommand({ TableName: this.table, Key: { pk: treePk(lbId), sk: LB_SK }, ConsistentRead: true })))
      .Item;
    if (!lb || lb.provisioning_status !== DELETED || !(String(lb[INDEXES.housekeeping.sk] ?? "") < before)) return false;
    // Everything else first (objects and their id pointers, the flow trail, change sets), the LB item
    // last: a purge that stops half-way leaves the LB in the index, and the next one finishes it.
    const keys: Key[] = [];
    for (const item of await this.partitionKeys(lbId)) {
      if (item.sk === LB_SK) continue;
      keys.push({ pk: String(item.pk), sk: String(item.sk) });
      if (typeof item.kind === "string" && item.kind in TREE_KINDS && typeof item.id === "string") keys.push(pointerKey(item.id));
    }
    await this.deleteAll(keys);
    return conditionally(() =>
      this.doc.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { pk: treePk(lbId), sk: LB_SK },
          ConditionExpression: "#ps = :deleted AND #hk < :before",
          ExpressionAttributeNames: { "#ps": "provisioning_status", "#hk": INDEXES.housekeeping.sk },
          ExpressionAttributeValues: { ":deleted": DELETED, ":before": before },
        }),
      ),
    );
  }

  async purgeAmphora(lbId: string, id: string, before: string): Promise<boolean> {
    try {
      await retryConflicts(() =>
        this.doc.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Delete: {
                  TableName: this.table,
                  Key: { pk: treePk(lbId), sk: childSk(AMPHORA, id) },
                  // As Octavia's delete_old_amphorae: not while a zombie still sends heartbeats.
                  ConditionExpression: "#st = :deleted AND #hk < :before AND (attribute_not_exists(#hb) OR #hb < :before)",
                  ExpressionAttributeNames: { "#st": "status", "#hk": INDEXES.housekeeping.sk, "#hb": "last_heartbeat" },
                  ExpressionAttributeValues: { ":deleted": DELETED, ":before": before },
                },
              },
              { Delete: { TableName: this.table, Key: pointerKey(id) } },
            ],
          }),
        ),
      );
      return true;
    } catch (e) {
      if (isConditionFailure(e)) return false;
      throw e;
    }
  }

  /** The keys (and kind and id) of every item of an LB's partition. */
  private async partitionKeys(lbId: string): Promise<Item[]> {
    return queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk",
      ExpressionAttributeValues: { ":pk": treePk(lbId) },
      ProjectionExpression: "pk, sk, #k, id",
      ExpressionAttributeNames: { "#k": "kind" },
      ConsistentRead: true,
    });
  }

  private async deleteAll(keys: Key[]): Promise<void> {
    for (let i = 0; i < keys.length; i += BATCH) {
      let requests = keys.slice(i, i + BATCH).map((Key) => ({ DeleteRequest: { Key } }));
      for (let attempt = 0; requests.length; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt) * Math.random()));
        if (attempt > 10) throw new Error(`purge: ${requests.length} deletes still unprocessed`);
        const out = await this.doc.send(new BatchWriteCommand({ RequestItems: { [this.table]: requests } }));
        requests = (out.UnprocessedItems?.[this.table] ?? []) as typeof requests;
      }
    }
  }

  // ---- certificate rotation ---------------------------------------------------------------------

  async *certsExpiringBefore(before: string): AsyncIterable<Amphora> {
    for (let s = 0; s < SHARDS; s++) {
      for await (const item of queryIndex(this.doc, this.table, "housekeeping", certPartition(s), "desc", before)) {
        const a = toRecord<Amphora>(item);
        if (a.status !== DELETED) yield a;
      }
    }
  }

  async claimCertRotation(
    lbId: string,
    id: string,
    owner: string,
    now: string,
    opts: { staleBefore?: string; expiringBefore?: string } = {},
  ): Promise<boolean> {
    const update = updateExpression({ cert_busy: true, cert_rotation: owner, cert_busy_since: now, updated_at: this.now().toISOString() });
    Object.assign(update.ExpressionAttributeNames, { "#st": "status", "#busy": "cert_busy", "#rot": "cert_rotation" });
    Object.assign(update.ExpressionAttributeValues, { ":alloc": AMPHORA_ALLOCATED, ":owner": owner, ":false": false });
    const conditions = ["attribute_exists(pk)", "#st = :alloc"];
    const free = ["#rot = :owner", "attribute_not_exists(#busy)", "#busy = :false"];
    if (opts.staleBefore !== undefined) {
      update.ExpressionAttributeNames["#since"] = "cert_busy_since";
      update.ExpressionAttributeValues[":stale"] = opts.staleBefore;
      free.push("attribute_not_exists(#since)", "#since < :stale");
    }
    conditions.push(`(${free.join(" OR ")})`);
    if (opts.expiringBefore !== undefined) {
      // What the (eventually consistent) index showed must still hold: a rotation that just ended is not redone.
      update.ExpressionAttributeNames["#exp"] = "cert_expiration";
      update.ExpressionAttributeValues[":deadline"] = opts.expiringBefore;
      conditions.push("#exp < :deadline");
    }
    return this.conditional(lbId, id, update, conditions.join(" AND "));
  }

  async recordCertExpiration(lbId: string, id: string, owner: string, expiration: string): Promise<boolean> {
    const update = updateExpression({
      cert_expiration: expiration,
      ...certAttributes(id, expiration),
      updated_at: this.now().toISOString(),
    });
    Object.assign(update.ExpressionAttributeNames, { "#st": "status", "#rot": "cert_rotation" });
    Object.assign(update.ExpressionAttributeValues, { ":deleted": DELETED, ":owner": owner });
    return this.conditional(lbId, id, update, "attribute_exists(pk) AND #st <> :deleted AND #rot = :owner");
  }

  async releaseCertRotation(lbId: string, id: string, owner: string): Promise<boolean> {
    const update = updateExpression({ cert_busy: false, updated_at: this.now().toISOString() }, ["cert_rotation", "cert_busy_since"]);
    // The REMOVEd attribute names are #r0, #r1: the condition names cert_rotation on its own.
    Object.assign(update.ExpressionAttributeNames, { "#rot": "cert_rotation" });
    update.ExpressionAttributeValues[":owner"] = owner;
    return this.conditional(lbId, id, update, "attribute_exists(pk) AND #rot = :owner");
  }

  private async conditional(lbId: string, id: string, update: ReturnType<typeof updateExpression>, condition: string): Promise<boolean> {
    return conditionalUpdate(this.doc, {
      TableName: this.table,
      Key: { pk: treePk(lbId), sk: childSk(AMPHORA, id) },
      ...update,
      ConditionExpression: condition,
    });
  }
}

function isConditionFailure(e: unknown): boolean {
  const err = e as { name?: string; CancellationReasons?: { Code?: string }[] };
  return err?.name === "TransactionCanceledException" && (err.CancellationReasons ?? []).some((r) => r?.Code === "ConditionalCheckFailed");
}
