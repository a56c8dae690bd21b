// The DynamoDB adapter of the FlowTrailStore port (an Ottava extension): one item per execution in
// the LB's partition, `~FLOW#<started_at>#<execution>` (newest last in key order, after every tree
// item), in no index; the newest `flowTrailMax` are kept; they expire with the LB.
import { DeleteCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { FlowEnd, FlowEnded, FlowStart, FlowTrailEntry, FlowTrailStore } from "@ottava/core";
import { DynamoAdapter, conditionally, retryConflicts, type AdapterOptions } from "./client";
import { queryAll } from "./query";
import { treePk, updateExpression } from "./items";
import { TTL_ATTRIBUTE } from "./table";

type Item = Record<string, unknown>;

/**
 * Sort-key prefix of a load balancer's flow-trail entries: `~FLOW#<started_at>#<execution>`. The `~`
 * sorts them after every other item of the partition, so reads of the tree stop before them
 * (`sk < "~"`) and never pay for the trail.
 */
export const FLOW_PREFIX = "~FLOW#";
/** Every item of an LB's tree sorts below this sort key; the flow trail above it. */
export const TRAIL_BOUND = "~";
/** Flow-trail entries kept per load balancer by default. */
export const FLOW_TRAIL_MAX = 100;

export interface FlowTrailOptions extends AdapterOptions {
  /** Seconds a DELETED record stays before TTL purges it: the trail of a deleted LB goes with it. */
  expiryAge: number;
  /** Flow-trail entries kept per load balancer (the newest); default FLOW_TRAIL_MAX. */
  flowTrailMax?: number;
}

/** A flow's start entry, RUNNING: written in the transaction that takes the LB's lock for it. */
export function trailItem(lbId: string, start: FlowStart): Item {
  return {
    pk: treePk(lbId),
    sk: `${FLOW_PREFIX}${start.startedAt}#${start.execution}`,
    kind: "flow",
    flow: start.flow,
    execution: start.execution,
    execution_arn: start.executionArn,
    started_at: start.startedAt,
    outcome: "RUNNING",
    subject: start.subject,
  };
}

export class DynamoFlowTrail extends DynamoAdapter<FlowTrailOptions> implements FlowTrailStore {
  /** A start outside a lock's transaction (locked flows write theirs with the lock: trailItem). */
  async recordFlowStart(lbId: string, start: FlowStart): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.table, Item: trailItem(lbId, start) }));
  }

  async recordFlowEnd(lbId: string, execution: string, end: FlowEnd): Promise<FlowEnded | undefined> {
    const keys = await this.flowKeys(lbId);
    // Pruned here, by the flow, off the request path: the newest entries stay, older ones go.
    for (const old of keys.slice(this.opts.flowTrailMax ?? FLOW_TRAIL_MAX)) {
      if (old.execution !== execution) await this.doc.send(new DeleteCommand({ TableName: this.table, Key: { pk: old.pk, sk: old.sk } }));
    }
    const key = keys.find((k) => k.execution === execution);
    let written: FlowEnded | undefined;
    if (key) {
      const update = updateExpression({
        outcome: end.outcome,
        ended_at: end.endedAt,
        failed_step: end.failedStep ?? null,
        error: end.error ?? null,
        reason: end.reason ?? null,
      });
      // Only a running entry ends (so a retried final task writes its end once); a FAILED end may
      // replace a SUCCEEDED one: the finish step wrote it, then failed to release the lock.
      const from = end.outcome === "FAILED" ? ["RUNNING", "SUCCEEDED"] : ["RUNNING"];
      update.ExpressionAttributeNames["#o"] = "outcome";
      update.ExpressionAttributeNames["#x"] = "execution";
      update.ExpressionAttributeValues[":x"] = execution;
      from.forEach((o, i) => (update.ExpressionAttributeValues[`:from${i}`] = o));
      await conditionally(async () => {
        const { Attributes: was } = await retryConflicts(() =>
          this.doc.send(
            new UpdateCommand({
              TableName: this.table,
              Key: { pk: key.pk, sk: key.sk },
              ...update,
              ConditionExpression: `attribute_exists(pk) AND #x = :x AND #o IN (${from.map((_, i) => `:from${i}`).join(", ")})`,
              ReturnValues: "ALL_OLD",
            }),
          ),
        );
        written = { flow: String(was?.flow ?? ""), startedAt: String(was?.started_at ?? "") };
      });
    }
    if (end.lbDeleted) {
      // The LB goes DELETED: its trail expires with it (as its other items, by TTL).
      const expires = Math.floor(this.now().getTime() / 1000) + this.opts.expiryAge;
      for (const k of await this.flowKeys(lbId)) {
        // A failed condition: pruned meanwhile.
        await conditionally(() =>
          this.doc.send(
            new UpdateCommand({
              TableName: this.table,
              Key: { pk: k.pk, sk: k.sk },
              UpdateExpression: "SET #t = :t",
              ConditionExpression: "attribute_exists(pk)",
              ExpressionAttributeNames: { "#t": TTL_ATTRIBUTE },
              ExpressionAttributeValues: { ":t": expires },
            }),
          ),
        );
      }
    }
    return written;
  }

  async flowTrail(lbId: string, limit?: number): Promise<FlowTrailEntry[]> {
    const max = Math.max(1, Math.min(limit ?? Infinity, this.opts.flowTrailMax ?? FLOW_TRAIL_MAX));
    const items = await queryAll(
      this.doc,
      {
        TableName: this.table,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :p)",
        ExpressionAttributeValues: { ":pk": treePk(lbId), ":p": FLOW_PREFIX },
        ScanIndexForward: false,
        ConsistentRead: true,
      },
      max,
    );
    return items.map(flowEntry);
  }

  /** The keys (and execution names) of an LB's trail entries, newest first. */
  private async flowKeys(lbId: string): Promise<{ pk: string; sk: string; execution: string }[]> {
    const items = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :p)",
      ExpressionAttributeValues: { ":pk": treePk(lbId), ":p": FLOW_PREFIX },
      ProjectionExpression: "pk, sk, #x",
      ExpressionAttributeNames: { "#x": "execution" },
      ScanIndexForward: false,
      ConsistentRead: true,
    });
    return items.map((i) => ({ pk: String(i.pk), sk: String(i.sk), execution: String(i.execution) }));
  }
}

function flowEntry(i: Item): FlowTrailEntry {
  const error = i.error as { error?: string | null; cause?: string | null } | null | undefined;
  return {
    flow: String(i.flow),
    execution: String(i.execution),
    execution_arn: String(i.execution_arn),
    started_at: String(i.started_at),
    ended_at: (i.ended_at as string | undefined) ?? null,
    outcome: i.outcome as FlowTrailEntry["outcome"],
    reason: (i.reason as string | undefined) ?? null,
    failed_step: (i.failed_step as string | undefined) ?? null,
    error: error ? { error: error.error ?? null, cause: error.cause ?? null } : null,
    subject: (i.subject as FlowTrailEntry["subject"] | undefined) ?? [],
  };
}
