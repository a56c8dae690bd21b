// One paged Query of an index partition, in storage order, resuming after a sort key.
import { QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput, type QueryCommandOutput } from "@aws-sdk/lib-dynamodb";
import type { SortDir } from "@ottava/core";
import { INDEXES } from "./table";

const PAGE = 100;

export async function* queryIndex(
  doc: DynamoDBDocumentClient,
  table: string,
  index: keyof typeof INDEXES,
  pk: string,
  order: SortDir,
  after: string | undefined,
): AsyncGenerator<Record<string, unknown>> {
  const keys = INDEXES[index];
  const input: QueryCommandInput = {
    TableName: table,
    IndexName: index,
    KeyConditionExpression: after === undefined ? "#pk = :pk" : `#pk = :pk AND #sk ${order === "asc" ? ">" : "<"} :after`,
    ExpressionAttributeNames: after === undefined ? { "#pk": keys.pk } : { "#pk": keys.pk, "#sk": keys.sk },
    ExpressionAttributeValues: after === undefined ? { ":pk": pk } : { ":pk": pk, ":after": after },
    ScanIndexForward: order === "asc",
    Limit: PAGE,
  };
  for await (const out of queryPages(doc, input)) yield* out.Items ?? [];
}

/** A Query's answers, page after page, until the last (or until the caller stops reading). */
export async function* queryPages(doc: DynamoDBDocumentClient, input: QueryCommandInput): AsyncGenerator<QueryCommandOutput> {
  let start: Record<string, unknown> | undefined;
  do {
    const out = await doc.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
    yield out;
    start = out.LastEvaluatedKey;
  } while (start);
}

/** Every item a Query answers, page after page (stopping once `max` items are in, when given). */
export async function queryAll(doc: DynamoDBDocumentClient, input: QueryCommandInput, max = Infinity): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const limit = Number.isFinite(max) ? { Limit: max - items.length } : {};
    const out = await doc.send(new QueryCommand({ ...input, ...limit, ExclusiveStartKey: start }));
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start && items.length < max);
  return items;
}
