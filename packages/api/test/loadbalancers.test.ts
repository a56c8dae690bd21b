// The API in process (app.request) over DynamoDB Local and the real ASL in the local runner.
import { beforeAll, describe, expect, it } from "vitest";
import { fault, inProcessApp, pick, PROJECT, record, seed, SUBNET, activeLb } from "@ottava/local/testing";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLoadBalancer, PolicyEnforcer, tokenContext, updateLoadBalancer, type LoadBalancerDeps } from "@ottava/core";
import { createLogger, metrics } from "@ottava/edge";
import { noopDrivers } from "@ottava/amphora";

let t: Awaited<ReturnType<typeof inProcessApp>>;
const LBS = "/v2/lbaas/loadbalancers";

beforeAll(async () => {
  t = await inProcessApp();
});

describe("versions", () => {
  it('GET / lists v2.0 to v2.30 with v2.30 CURRENT; /v2 and /v2.0 answer "v2"', async () => {
    const root = await t.call("GET", "/");
    expect(root.status).toBe(200);
    const versions = root.body.versions as { id: string; status: string; updated: string; links: { href: string }[] }[];
    expect(versions).toHaveLength(31);
    expect(versions.filter((v) => v.status === "CURRENT").map((v) => v.id)).toEqual(["v2.30"]);
    // Octavia master's dates (api/root_controller.py).
    expect(versions.slice(26).map((v) => [v.id, v.status, v.updated])).toEqual([
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
      [
        { loadbalancer: { vip_subnet_id: SUBNET, provisioning_status: "ACTIVE" } },
        400,
        "Unknown attribute for argument load_balancer.loadbalancer: provisioning_status",
      ],
      [
        { loadbalancer: { vip_subnet_id: "x" } },
        400,
        "Invalid input for field/attribute vip_subnet_id. Value: 'x'. Value should be UUID format",
      ],
      [
        { loadbalancer: { vip_subnet_id: SUBNET, admin_state_up: "perhaps" } },
        400,
        "Invalid input for field/attribute admin_state_up. Value: 'perhaps'. Value not an unambiguous boolean: perhaps",
      ],
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
    const res = await t.call("POST", LBS, {
      loadbalancer: { vip_subnet_id: SUBNET, provider: "octavia", additional_vips: [{ subnet_id: other, ip_address: "203.0.113.9" }] },
    });
    expect(res.status).toBe(201);
    expect(res.body.loadbalancer.provider).toBe("octavia");
    // The no-op driver puts additional VIPs on the VIP's port, as Octavia's does.
    expect(res.body.loadbalancer.additional_vips).toEqual([
      { subnet_id: other, ip_address: "203.0.113.9", port_id: res.body.loadbalancer.vip_port_id },
    ]);
  });
});

describe("show, update, delete, failover", () => {
  it("404s an unknown LB with Octavia's message, on /v2 and /v2.0", async () => {
    const id = "11111111-2222-3333-4444-555555555555";
    expect(pick(await t.call("GET", `${LBS}/${id}`))).toEqual(fault(404, `Load Balancer ${id} not found.`));
    expect(pick(await t.call("PUT", `/v2.0/lbaas/loadbalancers/${id}`, { loadbalancer: { name: "x" } }))).toEqual(
      fault(404, `Load Balancer ${id} not found.`),
    );
    expect(pick(await t.call("DELETE", `${LBS}/${id}`))).toEqual(fault(404, `Load Balancer ${id} not found.`));
  });

  it("updates only from ACTIVE: 200 PENDING_UPDATE with the new values, else 409", async () => {
    const created = await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, name: "before" } });
    const id = created.body.loadbalancer.id;
    expect(pick(await t.call("PUT", `${LBS}/${id}`, { loadbalancer: { name: "x" } }))).toEqual(
      fault(409, `Load Balancer ${id} is immutable and cannot be updated.`),
    );
    await t.settle();
    const res = await t.call("PUT", `${LBS}/${id}`, { loadbalancer: { name: "after", admin_state_up: false, tags: ["t"] } });
    expect(res.status).toBe(200);
    expect(res.body.loadbalancer).toMatchObject({
      name: "after",
      admin_state_up: false,
      tags: ["t"],
      provisioning_status: "PENDING_UPDATE",
    });
    await t.settle();
    expect((await t.call("GET", `${LBS}/${id}`)).body.loadbalancer).toMatchObject({ name: "after", provisioning_status: "ACTIVE" });
    expect(pick(await t.call("PUT", `${LBS}/${id}`, { loadbalancer: { vip_address: "10.0.0.1" } }))).toEqual(
      fault(400, "Unknown attribute for argument load_balancer.loadbalancer: vip_address"),
    );
  });

  it("fails over (202) and shows the status tree and stats", async () => {
    const lb = (await activeLb(t)).loadbalancer;
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
      body: {
        statuses: { loadbalancer: { id: lb.id, name: "", operating_status: "OFFLINE", provisioning_status: "ACTIVE", listeners: [] } },
      },
    });
    expect(pick(await t.call("GET", `${LBS}/${lb.id}/stats`))).toEqual({
      status: 200,
      body: { stats: { bytes_in: 0, bytes_out: 0, active_connections: 0, total_connections: 0, request_errors: 0 } },
    });
  });

  it("deletes (204): the LB then answers 404 and is no longer listed, its amphorae gone", async () => {
    const lb = (await activeLb(t, { fields: { name: "doomed" } })).loadbalancer;
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
    const lb = (await activeLb(t)).loadbalancer;
    // A pool in the LB's tree.
    await seed(t, lb.id, [{ kind: "pool", put: record(lb.id, { protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" }) }]);
    expect(pick(await t.call("DELETE", `${LBS}/${lb.id}`))).toEqual(
      fault(400, `Validation failure: Cannot delete Load Balancer ${lb.id} - it has children`),
    );
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
      const res = await t.call("POST", LBS, {
        loadbalancer: { vip_subnet_id: SUBNET, name: `n${4 - i}`, project_id: project, tags: i % 2 ? ["odd"] : ["even"] },
      });
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
    expect(res.body.amphorae[0]).toMatchObject({
      loadbalancer_id: ids[0],
      role: "STANDALONE",
      status: "ALLOCATED",
      lb_network_ip: "192.0.2.1",
    });
    const one = await t.call("GET", `/v2/octavia/amphorae/${res.body.amphorae[0].id}`);
    expect(one.body.amphora.id).toBe(res.body.amphorae[0].id);
  });
});

// ---- v2.28 (vip_vnic_type), v2.29 (vip_sg_ids), the SR-IOV flavor keys and denylist_vip_networks ----

const SG1 = "8d2b1f3e-5c4a-4e6f-9a7b-0c1d2e3f4a5b";
const SG2 = "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d";

/** A flavor of the amphora provider with this metadata. */
async function flavorWith(app: typeof t, data: Record<string, unknown>) {
  const fp = await app.call("POST", "/v2/lbaas/flavorprofiles", {
    flavorprofile: { name: "fp", provider_name: "amphora", flavor_data: JSON.stringify(data) },
  });
  expect(fp.status).toBe(201);
  const f = await app.call("POST", "/v2/lbaas/flavors", {
    flavor: { name: `f-${fp.body.flavorprofile.id}`, flavor_profile_id: fp.body.flavorprofile.id },
  });
  expect(f.status).toBe(201);
  return f.body.flavor.id as string;
}

describe("vip_vnic_type (v2.28)", () => {
  it("is normal without a flavor, or with one whose sriov_vip is not true", async () => {
    const plain = await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET } });
    expect(plain.body.loadbalancer.vip_vnic_type).toBe("normal");
    const off = await t.call("POST", LBS, {
      loadbalancer: { vip_subnet_id: SUBNET, flavor_id: await flavorWith(t, { sriov_vip: false }) },
    });
    expect(off.body.loadbalancer.vip_vnic_type).toBe("normal");
    await t.settle();
    expect((await t.call("GET", `${LBS}/${off.body.loadbalancer.id}`)).body.loadbalancer.vip_vnic_type).toBe("normal");
  });

  it("is direct with a flavor whose sriov_vip is true, shown, kept and filterable", async () => {
    const project = "vnic-project";
    const flavorId = await flavorWith(t, { sriov_vip: true, loadbalancer_topology: "SINGLE" });
    const res = await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, flavor_id: flavorId, project_id: project } });
    expect(res.status).toBe(201);
    expect(res.body.loadbalancer).toMatchObject({ vip_vnic_type: "direct", vip_sg_ids: [], flavor_id: flavorId });
    await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, project_id: project } });
    await t.settle();
    const id = res.body.loadbalancer.id;
    expect((await t.call("GET", `${LBS}/${id}`)).body.loadbalancer).toMatchObject({
      vip_vnic_type: "direct",
      provisioning_status: "ACTIVE",
    });
    const ids = async (q: string) =>
      (await t.call("GET", `${LBS}?project_id=${project}&${q}`)).body.loadbalancers.map((l: { id: string }) => l.id);
    expect(await ids("vip_vnic_type=direct")).toEqual([id]);
    expect(await ids("vip_vnic_type=normal")).toHaveLength(1);
    expect(await ids("vip_vnic_type=normal")).not.toContain(id);
  });
});

