// The DynamoDB adapter of the CatalogStore port: flavors, flavor profiles, availability zones, their
// profiles and quotas, in the same table (see ../README.md, "The catalog"). Every read by key is a
// consistent GetItem; lists Query one partition of the byShard index; nothing scans.
import { TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import {
  CatalogConflict,
  invalidMarker,
  type AvailabilityZone,
  type AvailabilityZoneProfile,
  type CatalogConflictReason,
  type CatalogKind,
  type CatalogRecords,
  type CatalogStore,
  type CatalogWriteOptions,
  type Flavor,
  type FlavorProfile,
  type ItemSource,
  type SortDir,
} from "@ottava/core";
import { retryConflicts, type TransactItem } from "./client";
import { LOADBALANCER, toRecord, updateExpression } from "./items";
import { getItem } from "./owner";
import { INDEXES, SHARDS } from "./table";
import { queryIndex, queryPages } from "./query";

type Item = Record<string, unknown>;

interface KindDef {
  /** pk = <prefix>#<key>, sk = <prefix>: the keys the load-balancer create already reads (FLAVOR#, AZ#, ...). */
  prefix: string;
  /** The record attribute that is the key. */
  keyField: string;
  /** The parent a record references; the parent counts its children in `refs`. */
  parent?: { kind: CatalogKind; field: string };
  /** An attribute whose non-null values are unique within the kind, guarded by a marker item per value. */
  unique?: string;
}

const KINDS: Record<CatalogKind, KindDef> = {
  flavorprofile: { prefix: "FLAVORPROFILE", keyField: "id" },
  flavor: { prefix: "FLAVOR", keyField: "id", parent: { kind: "flavorprofile", field: "flavor_profile_id" }, unique: "name" },
  availabilityzoneprofile: { prefix: "AZPROFILE", keyField: "id" },
  availabilityzone: { prefix: "AZ", keyField: "name", parent: { kind: "availabilityzoneprofile", field: "availability_zone_profile_id" } },
  quota: { prefix: "QUOTA", keyField: "project_id" },
};

/** How many children reference a parent: what "in use" is decided on. */
const REFS = "refs";
/** Bumped by every write: a read-then-write is conditioned on the revision it read. */
const REV = "rev";
const INTERNAL = new Set(["pk", "sk", "kind", INDEXES.byShard.pk, INDEXES.byShard.sk, REFS, REV]);
const ATTEMPTS = 5;

const itemKey = (kind: CatalogKind, key: string) => ({ pk: `${KINDS[kind].prefix}#${key}`, sk: KINDS[kind].prefix });
/** The marker item that holds a unique value (a flavor name): FLAVORNAME#<name>. */
function uniqueKey(kind: CatalogKind, value: string) {
  const def = KINDS[kind];
  const prefix = `${def.prefix}${def.unique!.toUpperCase()}`;
  return { pk: `${prefix}#${value}`, sk: prefix };
}
/** Every object of a kind in one partition of byShard ("<kind>#0"), in key order. */
const indexAttributes = (kind: CatalogKind, key: string) => ({ [INDEXES.byShard.pk]: `${kind}#0`, [INDEXES.byShard.sk]: key });

const strip = <T>(item: Item): T => Object.fromEntries(Object.entries(item).filter(([k]) => !INTERNAL.has(k))) as T;
const refsOf = (item: Item) => Number(item[REFS] ?? 0);

export class DynamoCatalog implements CatalogStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async get<K extends CatalogKind>(kind: K, key: string): Promise<CatalogRecords[K] | undefined> {
    const item = await this.stored(kind, key);
    return item && strip<CatalogRecords[K]>(item);
  }

  async referenced(kind: CatalogKind, key: string): Promise<boolean> {
    const item = await this.stored(kind, key);
    return item !== undefined && refsOf(item) > 0;
  }

  list(kind: CatalogKind): ItemSource {
    const self = this;
    return async function* (order: SortDir, after: string | undefined) {
      if (after !== undefined && !(await self.stored(kind, after))) throw invalidMarker(after);
      for await (const item of queryIndex(self.doc, self.table, "byShard", `${kind}#0`, order, after)) yield strip<Item>(item);
    };
  }

  async create<K extends CatalogKind>(kind: K, record: CatalogRecords[K]): Promise<void> {
    const def = KINDS[kind];
    const rec = record as unknown as Item;
    const key = String(rec[def.keyField]);
    const items: TransactItem[] = [
      {
        Put: {
          TableName: this.table,
          Item: { ...rec, ...itemKey(kind, key), kind, ...indexAttributes(kind, key), [REV]: 1 },
          ConditionExpression: "attribute_not_exists(pk)",
        },
      },
    ];
    const reasons: CatalogConflictReason[] = ["exists"];
    if (def.parent) {
      items.push(this.countRef(def.parent.kind, String(rec[def.parent.field]), +1));
      reasons.push("no_parent");
    }
    const unique = def.unique ? rec[def.unique] : undefined;
    if (typeof unique === "string") {
      items.push(this.putUnique(kind, unique, key));
      reasons.push("duplicate");
    }
    const failed = await this.transact(items);
    if (failed !== undefined) throw new CatalogConflict(reasons[failed]!);
  }

  async update<K extends CatalogKind>(
    kind: K,
    key: string,
    set: Partial<CatalogRecords[K]>,
    opts: CatalogWriteOptions = {},
  ): Promise<CatalogRecords[K]> {
    const def = KINDS[kind];
    const changes = set as Item;
    for (let attempt = 1; ; attempt++) {
      const current = await this.stored(kind, key);
      if (!current) throw new CatalogConflict("not_found");
      if (opts.unreferenced && refsOf(current) > 0) throw new CatalogConflict("in_use");
      const update = updateExpression({ ...changes, ...indexAttributes(kind, key) });
      const items: TransactItem[] = [
        {
          Update: {
            TableName: this.table,
            Key: itemKey(kind, key),
            ...this.withRevision(update, current, opts.unreferenced === true),
          },
        },
      ];
      // A new unique value takes its marker in the same transaction that gives up the old one.
      let duplicateAt: number | undefined;
      if (def.unique && def.unique in changes) {
        const before = current[def.unique];
        const after = changes[def.unique];
        if (before !== after) {
          if (typeof before === "string") items.push({ Delete: { TableName: this.table, Key: uniqueKey(kind, before) } });
          if (typeof after === "string") duplicateAt = items.push(this.putUnique(kind, after, key)) - 1;
        }
      }
      const failed = await this.transact(items);
      if (failed === undefined) return strip<CatalogRecords[K]>({ ...current, ...changes });
      if (failed === duplicateAt) throw new CatalogConflict("duplicate");
      // The object changed (or went) since it was read: decide again on what is there now.
      if (attempt >= ATTEMPTS) throw new Error(`${kind} ${key} kept changing during an update`);
    }
  }

  async upsert<K extends CatalogKind>(kind: K, key: string, set: Partial<CatalogRecords[K]>): Promise<CatalogRecords[K]> {
    const update = updateExpression({ ...(set as Item), kind, ...indexAttributes(kind, key) });
    update.ExpressionAttributeNames["#rev"] = REV;
    update.ExpressionAttributeValues[":zero"] = 0;
    update.ExpressionAttributeValues[":one"] = 1;
    const out = await retryConflicts(() =>
      this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: itemKey(kind, key),
          ...update,
          UpdateExpression: `${update.UpdateExpression}, #rev = if_not_exists(#rev, :zero) + :one`,
          ReturnValues: "ALL_NEW",
        }),
      ),
    );
    return strip<CatalogRecords[K]>(out.Attributes!);
  }

  async delete(kind: CatalogKind, key: string, opts: CatalogWriteOptions = {}): Promise<void> {
    const def = KINDS[kind];
    for (let attempt = 1; ; attempt++) {
      const current = await this.stored(kind, key);
      if (!current) throw new CatalogConflict("not_found");
      if (opts.unreferenced && refsOf(current) > 0) throw new CatalogConflict("in_use");
      const condition = this.withRevision(
        { ExpressionAttributeNames: {}, ExpressionAttributeValues: {} },
        current,
        opts.unreferenced === true,
      );
      const items: TransactItem[] = [{ Delete: { TableName: this.table, Key: itemKey(kind, key), ...condition } }];
      if (def.parent) items.push(this.countRef(def.parent.kind, String(current[def.parent.field]), -1));
      const unique = def.unique ? current[def.unique] : undefined;
      if (typeof unique === "string") items.push({ Delete: { TableName: this.table, Key: uniqueKey(kind, unique) } });
      const failed = await this.transact(items);
      if (failed === undefined) return;
      // A parent always exists while it has children (its delete requires refs = 0).
      if (failed > 0) throw new Error(`${kind} ${key}: its ${def.parent?.kind} is missing`);
      if (attempt >= ATTEMPTS) throw new Error(`${kind} ${key} kept changing during a delete`);
    }
  }

  // Records as toRecord strips items (refs and rev kept), as these reads have always answered them.
  async getFlavor(id: string) {
    const flavor = await this.stored("flavor", id);
    const profile = flavor && (await this.stored("flavorprofile", String(flavor.flavor_profile_id)));
    return flavor && profile ? { flavor: toRecord<Flavor>(flavor), profile: toRecord<FlavorProfile>(profile) } : undefined;
  }

  async getAvailabilityZone(name: string) {
    const zone = await this.stored("availabilityzone", name);
    const profile = zone && (await this.stored("availabilityzoneprofile", String(zone.availability_zone_profile_id)));
    return zone && profile ? { zone: toRecord<AvailabilityZone>(zone), profile: toRecord<AvailabilityZoneProfile>(profile) } : undefined;
  }

  /**
   * Load balancers are the other engineers' items: not DELETED ones are in byShard under
   * "loadbalancer#<shard>", so the 8 shards are queried with a filter. An admin-only delete's check.
   */
  async loadBalancersUsing(field: "flavor_id" | "availability_zone", value: string): Promise<boolean> {
    const found = await Promise.all(Array.from({ length: SHARDS }, (_, s) => this.anyInShard(`${LOADBALANCER.kind}#${s}`, field, value)));
    return found.some(Boolean);
  }

  // ---- helpers ---------------------------------------------------------------------------------

  /** An object by its key, consistently (owner.ts getItem: none for a key no item can have). */
  private async stored(kind: CatalogKind, key: string): Promise<Item | undefined> {
    const k = itemKey(kind, key);
    return getItem(this.doc, this.table, k.pk, k.sk);
  }

  /** Adds the condition "unchanged since read" (and "unreferenced"), and the revision bump for updates. */
  private withRevision<
    U extends {
      ExpressionAttributeNames: Record<string, string>;
      ExpressionAttributeValues: Record<string, unknown>;
      UpdateExpression?: string;
    },
  >(update: U, current: Item, unreferenced: boolean) {
    update.ExpressionAttributeNames["#rev"] = REV;
    let condition = "attribute_exists(pk) AND attribute_not_exists(#rev)";
    if (current[REV] !== undefined) {
      update.ExpressionAttributeValues[":rev"] = current[REV];
      condition = "#rev = :rev";
    }
    if (unreferenced) {
      update.ExpressionAttributeNames["#refs"] = REFS;
      update.ExpressionAttributeValues[":zero"] = 0;
      condition += " AND (attribute_not_exists(#refs) OR #refs = :zero)";
    }
    const out: Record<string, unknown> = { ...update, ConditionExpression: condition };
    if (update.UpdateExpression !== undefined) {
      update.ExpressionAttributeValues[":zero"] = 0;
      update.ExpressionAttributeValues[":one"] = 1;
      out.UpdateExpression = `${update.UpdateExpression}, #rev = if_not_exists(#rev, :zero) + :one`;
    }
    if (Object.keys(update.ExpressionAttributeValues).length === 0) delete out.ExpressionAttributeValues;
    return out as U & { ConditionExpression: string };
  }

  /** A parent's reference count, moved by a child's create (+1) or delete (-1); the parent must exist. */
  private countRef(kind: CatalogKind, key: string, by: 1 | -1): TransactItem {
    return {
      Update: {
        TableName: this.table,
        Key: itemKey(kind, key),
        UpdateExpression: "SET #refs = if_not_exists(#refs, :zero) + :by",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeNames: { "#refs": REFS },
        ExpressionAttributeValues: { ":zero": 0, ":by": by },
      },
    };
  }

  private putUnique(kind: CatalogKind, value: string, ownerKey: string): TransactItem {
    return {
      Put: {
        TableName: this.table,
        Item: { ...uniqueKey(kind, value), kind: `${kind}-${KINDS[kind].unique}`, ref: ownerKey },
        ConditionExpression: "attribute_not_exists(pk)",
      },
    };
  }

  /** Runs a transaction; answers the index of the item whose condition failed, if one did. */
  private async transact(items: TransactItem[]): Promise<number | undefined> {
    try {
      await retryConflicts(() => this.doc.send(new TransactWriteCommand({ TransactItems: items })));
      return undefined;
    } catch (e) {
      const reasons = (e as { name?: string; CancellationReasons?: { Code?: string }[] }).CancellationReasons;
      const at = reasons?.findIndex((r) => r?.Code === "ConditionalCheckFailed") ?? -1;
      if (at >= 0) return at;
      throw e;
    }
  }

  private async anyInShard(pk: string, field: string, value: string): Promise<boolean> {
    const pages = queryPages(this.doc, {
      TableName: this.table,
      IndexName: "byShard",
      KeyConditionExpression: "#pk = :pk",
      FilterExpression: "#f = :v",
      ExpressionAttributeNames: { "#pk": INDEXES.byShard.pk, "#f": field },
      ExpressionAttributeValues: { ":pk": pk, ":v": value },
      Select: "COUNT",
    });
    for await (const page of pages) if ((page.Count ?? 0) > 0) return true;
    return false;
  }
}
