// The DynamoDB adapter of stuck-state repair's port: load balancers in the sparse pending index.
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import type { RepairStore } from "@ottava/core";
import { LOADBALANCER } from "./items";
import { queryIndex } from "./query";
import { INDEXES, SHARDS } from "./table";

export class DynamoRepairStore implements RepairStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async pendingLoadBalancerIds(): Promise<string[]> {
    const prefix = `${LOADBALANCER.kind}#`;
    const ids: string[] = [];
    for (let s = 0; s < SHARDS; s++) {
      for await (const item of queryIndex(this.doc, this.table, "pending", `PENDING#${s}`, "asc", undefined)) {
        const sk = String(item[INDEXES.pending.sk]);
        if (sk.startsWith(prefix)) ids.push(sk.slice(prefix.length));
      }
    }
    return ids;
  }
}
