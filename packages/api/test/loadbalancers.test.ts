// The API in process (app.request) over DynamoDB Local and the real ASL in the local runner.
import { beforeAll, describe, expect, it } from "vitest";
import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { createClients } from "@ottava/db";
import { fault, inProcessApp, pick, PROJECT, SUBNET } from "../../../test/support/app";

let t: Awaited<ReturnType<typeof inProcessApp>>;
const LBS = "/v2/lbaas/loadbalancers";

async function activeLb(extra: Record<string, unknown> = {}) {
  const res = await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, ...extra } });
  expect(res.status).toBe(201);
  await t.settle();
  return res.body.loadbalancer as Record<string, unknown> & { id: string };
}


beforeAll(async () => {
  t = await inProcessApp();
});

describe("versions", () => {
  it("GET / lists v2.0 to v2.30 with v2.30 CURRENT; /v2 and /v2.0 answer \"v2\"", async () => {
    const root = await t.call("GET", "/");
    expect(root.status).toBe(200);
    const versions = root.body.versions as { id: string; status: string; links: { href: string }[] }[];
    expect(versions).toHaveLength(31);
    expect(versions.filter((v) => v.status === "CURRENT").map((v) => v.id)).toEqual(["v2.30"]);
    // Octavia master's dates (api/root_controller.py).
    expect(versions.slice(26).map((v) => [v.id, v.status, (v as { updated?: string }).updated])).toEqual([
      ["v2.26", "SUPPORTED", "2022-08-29T00:00:00Z"],
      ["v2.27", "SUPPORTED", "2023-05-05T00:00:00Z"],
      ["v2.28", "SUPPORTED", "2023-11-08T00:00:00Z"],
      ["v2.29", "SUPPORTED", "2024-10-15T00:00:00Z"],
      ["v2.30", "CURRENT", "2025-02-26T00:00:00Z"],
    ]);
    expect(versions[0]!.links[0]!.href).toBe("http://localhost/v2");
    expect(pick(await t.call("GET", "/v2"))).toEqual({ status: 200, body: "v2" });
    expect(pick(await t.call("GET", "/v2.0"))).toEqual({ status: 200, body: "v2" });
  });

  it("answers unknown paths with a fault body and every response with a request id", async () => {
    const res = await t.call("GET", "/v2/lbaas/nothing");
    expect(pick(res)).toEqual(fault(404, "The resource could not be found."));
    expect(res.headers.get("x-openstack-request-id")).toMatch(/^req-[0-9a-f-]{36}$/);
  });
});

