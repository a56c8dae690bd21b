// The table and the lock protocol against DynamoDB Local.
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { startDynamoDbLocal } from "@ottava/local/dynamodb-local";
import { DescribeTableCommand, DescribeTimeToLiveCommand, GetItemCommand } from "@aws-sdk/client-dynamodb";
import {
  ACTIVE,
  DELETED,
  ERROR,
  LockConflict,
  LockLost,
  MUTABLE_STATUSES,
  PENDING_UPDATE,
  type ChildWrite,
  lightItems,
  listPage,
  loadBalancerDescriptor,
  parseListQuery,
} from "@ottava/core";
import { DynamoStore, INDEXES, createClients, ensureTable } from "@ottava/db";
import { activeLb, freshTable } from "./support";

let store: DynamoStore;
let tableName: string;
let endpoint: string;

beforeAll(async () => {
  const t = await freshTable();
  store = t.store;
  tableName = t.config.tableName;
  endpoint = t.config.dynamodbEndpoint!;
});

describe("table", () => {
  it("is created with its indexes and TTL, idempotently", async () => {
    const { client } = createClients(endpoint);
    await ensureTable(client, tableName);
    await ensureTable(client, tableName);
    const d = await client.send(new DescribeTableCommand({ TableName: tableName }));
    expect(d.Table!.GlobalSecondaryIndexes!.map((g) => g.IndexName).sort()).toEqual(Object.keys(INDEXES).sort());
    const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    expect(ttl.TimeToLiveDescription!.AttributeName).toBe("expires_at");
  });
});

describe("the lock", () => {
  it("is taken by one conditional write from an allowed status, bumping the version", async () => {
    const rec = (await activeLb(store)).loadbalancer;
    const before = (await store.getLoadBalancer(rec.id))!;
    const locked = await store.lock(rec.id, {
      from: MUTABLE_STATUSES,
      to: PENDING_UPDATE,
      owner: "update-1",
      executionArn: "arn:1",
      expectVersion: before.version,
      set: { name: "new" },
    });
    expect(locked.record.provisioning_status).toBe(PENDING_UPDATE);
    expect(locked.record.name).toBe("new");
    expect(locked.version).toBe(before.version + 1);
    expect(locked.lockOwner).toBe("update-1");
  });

  it("is refused while another holds it, telling what is there", async () => {
    const rec = (await activeLb(store)).loadbalancer;
    const v = (await store.getLoadBalancer(rec.id))!.version;
    await store.lock(rec.id, { from: MUTABLE_STATUSES, to: PENDING_UPDATE, owner: "a", executionArn: "arn:a", expectVersion: v });
    const err = await store.lock(rec.id, { from: MUTABLE_STATUSES, to: PENDING_UPDATE, owner: "b", executionArn: "arn:b" }).catch((e) => e);
    expect(err).toBeInstanceOf(LockConflict);
    expect(err.current.record.provisioning_status).toBe(PENDING_UPDATE);
    expect(err.current.lockOwner).toBe("a");
  });

  it("is refused when the version read is no longer current", async () => {
    const rec = (await activeLb(store)).loadbalancer;
    const v = (await store.getLoadBalancer(rec.id))!.version;
    await store.lock(rec.id, { from: MUTABLE_STATUSES, to: PENDING_UPDATE, owner: "a", executionArn: "arn:a", expectVersion: v });
    await store.updateLoadBalancer(rec.id, "a", { provisioning_status: ACTIVE }, true);
    await expect(
      store.lock(rec.id, { from: MUTABLE_STATUSES, to: PENDING_UPDATE, owner: "b", executionArn: "arn:b", expectVersion: v }),
    ).rejects.toBeInstanceOf(LockConflict);
  });

  it("lets exactly one of many racing writers win", async () => {
    const rec = (await activeLb(store)).loadbalancer;
    const v = (await store.getLoadBalancer(rec.id))!.version;
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        store.lock(rec.id, {
          from: MUTABLE_STATUSES,
          to: PENDING_UPDATE,
          owner: `w${i}`,
          executionArn: "arn",
          expectVersion: v,
          set: { name: `w${i}` },
        }),
      ),
    );
    const won = results.filter((r) => r.status === "fulfilled");
    expect(won).toHaveLength(1);
    const winner = (won[0] as PromiseFulfilledResult<{ lockOwner: string }>).value.lockOwner;
    expect((await store.getLoadBalancer(rec.id))!.record.name).toBe(winner);
  });

  it("guards every flow write: a stale owner writes nothing", async () => {
    const rec = (await activeLb(store)).loadbalancer;
    await expect(store.updateLoadBalancer(rec.id, `create-${rec.id}`, { name: "stale" })).rejects.toBeInstanceOf(LockLost);
    expect((await store.getLoadBalancer(rec.id))!.record.name).toBe("lb");
  });

  it("never resurrects a deleted item", async () => {
    const id = randomUUID();
    await expect(store.updateLoadBalancer(id, "x", { provisioning_status: ERROR }, true)).rejects.toBeInstanceOf(LockLost);
    expect(await store.getLoadBalancer(id)).toBeUndefined();
  });

  it("is given back by abandonLock, restoring what the lock changed", async () => {
    const rec = (await activeLb(store)).loadbalancer;
    const v = (await store.getLoadBalancer(rec.id))!.version;
    await store.lock(rec.id, {
      from: MUTABLE_STATUSES,
      to: PENDING_UPDATE,
      owner: "u",
      executionArn: "arn",
      expectVersion: v,
      set: { name: "changed" },
    });
    await store.abandonLock(rec.id, "u", { provisioning_status: ACTIVE, name: "lb" });
    const after = (await store.getLoadBalancer(rec.id))!;
    expect(after.record.provisioning_status).toBe(ACTIVE);
    expect(after.record.name).toBe("lb");
    expect(after.lockOwner).toBeUndefined();
  });
});

