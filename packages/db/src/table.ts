// The one table and its indexes (see ../README.md for the design).
import {
  CreateTableCommand,
  DescribeTableCommand,
  DescribeTimeToLiveCommand,
  ResourceNotFoundException,
  UpdateContinuousBackupsCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
} from "@aws-sdk/client-dynamodb";

export const TTL_ATTRIBUTE = "expires_at";

/** Index name → its key attributes. Every index is sparse: an item is in it only while it has the keys. */
export const INDEXES = {
  /** One project's items of a kind, oldest first: lists per project. */
  byProject: { pk: "gsi1pk", sk: "gsi1sk" },
  /** Every project's items of a kind, spread over SHARDS partitions: admin lists without a hot partition. */
  byShard: { pk: "gsi2pk", sk: "gsi2sk" },
  /** Items in a PENDING_* status: what housekeeping checks against their executions. */
  pending: { pk: "gsi3pk", sk: "gsi3sk" },
  /** Amphorae that have sent a heartbeat, by last heartbeat, over SHARDS partitions: what the health check watches. */
  byHeartbeat: { pk: "gsi4pk", sk: "gsi4sk" },
  /**
   * What housekeeping reads, each over SHARDS partitions: DELETED load balancers and amphorae by
   * deletion time (purge), live amphorae by certificate expiry (rotation).
   */
  housekeeping: { pk: "gsi5pk", sk: "gsi5sk" },
  /** Live items of a kind by name (`<kind>#<name>`), oldest first: `?name=` lists read only the matches. */
  byName: { pk: "gsi6pk", sk: "gsi6sk" },
} as const;

/** Write sharding of the admin index. Listing every project reads all shards and merges them. */
export const SHARDS = 8;

export const KEY_ATTRIBUTES = ["pk", "sk", ...Object.values(INDEXES).flatMap((i) => [i.pk, i.sk])];

function indexDefinition(name: string, keys: { pk: string; sk: string }): GlobalSecondaryIndex {
  return {
    IndexName: name,
    KeySchema: [
      { AttributeName: keys.pk, KeyType: "HASH" },
      { AttributeName: keys.sk, KeyType: "RANGE" },
    ],
    Projection: { ProjectionType: "ALL" },
  };
}

/** Creates the table, adds missing indexes and enables TTL; safe to run at every start. */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  const attributeDefinitions = KEY_ATTRIBUTES.map((name) => ({ AttributeName: name, AttributeType: "S" as const }));
  let existing: string[] | undefined;
  try {
    const d = await client.send(new DescribeTableCommand({ TableName: tableName }));
    existing = (d.Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName!);
  } catch (e) {
    if (!(e instanceof ResourceNotFoundException)) throw e;
  }
  if (existing === undefined) {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: attributeDefinitions,
        KeySchema: [
          { AttributeName: "pk", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
        GlobalSecondaryIndexes: Object.entries(INDEXES).map(([name, keys]) => indexDefinition(name, keys)),
      }),
    );
  } else {
    // DynamoDB adds one index per UpdateTable call.
    for (const [name, keys] of Object.entries(INDEXES)) {
      if (existing.includes(name)) continue;
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          AttributeDefinitions: attributeDefinitions.filter((a) => a.AttributeName === keys.pk || a.AttributeName === keys.sk),
          GlobalSecondaryIndexUpdates: [{ Create: indexDefinition(name, keys) }],
        }),
      );
      await waitActive(client, tableName);
    }
  }
  await waitActive(client, tableName);
  const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
  if (ttl.TimeToLiveDescription?.TimeToLiveStatus !== "ENABLED") {
    await client.send(
      new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true } }),
    );
  }
  await client
    .send(
      new UpdateContinuousBackupsCommand({
        TableName: tableName,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      }),
    )
    .catch(() => undefined); // DynamoDB Local does not implement point-in-time recovery.
}

async function waitActive(client: DynamoDBClient, tableName: string): Promise<void> {
  // Index backfills can take minutes on AWS; DynamoDB Local is quicker.
  for (let i = 0; i < 3000; i++) {
    const d = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const busy = d.Table?.TableStatus !== "ACTIVE" || (d.Table?.GlobalSecondaryIndexes ?? []).some((g) => g.IndexStatus !== "ACTIVE");
    if (!busy) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`table ${tableName} did not become ACTIVE`);
}
