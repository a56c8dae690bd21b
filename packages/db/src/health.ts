// The DynamoDB adapter of the heartbeat receiver's port (HealthStore of @ottava/core).
//
// Read: the amphora's id pointer (`ID#<id>`, cached: it never changes) leads to its load balancer's
// partition, whose tree is read with one consistent Query (`pk = LB#<lb id> AND sk < "~"`, only the
// attributes the health computation needs). Write: only the changed items, without the lock, in
// TransactWriteItems of at most 100 (a plain UpdateItem when one item changed, as most heartbeats
// change only the amphora's last_heartbeat): operating_status (+ updated_at) of the LB, listeners,
// pools and members, each conditioned on the item existing, not being DELETED and still having the
// operating_status the change was computed from; and the amphora's `last_heartbeat` (+ the
// byHeartbeat index keys) and `listener_stats`, on the condition it is not DELETED and its
// `listener_stats_rev` is the one read. provisioning_status, version and lock_owner are never
// touched. A write whose condition fails is dropped and the rest written again (the next heartbeat
// decides again), except the amphora's counters, which are read again and reapplied, so no delta is
// lost or counted twice.
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { GetCommand, TransactWriteCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { queryAll } from "./query";
import {
  DELETED,
  amphoraListenerStats,
  applyStatsUpdates,
  type HealthKind,
  type HealthStore,
  type HealthView,
  type HealthWrite,
  type HealthWriteResult,
  type ListenerStatsRow,
  type OperatingStatusChange,
} from "@ottava/core";
import { DynamoAdapter, MAX_TRANSACTION, retryConflicts, type AdapterOptions, type TransactItem } from "./client";
import { AMPHORA, LB_SK, LISTENER, MEMBER, POOL, childSk, heartbeatAttributes, pointerKey, treePk, type StoredKind } from "./items";
import { getItem } from "./owner";

type Item = Record<string, unknown>;

/** Rounds of "drop what failed its condition, write the rest". */
const MAX_ROUNDS = 5;
/** Amphora id → load balancer id pointers kept (they never change). */
const POINTER_CACHE = 10_000;

/** The amphora item's attributes this adapter writes (packages/db/README.md). */
export const LAST_HEARTBEAT = "last_heartbeat";
export const LISTENER_STATS = "listener_stats";
export const LISTENER_STATS_REV = "listener_stats_rev";

const KINDS: Record<Exclude<HealthKind, "loadbalancer">, StoredKind> = { listener: LISTENER, pool: POOL, member: MEMBER };

/** The attributes the health view reads. */
const PROJECTED = [
  "sk",
  "id",
  "status",
  "provisioning_status",
  "operating_status",
  "admin_state_up",
  "protocol",
  "default_pool_id",
  "pool_id",
  "compute_id",
  "loadbalancer_id",
  LISTENER_STATS,
  LISTENER_STATS_REV,
];

export type HealthStoreOptions = AdapterOptions;

interface Entry {
  item: TransactItem;
  /** The amphora's write, rebuilt from a fresh read when its condition fails. */
  amphora?: boolean;
}

export class DynamoHealthStore extends DynamoAdapter<HealthStoreOptions> implements HealthStore {
  private readonly pointers = new Map<string, string>();

  async healthView(amphoraId: string): Promise<HealthView> {
    const none: HealthView = { amphora: undefined, lb: undefined, listeners: [], pools: [], members: [] };
    const lbId = await this.lbOf(amphoraId);
    if (lbId === undefined) return none;
    const items = await this.partition(lbId);
    const ampSk = childSk(AMPHORA, amphoraId);
    const amp = items.find((i) => i.sk === ampSk);
    if (!amp) {
      this.pointers.delete(amphoraId);
      return none;
    }
    const view: HealthView = {
      amphora: {
        id: amphoraId,
        loadbalancer_id: lbId,
        status: String(amp.status),
        compute_id: typeof amp.compute_id === "string" ? amp.compute_id : null,
        listener_stats: amphoraListenerStats(amp),
        listener_stats_rev: typeof amp[LISTENER_STATS_REV] === "number" ? (amp[LISTENER_STATS_REV] as number) : 0,
      },
      lb: undefined,
      listeners: [],
      pools: [],
      members: [],
    };
    const lb = items.find((i) => i.sk === LB_SK);
    // get_lb_for_health_update: nothing for a DELETED amphora or a DELETED load balancer.
    if (amp.status === DELETED || !lb || lb.provisioning_status === DELETED) return view;
    const opStatus = (i: Item) => (typeof i.operating_status === "string" ? i.operating_status : "");
    view.lb = {
      id: lbId,
      enabled: lb.admin_state_up !== false,
      provisioning_status: String(lb.provisioning_status),
      operating_status: opStatus(lb),
    };
    for (const i of items) {
      if (i.provisioning_status === DELETED) continue;
      const sk = String(i.sk);
      const id = String(i.id);
      if (sk.startsWith(`${LISTENER.prefix}#`)) {
        view.listeners.push({
          id,
          enabled: i.admin_state_up !== false,
          protocol: String(i.protocol),
          operating_status: opStatus(i),
          default_pool_id: typeof i.default_pool_id === "string" ? i.default_pool_id : null,
        });
      } else if (sk.startsWith(`${POOL.prefix}#`)) {
        view.pools.push({ id, operating_status: opStatus(i) });
      } else if (sk.startsWith(`${MEMBER.prefix}#`)) {
        view.members.push({ id, pool_id: String(i.pool_id), enabled: i.admin_state_up !== false, operating_status: opStatus(i) });
      }
    }
    return view;
  }

  async applyHealth(write: HealthWrite): Promise<HealthWriteResult> {
    const result: HealthWriteResult = { written: 0, skipped: 0 };
    const entries: Entry[] = [];
    const amp = this.amphoraUpdate(write, write.statsBase.rows, write.statsBase.revision);
    if (amp) entries.push({ item: amp, amphora: true });
    for (const change of write.statuses) entries.push({ item: this.statusUpdate(write.lbId, change) });
    for (let i = 0; i < entries.length; i += MAX_TRANSACTION) {
      await this.transact(write, entries.slice(i, i + MAX_TRANSACTION), result);
    }
    return result;
  }

  // ---- writes -----------------------------------------------------------------------------------

  private statusUpdate(lbId: string, c: OperatingStatusChange): TransactItem {
    const sk = c.kind === "loadbalancer" ? LB_SK : childSk(KINDS[c.kind], c.id, c.pool_id);
    return {
      Update: {
        TableName: this.table,
        Key: { pk: treePk(lbId), sk },
        UpdateExpression: "SET #os = :to, #ua = :now",
        ConditionExpression: `attribute_exists(pk) AND #ps <> :deleted AND ${c.from === "" ? "attribute_not_exists(#os)" : "#os = :from"}`,
        ExpressionAttributeNames: { "#os": "operating_status", "#ua": "updated_at", "#ps": "provisioning_status" },
        ExpressionAttributeValues: {
          ":to": c.to,
          ":now": this.now().toISOString(),
          ":deleted": DELETED,
          ...(c.from === "" ? {} : { ":from": c.from }),
        },
      },
    };
  }

  /** The amphora's write: its last heartbeat and its counters, `write.stats` applied to `rows` read at `revision`. */
  private amphoraUpdate(write: HealthWrite, rows: Record<string, ListenerStatsRow>, revision: number): TransactItem | undefined {
    const names: Record<string, string> = { "#st": "status" };
    const values: Record<string, unknown> = { ":deleted": DELETED };
    const sets: string[] = [];
    const conditions = ["attribute_exists(pk)", "#st <> :deleted"];
    if (write.lastHeartbeat !== undefined) {
      Object.entries(heartbeatAttributes(write.amphoraId, write.lastHeartbeat)).forEach(([k, v], i) => {
        names[`#h${i}`] = k;
        values[`:h${i}`] = v;
        sets.push(`#h${i} = :h${i}`);
      });
    }
    if (write.stats.length > 0) {
      names["#ls"] = LISTENER_STATS;
      names["#rev"] = LISTENER_STATS_REV;
      values[":ls"] = applyStatsUpdates(rows, write.stats);
      values[":next"] = revision + 1;
      sets.push("#ls = :ls", "#rev = :next");
      if (revision === 0) conditions.push("attribute_not_exists(#rev)");
      else {
        values[":rev"] = revision;
        conditions.push("#rev = :rev");
      }
    }
    if (sets.length === 0) return undefined;
    return {
      Update: {
        TableName: this.table,
        Key: { pk: treePk(write.lbId), sk: childSk(AMPHORA, write.amphoraId) },
        UpdateExpression: `SET ${sets.join(", ")}`,
        ConditionExpression: conditions.join(" AND "),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    };
  }

  /** One transaction; what fails its condition is dropped (or, for the amphora, read again) and the rest sent again. */
  private async transact(write: HealthWrite, chunk: Entry[], result: HealthWriteResult): Promise<void> {
    let entries = chunk;
    for (let round = 0; entries.length > 0; round++) {
      try {
        if (entries.length === 1) {
          // The common heartbeat (the amphora's last_heartbeat alone): a plain conditional update, half a transaction's cost.
          await retryConflicts(() => this.doc.send(new UpdateCommand(entries[0]!.item.Update!)));
        } else {
          await retryConflicts(() => this.doc.send(new TransactWriteCommand({ TransactItems: entries.map((e) => e.item) })));
        }
        result.written += entries.length;
        return;
      } catch (e) {
        const reasons =
          e instanceof ConditionalCheckFailedException
            ? [{ Code: "ConditionalCheckFailed" }]
            : (e as { name?: string; CancellationReasons?: { Code?: string }[] }).name === "TransactionCanceledException"
              ? (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons
              : undefined;
        if (!reasons || round >= MAX_ROUNDS) throw e;
        const next: Entry[] = [];
        for (const [i, entry] of entries.entries()) {
          if (reasons[i]?.Code !== "ConditionalCheckFailed") next.push(entry);
          else if (entry.amphora) {
            const again = await this.rereadAmphora(write);
            if (again) next.push({ item: again, amphora: true });
            else result.skipped++;
          } else result.skipped++;
        }
        if (next.length === entries.length && next.every((n, i) => n === entries[i])) throw e; // nothing to drop: not a condition
        entries = next;
      }
    }
  }

  /** The amphora's write again, on its counters as they are now; undefined if it is gone or DELETED. */
  private async rereadAmphora(write: HealthWrite): Promise<TransactItem | undefined> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.table,
        Key: { pk: treePk(write.lbId), sk: childSk(AMPHORA, write.amphoraId) },
        ConsistentRead: true,
      }),
    );
    const item = out.Item;
    if (!item || item.status === DELETED) return undefined;
    const rev = typeof item[LISTENER_STATS_REV] === "number" ? (item[LISTENER_STATS_REV] as number) : 0;
    return this.amphoraUpdate(write, amphoraListenerStats(item), rev);
  }

  // ---- reads ------------------------------------------------------------------------------------

  private async lbOf(amphoraId: string): Promise<string | undefined> {
    const cached = this.pointers.get(amphoraId);
    if (cached !== undefined) return cached;
    const key = pointerKey(amphoraId);
    const ptr = await getItem(this.doc, this.table, key.pk, key.sk); // none for an id no item can have
    if (!ptr || ptr.kind !== AMPHORA.kind || typeof ptr.ref_pk !== "string") return undefined;
    const lbId = ptr.ref_pk.slice("LB#".length);
    if (this.pointers.size >= POINTER_CACHE) this.pointers.delete(this.pointers.keys().next().value!);
    this.pointers.set(amphoraId, lbId);
    return lbId;
  }

  private async partition(lbId: string): Promise<Item[]> {
    const names = Object.fromEntries(PROJECTED.map((a, i) => [`#p${i}`, a]));
    return queryAll(this.doc, {
      TableName: this.table,
      // The tree only: flow-trail entries (`~FLOW#…`) sort after it.
      KeyConditionExpression: "pk = :pk AND sk < :end",
      ExpressionAttributeValues: { ":pk": treePk(lbId), ":end": "~" },
      ProjectionExpression: Object.keys(names).join(", "),
      ExpressionAttributeNames: names,
      ConsistentRead: true,
    });
  }
}
