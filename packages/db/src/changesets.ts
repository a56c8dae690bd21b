// The DynamoDB adapter of the ChangeSetStore port: a flow's data too big for its input (a cross-pool
// member update's change set), numbered JSON chunks in the LB's partition, out of every index.
import { DeleteCommand, TransactWriteCommand } from "@aws-sdk/lib-dynamodb";
import type { ChangeSetStore } from "@ottava/core";
import { DynamoAdapter, retryConflicts } from "./client";
import { treePk } from "./items";
import { getItem, lockLostOr, ownerCheck, partition } from "./owner";
import type { StoreOptions } from "./store";

const changeSetSk = (owner: string, n?: number) => `CHANGESET#${owner}#${n === undefined ? "" : String(n).padStart(5, "0")}`;

export class DynamoChangeSets extends DynamoAdapter<StoreOptions> implements ChangeSetStore {
  async putChangeSetChunks(lbId: string, owner: string, chunks: unknown[]): Promise<void> {
    // A week at least: longer than any execution lives; no index attributes, so in no index.
    const expires = Math.floor(this.now().getTime() / 1000) + Math.max(this.opts.expiryAge, 7 * 24 * 3600);
    for (let n = 0; n < chunks.length; n++) {
      const item = { pk: treePk(lbId), sk: changeSetSk(owner, n), kind: "changeset", data: JSON.stringify(chunks[n]), expires_at: expires };
      try {
        await retryConflicts(() =>
          this.doc.send(
            new TransactWriteCommand({
              TransactItems: [ownerCheck(this.table, lbId, owner), { Put: { TableName: this.table, Item: item } }],
            }),
          ),
        );
      } catch (e) {
        throw lockLostOr(e, `change set of load balancer ${lbId}`);
      }
    }
  }

  async getChangeSetChunk(lbId: string, owner: string, n: number): Promise<unknown | undefined> {
    const item = await getItem(this.doc, this.table, treePk(lbId), changeSetSk(owner, n));
    return item ? JSON.parse(String(item.data)) : undefined;
  }

  async deleteChangeSet(lbId: string, owner: string): Promise<void> {
    for (const item of await partition(this.doc, this.table, lbId, changeSetSk(owner))) {
      await this.doc.send(new DeleteCommand({ TableName: this.table, Key: { pk: item.pk, sk: item.sk } }));
    }
  }
}
