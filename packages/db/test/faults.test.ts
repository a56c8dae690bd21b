// Injected DynamoDB faults (npm start's OTTAVA_DYNAMODB_FAULTS; support/faults.ts) against DynamoDB Local: below the SDK's retries,
// so what its retries absorb is invisible to the caller, and what exhausts them is the error DynamoDB
// would have given, marked as unavailability (classifyUnavailable in @ottava/edge, isUnavailable in
// @ottava/core).
import { ConditionalCheckFailedException, GetItemCommand, PutItemCommand } from "@aws-sdk/client-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import { isUnavailable, unavailableReason } from "@ottava/core";
import { createClients } from "@ottava/db";
import { freshTable } from "./support/dynamo";
import { DynamoFaults, addFaults, parseDynamoFaults, withFaultLabel } from "./support/faults";

let endpoint: string;
let table: string;
const KEY = { pk: { S: "FAULTS#1" }, sk: { S: "ITEM" } };

beforeAll(async () => {
  const { config } = await freshTable();
  endpoint = config.dynamodbEndpoint!;
  table = config.tableName;
  await createClients(endpoint).client.send(new PutItemCommand({ TableName: table, Item: { ...KEY, v: { S: "x" } } }));
});

/** A client whose requests meet `faults`. */
const faulty = (faults: DynamoFaults) => createClients(endpoint, (c) => addFaults(c, faults)).client;
const get = (faults: DynamoFaults) => faulty(faults).send(new GetItemCommand({ TableName: table, Key: KEY, ConsistentRead: true }));

describe("the setting", () => {
  it("parses operations, task labels, faults, counts, ranges and rates", () => {
    expect(parseDynamoFaults(" GetItem:throttle:2, *@finishChange:internal, TransactWriteItems:drop:2-5 ,Query:throttling:0.25")).toEqual([
      { op: "GetItem", label: undefined, fault: "throttle", from: 1, to: 2, rate: undefined },
      { op: "*", label: "finishChange", fault: "internal", from: 1, to: Infinity, rate: undefined },
      { op: "TransactWriteItems", label: undefined, fault: "drop", from: 2, to: 5, rate: undefined },
      { op: "Query", label: undefined, fault: "throttling", from: 1, to: Infinity, rate: 0.25 },
    ]);
    expect(parseDynamoFaults("")).toEqual([]);
  });

  it("refuses what it does not understand, naming the rule", () => {
    expect(() => parseDynamoFaults("GetItems:throttle")).toThrow("OTTAVA_DYNAMODB_FAULTS: 'GetItems:throttle' names no DynamoDB operation");
    expect(() => parseDynamoFaults("GetItem:slow")).toThrow("'GetItem:slow' names no fault (one of throttle, throttling, internal, drop)");
    expect(() => parseDynamoFaults("GetItem:drop:0")).toThrow("counts no request");
    expect(() => parseDynamoFaults("GetItem:drop:5-2")).toThrow("counts no request");
    expect(() => parseDynamoFaults("GetItem:drop:1.5")).toThrow("neither a count N, a range from-to nor a rate 0<r<1");
    expect(() => parseDynamoFaults("GetItem")).toThrow("is not <Operation|*>[@<task>]:<fault>");
    // Nor are faults made from a bad setting (npm start does not start: packages/local/test/injected.test.ts).
    expect(() => new DynamoFaults("GetItem:nope")).toThrow("names no fault");
  });

  it("counts per rule: the first N, the from-th to the to-th, only under its label, a share at random", () => {
    const f = new DynamoFaults("GetItem:internal:2, Query:drop:2-3, PutItem@finishChange:throttle");
    expect([1, 2, 3].map(() => f.decide("GetItem", undefined))).toEqual(["internal", "internal", undefined]);
    expect([1, 2, 3, 4].map(() => f.decide("Query", "planAmphorae"))).toEqual([undefined, "drop", "drop", undefined]);
    expect([f.decide("PutItem", undefined), f.decide("PutItem", "failChange"), f.decide("PutItem", "finishChange")]).toEqual([
      undefined,
      undefined,
      "throttle",
    ]);
    expect(f.attempts("GetItem")).toBe(3);
    expect(f.attempts("PutItem", "finishChange")).toBe(1);
    expect(f.attempts()).toBe(10);
    expect(f.injected.map((i) => i.fault)).toEqual(["internal", "internal", "drop", "drop", "throttle"]);
    const r = new DynamoFaults("*:internal:0.3");
    const n = Array.from({ length: 2000 }, () => r.decide("GetItem", undefined)).filter(Boolean).length;
    expect(n).toBeGreaterThan(450);
    expect(n).toBeLessThan(750);
  });

  it("is off unless added: the SDK's own request handler, untouched", () => {
    expect(createClients(endpoint).client.config.requestHandler.constructor.name).toBe("NodeHttpHandler");
    expect(faulty(new DynamoFaults("GetItem:drop:1")).config.requestHandler.constructor.name).not.toBe("NodeHttpHandler");
  });
});

