// DynamoDB metering (support/metering.ts, support/capacity.ts): item sizes and UpdateExpressions by AWS's rules, and the middleware against DynamoDB Local.
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { freshTable } from "./support/dynamo";
import { applyUpdate, itemSize } from "./support/capacity";
import { DynamoMeter, addMetering, type MeterCounts } from "./support/metering";

describe("item sizes (AWS's rules)", () => {
  it("counts names and values: strings in UTF-8, numbers by significant digits, null and Boolean 1 byte", () => {
    expect(itemSize({ pk: { S: "LB#1" } })).toBe(2 + 4);
    expect(itemSize({ name: { S: "é" } })).toBe(4 + 2);
    // 1 byte per two significant digits, plus 1; leading and trailing zeroes trimmed.
    expect(itemSize({ v: { N: "12345" } })).toBe(1 + 3 + 1);
    expect(itemSize({ v: { N: "1000" } })).toBe(1 + 1 + 1);
    expect(itemSize({ v: { N: "-0.0012" } })).toBe(1 + 1 + 1);
    expect(itemSize({ a: { BOOL: true }, b: { NULL: true } })).toBe(2 + 2);
    expect(itemSize({ b: { B: Buffer.from([1, 2, 3]).toString("base64") } })).toBe(1 + 3);
  });

  it("gives lists and maps 3 bytes, and each element 1 more", () => {
    expect(itemSize({ l: { L: [] } })).toBe(1 + 3);
    expect(itemSize({ l: { L: [{ S: "ab" }, { N: "1" }] } })).toBe(1 + 3 + (2 + 1) + (2 + 1));
    expect(itemSize({ m: { M: { k: { S: "ab" } } } })).toBe(1 + 3 + (1 + 2 + 1));
    expect(itemSize({ s: { SS: ["a", "bc"] } })).toBe(1 + 3);
  });
});

describe("UpdateExpression applied to an item image", () => {
  const item = { pk: { S: "LB#1" }, sk: { S: "LB" }, version: { N: "7" }, name: { S: "a" }, gone: { S: "x" }, tags: { SS: ["a"] } };

  it("sets, adds, removes, every operand read from the item as it was", () => {
    const after = applyUpdate(item, {
      UpdateExpression: "SET #n = :n, #v = #v + :one, #r = if_not_exists(#r, :zero) + :one REMOVE #g ADD #t :t, counter :one",
      ExpressionAttributeNames: { "#n": "name", "#v": "version", "#r": "rev", "#g": "gone", "#t": "tags" },
      ExpressionAttributeValues: { ":n": { S: "bb" }, ":one": { N: "1" }, ":zero": { N: "0" }, ":t": { SS: ["b"] } },
    });
    expect(after).toEqual({
      pk: item.pk,
      sk: item.sk,
      version: { N: "8" },
      name: { S: "bb" },
      rev: { N: "1" },
      tags: { SS: ["a", "b"] },
      counter: { N: "1" },
    });
  });

  it("knows nothing of nested paths", () => {
    expect(
      applyUpdate(item, {
        UpdateExpression: "SET #m.#k = :v",
        ExpressionAttributeNames: { "#m": "m", "#k": "k" },
        ExpressionAttributeValues: { ":v": { S: "v" } },
      }),
    ).toBeUndefined();
  });
});

