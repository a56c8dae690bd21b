// What lists read: `?name=` only the items of those names (the byName index), a non-default order
// only what its sort keys and filters need (then the page's whole items), with the same answers as
// a list that reads every whole item.
import { beforeAll, describe, expect, it } from "vitest";
import type { LoadBalancer } from "@ottava/core";
import { DynamoMeter, addMetering } from "@ottava/db/testing";
import { activeLb, inProcessApp, PROJECT, SUBNET } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
type Obj = Record<string, any>;

const OTHER = "c2d3e4f5a6b70819203a4b5c6d7e8f90";
const LBS = "/v2/lbaas/loadbalancers";
let t: App;
const meter = new DynamoMeter();
/** Every LB stored, oldest first (storage order). */
const made: LoadBalancer[] = [];

/** Stores an ACTIVE LB as its create flow would leave it (no flow: these tests are about reading). */
async function stored(over: Partial<LoadBalancer>) {
  const created_at = new Date(Date.UTC(2030, 0, 1, 0, 0, made.length)).toISOString();
  const { loadbalancer } = await activeLb(t.store, { fields: { project_id: PROJECT, name: null, created_at, ...over } });
  made.push(loadbalancer);
  return loadbalancer;
}

const get = async (path: string) => {
  const res = await t.call("GET", path);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Obj;
};
const ids = async (query: string) => ((await get(`${LBS}?${query}`)).loadbalancers as Obj[]).map((l) => l.id as string);
const idsOf = (pred: (l: LoadBalancer) => boolean) => made.filter(pred).map((l) => l.id);

/** The DynamoDB requests `fn` makes, per operation and index: requests and items read. */
async function metered(fn: () => Promise<unknown>) {
  await t.settle();
  meter.reset();
  await fn();
  const rows = meter.rows();
  const sum = (pred: (op: string, target: string) => boolean) =>
    rows
      .filter((r) => pred(r.op, r.target))
      .reduce((n, r) => ({ requests: n.requests + r.counts.requests, items: n.items + r.counts.items }), { requests: 0, items: 0 });
  return {
    byName: sum((op, target) => op === "Query" && target.startsWith("byName ")),
    lists: sum((op, target) => op === "Query" && /^by(Project|Shard) /.test(target)),
    queries: sum((op) => op === "Query"),
    batchGets: sum((op) => op === "BatchGetItem"),
  };
}

beforeAll(async () => {
  t = await inProcessApp({}, { decorateClient: (client) => addMetering(client, meter) });
  for (let i = 0; i < 5; i++) await stored({ name: "dup" });
  for (let i = 0; i < 3; i++) await stored({ name: "dup", project_id: OTHER });
  await stored({ name: "solo" });
  await stored({ name: null });
  await stored({ name: "" });
  for (let i = 0; i < 30; i++) await stored({ name: `filler-${i % 7}`, project_id: i % 2 ? OTHER : PROJECT });
});

