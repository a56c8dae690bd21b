// The DynamoDB adapter of the LoadBalancerStore port: one generic mechanism over StoredKind descriptors.
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from "@aws-sdk/lib-dynamodb";
import {
  DELETED,
  LockConflict,
  LockLost,
  invalidMarker,
  type Amphora,
  type AvailabilityZone,
  type AvailabilityZoneProfile,
  type Flavor,
  type FlavorProfile,
  type ItemSource,
  type SourceQuery,
  type LoadBalancer,
  type LoadBalancerStore,
  type LockRequest,
  type SortDir,
  type Versioned,
  type ChildWrite,
  type TreeItem,
  type TreeRecord,
  type HealthManagerConfig,
  type HealthManagerRefresh,
  type QuotaCharge,
  type QuotaDelta,
  QuotaExceeded,
  type FlowEnd,
  type FlowEnded,
  type FlowStart,
  type FlowTrailEntry,
} from "@ottava/core";
import { MAX_TRANSACTION, retryConflicts, type TransactItem } from "./client";
import { queryAll } from "./query";
import { inStorageOrder, partitions, selectedPage } from "./lists";
import {
  AMPHORA,
  amphoraAttributes,
  CHILD_PREFIXES,
  TREE_KINDS,
  kindOfSk,
  LB_SK,
  LOADBALANCER,
  childSk,
  indexAttributes,
  nameAttributes,
  orderKey,
  pointerKey,
  statusAttributes,
  toRecord,
  treePk,
  updateExpression,
  type StoredKind,
} from "./items";
import { TTL_ATTRIBUTE } from "./table";
import { exceededFields, usageKey, usageUpdate } from "./usage";

type Item = Record<string, unknown>;
/** The health-manager configuration item. */
const HM_PK = "CONFIG#healthmanager";
const HM_SK = "CONFIG";

export interface StoreOptions {
  tableName: string;
  /** Seconds a DELETED record stays before TTL purges it. */
  expiryAge: number;
  now?: () => Date;
  /** Flow-trail entries kept per load balancer (the newest); default FLOW_TRAIL_MAX. */
  flowTrailMax?: number;
}

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

