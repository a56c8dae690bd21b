// DynamoDB metering (@ottava/db/testing/metering), for tests and benchmarks: a middleware on a client
// that counts, per operation, the requests, the items read and the capacity units (as DynamoDB reports
// them, and as AWS would bill them from item sizes).
//
// `addMetering(client, meter)` adds it to a client; whoever wants counts adds it, as a ClientDecorator
// of createClients and createStores (the API benchmark's runtime, `startRuntime({ decorateClient })`;
// the in-process app, `inProcessApp(env, { decorateClient })`). Nothing of the product imports this
// file: no Lambda bundle carries it, `npm start` never meters, and it loads no vitest. A client without
// it pays nothing; a metered client whose meter is paused (`active = false`) passes requests through
// untouched.
//
// What a metered request does: it asks for `ReturnConsumedCapacity: TOTAL` (unless the caller asked
// for something itself; the field is taken out of the answer again), and, below the SDK's
// (un)marshalling, reads the request and DynamoDB's answer in the wire format. Each HTTP attempt
// counts as a request. Counts are kept per scope (an AsyncLocalStorage label set with
// `meter.scope(name, fn)`; "" outside any), operation and target (the key family or the Query).
//
// Computed units follow AWS's documented rules (capacity.ts, which also applies an UpdateExpression).
// The sizes of items DynamoDB does not send back (the item an UpdateItem or DeleteItem changes, the
// full item behind a projection) come from the last image of that item this meter saw (read or
// written while active); an update's result is computed from its UpdateExpression. A PutItem of an
// item never seen is taken for a new item; an update, delete or condition check of one, and a
// projection of one, are sized from what the request or answer holds and counted in `estimated`, as
// are items a Query's filter dropped (sized at the mean of the ones it returned). Failed requests
// other than failed conditional single-item writes are counted in `errors`, with no units.
import { AsyncLocalStorage } from "node:async_hooks";
import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { applyUpdate, indexWrites, itemSize, readUnits, reportedUnits, writeUnits, type WireItem } from "./capacity";

/** What one scope, operation and target consumed. */
export interface MeterCounts {
  /** HTTP requests to DynamoDB (each attempt of a retried call counts). */
  requests: number;
  /** Requests DynamoDB refused (conditional check failed, transaction cancelled, throttled, …). */
  errors: number;
  /** Items read: those a GetItem, Query, Scan, BatchGetItem or TransactGetItems answered with. */
  items: number;
  /** ConsumedCapacity as DynamoDB reported it. */
  reportedRead: number;
  reportedWrite: number;
  /** Capacity units by AWS's rules from the item sizes; `computedWrite` includes `computedIndexWrite`. */
  computedRead: number;
  computedWrite: number;
  computedIndexWrite: number;
  /** Items whose size was estimated (an update or delete of an item never seen, a projection of one, items dropped by a filter). */
  estimated: number;
}

export interface MeterRow {
  /** The AsyncLocalStorage label the request was made under ("" outside any). */
  scope: string;
  /** The DynamoDB operation (GetItem, Query, TransactWriteItems, …). */
  op: string;
  /** What it addressed: the key family (`LB#/LB`, `ID#`, …), or the index and key condition of a Query. */
  target: string;
  counts: MeterCounts;
}

/** A metered request as sent, in the wire format (for listeners). */
export interface MeteredRequest {
  scope: string;
  op: string;
  target: string;
  input: Record<string, unknown>;
}

const READ_OPS = new Set(["GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"]);
const CAPACITY_OPS = new Set(
  [...READ_OPS, "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"].map((op) => `${op}Command`),
);
const KEY = { pk: "pk", sk: "sk" } as const;

const zero = (): MeterCounts => ({
  requests: 0,
  errors: 0,
  items: 0,
  reportedRead: 0,
  reportedWrite: 0,
  computedRead: 0,
  computedWrite: 0,
  computedIndexWrite: 0,
  estimated: 0,
});

export class DynamoMeter {
  /** While false, metered clients send requests untouched and nothing is counted. */
  active = true;
  /** Requests the meter could not read or account for (an answer that is not JSON): not in the counts. */
  unreadable = 0;
  private readonly scopes = new AsyncLocalStorage<string>();
  private readonly counts = new Map<string, MeterRow>();
  /** The last image of every item seen, by key, as JSON (the wire format). */
  private readonly images = new Map<string, string>();
  private readonly listeners = new Set<(r: MeteredRequest) => void>();

