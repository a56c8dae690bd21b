// The one DynamoDB table. Key names, indexes and the TTL attribute come from packages/db/src/table.ts,
// the same definition the local runtime creates its table from, so the two cannot drift apart.
import { INDEXES, KEY_ATTRIBUTES, TTL_ATTRIBUTE } from "@ottava/db/table";

export function createTable() {
  return new sst.aws.Dynamo("Table", {
    // Only key attributes are declared; every one is a string.
    fields: Object.fromEntries(KEY_ATTRIBUTES.map((name) => [name, "string" as const])),
    primaryIndex: { hashKey: "pk", rangeKey: "sk" },
    globalIndexes: Object.fromEntries(
      Object.entries(INDEXES).map(([name, k]) => [name, { hashKey: k.pk, rangeKey: k.sk, projection: "all" as const }]),
    ),
    ttl: TTL_ATTRIBUTE,
    transform: {
      table: (args) => {
        // The table is the only state Ottava has: keep 35 days of restore points. SST 4.17 turns this on
        // by default; saying it here keeps it on if a later SST changes its default.
        args.pointInTimeRecovery = { enabled: true };
        // On production stages (those sst.config.ts protects) DynamoDB refuses to delete the table
        // until this is turned off by hand, whatever a deploy or `sst remove` asks.
        args.deletionProtectionEnabled = $app.protect;
      },
    },
  });
}

export type Table = ReturnType<typeof createTable>;

/**
 * The DynamoDB actions Ottava's code calls on the table (packages/db's commands: items read, written,
 * deleted, queried, in batches and transactions, and a transaction's condition checks), in place of the
 * dynamodb:* that SST's `link` grants. Every workload that reaches the table calls all of them (the stores
 * are shared); test/infra.test.ts derives each workload's set from the commands in its bundle and checks
 * it equals this. The table's creation and settings (packages/db/src/table.ts ensureTable) are the
 * deploy's, never a function's.
 */
export const TABLE_ACTIONS = [
  "dynamodb:BatchGetItem",
  "dynamodb:BatchWriteItem",
  "dynamodb:ConditionCheckItem",
  "dynamodb:DeleteItem",
  "dynamodb:GetItem",
  "dynamodb:PutItem",
  "dynamodb:Query",
  "dynamodb:UpdateItem",
];

/** TABLE_ACTIONS on the table and its indexes (the queries of packages/db/src/table.ts INDEXES). */
export const tablePermissions = (table: Table) => [{ actions: TABLE_ACTIONS, resources: [table.arn, $interpolate`${table.arn}/index/*`] }];