describe("vip_sg_ids (v2.29)", () => {
  it("is [] when not given, and kept (canonical, each once) when given on create", async () => {
    expect((await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET } })).body.loadbalancer.vip_sg_ids).toEqual([]);
    const res = await t.call("POST", LBS, {
      loadbalancer: { vip_subnet_id: SUBNET, vip_sg_ids: [SG1, SG2.replace(/-/g, "").toUpperCase(), SG1] },
    });
    expect(res.status).toBe(201);
    expect(res.body.loadbalancer).toMatchObject({ vip_sg_ids: [SG1, SG2], vip_vnic_type: "normal" });
    await t.settle();
    expect((await t.call("GET", `${LBS}/${res.body.loadbalancer.id}`)).body.loadbalancer.vip_sg_ids).toEqual([SG1, SG2]);
    expect((await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, vip_sg_ids: null } })).body.loadbalancer.vip_sg_ids).toEqual(
      [],
    );
    expect((await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, vip_sg_ids: [] } })).body.loadbalancer.vip_sg_ids).toEqual(
      [],
    );
    await t.settle();
  });

  it("refuses what is not a list of UUIDs as wsme does", async () => {
    const post = async (v: unknown) => pick(await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, vip_sg_ids: v } }));
    expect(await post("x")).toEqual(fault(400, "Invalid input for field/attribute vip_sg_ids. Value: 'x'. Value not a valid list: x"));
    // (Octavia writes the Value of a list or dict as Python's repr; these check the reasons.)
    expect((await post({ a: 1 })).body).toMatchObject({
      faultstring: expect.stringMatching(/^Invalid input for field\/attribute vip_sg_ids\. .*\. Value not a valid list: \{'a': 1\}$/),
    });
    expect((await post(["x"])).body).toMatchObject({
      faultstring: expect.stringMatching(/^Invalid input for field\/attribute vip_sg_ids\. .*\. Value should be UUID format$/),
    });
    expect((await post([null])).status).toBe(400);
  });

  it("checks each security group through the network driver: Octavia's 400 when the lookup fails", async () => {
    const f = await inProcessApp({ OTTAVA_NOOP_FAULTS: "network.getSecurityGroup:1" });
    expect(pick(await f.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, vip_sg_ids: [SG1, SG2] } }))).toEqual(
      fault(400, `Security Group ${SG1} not found.`),
    );
    expect((await f.call("GET", LBS)).body.loadbalancers).toEqual([]);
    // The no-op driver finds any other.
    expect((await f.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, vip_sg_ids: [SG1, SG2] } })).status).toBe(201);
    await f.settle();
  });

  it("is refused on an SR-IOV (direct) VIP, on create and update", async () => {
    const flavorId = await flavorWith(t, { sriov_vip: true });
    const refusal = fault(400, "Validation failure: VIP Security Groups are not allowed with VNIC direct type");
    expect(pick(await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, flavor_id: flavorId, vip_sg_ids: [SG1] } }))).toEqual(
      refusal,
    );
    // An empty list is no security group.
    const lb = (await activeLb(t, { fields: { flavor_id: flavorId, vip_sg_ids: [] } })).loadbalancer;
    expect(lb).toMatchObject({ vip_vnic_type: "direct", vip_sg_ids: [] });
    expect(pick(await t.call("PUT", `${LBS}/${lb.id}`, { loadbalancer: { vip_sg_ids: [SG1] } }))).toEqual(refusal);
    const cleared = await t.call("PUT", `${LBS}/${lb.id}`, { loadbalancer: { vip_sg_ids: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.loadbalancer).toMatchObject({ vip_sg_ids: [], vip_vnic_type: "direct" });
    await t.settle();
  });

  it("is updated by PUT, null meaning [], and left alone when not given", async () => {
    const lb = (await activeLb(t)).loadbalancer;
    const put = async (body: Record<string, unknown>) => {
      const res = await t.call("PUT", `${LBS}/${lb.id}`, { loadbalancer: body });
      expect(res.status).toBe(200);
      await t.settle();
      return res.body.loadbalancer;
    };
    expect(await put({ vip_sg_ids: [SG2, SG1] })).toMatchObject({ vip_sg_ids: [SG2, SG1], provisioning_status: "PENDING_UPDATE" });
    expect((await t.call("GET", `${LBS}/${lb.id}`)).body.loadbalancer).toMatchObject({
      vip_sg_ids: [SG2, SG1],
      provisioning_status: "ACTIVE",
    });
    expect((await put({ name: "renamed" })).vip_sg_ids).toEqual([SG2, SG1]);
    expect((await put({ vip_sg_ids: null })).vip_sg_ids).toEqual([]);
    expect((await t.call("GET", `${LBS}/${lb.id}`)).body.loadbalancer.vip_sg_ids).toEqual([]);
    expect((await put({ vip_sg_ids: [SG1] })).vip_sg_ids).toEqual([SG1]);
    expect((await put({ vip_sg_ids: [] })).vip_sg_ids).toEqual([]);
    // Checked before the LB's state (Octavia validates, then _test_lb_status): 400, not 409.
    const f = await inProcessApp({ OTTAVA_NOOP_FAULTS: "network.getSecurityGroup" });
    const pending = (await f.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET } })).body.loadbalancer.id;
    expect(pick(await f.call("PUT", `${LBS}/${pending}`, { loadbalancer: { vip_sg_ids: [SG1] } }))).toEqual(
      fault(400, `Security Group ${SG1} not found.`),
    );
    expect(pick(await f.call("PUT", `${LBS}/${pending}`, { loadbalancer: { vip_sg_ids: null } }))).toEqual(
      fault(409, `Load Balancer ${pending} is immutable and cannot be updated.`),
    );
    await f.settle();
  });

  it("are applied to the VIP port by the update flow (Octavia's UpdateVIPSecurityGroup): its failure ends the LB in ERROR", async () => {
    const f = await inProcessApp({ OTTAVA_NOOP_FAULTS: "network.updateVipSecurityGroups" });
    const lb = (await f.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET } })).body.loadbalancer.id;
    await f.settle();
    expect((await f.call("PUT", `${LBS}/${lb}`, { loadbalancer: { vip_sg_ids: [SG1] } })).status).toBe(200);
    await f.settle();
    expect((await f.call("GET", `${LBS}/${lb}`)).body.loadbalancer.provisioning_status).toBe("ERROR");
  });

  it("filters lists", async () => {
    const project = "sg-project";
    const a = (await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, project_id: project, vip_sg_ids: [SG1, SG2] } })).body
      .loadbalancer.id;
    const b = (await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, project_id: project, vip_sg_ids: [SG2] } })).body
      .loadbalancer.id;
    await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, project_id: project } });
    await t.settle();
    const ids = async (q: string) =>
      (await t.call("GET", `${LBS}?project_id=${project}&${q}`)).body.loadbalancers.map((l: { id: string }) => l.id).sort();
    expect(await ids(`vip_sg_ids=${SG1}`)).toEqual([a]);
    expect(await ids(`vip_sg_ids=${SG2}`)).toEqual([a, b].sort());
    expect((await t.call("GET", `${LBS}?project_id=${project}&fields=vip_sg_ids&vip_sg_ids=${SG1}`)).body.loadbalancers).toEqual([
      { vip_sg_ids: [SG1, SG2] },
    ]);
  });

  it("goes with the fully populated create, where listeners' allowed_cidrs are then refused", async () => {
    const listener = { name: "http", protocol: "HTTP", protocol_port: 80 };
    const ok = await t.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, vip_sg_ids: [SG1], listeners: [listener] } });
    expect(ok.status).toBe(201);
    expect(ok.body.loadbalancer).toMatchObject({ vip_sg_ids: [SG1], vip_vnic_type: "normal" });
    expect(ok.body.loadbalancer.listeners).toHaveLength(1);
    const before = (await t.call("GET", LBS)).body.loadbalancers.length;
    const refusal = fault(400, "Validation failure: Allowed CIDRs are not allowed when using custom VIP Security Groups.");
    expect(
      pick(
        await t.call("POST", LBS, {
          loadbalancer: { vip_subnet_id: SUBNET, vip_sg_ids: [SG1], listeners: [{ ...listener, allowed_cidrs: ["192.0.2.0/24"] }] },
        }),
      ),
    ).toEqual(refusal);
    expect((await t.call("GET", LBS)).body.loadbalancers.length).toBe(before);
    // Without security groups the same graph is fine.
    expect(
      (
        await t.call("POST", LBS, {
          loadbalancer: { vip_subnet_id: SUBNET, listeners: [{ ...listener, allowed_cidrs: ["192.0.2.0/24"] }] },
        })
      ).status,
    ).toBe(201);
    await t.settle();

    // The listener API refuses them too, on create and on update (an empty list is none).
    const lbId = ok.body.loadbalancer.id;
    const LISTENERS = "/v2/lbaas/listeners";
    const post = (extra: Record<string, unknown>) =>
      t.call("POST", LISTENERS, { listener: { loadbalancer_id: lbId, protocol: "TCP", protocol_port: 81, ...extra } });
    expect(pick(await post({ allowed_cidrs: ["192.0.2.0/24"] }))).toEqual(refusal);
    expect((await post({ allowed_cidrs: [] })).status).toBe(201);
    await t.settle();
    const listenerId = ok.body.loadbalancer.listeners[0].id;
    expect(pick(await t.call("PUT", `${LISTENERS}/${listenerId}`, { listener: { allowed_cidrs: ["192.0.2.0/24"] } }))).toEqual(refusal);
    expect((await t.call("PUT", `${LISTENERS}/${listenerId}`, { listener: { allowed_cidrs: null } })).status).toBe(200);
    await t.settle();
  });
});