  /** Runs `fn` with every DynamoDB request it causes (through awaits, timers, callbacks) counted under `name`. */
  scope<T>(name: string, fn: () => T): T {
    return this.scopes.run(name, fn);
  }

  /** The counts so far, one row per scope, operation and target. */
  rows(): MeterRow[] {
    return [...this.counts.values()].map((r) => ({ ...r, counts: { ...r.counts } }));
  }

  /** Forgets the counts (not the item images, which size later writes). */
  reset(): void {
    this.counts.clear();
  }

  /** Calls `fn` with each metered request once DynamoDB has answered it; answers the function that stops it. */
  listen(fn: (r: MeteredRequest) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Counts one answered (or refused) request: `output` is DynamoDB's answer, or its error body. */
  observe(op: string, input: Record<string, unknown>, ok: boolean, output: Record<string, unknown>): void {
    const scope = this.scopes.getStore() ?? "";
    const target = targetOf(op, input);
    for (const l of this.listeners) l({ scope, op, target, input });
    const key = `${scope}\u0000${op}\u0000${target}`;
    let row = this.counts.get(key);
    if (!row) this.counts.set(key, (row = { scope, op, target, counts: zero() }));
    const c = row.counts;
    c.requests++;
    if (!ok) c.errors++;
    const reported = reportedUnits(output.ConsumedCapacity, READ_OPS.has(op));
    c.reportedRead += reported.read;
    c.reportedWrite += reported.write;
    const error = String(output.__type ?? "")
      .split("#")
      .pop();
    if (ok) this.account(op, input, output, c);
    else if (error === "ConditionalCheckFailedException" && ["PutItem", "UpdateItem", "DeleteItem"].includes(op)) {
      // A failed conditional write still costs the item as it is (at least one unit).
      const key = input.Key ? keyOf(input.Key as WireItem) : keyOf(input.Item as WireItem);
      c.computedWrite += writeUnits(this.sizeOf(String(input.TableName), key, c) ?? 0);
    }
  }

  private account(op: string, input: Record<string, unknown>, out: Record<string, unknown>, c: MeterCounts): void {
    const table = String(input.TableName ?? "");
    switch (op) {
      case "GetItem": {
        const item = out.Item as WireItem | undefined;
        c.items += item ? 1 : 0;
        const size = item ? this.readImage(table, item, projected(input), c) : 0;
        c.computedRead += readUnits(size, input.ConsistentRead === true);
        return;
      }
      case "Query":
      case "Scan": {
        const items = (out.Items as WireItem[] | undefined) ?? [];
        c.items += items.length;
        let bytes = 0;
        for (const item of items) bytes += this.readImage(table, item, projected(input), c);
        const dropped = Number(out.ScannedCount ?? items.length) - items.length;
        if (dropped > 0) {
          bytes += dropped * (items.length ? bytes / items.length : 0);
          c.estimated += dropped;
        }
        c.computedRead += readUnits(bytes, input.ConsistentRead === true && input.IndexName === undefined);
        return;
      }
      case "BatchGetItem": {
        const asked = (input.RequestItems ?? {}) as Record<string, { ConsistentRead?: boolean; ProjectionExpression?: string }>;
        for (const [t, items] of Object.entries((out.Responses ?? {}) as Record<string, WireItem[]>)) {
          for (const item of items) {
            c.items++;
            c.computedRead += readUnits(this.readImage(t, item, !!asked[t]?.ProjectionExpression, c), asked[t]?.ConsistentRead === true);
          }
        }
        return;
      }
      case "TransactGetItems": {
        const gets = (input.TransactItems ?? []) as { Get: { TableName: string; ProjectionExpression?: string } }[];
        ((out.Responses ?? []) as { Item?: WireItem }[]).forEach((r, i) => {
          if (!r.Item) return;
          c.items++;
          c.computedRead += 2 * readUnits(this.readImage(gets[i]!.Get.TableName, r.Item, !!gets[i]!.Get.ProjectionExpression, c), true);
        });
        return;
      }
      case "PutItem":
        return this.write(table, { put: input.Item as WireItem }, 1, c);
      case "UpdateItem": {
        const returned = out.Attributes as WireItem | undefined;
        const rv = String(input.ReturnValues ?? "NONE");
        return this.write(
          table,
          { update: input, after: rv === "ALL_NEW" ? returned : undefined, before: rv === "ALL_OLD" ? returned : undefined },
          1,
          c,
        );
      }
      case "DeleteItem":
        return this.write(
          table,
          {
            delete: input.Key as WireItem,
            before: input.ReturnValues === "ALL_OLD" ? (out.Attributes as WireItem | undefined) : undefined,
          },
          1,
          c,
        );
      case "BatchWriteItem": {
        const unprocessed = new Set(
          Object.entries((out.UnprocessedItems ?? {}) as Record<string, Record<string, { Item?: WireItem; Key?: WireItem }>[]>).flatMap(
            ([t, rs]) => rs.map((r) => imageKey(t, keyOf((r.PutRequest?.Item ?? r.DeleteRequest?.Key)!))),
          ),
        );
        for (const [t, rs] of Object.entries(
          (input.RequestItems ?? {}) as Record<string, Record<string, { Item?: WireItem; Key?: WireItem }>[]>,
        )) {
          for (const r of rs) {
            const item = r.PutRequest?.Item;
            const key = r.DeleteRequest?.Key;
            if (unprocessed.has(imageKey(t, keyOf((item ?? key)!)))) continue;
            this.write(t, item ? { put: item } : { delete: key! }, 1, c);
          }
        }
        return;
      }
      case "TransactWriteItems":
        for (const a of (input.TransactItems ?? []) as Record<string, Record<string, unknown>>[]) {
          if (a.Put) this.write(String(a.Put.TableName), { put: a.Put.Item as WireItem }, 2, c);
          else if (a.Update) this.write(String(a.Update.TableName), { update: a.Update }, 2, c);
          else if (a.Delete) this.write(String(a.Delete.TableName), { delete: a.Delete.Key as WireItem }, 2, c);
          else if (a.ConditionCheck)
            c.computedWrite +=
              2 * writeUnits(this.sizeOf(String(a.ConditionCheck.TableName), keyOf(a.ConditionCheck.Key as WireItem), c) ?? 0);
        }
        return;
    }
  }

  /** One item write, `factor` 1 or 2 (transactional): table units of the larger image, index units, and the image kept. */
  private write(
    table: string,
    w: { put?: WireItem; update?: Record<string, unknown>; delete?: WireItem; before?: WireItem; after?: WireItem },
    factor: number,
    c: MeterCounts,
  ): void {
    const key = keyOf((w.put ?? (w.update?.Key as WireItem | undefined) ?? w.delete)!);
    const id = imageKey(table, key);
    const known = this.images.get(id);
    let before: WireItem | undefined = w.before ?? (known === undefined ? undefined : (JSON.parse(known) as WireItem));
    let after: WireItem | undefined;
    if (w.put) after = w.put;
    else if (w.update) {
      if (!before && !w.before && !w.after) c.estimated++;
      after = w.after ?? applyUpdate(before ?? key, w.update);
      if (!after) {
        c.estimated++;
        after = before ?? key;
      }
    } else if (!before) {
      c.estimated++;
      before = key;
    }
    const tableBytes = Math.max(before ? itemSize(before) : 0, after ? itemSize(after) : 0);
    const index = indexWrites(before, after);
    c.computedWrite += factor * writeUnits(tableBytes) + index;
    c.computedIndexWrite += index;
    if (after) this.images.set(id, JSON.stringify(after));
    else this.images.delete(id);
  }

  /** The size of an item read; a whole item read is kept as that item's image, a projection sized from the image when known. */
  private readImage(table: string, item: WireItem, isProjection: boolean, c: MeterCounts): number {
    if (!isProjection) {
      if (item[KEY.pk] && item[KEY.sk]) this.images.set(imageKey(table, keyOf(item)), JSON.stringify(item));
      return itemSize(item);
    }
    const known = item[KEY.pk] && item[KEY.sk] ? this.images.get(imageKey(table, keyOf(item))) : undefined;
    if (known === undefined) {
      c.estimated++;
      return itemSize(item);
    }
    return itemSize(JSON.parse(known) as WireItem);
  }

  /** The size of the item at `key` as last seen (undefined, and counted as estimated, when never seen). */
  private sizeOf(table: string, key: WireItem, c: MeterCounts): number | undefined {
    const known = this.images.get(imageKey(table, key));
    if (known === undefined) {
      c.estimated++;
      return undefined;
    }
    return itemSize(JSON.parse(known) as WireItem);
  }
}

type Args = { input: Record<string, unknown>; request?: unknown };
type Next = (args: Args) => Promise<{ output: unknown; response: unknown }>;
type Context = { commandName?: string };

/** Adds the metering middleware to a client (a document client built on it shares it). */
export function addMetering(client: DynamoDBClient, meter: DynamoMeter): void {
  // Outermost: asks for the consumed capacity (a plain string member, marshalled or not) and takes
  // it out of the answer again, so the caller sees what it would have seen unmetered.
  // The calls this meter is counting (their handler contexts), decided once per call at the outermost step.
  const metered = new WeakSet<object>();
  // (Both middlewares read the wire format, whatever the command: the SDK's per-step generic types do not apply, hence the casts.)
  client.middlewareStack.add(
    ((next: Next, context: Context) => async (args: Args) => {
      if (!meter.active) return next(args);
      metered.add(context);
      const input = args.input as Record<string, unknown>;
      if (!CAPACITY_OPS.has(String(context.commandName)) || input.ReturnConsumedCapacity !== undefined) return next(args);
      const result = await next({ ...args, input: { ...input, ReturnConsumedCapacity: "TOTAL" } });
      delete (result.output as Record<string, unknown>).ConsumedCapacity;
      return result;
    }) as never,
    { step: "initialize", priority: "high", name: "ottavaMeteringAsk", override: true },
  );
  // Innermost, right after the HTTP exchange: the request body and DynamoDB's answer in the wire
  // format (the answer is read here and handed on as bytes, which the deserializer accepts).
  client.middlewareStack.addRelativeTo(
    ((next: Next, context: Context) => async (args: Args) => {
      if (!metered.has(context)) return next(args);
      const request = args.request as { headers: Record<string, string>; body?: unknown };
      const result = await next(args);
      const response = result.response as { statusCode: number; body?: unknown };
      const bytes = await readBody(response.body);
      response.body = bytes;
      const target = request.headers["x-amz-target"] ?? request.headers["X-Amz-Target"] ?? "";
      const op = target.slice(target.indexOf(".") + 1);
      try {
        // (The SDK's JSON body is a Uint8Array that warns when used as a string: decoded as bytes.)
        const body = request.body instanceof Uint8Array ? utf8Decoder.decode(request.body) : String(request.body ?? "{}");
        const input = JSON.parse(body) as Record<string, unknown>;
        const output = bytes.length ? (JSON.parse(utf8Decoder.decode(bytes)) as Record<string, unknown>) : {};
        meter.observe(op, input, response.statusCode < 300, output);
      } catch {
        // Metering never fails a request: what it could not read (an answer that is not JSON) is counted apart.
        meter.unreadable++;
      }
      return result;
    }) as never,
    { relation: "after", toMiddleware: "deserializerMiddleware", name: "ottavaMeteringObserve", override: true },
  );
}

const utf8Decoder = new TextDecoder();

async function readBody(body: unknown): Promise<Uint8Array> {
  if (body === undefined || body === null) return new Uint8Array();
  if (body instanceof Uint8Array) return body;
  if (typeof body === "string") return Buffer.from(body);
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Buffer | string>) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

// ---- keys and targets -----------------------------------------------------------------------

const keyOf = (item: WireItem): WireItem => ({ [KEY.pk]: item[KEY.pk]!, [KEY.sk]: item[KEY.sk]! });
const imageKey = (table: string, key: WireItem) => `${table}\u0000${JSON.stringify(key[KEY.pk])}\u0000${JSON.stringify(key[KEY.sk])}`;
const projected = (input: Record<string, unknown>) =>
  input.ProjectionExpression !== undefined || input.AttributesToGet !== undefined || input.Select === "COUNT";

/** `LB#…` → `LB#`; a sort key `POOL#…` → `POOL#`; a key without `#` as it is. */
const family = (v: unknown) => {
  const s = String((v as { S?: string } | undefined)?.S ?? "");
  const i = s.indexOf("#");
  return i < 0 ? s : s.slice(0, i + 1);
};

function targetOf(op: string, input: Record<string, unknown>): string {
  if (op === "GetItem" || op === "PutItem" || op === "UpdateItem" || op === "DeleteItem") {
    const key = (input.Key ?? input.Item ?? {}) as WireItem;
    return `${family(key[KEY.pk])}/${family(key[KEY.sk])}`;
  }
  if (op === "Query") {
    const cond = String(input.KeyConditionExpression ?? "");
    const m = /^\s*\(?\s*(#?\w+)\s*=\s*(:\w+)/.exec(cond);
    const partition = m ? family((input.ExpressionAttributeValues as WireItem | undefined)?.[m[2]!]) : "";
    return `${input.IndexName ? `${input.IndexName} ` : ""}${partition} [${cond}]${input.ExclusiveStartKey ? " (next page)" : ""}`;
  }
  return "";
}
