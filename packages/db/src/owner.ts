// Low-level access shared by the adapters that keep items in a load balancer's partition (the tree
// and its lock, change sets, the health-manager configuration): consistent reads by key and of the
// partition, and the condition that a writer still holds the LB's lock.
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { GetCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { LockLost } from "@ottava/core";
import { queryAll } from "./query";
import { LB_SK, keyFits, treePk } from "./items";
import { TRAIL_BOUND } from "./flow-trail";

type Item = Record<string, unknown>;

/** An item by key, consistently; none for a key no item can have (keyFits). */
export async function getItem(doc: DynamoDBDocumentClient, table: string, pk: string, sk: string): Promise<Item | undefined> {
  if (!keyFits(pk, sk)) return undefined;
  const out = await doc.send(new GetCommand({ TableName: table, Key: { pk, sk }, ConsistentRead: true }));
  return out.Item;
}

/** The whole tree of a load balancer (or the part whose sort key starts with `prefix`): one Query. */
export async function partition(doc: DynamoDBDocumentClient, table: string, lbId: string, prefix?: string): Promise<Item[]> {
  return queryAll(doc, {
    TableName: table,
    // The flow trail (sorted last) is no part of the tree: whole-partition reads stop before it.
    KeyConditionExpression: prefix ? "pk = :pk AND begins_with(sk, :p)" : "pk = :pk AND sk < :trail",
    ExpressionAttributeValues: prefix ? { ":pk": treePk(lbId), ":p": prefix } : { ":pk": treePk(lbId), ":trail": TRAIL_BOUND },
    ConsistentRead: true,
  });
}

/** The condition that the writer still holds the LB's lock. */
export function ownerCheck(table: string, lbId: string, owner: string) {
  return {
    ConditionCheck: {
      TableName: table,
      Key: { pk: treePk(lbId), sk: LB_SK },
      ConditionExpression: "attribute_exists(pk) AND lock_owner = :owner",
      ExpressionAttributeValues: { ":owner": owner },
    },
  };
}

export function lockLostOr(e: unknown, what: string): unknown {
  const name = (e as { name?: string })?.name;
  if (e instanceof ConditionalCheckFailedException || name === "TransactionCanceledException") {
    const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
    if (!reasons || reasons.some((r) => r?.Code === "ConditionalCheckFailed")) return new LockLost(what);
  }
  return e;
}