describe("create", () => {
  it("answers 201 PENDING_CREATE/OFFLINE with the VIP already allocated, then the flow makes it ACTIVE", async () => {
    const res = await t.call("POST", LBS, { loadbalancer: { name: "web", vip_subnet_id: SUBNET, tags: ["a", "b"] } });
    expect(res.status).toBe(201);
    const lb = res.body.loadbalancer;
    expect(lb).toMatchObject({
      name: "web",
      description: "",
      provisioning_status: "PENDING_CREATE",
      operating_status: "OFFLINE",
      admin_state_up: true,
      project_id: PROJECT,
      tenant_id: PROJECT,
      vip_address: "198.51.100.1",
      vip_subnet_id: SUBNET,
      provider: "amphora",
      flavor_id: null,
      availability_zone: null,
      additional_vips: [],
      listeners: [],
      pools: [],
      tags: ["a", "b"],
      updated_at: null,
    });
    expect(lb.vip_port_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(lb.vip_network_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(lb.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    await t.settle();
    const shown = await t.call("GET", `${LBS}/${lb.id}`);
    expect(shown.body.loadbalancer).toMatchObject({ provisioning_status: "ACTIVE", operating_status: "OFFLINE" });
  });

  it("takes the project from the body over the X-Project-Id header", async () => {
    const res = await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, project_id: "other" } });
    expect(res.body.loadbalancer.project_id).toBe("other");
  });

  it("refuses a create with no project, as Octavia", async () => {
    const res = await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET } }, { "x-project-id": "" });
    expect(pick(res)).toEqual(
      fault(
        400,
        "Validation failure: Missing project ID in request where one is required. An administrator should check the keystone settings in the Octavia configuration.",
      ),
    );
  });

  it("answers bad input with a 400 fault and writes nothing", async () => {
    const before = (await t.call("GET", LBS)).body.loadbalancers.length;
    const cases: [unknown, number, string][] = [
      [{ loadbalancer: {} }, 400, "Validation failure: VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id."],
      [{ loadbalancer: { vip_subnet_id: SUBNET, bogus: 1 } }, 400, "Unknown attribute for argument load_balancer.loadbalancer: bogus"],
      [{ loadbalancer: { vip_subnet_id: SUBNET, provisioning_status: "ACTIVE" } }, 400, "Unknown attribute for argument load_balancer.loadbalancer: provisioning_status"],
      [{ loadbalancer: { vip_subnet_id: "x" } }, 400, "Invalid input for field/attribute vip_subnet_id. Value: 'x'. Value should be UUID format"],
      [{ loadbalancer: { vip_subnet_id: SUBNET, admin_state_up: "perhaps" } }, 400, "Invalid input for field/attribute admin_state_up. Value: 'perhaps'. Value not an unambiguous boolean: perhaps"],
      [{ loadbalancer: { vip_subnet_id: SUBNET, provider: "f5" } }, 400, "Provider 'f5' is not enabled."],
      [{ loadbalancer: { vip_subnet_id: SUBNET, flavor_id: SUBNET } }, 400, "Validation failure: Invalid flavor_id."],
      [{ loadbalancer: { vip_subnet_id: SUBNET, availability_zone: "nowhere" } }, 400, "Validation failure: Invalid availability zone."],
      [
        { loadbalancer: { vip_subnet_id: SUBNET, additional_vips: [{ subnet_id: SUBNET }] } },
        400,
        "Validation failure: Duplicate VIP subnet(s) specified. Only one IP can be bound per subnet.",
      ],
      ["{not json", 400, "Request is not in valid JSON format"],
      [{ lb: {} }, 400, "Unknown attribute for argument load_balancer: lb"],
    ];
    for (const [body, status, message] of cases) expect(pick(await t.call("POST", LBS, body)), message).toEqual(fault(status, message));
    expect((await t.call("GET", LBS)).body.loadbalancers.length).toBe(before);
  });

  it("accepts the provider alias octavia and keeps additional VIPs", async () => {
    const other = "0c2f6d4e-8a1b-4c3d-9e5f-6a7b8c9d0e1f";
    const res = await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, provider: "octavia", additional_vips: [{ subnet_id: other, ip_address: "203.0.113.9" }] } });
    expect(res.status).toBe(201);
    expect(res.body.loadbalancer.provider).toBe("octavia");
    expect(res.body.loadbalancer.additional_vips).toEqual([{ subnet_id: other, ip_address: "203.0.113.9" }]);
  });
});

