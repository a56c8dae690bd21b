// What a list reads (see ../README.md "Lists"): the index partitions of its scope in storage order,
// the name index for `?name=`, and, for a non-default order, every item of the scope projected to what
// the order and the filters need, then the page's whole items by key.
import { BatchGetCommand, QueryCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { DELETED, type Selection, type SortDir } from "@ottava/core";
import { keyFits, namePartition, toRecord, type StoredKind } from "./items";
import { INDEXES, SHARDS } from "./table";

type Item = Record<string, unknown>;

/** Items a storage-order Query asks for at a time, at most (the list stops reading once its page is full). */
const PAGE = 100;
/**
 * The first Query of each of k partitions for a page of `limit`: its share, limit / k, and two standard
 * deviations more (a page's items fall on the partitions about binomially, sd ≈ √(limit / k)), so that
 * most pages need no second round of Queries: for a page of 100 over 8 shards, 21 each (168 items, a second
 * round for about 5 % of pages; a share and 2 more, 15 each, needed one for about 80 %). One partition
 * is asked for the page and one item more.
 */
function firstShare(limit: number, k: number): number {
  if (k <= 1) return limit + 1;
  const share = limit / k;
  return Math.ceil(share) + Math.ceil(2 * Math.sqrt(share));
}

/** Keys a BatchGetItem takes at most. */
const BATCH = 100;

/** One index partition to read, with the filter (a project scope) its items must pass. */
export interface Partition {
  index: keyof typeof INDEXES;
  pk: string;
  /** Only items of this project (a server-side filter: the partition holds every project's). */
  project?: string;
  /** Only sort keys in this range (both ends included): a segment of the partition. */
  between?: [string, string];
}

/** Queries a projected read of a whole scope runs at once (its partitions split into segments to reach it). */
const PARALLEL_READS = 8;

/**
 * The partitions that hold a list's items: one project's byProject partition, or for every project
 * the SHARDS byShard partitions; with `names`, the byName partition of each name instead (a project's
 * list filtered on project_id). A partition no key can name (`?project_id=` or `?name=` of thousands
 * of characters) holds nothing: it is left out, so that no path Queries it.
 */
export function partitions(k: StoredKind, project: string | undefined, names: string[] | undefined): Partition[] {
  return scope(k, project, names).filter((p) => keyFits(p.pk));
}

/** Every partition of a list's scope, including those no key can name. */
function scope(k: StoredKind, project: string | undefined, names: string[] | undefined): Partition[] {
  if (names)
    return names.map((n) => ({ index: "byName" as const, pk: namePartition(k.kind, n), ...(project !== undefined ? { project } : {}) }));
  if (project !== undefined) return [{ index: "byProject", pk: `${k.kind}#${project}` }];
  return Array.from({ length: SHARDS }, (_, s) => ({ index: "byShard" as const, pk: `${k.kind}#${s}` }));
}

/**
 * One partition's items in storage order (its sort key, `<created_at>#<id>` in every list index),
 * after `after` if given; projected to `projection` (attribute names) if given, else whole.
 */
async function* queryPartition(
  doc: DynamoDBDocumentClient,
  table: string,
  p: Partition,
  order: SortDir,
  after: string | undefined,
  projection?: string[],
  firstPage = PAGE,
): AsyncGenerator<Item> {
  const keys = INDEXES[p.index];
  const names: Record<string, string> = { "#pk": keys.pk };
  const values: Record<string, unknown> = { ":pk": p.pk };
  let condition = "#pk = :pk";
  if (p.between) {
    names["#sk"] = keys.sk;
    values[":lo"] = p.between[0];
    values[":hi"] = p.between[1];
    condition += " AND #sk BETWEEN :lo AND :hi";
  } else if (after !== undefined) {
    names["#sk"] = keys.sk;
    values[":after"] = after;
    condition += ` AND #sk ${order === "asc" ? ">" : "<"} :after`;
  }
  let filter: string | undefined;
  if (p.project !== undefined) {
    names["#project"] = "project_id";
    values[":project"] = p.project;
    filter = "#project = :project";
  }
  let projectionExpression: string | undefined;
  if (projection) {
    projectionExpression = projection.map((a, i) => ((names[`#a${i}`] = a), `#a${i}`)).join(", ");
  }
  let start: Record<string, unknown> | undefined;
  let size = firstPage;
  do {
    const out = await doc.send(
      new QueryCommand({
        TableName: table,
        IndexName: p.index,
        KeyConditionExpression: condition,
        ...(filter ? { FilterExpression: filter } : {}),
        ...(projectionExpression ? { ProjectionExpression: projectionExpression } : {}),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ScanIndexForward: order === "asc",
        // A storage-order list stops once its page is full: read it a page at a time. A projected
        // read takes the whole partition: let DynamoDB fill each answer (up to 1 MB).
        ...(projection ? {} : { Limit: size }),
        ExclusiveStartKey: start,
      }),
    );
    size = Math.min(PAGE, size + firstPage);
    for (const item of out.Items ?? []) yield item;
    start = out.LastEvaluatedKey;
  } while (start);
}

/**
 * The items of `parts` in storage order, merged (each partition is read as far as the caller reads).
 * For a page of `limit`, each of k partitions is first asked for its share and a margin (firstShare),
 * then for that many more each time the merge runs out of it (so a filter that passes few items soon
 * reads in large Queries): a page of 100 over 8 shards reads about 170 items in one round, not 800.
 */
export function inStorageOrder(
  doc: DynamoDBDocumentClient,
  table: string,
  parts: Partition[],
  order: SortDir,
  after: string | undefined,
  limit?: number,
): AsyncGenerator<Item> {
  const first = limit === undefined ? PAGE : Math.min(PAGE, firstShare(limit, parts.length));
  const streams = parts.map((p) => queryPartition(doc, table, p, order, after, undefined, first));
  return merge(streams, (i, s) => String(i[INDEXES[parts[s]!.index].sk]), order);
}

/**
 * A Selection's page (see Selection in @ottava/core): every item of `parts` with only the attributes
 * it reads (and the keys), the page chosen from them, then the page's whole items by key, in page order.
 */
export async function* selectedPage(
  doc: DynamoDBDocumentClient,
  table: string,
  k: StoredKind,
  parts: Partition[],
  select: Selection,
): AsyncGenerator<Item> {
  const projection = [...new Set(["pk", "sk", "id", "created_at", ...select.attributes])];
  const segmented = (await Promise.all(parts.map((p) => segments(doc, table, p, Math.ceil(PARALLEL_READS / parts.length))))).flat();
  const read = await Promise.all(
    segmented.map(async (p) => {
      const items: Item[] = [];
      for await (const item of queryPartition(doc, table, p, "asc", undefined, projection)) items.push(item);
      return items;
    }),
  );
  const keys = new Map<string, { pk: unknown; sk: unknown }>();
  const partial: Item[] = [];
  for (const item of read.flat()) {
    if (keys.has(String(item.id))) continue;
    keys.set(String(item.id), { pk: item.pk, sk: item.sk });
    partial.push(toRecord<Item>(item));
  }
  const ids = select.page(partial);
  const found = new Map<string, Item>();
  for (let i = 0; i < ids.length; i += BATCH) {
    let request: Record<string, { Keys: Record<string, unknown>[]; ConsistentRead: boolean }> | undefined = {
      [table]: { Keys: ids.slice(i, i + BATCH).map((id) => keys.get(id)!), ConsistentRead: true },
    };
    for (let attempt = 0; request && Object.keys(request).length > 0; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt) * Math.random()));
      const out = await doc.send(new BatchGetCommand({ RequestItems: request }));
      for (const item of out.Responses?.[table] ?? []) found.set(String(item.id), item);
      request = out.UnprocessedKeys as typeof request;
    }
  }
  for (const id of ids) {
    const item = found.get(id);
    // An item deleted since the index was read has left the list.
    if (item && item[k.statusField] !== DELETED) yield toRecord<Item>(item);
  }
}