describe("the vip_sg_ids policy rules", () => {
  it("are checked only when vip_sg_ids is given, null and [] included (an operator's rule under noauth)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ottava-policy-"));
    const file = join(dir, "policy.yaml");
    writeFileSync(
      file,
      '"os_load-balancer_api:loadbalancer:post:vip_sg_ids": "!"\n"os_load-balancer_api:loadbalancer:put:vip_sg_ids": "!"\n',
    );
    const p = await inProcessApp({ OTTAVA_POLICY_FILE: file });
    const denied = fault(403, "Policy does not allow this request to be performed.");
    const created = await p.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET } });
    expect(created.status).toBe(201);
    for (const v of [[SG1], [], null]) {
      expect(pick(await p.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET, vip_sg_ids: v } })), JSON.stringify(v)).toEqual(
        denied,
      );
    }
    await p.settle();
    const id = created.body.loadbalancer.id;
    for (const v of [[SG1], [], null]) {
      expect(pick(await p.call("PUT", `${LBS}/${id}`, { loadbalancer: { vip_sg_ids: v } })), JSON.stringify(v)).toEqual(denied);
    }
    expect((await p.call("PUT", `${LBS}/${id}`, { loadbalancer: { name: "fine" } })).status).toBe(200);
    await p.settle();
  });

  it("under keystone, default to load-balancer:write and may be restricted alone", async () => {
    const deps: LoadBalancerDeps = {
      store: t.store,
      trail: t.trail,
      catalog: t.catalog,
      engine: t.engine,
      network: noopDrivers().network,
      config: t.config,
      log: createLogger({ service: "test" }, "error"),
      metrics,
    };
    const project = "keystone-project";
    const ctx = (roles: string[], policy = new PolicyEnforcer()) =>
      tokenContext("req-test", { projectId: project, userId: "u", roles, systemScope: undefined }, policy);
    const body = { admin_state_up: true, vip_subnet_id: SUBNET, additional_vips: [], listeners: [], pools: [] };

    // Octavia's defaults: the project's load-balancer_member may set them; its observer may not create at all.
    const { lb } = await createLoadBalancer(deps, ctx(["load-balancer_member"]), { ...body, vip_sg_ids: [SG1] });
    expect(lb.vip_sg_ids).toEqual([SG1]);
    await expect(createLoadBalancer(deps, ctx(["load-balancer_observer"]), { ...body, vip_sg_ids: [SG1] })).rejects.toMatchObject({
      status: 403,
    });
    await t.settle();

    // An operator who keeps security groups to admins: members still create and update without them.
    const adminsOnly = new PolicyEnforcer({
      overrides: {
        "os_load-balancer_api:loadbalancer:post:vip_sg_ids": "rule:load-balancer:admin",
        "os_load-balancer_api:loadbalancer:put:vip_sg_ids": "rule:load-balancer:admin",
      },
    });
    const member = ctx(["load-balancer_member"], adminsOnly);
    await expect(createLoadBalancer(deps, member, { ...body, vip_sg_ids: [SG1] })).rejects.toMatchObject({ status: 403 });
    await expect(createLoadBalancer(deps, member, { ...body, vip_sg_ids: null })).rejects.toMatchObject({ status: 403 });
    const { lb: plain } = await createLoadBalancer(deps, member, body);
    await t.settle();
    await expect(updateLoadBalancer(deps, member, plain.id, { vip_sg_ids: [SG1] })).rejects.toMatchObject({ status: 403 });
    expect((await updateLoadBalancer(deps, member, plain.id, { name: "renamed" })).name).toBe("renamed");
    await t.settle();
    const admin = ctx(["load-balancer_admin"], adminsOnly);
    expect((await updateLoadBalancer(deps, admin, plain.id, { vip_sg_ids: [SG1] })).vip_sg_ids).toEqual([SG1]);
    await t.settle();
  });
});