describe("lists", () => {
  it("page one project's items and every project's (merged shards) in storage order", async () => {
    const project = `proj-${randomUUID()}`;
    const mine: string[] = [];
    for (let i = 0; i < 12; i++)
      mine.push(
        (await activeLb(store, { fields: { project_id: project, created_at: new Date(Date.UTC(2030, 0, 1, 0, 0, i)).toISOString() } })).id,
      );
    const q = (s: string) =>
      parseListQuery(
        [...new URLSearchParams(s).entries()],
        ["id", "created_at", "project_id", "name"],
        { project_id: "project_id", name: "name" },
        1000,
      );
    const pages: string[] = [];
    let marker = "";
    for (;;) {
      const page = await listPage(store.loadBalancers(project), q(`limit=5${marker}`), "http://h/x");
      pages.push(...page.items.map((i) => String(i.id)));
      const next = page.links.find((l) => l.rel === "next");
      if (!next) break;
      marker = `&marker=${new URL(next.href).searchParams.get("marker")}`;
    }
    expect(pages).toEqual(mine);
    // Across all projects: the newest 12 (created in 2030) come last in ascending order.
    const all = await listPage(store.loadBalancers(undefined), q("sort=created_at:desc,id:desc&limit=12"), "http://h/x");
    expect(all.items.map((i) => i.id)).toEqual([...mine].reverse());
  });

  it("leave out DELETED items, which keep a TTL for purging", async () => {
    const rec = (await activeLb(store, { fields: { project_id: "gone" } })).loadbalancer;
    const v = (await store.getLoadBalancer(rec.id))!.version;
    await store.lock(rec.id, { from: MUTABLE_STATUSES, to: "PENDING_DELETE", owner: "d", executionArn: "arn", expectVersion: v });
    await store.updateLoadBalancer(rec.id, "d", { provisioning_status: DELETED }, true);
    const page = await listPage(store.loadBalancers("gone"), parseListQuery([], ["id", "created_at"], {}, 1000), "http://h/x");
    expect(page.items).toEqual([]);
    const raw = await createClients(endpoint).client.send(
      new GetItemCommand({ TableName: tableName, Key: { pk: { S: `LB#${rec.id}` }, sk: { S: "LB" } } }),
    );
    expect(Number(raw.Item!.expires_at!.N)).toBeGreaterThan(Date.now() / 1000);
    expect(raw.Item!.gsi1pk).toBeUndefined();
  });

  it("in a non-default order read the scope projected, in segments of its time span, each item once", async () => {
    const project = `seg-${randomUUID()}`;
    // Several objects on each whole second of 0..8: exactly on the segments' bounds (8 segments of 1 s).
    const made: string[] = [];
    for (let i = 0; i < 27; i++)
      made.push(
        (
          await activeLb(store, {
            fields: { project_id: project, name: `n${i % 5}`, created_at: new Date(Date.UTC(2032, 0, 1, 0, 0, i % 9)).toISOString() },
          })
        ).id,
      );
    const q = (s: string) =>
      parseListQuery([...new URLSearchParams(s).entries()], loadBalancerDescriptor.attributes, loadBalancerDescriptor.filters, 1000);
    for (const query of [
      "sort=name:desc",
      "sort=name:asc,created_at:desc",
      `sort=id&limit=5&marker=${made[13]}`,
      `sort=name:desc&limit=4&marker=${made[7]}&page_reverse=true`,
      "sort=name&name=n1&name=n3",
    ]) {
      const whole = await listPage(store.loadBalancers(project), q(query), "http://h/x");
      const light = await listPage(store.loadBalancers(project), q(query), "http://h/x", lightItems(loadBalancerDescriptor));
      expect(
        light.items.map((i) => i.id),
        query,
      ).toEqual(whole.items.map((i) => i.id));
    }
    expect(
      (await listPage(store.loadBalancers(project), q("sort=name:desc"), "http://h/x", lightItems(loadBalancerDescriptor))).items,
    ).toHaveLength(27);
  });

  it("answer an unknown marker with Octavia's 400", async () => {
    await expect(
      listPage(store.loadBalancers("p1"), parseListQuery([["marker", "nope"]], ["id", "created_at"], {}, 1000), "http://h/x"),
    ).rejects.toThrow("Supplied pagination marker 'nope' is not valid.");
  });
});