/**
 * A partition split into `n` segments of its sort keys (`<created_at>#<id>`) by equal spans of time
 * between its first and last key, so that a whole read runs as `n` Queries at once rather than one
 * after another, 1 MB at a time. A boundary is a bare instant, which no key equals (every key goes on
 * with `#<id>`), so each key falls in exactly one segment. Objects created after the two reads of the
 * ends may be missed, as the index itself may miss them (it is eventually consistent).
 */
async function segments(doc: DynamoDBDocumentClient, table: string, p: Partition, n: number): Promise<Partition[]> {
  if (n <= 1) return [p];
  const sk = INDEXES[p.index].sk;
  const end = async (order: SortDir) => {
    const out = await doc.send(
      new QueryCommand({
        TableName: table,
        IndexName: p.index,
        KeyConditionExpression: "#pk = :pk",
        ExpressionAttributeNames: { "#pk": INDEXES[p.index].pk, "#sk": sk },
        ExpressionAttributeValues: { ":pk": p.pk },
        ProjectionExpression: "#sk",
        ScanIndexForward: order === "asc",
        Limit: 1,
      }),
    );
    return out.Items?.[0]?.[sk] as string | undefined;
  };
  const [first, last] = await Promise.all([end("asc"), end("desc")]);
  if (first === undefined || last === undefined) return []; // an empty partition
  const from = Date.parse(first.split("#")[0]!);
  const to = Date.parse(last.split("#")[0]!);
  if (!(to > from)) return [{ ...p, between: [first, last] }];
  const cuts = Array.from({ length: n - 1 }, (_, i) => new Date(from + ((to - from) * (i + 1)) / n).toISOString());
  const bounds = [first, ...cuts, last];
  return bounds.slice(0, -1).map((lo, i) => ({ ...p, between: [lo, bounds[i + 1]!] as [string, string] }));
}

/** k-way merge of sorted streams. */
async function* merge(streams: AsyncGenerator<Item>[], key: (i: Item, stream: number) => string, order: SortDir): AsyncGenerator<Item> {
  const heads = await Promise.all(streams.map((s) => s.next()));
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const h = heads[i]!;
      if (h.done) continue;
      if (best < 0) {
        best = i;
        continue;
      }
      const a = key(h.value, i);
      const b = key(heads[best]!.value as Item, best);
      if (order === "asc" ? a < b : a > b) best = i;
    }
    if (best < 0) return;
    yield heads[best]!.value as Item;
    heads[best] = await streams[best]!.next();
  }
}