describe("the amphora flavor schema's SR-IOV keys", () => {
  it("are listed in the flavor capabilities with master's descriptions", async () => {
    const caps = (await t.call("GET", "/v2/lbaas/providers/amphora/flavor_capabilities")).body.flavor_capabilities;
    expect(caps.slice(-2)).toEqual([
      { name: "sriov_vip", description: "When true, the VIP port will be created using an SR-IOV VF port." },
      { name: "allow_member_sriov", description: "When true, users can request a member port be SR-IOV enabled at member creation time." },
    ]);
  });

  it("are booleans in a flavor profile", async () => {
    const post = async (data: string) =>
      pick(
        await t.call("POST", "/v2/lbaas/flavorprofiles", { flavorprofile: { name: "sriov", provider_name: "amphora", flavor_data: data } }),
      );
    expect((await post('{"sriov_vip": true, "allow_member_sriov": false}')).status).toBe(201);
    expect(await post('{"sriov_vip": "yes"}')).toEqual(
      fault(501, "Provider 'amphora' does not support a requested option: sriov_vip 'yes' is not of type 'boolean'"),
    );
    expect(await post('{"allow_member_sriov": 1}')).toEqual(
      fault(501, "Provider 'amphora' does not support a requested option: allow_member_sriov 1 is not of type 'boolean'"),
    );
  });
});

