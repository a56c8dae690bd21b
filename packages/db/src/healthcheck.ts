// The DynamoDB adapter of the health check's port: stale amphorae from the byHeartbeat index (every
// shard), amphorae by status from the admin index, and a lease item so that one health check runs at
// a time wherever several receivers run.
import { PutCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { DELETED, type Amphora, type HealthCheckStore } from "@ottava/core";
import { conditionally } from "./client";
import { AMPHORA, toRecord } from "./items";
import { queryIndex } from "./query";
import { SHARDS } from "./table";

export class DynamoHealthCheckStore implements HealthCheckStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async staleAmphorae(before: string): Promise<Amphora[]> {
    const shards = Array.from({ length: SHARDS }, (_, s) =>
      this.all(queryIndex(this.doc, this.table, "byHeartbeat", `HB#${s}`, "desc", before)),
    );
    return (await Promise.all(shards)).flat().filter((a) => a.status !== DELETED);
  }

  async amphoraeInStatus(statuses: readonly string[]): Promise<Amphora[]> {
    const shards = Array.from({ length: SHARDS }, (_, s) =>
      this.all(queryIndex(this.doc, this.table, "byShard", `${AMPHORA.kind}#${s}`, "asc", undefined)),
    );
    return (await Promise.all(shards)).flat().filter((a) => statuses.includes(a.status));
  }

  lastHeartbeat(amphora: Amphora): string | undefined {
    const at = (amphora as Amphora & { last_heartbeat?: unknown }).last_heartbeat;
    return typeof at === "string" ? at : undefined;
  }

  async acquireLease(name: string, holder: string, now: number, until: number): Promise<boolean> {
    return conditionally(() =>
      this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: { pk: `LEASE#${name}`, sk: "LEASE", holder, until },
          ConditionExpression: "attribute_not_exists(pk) OR holder = :h OR #until < :now",
          ExpressionAttributeNames: { "#until": "until" },
          ExpressionAttributeValues: { ":h": holder, ":now": now },
        }),
      ),
    );
  }

  private async all(items: AsyncGenerator<Record<string, unknown>>): Promise<Amphora[]> {
    const out: Amphora[] = [];
    for await (const item of items) out.push(toRecord<Amphora>(item));
    return out;
  }
}