describe("show, update, delete, failover", () => {
  it("404s an unknown LB with Octavia's message, on /v2 and /v2.0", async () => {
    const id = "11111111-2222-3333-4444-555555555555";
    expect(pick(await t.call("GET", `${LBS}/${id}`))).toEqual(fault(404, `Load Balancer ${id} not found.`));
    expect(pick(await t.call("PUT", `/v2.0/lbaas/loadbalancers/${id}`, { loadbalancer: { name: "x" } }))).toEqual(fault(404, `Load Balancer ${id} not found.`));
    expect(pick(await t.call("DELETE", `${LBS}/${id}`))).toEqual(fault(404, `Load Balancer ${id} not found.`));
  });

  it("updates only from ACTIVE: 200 PENDING_UPDATE with the new values, else 409", async () => {
    const created = await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, name: "before" } });
    const id = created.body.loadbalancer.id;
    expect(pick(await t.call("PUT", `${LBS}/${id}`, { loadbalancer: { name: "x" } }))).toEqual(fault(409, `Load Balancer ${id} is immutable and cannot be updated.`));
    await t.settle();
    const res = await t.call("PUT", `${LBS}/${id}`, { loadbalancer: { name: "after", admin_state_up: false, tags: ["t"] } });
    expect(res.status).toBe(200);
    expect(res.body.loadbalancer).toMatchObject({ name: "after", admin_state_up: false, tags: ["t"], provisioning_status: "PENDING_UPDATE" });
    await t.settle();
    expect((await t.call("GET", `${LBS}/${id}`)).body.loadbalancer).toMatchObject({ name: "after", provisioning_status: "ACTIVE" });
    expect(pick(await t.call("PUT", `${LBS}/${id}`, { loadbalancer: { vip_address: "10.0.0.1" } }))).toEqual(
      fault(400, "Unknown attribute for argument load_balancer.loadbalancer: vip_address"),
    );
  });

  it("fails over (202) and shows the status tree and stats", async () => {
    const lb = await activeLb();
    const [before] = (await t.call("GET", `/v2/octavia/amphorae?loadbalancer_id=${lb.id}`)).body.amphorae;
    const res = await t.call("PUT", `${LBS}/${lb.id}/failover`);
    expect(res.status).toBe(202);
    expect(res.body).toBeUndefined();
    expect((await t.call("GET", `${LBS}/${lb.id}`)).body.loadbalancer.provisioning_status).toBe("PENDING_UPDATE");
    await t.settle();
    const after = (await t.call("GET", `/v2/octavia/amphorae?loadbalancer_id=${lb.id}`)).body.amphorae;
    expect(after).toHaveLength(1);
    expect(after[0].id).not.toBe(before.id);
    expect(pick(await t.call("GET", `${LBS}/${lb.id}/status`))).toEqual({
      status: 200,
      body: { statuses: { loadbalancer: { id: lb.id, name: "", operating_status: "OFFLINE", provisioning_status: "ACTIVE", listeners: [] } } },
    });
    expect(pick(await t.call("GET", `${LBS}/${lb.id}/stats`))).toEqual({
      status: 200,
      body: { stats: { bytes_in: 0, bytes_out: 0, active_connections: 0, total_connections: 0, request_errors: 0 } },
    });
  });

  it("deletes (204): the LB then answers 404 and is no longer listed, its amphorae gone", async () => {
    const lb = await activeLb({ name: "doomed" });
    const amp = (await t.call("GET", `/v2/octavia/amphorae?loadbalancer_id=${lb.id}`)).body.amphorae[0];
    const res = await t.call("DELETE", `${LBS}/${lb.id}`);
    expect(res.status).toBe(204);
    expect((await t.call("GET", `${LBS}/${lb.id}`)).body.loadbalancer.provisioning_status).toBe("PENDING_DELETE");
    await t.settle();
    expect((await t.call("GET", `${LBS}/${lb.id}`)).status).toBe(404);
    expect((await t.call("GET", `${LBS}?name=doomed`)).body.loadbalancers).toEqual([]);
    expect(pick(await t.call("GET", `/v2/octavia/amphorae/${amp.id}`))).toEqual(fault(404, `Amphora ${amp.id} not found.`));
  });

  it("refuses to delete an LB with children unless cascade=true", async () => {
    const lb = await activeLb();
    // A pool in the LB's tree, as the pool resource writes it.
    await createClients(t.config.dynamodbEndpoint).doc.send(
      new PutCommand({ TableName: t.config.tableName, Item: { pk: `LB#${lb.id}`, sk: "POOL#p1", id: "p1", provisioning_status: "ACTIVE" } }),
    );
    expect(pick(await t.call("DELETE", `${LBS}/${lb.id}`))).toEqual(fault(400, `Validation failure: Cannot delete Load Balancer ${lb.id} - it has children`));
    expect((await t.call("DELETE", `${LBS}/${lb.id}?cascade=true`)).status).toBe(204);
    await t.settle();
    expect((await t.call("GET", `${LBS}/${lb.id}`)).status).toBe(404);
  });

  it("deletes and fails over from ERROR, but updates only from ACTIVE", async () => {
    const f = await inProcessApp({ OTTAVA_NOOP_FAULTS: "amphora.postVipPlug" });
    const res = await f.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET } });
    await f.settle();
    const id = res.body.loadbalancer.id;
    expect((await f.call("GET", `${LBS}/${id}`)).body.loadbalancer.provisioning_status).toBe("ERROR");
    expect((await f.call("PUT", `${LBS}/${id}`, { loadbalancer: { name: "n" } })).status).toBe(409);
    expect((await f.call("PUT", `${LBS}/${id}/failover`)).status).toBe(202);
    await f.settle();
    expect((await f.call("DELETE", `${LBS}/${id}`)).status).toBe(204);
    await f.settle();
    expect((await f.call("GET", `${LBS}/${id}`)).status).toBe(404);
  });
});