describe("denylist_vip_networks (OTTAVA_DENYLIST_VIP_NETWORKS)", () => {
  const DENIED = "6f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0";
  const ALSO = "0e9d8c7b-6a59-4483-9271-6f5e4d3c2b1a";
  const ALLOWED = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f";

  it("refuses a VIP on a listed network, whatever its case, and writes nothing", async () => {
    const d = await inProcessApp({ OTTAVA_DENYLIST_VIP_NETWORKS: `${DENIED}, ${ALSO.toUpperCase()}` });
    expect(d.config.denylistVipNetworks).toEqual([DENIED, ALSO.toUpperCase()]);
    const refusal = fault(400, "Validation failure: Supplied VIP network_id is not allowed by the configuration of this deployment.");
    expect(pick(await d.call("POST", LBS, { loadbalancer: { vip_network_id: DENIED } }))).toEqual(refusal);
    expect(pick(await d.call("POST", LBS, { loadbalancer: { vip_network_id: ALSO } }))).toEqual(refusal);
    expect(pick(await d.call("POST", LBS, { loadbalancer: { vip_network_id: DENIED.toUpperCase(), vip_subnet_id: SUBNET } }))).toEqual(
      refusal,
    );
    expect((await d.call("GET", LBS)).body.loadbalancers).toEqual([]);
    const ok = await d.call("POST", LBS, { loadbalancer: { vip_network_id: ALLOWED } });
    expect(ok.status).toBe(201);
    expect(ok.body.loadbalancer.vip_network_id).toBe(ALLOWED);
    // The no-op driver puts a subnet-only VIP on a network of its own.
    expect((await d.call("POST", LBS, { loadbalancer: { vip_subnet_id: SUBNET } })).status).toBe(201);
    await d.settle();
  });

  it("is empty by default: nothing refused", async () => {
    expect(t.config.denylistVipNetworks).toEqual([]);
    expect((await t.call("POST", LBS, { loadbalancer: { vip_network_id: DENIED } })).status).toBe(201);
    await t.settle();
  });
});