export class DynamoStore implements LoadBalancerStore {
  private readonly table: string;
  private readonly now: () => Date;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly opts: StoreOptions,
  ) {
    this.table = opts.tableName;
    this.now = opts.now ?? (() => new Date());
  }

  // ---- load balancers -------------------------------------------------------------------------

  async getLoadBalancer(id: string): Promise<Versioned<LoadBalancer> | undefined> {
    const item = await this.getItem(treePk(id), LB_SK);
    return item && versioned<LoadBalancer>(item);
  }

  loadBalancers(project: string | undefined): ItemSource {
    return this.source(LOADBALANCER, project, async (id) => (await this.getLoadBalancer(id))?.record);
  }

  async createLoadBalancer(lb: LoadBalancer, owner: string, executionArn: string, usage?: QuotaCharge): Promise<void> {
    const item = {
      ...lb,
      pk: treePk(lb.id),
      sk: LB_SK,
      kind: LOADBALANCER.kind,
      version: 1,
      lock_owner: owner,
      execution_arn: executionArn,
      ...indexAttributes(LOADBALANCER, lb, lb.provisioning_status),
    };
    const put = { TableName: this.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" };
    const charge = usageUpdate(this.table, usage);
    if (!charge) {
      await this.doc.send(new PutCommand(put));
      return;
    }
    await this.transactWithUsage([{ Put: put }], 1, usage!, charge);
  }

  /**
   * One transaction of `items` with the usage update inserted at position `at`; a refused usage
   * condition becomes QuotaExceeded, anything else is rethrown as DynamoDB answered it.
   */
  private async transactWithUsage(items: TransactItem[], at: number, usage: QuotaCharge, update: TransactItem["Update"]) {
    const all = [...items.slice(0, at), { Update: update }, ...items.slice(at)];
    try {
      await retryConflicts(() => this.doc.send(new TransactWriteCommand({ TransactItems: all })));
    } catch (e) {
      const reasons = (e as { CancellationReasons?: { Code?: string; Item?: Record<string, unknown> }[] }).CancellationReasons;
      const before = reasons?.slice(0, at).some((r) => r?.Code === "ConditionalCheckFailed");
      const reason = reasons?.[at];
      if (!before && reason?.Code === "ConditionalCheckFailed") {
        throw new QuotaExceeded(exceededFields(usage, reason.Item ? unmarshallItem(reason.Item) : undefined));
      }
      throw e;
    }
  }

  async quotaUsage(project: string): Promise<QuotaDelta> {
    const item = await this.getItem(usageKey(project).pk, usageKey(project).sk);
    const { pk: _pk, sk: _sk, ...counts } = item ?? {};
    return counts as QuotaDelta;
  }

  async lock(id: string, req: LockRequest): Promise<Versioned<LoadBalancer>> {
    if (req.usage) return this.lockWith(id, req, []);
    try {
      const out = await retryConflicts(() =>
        this.doc.send(new UpdateCommand({ ...this.lockUpdate(id, req), ReturnValues: "ALL_NEW", ReturnValuesOnConditionCheckFailure: "ALL_OLD" })),
      );
      return versioned<LoadBalancer>(out.Attributes!);
    } catch (e) {
      if (e instanceof ConditionalCheckFailedException) {
        throw new LockConflict(e.Item ? versioned<LoadBalancer>(unmarshallItem(e.Item)) : undefined);
      }
      throw e;
    }
  }

  /** The conditional update that takes an LB's lock (see README: the lock protocol). */
  private lockUpdate(id: string, req: LockRequest) {
    const status = statusAttributes(LOADBALANCER, id, req.to, this.now(), this.opts.expiryAge);
    const named = nameAttributes(LOADBALANCER, { ...(req.set ?? {}), provisioning_status: req.to });
    const update = updateExpression(
      {
        ...(req.set ?? {}),
        ...named.set,
        ...status.set,
        provisioning_status: req.to,
        lock_owner: req.owner,
        execution_arn: req.executionArn,
        updated_at: this.now().toISOString(),
      },
      [...named.remove, ...status.remove],
    );
    update.ExpressionAttributeNames["#ps"] = "provisioning_status";
    update.ExpressionAttributeNames["#v"] = "version";
    update.ExpressionAttributeValues[":one"] = 1;
    const from = req.from.map((s, i) => {
      update.ExpressionAttributeValues[`:from${i}`] = s;
      return `:from${i}`;
    });
    let condition = `attribute_exists(pk) AND #ps IN (${from.join(", ")})`;
    if (req.expectVersion !== undefined) {
      update.ExpressionAttributeValues[":ev"] = req.expectVersion;
      condition += " AND #v = :ev";
    }
    return {
      TableName: this.table,
      Key: { pk: treePk(id), sk: LB_SK },
      ...update,
      // (After the SET clause's first action: a REMOVE clause (a cleared name's index keys) may follow it.)
      UpdateExpression: update.UpdateExpression.replace(/^SET /, "SET #v = #v + :one, "),
      ConditionExpression: condition,
      ReturnValuesOnConditionCheckFailure: "ALL_OLD" as const,
    };
  }

  async abandonLock(id: string, owner: string, restore: Partial<LoadBalancer>, usage?: QuotaCharge): Promise<void> {
    const status = restore.provisioning_status
      ? statusAttributes(LOADBALANCER, id, restore.provisioning_status, this.now(), this.opts.expiryAge)
      : { set: {}, remove: [] };
    const named = nameAttributes(LOADBALANCER, restore); // a restored name goes back to its index partition
    await this.lbOwnerWrite(id, owner, { ...restore, ...named.set, ...status.set }, [...named.remove, ...status.remove, "lock_owner", "execution_arn"], usage).catch((e) => {
      if (!(e instanceof LockLost)) throw e;
    });
  }

  async updateLoadBalancer(id: string, owner: string, set: Partial<LoadBalancer>, release = false, usage?: QuotaCharge): Promise<void> {
    const status = set.provisioning_status
      ? statusAttributes(LOADBALANCER, id, set.provisioning_status, this.now(), this.opts.expiryAge)
      : { set: {}, remove: [] };
    const named = nameAttributes(LOADBALANCER, set);
    await this.lbOwnerWrite(id, owner, { ...set, ...named.set, ...status.set, updated_at: this.now().toISOString() }, [...named.remove, ...status.remove, ...(release ? ["lock_owner"] : [])], usage);
  }

  /**
   * A write to the LB item by its lock owner; `usage` (given back, never checked) goes in the same
   * transaction, so a retried step that finds the lock gone cannot apply it twice.
   */
  private async lbOwnerWrite(id: string, owner: string, set: Item, remove: string[], usage?: QuotaCharge) {
    const charge = usageUpdate(this.table, usage && { ...usage, limits: undefined });
    if (!charge) return this.ownerWrite(LOADBALANCER, id, undefined, owner, set, remove);
    const update = updateExpression(set, remove);
    update.ExpressionAttributeValues[":owner"] = owner;
    const lbUpdate = { TableName: this.table, Key: { pk: treePk(id), sk: LB_SK }, ...update, ConditionExpression: "attribute_exists(pk) AND lock_owner = :owner" };
    try {
      await retryConflicts(() => this.doc.send(new TransactWriteCommand({ TransactItems: [{ Update: lbUpdate }, { Update: charge }] })));
    } catch (e) {
      throw lockLostOr(e, `load balancer ${id}`);
    }
  }

  async hasChildren(id: string): Promise<boolean> {
    const items = await this.partition(id);
    return items.some((i) => CHILD_PREFIXES.some((p) => String(i.sk).startsWith(p)) && i.provisioning_status !== DELETED);
  }

  async tree(lbId: string): Promise<{ lb: Versioned<LoadBalancer> | undefined; items: TreeItem[] }> {
    let lb: Versioned<LoadBalancer> | undefined;
    const items: TreeItem[] = [];
    for (const item of await this.partition(lbId)) {
      if (item.sk === LB_SK) lb = versioned<LoadBalancer>(item);
      else {
        const k = kindOfSk(String(item.sk));
        if (k) items.push({ kind: k.kind, record: toRecord<TreeRecord>(item) });
      }
    }
    return { lb, items };
  }

  async getChild(kind: string, id: string): Promise<{ record: TreeRecord; lbId: string } | undefined> {
    const k = TREE_KINDS[kind];
    if (!k) throw new Error(`unknown kind ${kind}`);
    const item = await this.getById(id, k);
    return item && { record: toRecord<TreeRecord>(item), lbId: String(item.pk).slice("LB#".length) };
  }

  children(kind: string, project: string | undefined): ItemSource {
    const k = TREE_KINDS[kind];
    if (!k) throw new Error(`unknown kind ${kind}`);
    return this.source(k, project, async (id) => (await this.getChild(kind, id))?.record as { id: string; created_at: string } | undefined);
  }

  async lockWith(id: string, req: LockRequest, writes: ChildWrite[]): Promise<Versioned<LoadBalancer>> {
    const lockUpdate = this.lockUpdate(id, req);
    const items = writes.flatMap((w) => this.writeItems(id, w));
    const charge = usageUpdate(this.table, req.usage);
    const first = items.slice(0, MAX_TRANSACTION - (charge ? 2 : 1));
    try {
      const head: TransactItem[] = [{ Update: lockUpdate }, ...first];
      if (charge) await this.transactWithUsage(head, 1, req.usage!, charge);
      else await retryConflicts(() => this.doc.send(new TransactWriteCommand({ TransactItems: head })));
    } catch (e) {
      const reasons = (e as { CancellationReasons?: { Code?: string; Item?: Record<string, unknown> }[] }).CancellationReasons;
      if (reasons?.[0]?.Code === "ConditionalCheckFailed") {
        throw new LockConflict(reasons[0].Item ? versioned<LoadBalancer>(unmarshallItem(reasons[0].Item)) : undefined);
      }
      throw e;
    }
    await this.applyItems(id, req.owner, items.slice(first.length));
    return (await this.getLoadBalancer(id))!;
  }

  async applyAsOwner(lbId: string, owner: string, writes: ChildWrite[]): Promise<void> {
    await this.applyItems(lbId, owner, writes.flatMap((w) => this.writeItems(lbId, w)));
  }

  /** Transaction items, each chunk with a check that `owner` still holds the lock. */
  private async applyItems(lbId: string, owner: string, items: TransactItem[]) {
    for (let i = 0; i < items.length; i += MAX_TRANSACTION - 1) {
      const chunk = items.slice(i, i + MAX_TRANSACTION - 1);
      try {
        await retryConflicts(() => this.doc.send(new TransactWriteCommand({ TransactItems: [this.ownerCheck(lbId, owner), ...chunk] })));
      } catch (e) {
        throw lockLostOr(e, `objects of load balancer ${lbId}`);
      }
    }
  }

  /** The items of one ChildWrite: a new object and its pointer, or an update of an existing one. */
  private writeItems(lbId: string, w: ChildWrite): TransactItem[] {
    const k = TREE_KINDS[w.kind];
    if (!k) throw new Error(`unknown kind ${w.kind}`);
    if ("put" in w) {
      const rec = w.put;
      const key = { pk: treePk(lbId), sk: childSk(k, rec.id) };
      return [
        {
          Put: {
            TableName: this.table,
            Item: { ...rec, ...key, kind: k.kind, ...indexAttributes(k, rec, String(rec[k.statusField])) },
            ConditionExpression: "attribute_not_exists(pk)",
          },
        },
        { Put: { TableName: this.table, Item: { ...pointerKey(rec.id), kind: k.kind, ref_pk: key.pk, ref_sk: key.sk } } },
      ];
    }
    const status = w.set[k.statusField];
    const extra = typeof status === "string" ? statusAttributes(k, w.id, status, this.now(), this.opts.expiryAge) : { set: {}, remove: [] };
    const named = nameAttributes(k, w.set);
    const update = updateExpression({ ...w.set, ...named.set, ...extra.set, updated_at: this.now().toISOString() }, [...named.remove, ...extra.remove]);
    return [
      {
        Update: {
          TableName: this.table,
          Key: { pk: treePk(lbId), sk: childSk(k, w.id) },
          ...update,
          ConditionExpression: "attribute_exists(pk)",
        },
      },
    ];
  }

  // ---- amphorae -------------------------------------------------------------------------------

  async getAmphora(id: string): Promise<Amphora | undefined> {
    const item = await this.getById(id, AMPHORA);
    return item && toRecord<Amphora>(item);
  }

  amphorae(project: string | undefined): ItemSource {
    return this.source(AMPHORA, project, (id) => this.getAmphora(id));
  }

  async amphoraeOf(lbId: string): Promise<Amphora[]> {
    return (await this.partition(lbId, `${AMPHORA.prefix}#`)).map((i) => toRecord<Amphora>(i));
  }

  async createAmphora(a: Amphora, owner: string): Promise<void> {
    const key = { pk: treePk(a.loadbalancer_id), sk: childSk(AMPHORA, a.id) };
    try {
      await retryConflicts(() =>
        this.doc.send(
          new TransactWriteCommand({
            TransactItems: [
              this.ownerCheck(a.loadbalancer_id, owner),
              {
                Put: {
                  TableName: this.table,
                  Item: { ...a, ...key, kind: AMPHORA.kind, ...indexAttributes(AMPHORA, a, a.status) },
                  ConditionExpression: "attribute_not_exists(pk)",
                },
              },
              { Put: { TableName: this.table, Item: { ...pointerKey(a.id), kind: AMPHORA.kind, ref_pk: key.pk, ref_sk: key.sk } } },
            ],
          }),
        ),
      );
    } catch (e) {
      throw lockLostOr(e, `amphora ${a.id} of load balancer ${a.loadbalancer_id}`);
    }
  }

  async updateAmphora(lbId: string, id: string, owner: string, set: Partial<Amphora>): Promise<void> {
    const status = amphoraAttributes(id, set, this.now(), this.opts.expiryAge);
    await this.ownerWrite(AMPHORA, lbId, id, owner, { ...set, ...status.set, updated_at: this.now().toISOString() }, status.remove);
  }

  async updateAmphoraIf(lbId: string, id: string, from: readonly string[], set: Partial<Amphora>): Promise<boolean> {
    const status = amphoraAttributes(id, set, this.now(), this.opts.expiryAge);
    const update = updateExpression({ ...set, ...status.set, updated_at: this.now().toISOString() }, status.remove);
    update.ExpressionAttributeNames["#st"] = "status";
    const values = from.map((s, i) => {
      update.ExpressionAttributeValues[`:f${i}`] = s;
      return `:f${i}`;
    });
    try {
      await retryConflicts(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: treePk(lbId), sk: childSk(AMPHORA, id) },
            ...update,
            ConditionExpression: `attribute_exists(pk) AND #st IN (${values.join(", ")})`,
          }),
        ),
      );
      return true;
    } catch (e) {
      if (e instanceof ConditionalCheckFailedException) return false;
      throw e;
    }
  }

  // ---- flavors and availability zones -----------------------------------------------------------

  async getFlavor(id: string) {
    const flavor = await this.getItem(`FLAVOR#${id}`, "FLAVOR");
    const profile = flavor && (await this.getItem(`FLAVORPROFILE#${flavor.flavor_profile_id}`, "FLAVORPROFILE"));
    return flavor && profile ? { flavor: toRecord<Flavor>(flavor), profile: toRecord<FlavorProfile>(profile) } : undefined;
  }

  async putFlavorProfile(p: FlavorProfile) {
    await this.doc.send(new PutCommand({ TableName: this.table, Item: { ...p, pk: `FLAVORPROFILE#${p.id}`, sk: "FLAVORPROFILE", kind: "flavorprofile" } }));
  }

  async putFlavor(f: Flavor) {
    await this.doc.send(new PutCommand({ TableName: this.table, Item: { ...f, pk: `FLAVOR#${f.id}`, sk: "FLAVOR", kind: "flavor" } }));
  }

  async getAvailabilityZone(name: string) {
    const zone = await this.getItem(`AZ#${name}`, "AZ");
    const profile = zone && (await this.getItem(`AZPROFILE#${zone.availability_zone_profile_id}`, "AZPROFILE"));
    return zone && profile ? { zone: toRecord<AvailabilityZone>(zone), profile: toRecord<AvailabilityZoneProfile>(profile) } : undefined;
  }

  async putAvailabilityZoneProfile(p: AvailabilityZoneProfile) {
    await this.doc.send(new PutCommand({ TableName: this.table, Item: { ...p, pk: `AZPROFILE#${p.id}`, sk: "AZPROFILE", kind: "availabilityzoneprofile" } }));
  }

  async putAvailabilityZone(z: AvailabilityZone) {
    await this.doc.send(new PutCommand({ TableName: this.table, Item: { ...z, pk: `AZ#${z.name}`, sk: "AZ", kind: "availabilityzone" } }));
  }

  // ---- health-manager configuration (amphora agent configuration refresh) -----------------------

  async getHealthManagerConfig(): Promise<HealthManagerConfig | undefined> {
    const item = await this.getItem(HM_PK, HM_SK);
    if (!item) return undefined;
    return {
      controller_ip_port_list: (item.controller_ip_port_list as string[] | undefined) ?? [],
      generation: Number(item.generation ?? 0),
      refresh: { total: Number(item.refresh_total ?? 0), done: Number(item.refresh_done ?? 0), failed: Number(item.refresh_failed ?? 0) },
    };
  }

  async putHealthManagerConfig(list: string[], expect: number): Promise<boolean> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            pk: HM_PK,
            sk: HM_SK,
            kind: "healthmanager",
            controller_ip_port_list: list,
            generation: expect + 1,
            refresh_total: 0,
            refresh_done: 0,
            refresh_failed: 0,
            updated_at: this.now().toISOString(),
          },
          ConditionExpression: expect === 0 ? "attribute_not_exists(pk) OR #g = :g" : "#g = :g",
          ExpressionAttributeNames: { "#g": "generation" },
          ExpressionAttributeValues: { ":g": expect },
        }),
      );
      return true;
    } catch (e) {
      if (e instanceof ConditionalCheckFailedException) return false;
      throw e;
    }
  }

  async addHealthManagerRefresh(generation: number, add: Partial<HealthManagerRefresh>): Promise<boolean> {
    const parts = (["total", "done", "failed"] as const).filter((k) => add[k]);
    if (parts.length === 0) return true;
    const names: Record<string, string> = { "#g": "generation" };
    const values: Record<string, unknown> = { ":g": generation };
    for (const k of parts) {
      names[`#${k}`] = `refresh_${k}`;
      values[`:${k}`] = add[k];
    }
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: HM_PK, sk: HM_SK },
          UpdateExpression: `ADD ${parts.map((k) => `#${k} :${k}`).join(", ")}`,
          ConditionExpression: "#g = :g",
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (e) {
      if (e instanceof ConditionalCheckFailedException) return false;
      throw e;
    }
  }

  async recordAmphoraAgentGeneration(lbId: string, id: string, generation: number, at: string): Promise<boolean> {
    try {
      await retryConflicts(() =>
        this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: treePk(lbId), sk: childSk(AMPHORA, id) },
            UpdateExpression: "SET #ag = :g, #at = :at",
            ConditionExpression: "attribute_exists(pk) AND #st <> :deleted AND (attribute_not_exists(#ag) OR #ag < :g)",
            ExpressionAttributeNames: { "#ag": "agent_generation", "#at": "agent_config_at", "#st": "status" },
            ExpressionAttributeValues: { ":g": generation, ":at": at, ":deleted": DELETED },
          }),
        ),
      );
      return true;
    } catch (e) {
      if (e instanceof ConditionalCheckFailedException) return false;
      throw e;
    }
  }

  // ---- change sets (a flow's data too big for its input) ----------------------------------------

  private changeSetSk = (owner: string, n?: number) => `CHANGESET#${owner}#${n === undefined ? "" : String(n).padStart(5, "0")}`;

  async putChangeSetChunks(lbId: string, owner: string, chunks: unknown[]): Promise<void> {
    // A week at least: longer than any execution lives; no index attributes, so in no index.
    const expires = Math.floor(this.now().getTime() / 1000) + Math.max(this.opts.expiryAge, 7 * 24 * 3600);
    for (let n = 0; n < chunks.length; n++) {
      const item = { pk: treePk(lbId), sk: this.changeSetSk(owner, n), kind: "changeset", data: JSON.stringify(chunks[n]), expires_at: expires };
      try {
        await retryConflicts(() => this.doc.send(new TransactWriteCommand({ TransactItems: [this.ownerCheck(lbId, owner), { Put: { TableName: this.table, Item: item } }] })));
      } catch (e) {
        throw lockLostOr(e, `change set of load balancer ${lbId}`);
      }
    }
  }

  async getChangeSetChunk(lbId: string, owner: string, n: number): Promise<unknown | undefined> {
    const item = await this.getItem(treePk(lbId), this.changeSetSk(owner, n));
    return item ? JSON.parse(String(item.data)) : undefined;
  }

  async deleteChangeSet(lbId: string, owner: string): Promise<void> {
    for (const item of await this.partition(lbId, this.changeSetSk(owner))) {
      await this.doc.send(new DeleteCommand({ TableName: this.table, Key: { pk: item.pk, sk: item.sk } }));
    }
  }

  // ---- the flow trail (an Ottava extension) -----------------------------------------------------
  // One item per execution in the LB's partition, `~FLOW#<started_at>#<execution>` (newest last in
  // key order, after every tree item), in no index; the newest `flowTrailMax` are kept; they expire
  // with the LB.

  async recordFlowStart(lbId: string, start: FlowStart): Promise<void> {
    const item = {
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
    await this.doc.send(new PutCommand({ TableName: this.table, Item: item }));
    // Prune: the newest entries stay, older ones go (usually none, or the one that fell off the end).
    const max = this.opts.flowTrailMax ?? FLOW_TRAIL_MAX;
    const keys = await this.flowKeys(lbId);
    for (const key of keys.slice(max)) await this.doc.send(new DeleteCommand({ TableName: this.table, Key: { pk: key.pk, sk: key.sk } }));
  }

  async recordFlowEnd(lbId: string, execution: string, end: FlowEnd): Promise<FlowEnded | undefined> {
    const key = (await this.flowKeys(lbId)).find((k) => k.execution === execution);
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
      try {
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
      } catch (e) {
        if (!(e instanceof ConditionalCheckFailedException)) throw e;
      }
    }
    if (end.lbDeleted) {
      // The LB goes DELETED: its trail expires with it (as its other items, by TTL).
      const expires = Math.floor(this.now().getTime() / 1000) + this.opts.expiryAge;
      for (const k of await this.flowKeys(lbId)) {
        await this.doc
          .send(
            new UpdateCommand({
              TableName: this.table,
              Key: { pk: k.pk, sk: k.sk },
              UpdateExpression: "SET #t = :t",
              ConditionExpression: "attribute_exists(pk)",
              ExpressionAttributeNames: { "#t": TTL_ATTRIBUTE },
              ExpressionAttributeValues: { ":t": expires },
            }),
          )
          .catch((e) => {
            if (!(e instanceof ConditionalCheckFailedException)) throw e; // pruned meanwhile
          });
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

  // ---- the generic mechanism -----------------------------------------------------------------

  private async getItem(pk: string, sk: string): Promise<Item | undefined> {
    const out = await this.doc.send(new GetCommand({ TableName: this.table, Key: { pk, sk }, ConsistentRead: true }));
    return out.Item;
  }

  /** Finds an object by its id alone: a consistent read of its pointer, then of the object. */
  private async getById(id: string, k: StoredKind): Promise<Item | undefined> {
    const ptr = await this.getItem(pointerKey(id).pk, pointerKey(id).sk);
    if (!ptr || ptr.kind !== k.kind) return undefined;
    return this.getItem(String(ptr.ref_pk), String(ptr.ref_sk));
  }

  /** The whole tree of a load balancer (or the part whose sort key starts with `prefix`): one Query. */
  private async partition(lbId: string, prefix?: string): Promise<Item[]> {
    return queryAll(this.doc, {
      TableName: this.table,
      // The flow trail (sorted last) is no part of the tree: whole-partition reads stop before it.
      KeyConditionExpression: prefix ? "pk = :pk AND begins_with(sk, :p)" : "pk = :pk AND sk < :trail",
      ExpressionAttributeValues: prefix ? { ":pk": treePk(lbId), ":p": prefix } : { ":pk": treePk(lbId), ":trail": TRAIL_BOUND },
      ConsistentRead: true,
    });
  }

  /** The condition that the writer still holds the LB's lock. */
  private ownerCheck(lbId: string, owner: string) {
    return {
      ConditionCheck: {
        TableName: this.table,
        Key: { pk: treePk(lbId), sk: LB_SK },
        ConditionExpression: "attribute_exists(pk) AND lock_owner = :owner",
        ExpressionAttributeValues: { ":owner": owner },
      },
    };
  }

  /**
   * A write by the holder of an LB's lock: to the LB itself (childId undefined) with one conditional
   * update, or to a child in a transaction with a check of the lock. Never resurrects a deleted item.
   */
  private async ownerWrite(k: StoredKind, lbId: string, childId: string | undefined, owner: string, set: Item, remove: string[]) {
    const update = updateExpression(set, remove);
    const key = childId === undefined ? { pk: treePk(lbId), sk: LB_SK } : { pk: treePk(lbId), sk: childSk(k, childId) };
    const what = childId === undefined ? `load balancer ${lbId}` : `${k.kind} ${childId} of load balancer ${lbId}`;
    try {
      if (childId === undefined) {
        update.ExpressionAttributeValues[":owner"] = owner;
        await retryConflicts(() =>
          this.doc.send(
            new UpdateCommand({ TableName: this.table, Key: key, ...update, ConditionExpression: "attribute_exists(pk) AND lock_owner = :owner" }),
          ),
        );
      } else {
        await retryConflicts(() =>
          this.doc.send(
            new TransactWriteCommand({
              TransactItems: [
                this.ownerCheck(lbId, owner),
                { Update: { TableName: this.table, Key: key, ...update, ConditionExpression: "attribute_exists(pk)" } },
              ],
            }),
          ),
        );
      }
    } catch (e) {
      throw lockLostOr(e, what);
    }
  }

  /**
   * Items of a kind in storage order: one project's from its index partition, or every project's by
   * merging the shards of the admin index. `after` is a marker id, resumed from its (created_at, id).
   */
  private source(k: StoredKind, project: string | undefined, find: (id: string) => Promise<{ id: string; created_at: string } | undefined>): ItemSource {
    const self = this;
    return async function* (order: SortDir, after: string | undefined, query?: SourceQuery) {
      // `?name=`: the byName partitions of those names; else the project's, or every shard (src/lists.ts).
      const parts = partitions(k, project, query?.names);
      if (query?.select) {
        yield* selectedPage(self.doc, self.table, k, parts, query.select);
        return;
      }
      let from: string | undefined;
      if (after !== undefined) {
        const marker = await find(after);
        if (!marker) throw invalidMarker(after);
        from = orderKey(marker.created_at, marker.id);
      }
      for await (const item of inStorageOrder(self.doc, self.table, parts, order, from)) yield toRecord<Item>(item);
    };
  }


  async markLoadBalancerUnless(id: string, owner: string, set: Record<string, unknown>, unless: Record<string, string>): Promise<boolean> {
    const update = updateExpression({ ...set, updated_at: this.now().toISOString() });
    update.ExpressionAttributeValues[":owner"] = owner;
    const conditions = ["attribute_exists(pk)", "lock_owner = :owner"];
    Object.entries(unless).forEach(([k, v], i) => {
      update.ExpressionAttributeNames[`#u${i}`] = k;
      update.ExpressionAttributeValues[`:u${i}`] = v;
      conditions.push(`(attribute_not_exists(#u${i}) OR #u${i} <> :u${i})`);
    });
    try {
      await retryConflicts(() =>
        this.doc.send(
          new UpdateCommand({ TableName: this.table, Key: { pk: treePk(id), sk: LB_SK }, ...update, ConditionExpression: conditions.join(" AND ") }),
        ),
      );
      return true;
    } catch (e) {
      if (e instanceof ConditionalCheckFailedException) return false;
      throw e;
    }
  }
}

function versioned<T>(item: Item): Versioned<T> {
  return {
    record: toRecord<T>(item),
    version: Number(item.version ?? 0),
    lockOwner: item.lock_owner as string | undefined,
    executionArn: item.execution_arn as string | undefined,
  };
}

function lockLostOr(e: unknown, what: string): unknown {
  const name = (e as { name?: string })?.name;
  if (e instanceof ConditionalCheckFailedException || name === "TransactionCanceledException") {
    const reasons = (e as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
    if (!reasons || reasons.some((r) => r?.Code === "ConditionalCheckFailed")) return new LockLost(what);
  }
  return e;
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

function unmarshallItem(raw: Record<string, unknown>): Item {
  // ReturnValuesOnConditionCheckFailure comes back in the low-level attribute-value format.
  return unmarshall(raw as never);
}