describe("lists", () => {
  let ids: string[];
  const project = "list-project";
  beforeAll(async () => {
    ids = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, name: `n${4 - i}`, project_id: project, tags: i % 2 ? ["odd"] : ["even"] } });
      ids.push(res.body.loadbalancer.id);
    }
    await t.settle();
  });
  const list = async (q: string) => (await t.call("GET", `${LBS}?project_id=${project}&${q}`)).body;

  it("pages with limit and marker, links keeping the query", async () => {
    const p1 = await list("limit=2");
    expect(p1.loadbalancers.map((l: { id: string }) => l.id)).toEqual(ids.slice(0, 2));
    const next = p1.loadbalancers_links.find((l: { rel: string }) => l.rel === "next").href as string;
    expect(next).toContain(`project_id=${project}`);
    const p2 = (await t.call("GET", next.replace("http://localhost", ""))).body;
    expect(p2.loadbalancers.map((l: { id: string }) => l.id)).toEqual(ids.slice(2, 4));
    expect(p2.loadbalancers_links.map((l: { rel: string }) => l.rel)).toEqual(["previous", "next"]);
    const back = (await list(`limit=2&marker=${ids[2]}&page_reverse=True`)).loadbalancers.map((l: { id: string }) => l.id);
    expect(back).toEqual(ids.slice(0, 2));
  });

  it("sorts, filters, selects fields and filters on tags", async () => {
    expect((await list("sort=name:asc")).loadbalancers.map((l: { name: string }) => l.name)).toEqual(["n0", "n1", "n2", "n3", "n4"]);
    expect((await list("sort_key=name&sort_dir=desc&limit=1")).loadbalancers.map((l: { name: string }) => l.name)).toEqual(["n4"]);
    expect((await list("name=n3")).loadbalancers.map((l: { id: string }) => l.id)).toEqual([ids[1]]);
    expect((await list("fields=id&fields=name&name=n3")).loadbalancers).toEqual([{ id: ids[1], name: "n3" }]);
    expect((await list("tags=odd")).loadbalancers).toHaveLength(2);
    expect((await list("not-tags-any=odd")).loadbalancers).toHaveLength(3);
    expect((await t.call("GET", `${LBS}/${ids[0]}?fields=name`)).body).toEqual({ loadbalancer: { name: "n4" } });
  });

  it("refuses unknown filters and sort keys with 400", async () => {
    expect(pick(await t.call("GET", `${LBS}?colour=red`))).toEqual(fault(400, "One or more arguments are either duplicate or invalid"));
    expect(pick(await t.call("GET", `${LBS}?sort=colour`))).toEqual(fault(400, "Supplied sort key 'colour' is not valid."));
  });

  it("lists amphorae, filterable by load balancer", async () => {
    const res = await t.call("GET", `/v2/octavia/amphorae?loadbalancer_id=${ids[0]}`);
    expect(res.body.amphorae).toHaveLength(1);
    expect(res.body.amphorae[0]).toMatchObject({ loadbalancer_id: ids[0], role: "STANDALONE", status: "ALLOCATED", lb_network_ip: "192.0.2.1" });
    const one = await t.call("GET", `/v2/octavia/amphorae/${res.body.amphorae[0].id}`);
    expect(one.body.amphora.id).toBe(res.body.amphorae[0].id);
  });
});