describe("an availability zone's valid_vip_networks", () => {
  const VALID = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d";
  const OTHER = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a";
  const refusal = fault(400, "Validation failure: Supplied VIP network_id is not allowed by the configuration of this deployment.");

  it("refuses a VIP on any other network (the one named, or the one the driver chose), case-insensitively, and writes nothing", async () => {
    const profile = await t.call("POST", "/v2/lbaas/availabilityzoneprofiles", {
      availability_zone_profile: {
        name: "vip-networks",
        provider_name: "amphora",
        availability_zone_data: JSON.stringify({ valid_vip_networks: [VALID.toUpperCase()] }),
      },
    });
    expect(profile.status).toBe(201);
    const zone = await t.call("POST", "/v2/lbaas/availabilityzones", {
      availability_zone: { name: "vip-networks-zone", availability_zone_profile_id: profile.body.availability_zone_profile.id },
    });
    expect(zone.status).toBe(201);
    const create = (vip: Record<string, string>, availability_zone: string | null = "vip-networks-zone") =>
      t.call("POST", LBS, { loadbalancer: { name: "zoned", ...vip, availability_zone } });

    expect(pick(await create({ vip_network_id: OTHER }))).toEqual(refusal);
    // The no-op driver puts a subnet-only VIP on a network of its own, which is not in the list.
    expect(pick(await create({ vip_subnet_id: SUBNET }))).toEqual(refusal);
    expect((await t.call("GET", `${LBS}?name=zoned`)).body.loadbalancers).toEqual([]);

    const ok = await create({ vip_network_id: VALID });
    expect(ok.status).toBe(201);
    expect(ok.body.loadbalancer.vip_network_id).toBe(VALID);
    // Without the zone, any network.
    expect((await create({ vip_network_id: OTHER }, null)).status).toBe(201);
    await t.settle();
  });
});