describe("the metering middleware", () => {
  let table: string;
  let meter: DynamoMeter;
  let doc: DynamoDBDocumentClient;
  const counts = (op: string, scope = ""): MeterCounts | undefined =>
    meter
      .rows()
      .filter((r) => r.op === op && r.scope === scope)
      .reduce<MeterCounts | undefined>(
        (a, r) =>
          a
            ? (Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v + r.counts[k as keyof MeterCounts]])) as unknown as MeterCounts)
            : r.counts,
        undefined,
      );

  beforeAll(async () => {
    const { config } = await freshTable();
    table = config.tableName;
    meter = new DynamoMeter();
    const client = new DynamoDBClient({
      endpoint: config.dynamodbEndpoint,
      region: "us-east-1",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
    });
    addMetering(client, meter);
    doc = DynamoDBDocumentClient.from(client);
  });

  it("counts requests, items and units per operation, and leaves the answers as they were", async () => {
    meter.reset();
    const item = { pk: "LB#m1", sk: "LB", name: "x".repeat(1500), gsi1pk: "loadbalancer#p", gsi1sk: "t#m1", version: 1 };
    await doc.send(new PutCommand({ TableName: table, Item: item }));
    const got = await doc.send(new GetCommand({ TableName: table, Key: { pk: "LB#m1", sk: "LB" }, ConsistentRead: true }));
    expect(got.Item).toEqual(item);
    expect(got.ConsumedCapacity).toBeUndefined();
    await doc.send(new GetCommand({ TableName: table, Key: { pk: "LB#none", sk: "LB" } }));
    await doc.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk: "LB#m1", sk: "LB" },
        UpdateExpression: "SET #v = #v + :one",
        ExpressionAttributeNames: { "#v": "version" },
        ExpressionAttributeValues: { ":one": 1 },
      }),
    );
    await expect(
      doc.send(new PutCommand({ TableName: table, Item: item, ConditionExpression: "attribute_not_exists(pk)" })),
    ).rejects.toThrow();

    const size = itemSize({
      pk: { S: "LB#m1" },
      sk: { S: "LB" },
      name: { S: item.name },
      gsi1pk: { S: item.gsi1pk },
      gsi1sk: { S: item.gsi1sk },
      version: { N: "1" },
    });
    expect(size).toBeGreaterThan(1024);
    expect(counts("PutItem")).toMatchObject({ requests: 2, errors: 1, computedWrite: 2 + 2 + 2, computedIndexWrite: 2 });
    // A strongly consistent read of one item under 4 KB, and an eventually consistent one of nothing (at least half a unit).
    expect(counts("GetItem")).toMatchObject({ requests: 2, items: 1, computedRead: 1.5, reportedRead: expect.any(Number) });
    // The update's item as computed from the image the Put left: both 2 KB, and the index entry rewritten.
    expect(counts("UpdateItem")).toMatchObject({ requests: 1, computedWrite: 2 + 2, computedIndexWrite: 2, estimated: 0 });
    expect(counts("PutItem")!.reportedWrite).toBeGreaterThan(0);
  });

  it("counts a transaction's items twice, and a Query's items once, in the scope they were made in", async () => {
    meter.reset();
    await meter.scope("flow", () =>
      doc.send(
        new TransactWriteCommand({
          TransactItems: [
            { ConditionCheck: { TableName: table, Key: { pk: "LB#m1", sk: "LB" }, ConditionExpression: "attribute_exists(pk)" } },
            { Put: { TableName: table, Item: { pk: "LB#m1", sk: "POOL#1", name: "p" } } },
          ],
        }),
      ),
    );
    const out = await doc.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: "pk = :pk AND sk < :t",
        ExpressionAttributeValues: { ":pk": "LB#m1", ":t": "~" },
        ConsistentRead: true,
      }),
    );
    expect(out.Items).toHaveLength(2);
    // The checked item (2 KB) and the new one (under 1 KB), each twice.
    expect(counts("TransactWriteItems", "flow")).toMatchObject({ requests: 1, computedWrite: 2 * 2 + 2 * 1 });
    expect(counts("TransactWriteItems")).toBeUndefined();
    expect(counts("Query")).toMatchObject({ requests: 1, items: 2, computedRead: 1 });
    expect(meter.rows().find((r) => r.op === "Query")!.target).toBe("LB# [pk = :pk AND sk < :t]");
  });

  it("keeps a caller's own ReturnConsumedCapacity, and passes everything through while paused", async () => {
    meter.reset();
    const asked = await doc.send(new GetCommand({ TableName: table, Key: { pk: "LB#m1", sk: "LB" }, ReturnConsumedCapacity: "TOTAL" }));
    expect(asked.ConsumedCapacity).toBeDefined();
    meter.active = false;
    try {
      const seen: string[] = [];
      const stop = meter.listen((r) => seen.push(r.op));
      await doc.send(new GetCommand({ TableName: table, Key: { pk: "LB#m1", sk: "LB" } }));
      stop();
      expect(seen).toEqual([]);
    } finally {
      meter.active = true;
    }
    expect(counts("GetItem")).toMatchObject({ requests: 1 });
  });
});
