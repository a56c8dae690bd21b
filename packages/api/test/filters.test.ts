// Every filter Octavia accepts, on every list, filters on the value Octavia's data model holds: for
// each collection two objects A and B, and for each accepted key `?key=<A's value>` answers A and,
// where B's value differs, not B. The keys come from Octavia's own answers
// (packages/core/test/fixtures/octavia-filters.json); the expected values are written here from
// Octavia's data model, independently of the descriptors' `model`.
import { beforeAll, describe, expect, it } from "vitest";
import { compareBy, parseListQuery } from "@ottava/core";
import { octaviaFixture } from "@ottava/core/testing";
import { fault, inProcessApp, pick, PROJECT, SUBNET } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
type Obj = Record<string, any>;
const fixture = octaviaFixture("octavia-filters.json") as {
  collections: Record<string, { accepted: Record<string, string>; refused: Record<string, string> }>;
};

const OTHER = "b1c2d3e4f5a60718293a4b5c6d7e8f90";
let t: App;

/** Per collection: where it is listed, A and B (as answered), their key, and Octavia's data-model values that the response does not show under that name. */
interface Case {
  path: string;
  a: Obj;
  b: Obj;
  key?: string;
  model: (o: Obj, which: "a" | "b") => Obj;
}
const cases: Record<string, Case> = {};