describe("the name index", () => {
  const q = (s: string) =>
    parseListQuery(
      [...new URLSearchParams(s).entries()],
      ["id", "created_at", "project_id", "name"],
      { project_id: "project_id", name: "name" },
      1000,
    );
  const ids = async (project: string | undefined, s: string, source = store.loadBalancers(project)) =>
    (await listPage(source, q(s), "http://h/x")).items.map((i) => String(i.id));
  const raw = async (pk: string, sk: string) =>
    (
      await createClients(endpoint).client.send(
        new GetItemCommand({ TableName: tableName, Key: { pk: { S: pk }, sk: { S: sk } }, ConsistentRead: true }),
      )
    ).Item!;
  const rename = async (id: string, name: string | null, owner = `u-${randomUUID()}`) => {
    const v = (await store.getLoadBalancer(id))!.version;
    await store.lock(id, { from: MUTABLE_STATUSES, to: PENDING_UPDATE, owner, executionArn: "arn", expectVersion: v, set: { name } });
    await store.updateLoadBalancer(id, owner, { provisioning_status: ACTIVE }, true);
  };

  it("holds a live named item under <kind>#<name>, in storage order; a nameless one not", async () => {
    const name = `n-${randomUUID()}`;
    const rec = (await activeLb(store, { fields: { name } })).loadbalancer;
    const item = await raw(`LB#${rec.id}`, "LB");
    expect(item[INDEXES.byName.pk]!.S).toBe(`loadbalancer#${name}`);
    expect(item[INDEXES.byName.sk]!.S).toBe(item[INDEXES.byProject.sk]!.S);
    for (const nameless of [null, ""]) {
      const other = (await activeLb(store, { fields: { name: nameless } })).loadbalancer;
      expect((await raw(`LB#${other.id}`, "LB"))[INDEXES.byName.pk]).toBeUndefined();
    }
  });

  it("answers ?name= for a project and for every project, one or several names, paged both ways", async () => {
    const [n1, n2, p, other] = [`a-${randomUUID()}`, `b-${randomUUID()}`, `p-${randomUUID()}`, `o-${randomUUID()}`];
    const at = (i: number) => new Date(Date.UTC(2031, 0, 1, 0, 0, i)).toISOString();
    const mine: string[] = [];
    const theirs: string[] = [];
    for (let i = 0; i < 6; i++) {
      mine.push((await activeLb(store, { fields: { project_id: p, name: i % 2 ? n2 : n1, created_at: at(2 * i) } })).id);
      theirs.push((await activeLb(store, { fields: { project_id: other, name: n1, created_at: at(2 * i + 1) } })).id);
    }
    await activeLb(store, { fields: { project_id: p, name: `c-${randomUUID()}` } });
    const mineN1 = mine.filter((_, i) => i % 2 === 0);
    expect(await ids(p, `name=${n1}`)).toEqual(mineN1);
    expect(await ids(p, `name=${n1}&name=${n2}`)).toEqual(mine);
    expect(await ids(p, `name=nomatch-${randomUUID()}`)).toEqual([]);
    // Every project's: the two projects' items merged in storage order.
    expect(await ids(undefined, `name=${n1}`)).toEqual(mineN1.flatMap((id, i) => [id, theirs[2 * i]!, theirs[2 * i + 1]!]));
    // Paging: forward after a marker, backwards before it, descending.
    expect(await ids(p, `name=${n1}&name=${n2}&limit=2&marker=${mine[1]}`)).toEqual(mine.slice(2, 4));
    expect(await ids(p, `name=${n1}&name=${n2}&limit=2&marker=${mine[4]}&page_reverse=true`)).toEqual(mine.slice(2, 4));
    expect(await ids(p, `name=${n1}&name=${n2}&sort=created_at:desc,id:desc&limit=3`)).toEqual([...mine].reverse().slice(0, 3));
    await expect(ids(p, `name=${n1}&marker=nope`)).rejects.toThrow("Supplied pagination marker 'nope' is not valid.");
  });

  it("follows renames: the lock's new name, null, a restored name; DELETED leaves it", async () => {
    const [before, after] = [`x-${randomUUID()}`, `y-${randomUUID()}`];
    const rec = (await activeLb(store, { fields: { name: before } })).loadbalancer;
    await rename(rec.id, after);
    expect(await ids(undefined, `name=${before}`)).toEqual([]);
    expect(await ids(undefined, `name=${after}`)).toEqual([rec.id]);
    const item = await raw(`LB#${rec.id}`, "LB");
    expect(item[INDEXES.byName.sk]!.S).toBe(item[INDEXES.byProject.sk]!.S);
    await rename(rec.id, null);
    expect(await ids(undefined, `name=${after}`)).toEqual([]);
    expect((await raw(`LB#${rec.id}`, "LB"))[INDEXES.byName.pk]).toBeUndefined();
    // A lock whose flow cannot start gives the old name back, and its index entry.
    await rename(rec.id, before);
    const v = (await store.getLoadBalancer(rec.id))!.version;
    await store.lock(rec.id, {
      from: MUTABLE_STATUSES,
      to: PENDING_UPDATE,
      owner: "u",
      executionArn: "arn",
      expectVersion: v,
      set: { name: after },
    });
    expect(await ids(undefined, `name=${after}`)).toEqual([rec.id]);
    await store.abandonLock(rec.id, "u", { provisioning_status: ACTIVE, name: before });
    expect(await ids(undefined, `name=${after}`)).toEqual([]);
    expect(await ids(undefined, `name=${before}`)).toEqual([rec.id]);
    const v2 = (await store.getLoadBalancer(rec.id))!.version;
    await store.lock(rec.id, { from: MUTABLE_STATUSES, to: "PENDING_DELETE", owner: "d", executionArn: "arn", expectVersion: v2 });
    await store.updateLoadBalancer(rec.id, "d", { provisioning_status: DELETED }, true);
    expect(await ids(undefined, `name=${before}`)).toEqual([]);
    expect((await raw(`LB#${rec.id}`, "LB"))[INDEXES.byName.pk]).toBeUndefined();
    // A rename refused by the lock's condition (the LB is DELETED) is the lock conflict it always was.
    await expect(
      store.lock(rec.id, { from: MUTABLE_STATUSES, to: PENDING_UPDATE, owner: "late", executionArn: "arn", set: { name: after } }),
    ).rejects.toBeInstanceOf(LockConflict);
  });

  it("follows a child's renames too", async () => {
    const lbRec = (await activeLb(store)).loadbalancer;
    const [n1, n2] = [`l-${randomUUID()}`, `m-${randomUUID()}`];
    const listener = {
      id: randomUUID(),
      project_id: "p1",
      loadbalancer_id: lbRec.id,
      name: n1,
      provisioning_status: ACTIVE,
      created_at: new Date().toISOString(),
    };
    const write = async (writes: ChildWrite[]) => {
      const owner = `w-${randomUUID()}`;
      await store.lockWith(lbRec.id, { from: MUTABLE_STATUSES, to: PENDING_UPDATE, owner, executionArn: "arn" }, writes);
      await store.updateLoadBalancer(lbRec.id, owner, { provisioning_status: ACTIVE }, true);
    };
    const listeners = (s: string) => ids(undefined, s, store.children("listener", undefined));
    await write([{ kind: "listener", put: listener }]);
    expect(await listeners(`name=${n1}`)).toEqual([listener.id]);
    await write([{ kind: "listener", id: listener.id, set: { name: n2 } }]);
    expect(await listeners(`name=${n1}`)).toEqual([]);
    expect(await listeners(`name=${n2}`)).toEqual([listener.id]);
    await write([{ kind: "listener", id: listener.id, set: { name: "" } }]);
    expect(await listeners(`name=${n2}`)).toEqual([]);
    await write([{ kind: "listener", id: listener.id, set: { name: n1 } }]);
    await write([{ kind: "listener", id: listener.id, set: { provisioning_status: DELETED, name: n2 } }]);
    expect(await listeners(`name=${n1}`)).toEqual([]);
    expect(await listeners(`name=${n2}`)).toEqual([]);
    expect((await raw(`LB#${lbRec.id}`, `LISTENER#${listener.id}`))[INDEXES.byName.pk]).toBeUndefined();
  });

  it("holds no member or L7 rule (nested: listed from the tree), named or renamed", async () => {
    const lbRec = (await activeLb(store)).loadbalancer;
    const now = new Date().toISOString();
    const pool = {
      id: randomUUID(),
      project_id: "p1",
      loadbalancer_id: lbRec.id,
      name: `p-${randomUUID()}`,
      provisioning_status: ACTIVE,
      created_at: now,
    };
    const member = {
      id: randomUUID(),
      project_id: "p1",
      pool_id: pool.id,
      address: "10.0.0.9",
      protocol_port: 80,
      name: `m-${randomUUID()}`,
      provisioning_status: ACTIVE,
      created_at: now,
    };
    const rule = { id: randomUUID(), project_id: "p1", l7policy_id: randomUUID(), provisioning_status: ACTIVE, created_at: now };
    const write = async (writes: ChildWrite[]) => {
      const owner = `w-${randomUUID()}`;
      await store.lockWith(
        lbRec.id,
        {
          from: MUTABLE_STATUSES,
          to: PENDING_UPDATE,
          owner,
          executionArn: "arn",
          expectVersion: (await store.getLoadBalancer(lbRec.id))!.version,
        },
        writes,
      );
      await store.updateLoadBalancer(lbRec.id, owner, { provisioning_status: ACTIVE }, true);
    };
    const listKeys: string[] = Object.values(INDEXES).flatMap((i) => [i.pk, i.sk]);
    const indexed = async (sk: string) => Object.keys(await raw(`LB#${lbRec.id}`, sk)).filter((a) => listKeys.includes(a));
    await write([
      { kind: "pool", put: pool },
      { kind: "member", put: member },
      { kind: "l7rule", put: rule },
    ]);
    expect(await indexed(`POOL#${pool.id}`)).toEqual(expect.arrayContaining([INDEXES.byProject.pk, INDEXES.byShard.pk, INDEXES.byName.pk]));
    expect(await indexed(`MEMBER#${pool.id}#${member.id}`)).toEqual([]);
    expect(await indexed(`L7RULE#${rule.id}`)).toEqual([]);
    await write([
      { kind: "member", id: member.id, pool_id: pool.id, set: { name: `n-${randomUUID()}`, provisioning_status: PENDING_UPDATE } },
    ]);
    expect(await indexed(`MEMBER#${pool.id}#${member.id}`)).toEqual([]);
  });
});