describe("below the SDK's retries", () => {
  it("the first 2 GetItem requests throttled: the SDK retries them, the caller sees the item (3 attempts)", async () => {
    const faults = new DynamoFaults("GetItem:throttle:2");
    const out = await get(faults);
    expect(out.Item?.v).toEqual({ S: "x" });
    expect(out.$metadata.attempts).toBe(3);
    expect(faults.attempts("GetItem")).toBe(3);
    expect(faults.injected).toHaveLength(2);
  });

  it("the SDK absorbs each kind of fault: 2 faults then DynamoDB's answer", async () => {
    await Promise.all(
      (["throttling", "internal", "drop"] as const).map(async (kind) => {
        const faults = new DynamoFaults(`GetItem:${kind}:2`);
        const out = await get(faults);
        expect(out.Item?.v, kind).toEqual({ S: "x" });
        expect(faults.attempts("GetItem"), kind).toBe(3);
      }),
    );
  });

  it("faults on every attempt exhaust the retries (4 attempts): DynamoDB's error, classified as unavailability; the next call goes through", async () => {
    const expected = {
      throttle: "ProvisionedThroughputExceededException",
      throttling: "ThrottlingException",
      internal: "InternalServerError",
      drop: "ECONNRESET",
    };
    await Promise.all(
      (Object.keys(expected) as (keyof typeof expected)[]).map(async (kind) => {
        const faults = new DynamoFaults(`GetItem:${kind}:4`);
        const client = faulty(faults);
        const err = (await client.send(new GetItemCommand({ TableName: table, Key: KEY })).catch((e: unknown) => e)) as Error & {
          $metadata?: { attempts?: number; httpStatusCode?: number };
        };
        expect(err, kind).toBeInstanceOf(Error);
        expect(unavailableReason(err), kind).toBe(expected[kind]);
        expect(isUnavailable(err), kind).toBe(true);
        expect(err.$metadata?.attempts, kind).toBe(4);
        if (kind === "internal") expect(err.$metadata?.httpStatusCode).toBe(500);
        if (kind === "throttle" || kind === "throttling") expect(err.$metadata?.httpStatusCode).toBe(400);
        expect(faults.attempts("GetItem"), kind).toBe(4);
        expect((await client.send(new GetItemCommand({ TableName: table, Key: KEY }))).Item?.v, kind).toEqual({ S: "x" });
      }),
    );
  });

  it("a refusal is not unavailability: a failed condition keeps its class, unmarked, after one attempt", async () => {
    const client = createClients(endpoint).client;
    const err = (await client
      .send(new PutItemCommand({ TableName: table, Item: { ...KEY, v: { S: "y" } }, ConditionExpression: "attribute_not_exists(pk)" }))
      .catch((e: unknown) => e)) as Error & { $metadata?: { attempts?: number } };
    expect(err).toBeInstanceOf(ConditionalCheckFailedException);
    expect(isUnavailable(err)).toBe(false);
    expect(err.$metadata?.attempts).toBe(1);
  });

  it("a rule with @label faults only the requests made under that label", async () => {
    const faults = new DynamoFaults("GetItem@finishChange:internal:4");
    const client = faulty(faults);
    const send = () => client.send(new GetItemCommand({ TableName: table, Key: KEY }));
    expect((await send()).Item).toBeDefined();
    expect((await withFaultLabel("updateAmphoraeConfig", send)).Item).toBeDefined();
    await expect(withFaultLabel("finishChange", send)).rejects.toMatchObject({ name: "InternalServerError" });
    expect(faults.injected.map((i) => i.label)).toEqual(["finishChange", "finishChange", "finishChange", "finishChange"]);
  });
});