describe("?name=", () => {
  it("answers a project's and every project's matches, one name or several, and nothing for no match", async () => {
    expect(await ids("name=dup")).toEqual(idsOf((l) => l.name === "dup"));
    expect(await ids(`name=dup&project_id=${PROJECT}`)).toEqual(idsOf((l) => l.name === "dup" && l.project_id === PROJECT));
    expect(await ids(`name=dup&project_id=${OTHER}`)).toEqual(idsOf((l) => l.name === "dup" && l.project_id === OTHER));
    expect(await ids("name=solo&name=dup")).toEqual(idsOf((l) => l.name === "dup" || l.name === "solo"));
    expect(await ids(`name=solo&name=dup&project_id=${OTHER}`)).toEqual(idsOf((l) => l.name === "dup" && l.project_id === OTHER));
    expect(await ids("name=nomatch")).toEqual([]);
    // An empty name is no index key: the nameless ones, from the lists' own index.
    expect(await ids("name=")).toEqual(idsOf((l) => !l.name));
  });

  it("pages as before: limit, marker, page_reverse, descending, with the links", async () => {
    const dup = idsOf((l) => l.name === "dup");
    const walked: string[] = [];
    let query = "name=dup&limit=3";
    for (;;) {
      const page = await get(`${LBS}?${query}`);
      walked.push(...page.loadbalancers.map((l: Obj) => l.id));
      const next = (page.loadbalancers_links as Obj[]).find((l) => l.rel === "next");
      if (!next) break;
      query = new URL(next.href).search.slice(1);
      expect(new URL(next.href).searchParams.getAll("name")).toEqual(["dup"]);
    }
    expect(walked).toEqual(dup);
    expect(await ids(`name=dup&limit=2&marker=${dup[5]}&page_reverse=True`)).toEqual(dup.slice(3, 5));
    expect(await ids(`name=dup&limit=2&sort=created_at:desc,id:desc&marker=${dup[5]}`)).toEqual([dup[4], dup[3]]);
    expect(await ids(`name=dup&marker=${dup[0]}&project_id=${OTHER}`)).toEqual(idsOf((l) => l.name === "dup" && l.project_id === OTHER));
    // A marker of another name resumes after it, as in storage order.
    const solo = idsOf((l) => l.name === "solo")[0]!;
    expect(await ids(`name=dup&marker=${solo}`)).toEqual([]);
    expect(await ids(`name=dup&marker=${made[0]!.id}&limit=1`)).toEqual([dup[1]]);
  });

  it("reads only the matches (plus none of the lists' indexes)", async () => {
    const project = await metered(() => ids(`name=dup&project_id=${PROJECT}&limit=10`));
    expect(project.lists.requests).toBe(0);
    expect(project.byName.items).toBeLessThanOrEqual(5 + 1);
    const all = await metered(() => ids("name=dup&limit=10"));
    expect(all.lists.requests).toBe(0);
    expect(all.byName.items).toBeLessThanOrEqual(8 + 1);
    const none = await metered(() => ids("name=nomatch&limit=10"));
    expect(none).toMatchObject({ byName: { requests: 1, items: 0 }, lists: { requests: 0 } });
  });

  it("follows a load balancer's and a listener's renames; a null name leaves the index", async () => {
    const posted = await t.call("POST", LBS, { loadbalancer: { name: "before", vip_subnet_id: SUBNET } });
    expect(posted.status, JSON.stringify(posted.body)).toBe(201);
    await t.settle();
    const rec = posted.body.loadbalancer as Obj;
    const put = async (path: string, root: string, body: Obj) => {
      const res = await t.call("PUT", path, { [root]: body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      await t.settle();
    };
    await put(`${LBS}/${rec.id}`, "loadbalancer", { name: "after" });
    expect(await ids("name=before")).toEqual([]);
    expect(await ids("name=after")).toEqual([rec.id]);
    await put(`${LBS}/${rec.id}`, "loadbalancer", { name: null });
    expect(await ids("name=after")).toEqual([]);
    expect(await ids("name=")).toContain(rec.id);

    const created = await t.call("POST", "/v2/lbaas/listeners", {
      listener: { name: "l-before", loadbalancer_id: rec.id, protocol: "HTTP", protocol_port: 80 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await t.settle();
    const listenerId = created.body.listener.id as string;
    const listeners = async (q: string) => ((await get(`/v2/lbaas/listeners?${q}`)).listeners as Obj[]).map((l) => l.id);
    expect(await listeners("name=l-before")).toEqual([listenerId]);
    await put(`/v2/lbaas/listeners/${listenerId}`, "listener", { name: "l-after" });
    expect(await listeners("name=l-before")).toEqual([]);
    expect(await listeners("name=l-after")).toEqual([listenerId]);
    await put(`/v2/lbaas/listeners/${listenerId}`, "listener", { name: null });
    expect(await listeners("name=l-after")).toEqual([]);
    const del = await t.call("DELETE", `/v2/lbaas/listeners/${listenerId}`);
    expect(del.status).toBe(204);
    await t.settle();
    await put(`${LBS}/${rec.id}`, "loadbalancer", { name: "gone" });
    expect(await ids("name=gone")).toEqual([rec.id]);
    expect((await t.call("DELETE", `${LBS}/${rec.id}`)).status).toBe(204);
    await t.settle();
    expect(await ids("name=gone")).toEqual([]);
  });
});

describe("a non-default order", () => {
  it("reads the scope projected, then only the page's whole items, and answers as before", async () => {
    const all = (await get(`${LBS}?limit=1000`)).loadbalancers as Obj[];
    const byNameDesc = [...all].sort((a, b) =>
      a.name > b.name
        ? -1
        : a.name < b.name
          ? 1
          : a.created_at < b.created_at
            ? -1
            : a.created_at > b.created_at
              ? 1
              : a.id < b.id
                ? -1
                : 1,
    );
    const use = await metered(async () =>
      expect((await get(`${LBS}?sort=name:desc&limit=10`)).loadbalancers).toEqual(byNameDesc.slice(0, 10)),
    );
    expect(use.batchGets.items).toBe(10);
    const marker = byNameDesc[12]!.id;
    expect((await get(`${LBS}?sort=name:desc&limit=4&marker=${marker}`)).loadbalancers).toEqual(byNameDesc.slice(13, 17));
    expect((await get(`${LBS}?sort=name:desc&limit=4&marker=${marker}&page_reverse=true`)).loadbalancers).toEqual(byNameDesc.slice(8, 12));
    // A project's partition is read in segments of its time span at once: every item once.
    const projectOrder = byNameDesc.filter((l) => l.project_id === PROJECT);
    expect((await get(`${LBS}?sort=name:desc&project_id=${PROJECT}&limit=1000`)).loadbalancers).toEqual(projectOrder);
    expect((await get(`${LBS}?sort=name:asc&project_id=${PROJECT}&limit=1000`)).loadbalancers).toEqual(
      [...projectOrder].sort((a, b) =>
        a.name < b.name
          ? -1
          : a.name > b.name
            ? 1
            : a.created_at < b.created_at
              ? -1
              : a.created_at > b.created_at
                ? 1
                : a.id < b.id
                  ? -1
                  : 1,
      ),
    );
    const mine = byNameDesc.filter((l) => l.project_id === PROJECT && l.name.startsWith("filler"));
    expect((await get(`${LBS}?sort=name:desc&project_id=${PROJECT}&name=filler-3&name=filler-4&limit=3`)).loadbalancers).toEqual(
      mine.filter((l) => l.name === "filler-3" || l.name === "filler-4").slice(0, 3),
    );
    expect((await t.call("GET", `${LBS}?sort=name:desc&marker=nope`)).status).toBe(400);
    // A relation (listeners) is carried on the LB's item: read projected too, then the page's whole items.
    const relation = await metered(async () =>
      expect((await get(`${LBS}?sort=listeners:desc,name&limit=5`)).loadbalancers).toHaveLength(5),
    );
    expect(relation.batchGets.items).toBe(5);
  });

  it("answers nothing, reading nothing, for a project or a name longer than any key", async () => {
    const long = "x".repeat(5000);
    for (const query of [
      `project_id=${long}&sort=name:asc`,
      `name=${long}&sort=name:asc`,
      `name=${long}&project_id=${PROJECT}&sort=name:desc`,
    ]) {
      const use = await metered(async () => expect((await get(`${LBS}?${query}`)).loadbalancers).toEqual([]));
      expect(use.queries.requests, query.slice(0, 40)).toBe(0);
    }
  });
});

// The same answers as whole-item lists for every sort key and filter of every list: filters.test.ts
// ("in a non-default order").