describe("transaction conflicts", () => {
  it("are retried, not answered", async () => {
    const { retryConflicts, isTransactionConflict } = await import("@ottava/db");
    let calls = 0;
    const conflict = Object.assign(new Error("conflict"), {
      name: "TransactionCanceledException",
      CancellationReasons: [{ Code: "None" }, { Code: "TransactionConflict" }],
    });
    const result = await retryConflicts(async () => {
      if (++calls < 3) throw conflict;
      return "done";
    });
    expect([result, calls]).toEqual(["done", 3]);
    expect(isTransactionConflict(Object.assign(new Error("x"), { name: "TransactionConflictException" }))).toBe(true);
    const failed = Object.assign(new Error("x"), {
      name: "TransactionCanceledException",
      CancellationReasons: [{ Code: "ConditionalCheckFailed" }],
    });
    expect(isTransactionConflict(failed)).toBe(false);
    await expect(retryConflicts(async () => Promise.reject(failed))).rejects.toBe(failed);
  });
});

describe("ensureTable on an older table", () => {
  it("adds the indexes it lacks", { timeout: 180_000 }, async () => {
    // Its own DynamoDB Local: an index backfill waits behind every other test's tables in the shared one.
    const own = await startDynamoDbLocal({ inMemory: true, dataDir: mkdtempSync(join(tmpdir(), "ottava-index-")) });
    onTestFinished(() => own.stop());
    const { client } = createClients(own.endpoint);
    const { CreateTableCommand } = await import("@aws-sdk/client-dynamodb");
    const name = `old-${randomUUID()}`;
    // A table from before the `pending` index existed.
    const keys = (pk: string, sk: string) => [
      { AttributeName: pk, KeyType: "HASH" as const },
      { AttributeName: sk, KeyType: "RANGE" as const },
    ];
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: ["pk", "sk", "gsi1pk", "gsi1sk", "gsi2pk", "gsi2sk"].map((a) => ({
          AttributeName: a,
          AttributeType: "S" as const,
        })),
        KeySchema: keys("pk", "sk"),
        GlobalSecondaryIndexes: [
          { IndexName: "byProject", KeySchema: keys("gsi1pk", "gsi1sk"), Projection: { ProjectionType: "ALL" } },
          { IndexName: "byShard", KeySchema: keys("gsi2pk", "gsi2sk"), Projection: { ProjectionType: "ALL" } },
        ],
      }),
    );
    await ensureTable(client, name);
    const d = await client.send(new DescribeTableCommand({ TableName: name }));
    expect(d.Table!.GlobalSecondaryIndexes!.map((g) => g.IndexName).sort()).toEqual(Object.keys(INDEXES).sort());
  });
});