const get = async (path: string) => {
  const res = await t.call("GET", path);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const create = async (path: string, root: string, body: Obj) => {
  const res = await t.call("POST", path, { [root]: body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body[root] as Obj;
};
const byName = (list: Obj[], name: string) => list.find((o) => o.name === name)!;

beforeAll(async () => {
  t = await inProcessApp();
  const lbA = await create("/v2/lbaas/loadbalancers", "loadbalancer", {
    name: "lb-a",
    vip_subnet_id: SUBNET,
    vip_sg_ids: ["6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"],
    listeners: [
      { name: "a1", protocol: "HTTP", protocol_port: 80, default_pool: { name: "pa" } },
      {
        name: "a2",
        protocol: "TERMINATED_HTTPS",
        protocol_port: 443,
        default_tls_container_ref: "tls-a",
        default_pool: { name: "pa" },
        l7policies: [
          {
            name: "pol-a",
            action: "REJECT",
            position: 1,
            rules: [
              { type: "PATH", compare_type: "STARTS_WITH", value: "/a" },
              { type: "HOST_NAME", compare_type: "EQUAL_TO", value: "a.example", invert: true, admin_state_up: false },
            ],
          },
        ],
      },
    ],
    pools: [
      {
        name: "pa",
        protocol: "HTTP",
        lb_algorithm: "ROUND_ROBIN",
        members: [
          { name: "ma", address: "10.0.0.1", protocol_port: 80, weight: 3 },
          { name: "mb", address: "10.0.0.2", protocol_port: 81, backup: true, admin_state_up: false },
        ],
        healthmonitor: { name: "hma", type: "HTTP", delay: 5, timeout: 3, max_retries: 2, max_retries_down: 4 },
      },
    ],
  });
  const lbB = await create("/v2/lbaas/loadbalancers", "loadbalancer", {
    name: "lb-b",
    project_id: OTHER,
    admin_state_up: false,
    vip_subnet_id: SUBNET,
    listeners: [
      { name: "b1", protocol: "TCP", protocol_port: 9000, default_pool: { name: "pb" } },
      {
        name: "b2",
        protocol: "HTTP",
        protocol_port: 8080,
        l7policies: [
          {
            name: "pol-b",
            action: "REDIRECT_TO_URL",
            redirect_url: "http://b.example",
            position: 1,
            rules: [{ type: "HEADER", key: "X", compare_type: "EQUAL_TO", value: "b" }],
          },
        ],
      },
    ],
    pools: [
      {
        name: "pb",
        protocol: "TCP",
        lb_algorithm: "LEAST_CONNECTIONS",
        admin_state_up: false,
        healthmonitor: { name: "hmb", type: "TCP", delay: 7, timeout: 4, max_retries: 5 },
      },
    ],
  });
  await t.settle();

  const lbs = (await get("/v2/lbaas/loadbalancers")).loadbalancers as Obj[];
  const listeners = (await get("/v2/lbaas/listeners")).listeners as Obj[];
  const pools = (await get("/v2/lbaas/pools")).pools as Obj[];
  const hms = (await get("/v2/lbaas/healthmonitors")).healthmonitors as Obj[];
  const policies = (await get("/v2/lbaas/l7policies")).l7policies as Obj[];
  const amphorae = (await get("/v2/octavia/amphorae")).amphorae as Obj[];
  const pa = byName(pools, "pa");
  const polA = byName(policies, "pol-a");
  const members = (await get(`/v2/lbaas/pools/${pa.id}/members`)).members as Obj[];
  const rules = (await get(`/v2/lbaas/l7policies/${polA.id}/rules`)).rules as Obj[];
  const enabled = (o: Obj) => ({ enabled: o.admin_state_up });

  cases.loadbalancers = {
    path: "/v2/lbaas/loadbalancers",
    a: byName(lbs, "lb-a"),
    b: byName(lbs, "lb-b"),
    model: (o) => ({
      ...enabled(o),
      topology: "SINGLE",
      server_group_id: null,
      "vip.ip_address": o.vip_address,
      "vip.network_id": o.vip_network_id,
      "vip.port_id": o.vip_port_id,
      "vip.qos_policy_id": o.vip_qos_policy_id,
      "vip.sg_ids": o.vip_sg_ids,
      "vip.subnet_id": o.vip_subnet_id,
      "vip.vnic_type": o.vip_vnic_type,
    }),
  };
  cases.listeners = {
    path: "/v2/lbaas/listeners",
    a: byName(listeners, "a2"),
    b: byName(listeners, "b1"),
    // Peer ports count up from 1025 per load balancer: a1 1025, a2 1026; b1 1025.
    model: (o, which) => ({
      ...enabled(o),
      load_balancer_id: o.loadbalancers[0].id,
      tls_certificate_id: o.default_tls_container_ref,
      client_ca_tls_certificate_id: o.client_ca_tls_container_ref,
      client_crl_container_id: o.client_crl_container_ref,
      peer_port: which === "a" ? 1026 : 1025,
    }),
  };
  cases.pools = {
    path: "/v2/lbaas/pools",
    a: pa,
    b: byName(pools, "pb"),
    model: (o) => ({
      ...enabled(o),
      load_balancer_id: o.loadbalancers[0].id,
      tls_certificate_id: o.tls_container_ref,
      ca_tls_certificate_id: o.ca_tls_container_ref,
      crl_container_id: o.crl_container_ref,
      "health_monitor.id": o.healthmonitor_id,
    }),
  };
  cases.members = {
    path: `/v2/lbaas/pools/${pa.id}/members`,
    a: byName(members, "ma"),
    b: byName(members, "mb"),
    model: (o) => ({ ...enabled(o), ip_address: o.address, pool_id: pa.id }),
  };
  cases.healthmonitors = {
    path: "/v2/lbaas/healthmonitors",
    a: byName(hms, "hma"),
    b: byName(hms, "hmb"),
    model: (o) => ({ ...enabled(o), rise_threshold: o.max_retries, fall_threshold: o.max_retries_down, pool_id: o.pools[0].id }),
  };
  cases.l7policies = { path: "/v2/lbaas/l7policies", a: polA, b: byName(policies, "pol-b"), model: enabled };
  cases.rules = {
    path: `/v2/lbaas/l7policies/${polA.id}/rules`,
    a: rules.find((r) => r.type === "PATH")!,
    b: rules.find((r) => r.type === "HOST_NAME")!,
    model: (o) => ({ ...enabled(o), l7policy_id: polA.id }),
  };
  cases.amphorae = {
    path: "/v2/octavia/amphorae",
    a: amphorae.find((a) => a.loadbalancer_id === lbA.id)!,
    b: amphorae.find((a) => a.loadbalancer_id === lbB.id)!,
    model: (o, which) => ({ load_balancer_id: o.loadbalancer_id, "load_balancer.project_id": which === "a" ? PROJECT : OTHER }),
  };

  const fpA = await create("/v2/lbaas/flavorprofiles", "flavorprofile", {
    name: "fp-a",
    provider_name: "amphora",
    flavor_data: '{"loadbalancer_topology": "SINGLE"}',
  });
  const fpB = await create("/v2/lbaas/flavorprofiles", "flavorprofile", { name: "fp-b", provider_name: "octavia", flavor_data: "{}" });
  cases.flavorprofiles = { path: "/v2/lbaas/flavorprofiles", a: fpA, b: fpB, model: () => ({}) };
  cases.flavors = {
    path: "/v2/lbaas/flavors",
    a: await create("/v2/lbaas/flavors", "flavor", { name: "f-a", description: "da", flavor_profile_id: fpA.id }),
    b: await create("/v2/lbaas/flavors", "flavor", { name: "f-b", flavor_profile_id: fpB.id, enabled: false }),
    model: () => ({}),
  };
  const azpA = await create("/v2/lbaas/availabilityzoneprofiles", "availability_zone_profile", {
    name: "azp-a",
    provider_name: "amphora",
    availability_zone_data: '{"compute_zone": "a"}',
  });
  const azpB = await create("/v2/lbaas/availabilityzoneprofiles", "availability_zone_profile", {
    name: "azp-b",
    provider_name: "octavia",
    availability_zone_data: '{"compute_zone": "b"}',
  });
  cases.availability_zone_profiles = { path: "/v2/lbaas/availabilityzoneprofiles", a: azpA, b: azpB, model: () => ({}) };
  cases.availability_zones = {
    path: "/v2/lbaas/availabilityzones",
    key: "name",
    a: await create("/v2/lbaas/availabilityzones", "availability_zone", {
      name: "az-a",
      description: "da",
      availability_zone_profile_id: azpA.id,
    }),
    b: await create("/v2/lbaas/availabilityzones", "availability_zone", {
      name: "az-b",
      availability_zone_profile_id: azpB.id,
      enabled: false,
    }),
    model: () => ({}),
  };
  for (const [project, n] of [
    [PROJECT, 5],
    [OTHER, 7],
  ] as const) {
    expect(
      (await t.call("PUT", `/v2/lbaas/quotas/${project}`, { quota: { load_balancer: n, member: n, health_monitor: n + 1 } })).status,
    ).toBe(202);
  }
  const quotas = (await get("/v2/lbaas/quotas")).quotas as Obj[];
  cases.quotas = {
    path: "/v2/lbaas/quotas",
    key: "project_id",
    a: quotas.find((q) => q.project_id === PROJECT)!,
    b: quotas.find((q) => q.project_id === OTHER)!,
    // Under noauth Octavia counts no usage: its in_use_* columns stay null.
    model: () =>
      Object.fromEntries(
        ["load_balancer", "listener", "member", "pool", "health_monitor", "l7policy", "l7rule"].map((f) => [`in_use_${f}`, null]),
      ),
  };
}, 120_000);

/** The query value that stands for a data-model value; undefined where there is nothing to compare (a dict, an empty list). */
function queryValue(v: unknown): string | undefined {
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) return v.length ? String(v[0]) : undefined;
  if (typeof v === "object") return undefined;
  return String(v);
}

describe("every accepted filter filters on Octavia's data-model value", () => {
  for (const [collection, { accepted }] of Object.entries(fixture.collections)) {
    it(collection, async () => {
      const c = cases[collection]!;
      expect(c, `no case for ${collection}`).toBeDefined();
      const key = c.key ?? "id";
      const valueOf = (o: Obj, which: "a" | "b", attribute: string) => {
        const model = c.model(o, which);
        if (Object.hasOwn(model, attribute)) return model[attribute];
        expect(Object.hasOwn(o, attribute), `${collection}: no expected value for ${attribute}`).toBe(true);
        return o[attribute];
      };
      for (const [name, attribute] of Object.entries(accepted)) {
        const va = queryValue(valueOf(c.a, "a", attribute));
        const vb = queryValue(valueOf(c.b, "b", attribute));
        const sep = c.path.includes("?") ? "&" : "?";
        const res = await t.call("GET", `${c.path}${sep}${new URLSearchParams([[name, va ?? "{}"]])}`);
        expect(res.status, `${collection}?${name}: ${JSON.stringify(res.body)}`).toBe(200);
        if (va === undefined) continue;
        const found = (Object.values(res.body).find(Array.isArray) as Obj[]).map((o) => o[key]);
        expect(found, `${collection}?${name}=${va}`).toContain(c.a[key]);
        if (vb !== va) expect(found, `${collection}?${name}=${va} (B has ${vb})`).not.toContain(c.b[key]);
      }
    });
  }
});

/** The lists of objects in load balancers' trees (the others are catalog lists, which read whole items). */
const TREE_LISTS = ["loadbalancers", "listeners", "pools", "members", "healthmonitors", "l7policies", "rules", "amphorae"];

describe("in a non-default order (read projected, then the page's whole items): the answers of whole-item lists", () => {
  for (const collection of TREE_LISTS) {
    it(collection, async () => {
      const c = cases[collection]!;
      const sep = c.path.includes("?") ? "&" : "?";
      const list = async (query: [string, string][]) => {
        const res = await t.call("GET", `${c.path}${sep}${new URLSearchParams(query)}`);
        expect(res.status, `${collection}?${new URLSearchParams(query)}: ${JSON.stringify(res.body)}`).toBe(200);
        return Object.values(res.body).find(Array.isArray) as Obj[];
      };
      // What listPage's whole-item path does: sort the default order's answers by the query's keys.
      const sorted = (items: Obj[], key: string, dir: string) => {
        const q = parseListQuery([["sort", `${key}:${dir}`]], Object.keys(c.a), {});
        return [...items].sort(compareBy(q.sort));
      };
      const all = await list([]);
      expect(all.length).toBeGreaterThanOrEqual(2);
      for (const key of Object.keys(c.a).filter((k) => k !== "tags")) {
        // (created_at:asc is the storage order, by the stored instant: not this path.)
        for (const dir of key === "created_at" ? ["desc"] : ["asc", "desc"])
          expect(await list([["sort", `${key}:${dir}`]]), `${collection}?sort=${key}:${dir}`).toEqual(sorted(all, key, dir));
      }
      const key = Object.hasOwn(c.a, "name") ? "name" : "id";
      const expected = sorted(all, key, "desc");
      for (let i = 0; i < expected.length; i++) {
        const marker = expected[i]!.id as string;
        expect(
          await list([
            ["sort", `${key}:desc`],
            ["limit", "1"],
            ["marker", marker],
          ]),
        ).toEqual(expected.slice(i + 1, i + 2));
        expect(
          await list([
            ["sort", `${key}:desc`],
            ["limit", "1"],
            ["marker", marker],
            ["page_reverse", "true"],
          ]),
        ).toEqual(expected.slice(Math.max(0, i - 1), i));
      }
      for (const [name, attribute] of Object.entries(fixture.collections[collection]!.accepted)) {
        const model = c.model(c.a, "a");
        const value = queryValue(Object.hasOwn(model, attribute) ? model[attribute] : c.a[attribute]);
        if (value === undefined) continue;
        const filtered = await list([[name, value]]);
        expect(
          await list([
            [name, value],
            ["sort", `${key}:desc`],
          ]),
          `${collection}?${name}=${value}&sort=${key}:desc`,
        ).toEqual(sorted(filtered, key, "desc"));
      }
    });
  }
});

describe("refused filters", () => {
  it("answer Octavia's 400 on every list, relationships included, and nothing of the model is answered", async () => {
    for (const [collection, { refused }] of Object.entries(fixture.collections)) {
      for (const name of Object.keys(refused)) {
        const path = cases[collection]!.path;
        expect(pick(await t.call("GET", `${path}?${name}=x`)), `${collection}?${name}`).toEqual(
          fault(400, "One or more arguments are either duplicate or invalid"),
        );
      }
    }
    const lb = (await get(`/v2/lbaas/loadbalancers?name=lb-a`)).loadbalancers[0] as Obj;
    for (const hidden of ["enabled", "topology", "server_group_id", "vip.ip_address"]) expect(lb).not.toHaveProperty([hidden]);
  });

  it("the clients' calls: openstacksdk's and gophercloud's filters answer 200", async () => {
    const pool = cases.pools!.a;
    const lb = cases.loadbalancers!.a;
    const policy = cases.l7policies!.a;
    const hms = await get(`/v2/lbaas/healthmonitors?pool_id=${pool.id}`);
    expect(hms.healthmonitors.map((h: Obj) => h.id)).toEqual([pool.healthmonitor_id]);
    const listeners = await get(`/v2/lbaas/listeners?load_balancer_id=${lb.id}`);
    expect(listeners.listeners.map((l: Obj) => l.name).sort()).toEqual(["a1", "a2"]);
    const rules = await get(`/v2/lbaas/l7policies/${policy.id}/rules?l7policy_id=${policy.id}`);
    expect(rules.rules).toHaveLength(2);
  });
});
