// The catalog (quotas, providers, flavors, flavor profiles, availability zones and their profiles)
// through the API in process over DynamoDB Local. Expected bodies and messages are Octavia 11's, as
// its API answers the same requests.
import { beforeAll, describe, expect, it } from "vitest";
import { fault, inProcessApp, pick, PROJECT, SUBNET, activeLb } from "@ottava/local/testing";

let t: Awaited<ReturnType<typeof inProcessApp>>;

const NIL = "00000000-0000-0000-0000-000000000000";
const MISSING = "4c1c6a84-6f5e-4b0e-9a55-2f6f0d1f6b8e";
const unlimited = { load_balancer: -1, listener: -1, member: -1, pool: -1, health_monitor: -1, l7policy: -1, l7rule: -1 };

beforeAll(async () => {
  t = await inProcessApp();
});

async function flavorProfile(flavorData: string, name = "fp") {
  const res = await t.call("POST", "/v2/lbaas/flavorprofiles", {
    flavorprofile: { name, provider_name: "amphora", flavor_data: flavorData },
  });
  expect(res.status).toBe(201);
  return res.body.flavorprofile as { id: string };
}

async function flavor(profileId: string, name: string, extra: Record<string, unknown> = {}) {
  const res = await t.call("POST", "/v2/lbaas/flavors", { flavor: { name, flavor_profile_id: profileId, ...extra } });
  expect(res.status).toBe(201);
  return res.body.flavor as { id: string };
}

async function zoneProfile(data = '{"compute_zone": "nova"}', name = "azp") {
  const res = await t.call("POST", "/v2/lbaas/availabilityzoneprofiles", {
    availability_zone_profile: { name, provider_name: "amphora", availability_zone_data: data },
  });
  expect(res.status).toBe(201);
  return res.body.availability_zone_profile as { id: string };
}

describe("quotas", () => {
  const Q = "/v2/lbaas/quotas";

  it("answers the defaults for a project without quotas, under /quota/{p}, /{p}/default and /defaults", async () => {
    expect(pick(await t.call("GET", `${Q}/fresh`))).toEqual({ status: 200, body: { quota: unlimited } });
    expect(pick(await t.call("GET", `${Q}/fresh/default`))).toEqual({ status: 200, body: { quota: unlimited } });
    expect(pick(await t.call("GET", `/v2.0/lbaas/quotas/defaults`))).toEqual({ status: 200, body: { quota: unlimited } });
  });

  it("takes its defaults from OTTAVA_DEFAULT_*_QUOTA", async () => {
    const other = await inProcessApp({ OTTAVA_DEFAULT_LOAD_BALANCER_QUOTA: "10", OTTAVA_DEFAULT_L7RULE_QUOTA: "0" });
    const expected = { quota: { ...unlimited, load_balancer: 10, l7rule: 0 } };
    expect(pick(await other.call("GET", `${Q}/p/default`))).toEqual({ status: 200, body: expected });
    expect((await other.call("PUT", `${Q}/p`, { quota: { listener: 3 } })).body).toEqual({ quota: { ...expected.quota, listener: 3 } });
  });

  it("PUT answers 202 with the project's quotas, defaults filled in; the list shows what is stored", async () => {
    const put = await t.call("PUT", `${Q}/p1`, { quota: { listener: 5 } });
    expect(pick(put)).toEqual({ status: 202, body: { quota: { ...unlimited, listener: 5 } } });
    const list = await t.call("GET", `${Q}?project_id=p1`);
    expect(pick(list)).toEqual({
      status: 200,
      body: {
        quotas: [
          {
            project_id: "p1",
            loadbalancer: null,
            load_balancer: null,
            listener: 5,
            member: null,
            pool: null,
            healthmonitor: null,
            health_monitor: null,
            l7policy: null,
            l7rule: null,
            tenant_id: "p1",
          },
        ],
        quotas_links: [],
      },
    });
    // Later PUTs change only what they name.
    const again = await t.call("PUT", `${Q}/p1`, { quota: { pool: 2 } });
    expect(again.body).toEqual({ quota: { ...unlimited, listener: 5, pool: 2 } });
    expect(pick(await t.call("GET", `${Q}/p1`))).toEqual({ status: 200, body: again.body });
  });

  it("takes both spellings, the current one (loadbalancer, healthmonitor) winning", async () => {
    const res = await t.call("PUT", `${Q}/p2`, { quota: { loadbalancer: 7, load_balancer: 3, healthmonitor: 2 } });
    expect(res.body).toEqual({ quota: { ...unlimited, load_balancer: 7, health_monitor: 2 } });
    const nulled = await t.call("PUT", `${Q}/p2`, { quota: { load_balancer: 4, loadbalancer: null } });
    expect(nulled.body).toEqual({ quota: { ...unlimited, health_monitor: 2 } });
  });

  it("converts values as Python's int() does; null sets a quota back to its default", async () => {
    expect((await t.call("PUT", `${Q}/p3`, { quota: { listener: "7", member: 8.7, pool: true, l7rule: " 12 " } })).body).toEqual({
      quota: { ...unlimited, listener: 7, member: 8, pool: 1, l7rule: 12 },
    });
    expect((await t.call("PUT", `${Q}/p3`, { quota: { listener: null } })).body).toEqual({
      quota: { ...unlimited, member: 8, pool: 1, l7rule: 12 },
    });
  });

  it("refuses values out of range or not integers, and unknown attributes, with wsme's messages", async () => {
    expect(pick(await t.call("PUT", `${Q}/p4`, { quota: { listener: -2 } }))).toEqual(
      fault(400, "Invalid input for field/attribute listener. Value: '-2'. Value should be greater or equal to -1"),
    );
    expect(pick(await t.call("PUT", `${Q}/p4`, { quota: { listener: 2000000001 } }))).toEqual(
      fault(400, "Invalid input for field/attribute listener. Value: '2000000001'. Value should be lower or equal to 2000000000"),
    );
    expect(pick(await t.call("PUT", `${Q}/p4`, { quota: { listener: "x" } }))).toEqual(
      fault(
        400,
        "Invalid input for field/attribute quotas. Value: '{'quota': {'listener': 'x'}}'. invalid literal for int() with base 10: 'x'",
      ),
    );
    expect(pick(await t.call("PUT", `${Q}/p4`, { quota: { listener: "9.5" } }))).toEqual(
      fault(
        400,
        "Invalid input for field/attribute quotas. Value: '{'quota': {'listener': '9.5'}}'. invalid literal for int() with base 10: '9.5'",
      ),
    );
    expect((await t.call("PUT", `${Q}/p4`, { quota: { listener: [1] } })).status).toBe(400);
    expect(pick(await t.call("PUT", `${Q}/p4`, { quota: { bogus: 1 } }))).toEqual(
      fault(400, "Unknown attribute for argument quotas.quota: bogus"),
    );
    expect(pick(await t.call("PUT", `${Q}/p4`, "not json"))).toEqual(fault(400, "Request is not in valid JSON format"));
    expect(pick(await t.call("PUT", Q, { quota: {} }))).toEqual(fault(400, 'Missing argument: "project_id"'));
    expect(pick(await t.call("DELETE", Q))).toEqual(fault(400, 'Missing argument: "project_id"'));
    // Nothing was stored by the refused requests.
    expect((await t.call("GET", `${Q}?project_id=p4`)).body.quotas).toEqual([]);
  });

  it("refuses query arguments on one project's quotas, as wsme does", async () => {
    expect(pick(await t.call("GET", `${Q}/p1?fields=listener`))).toEqual(fault(400, 'Unknown argument: "fields"'));
    expect(pick(await t.call("GET", `${Q}/p1/default?x=1`))).toEqual(fault(400, 'Unknown argument: "x"'));
    expect(pick(await t.call("PUT", `${Q}/p1?x=1`, { quota: {} }))).toEqual(fault(400, 'Unknown argument: "x"'));
    expect(pick(await t.call("DELETE", `${Q}/p1?x=1`))).toEqual(fault(400, 'Unknown argument: "x"'));
  });

  it("DELETE answers 202 without a body and resets to the defaults; the record stays listed with nulls", async () => {
    await t.call("PUT", `${Q}/p5`, { quota: { member: 9, l7policy: 1 } });
    const del = await t.call("DELETE", `${Q}/p5`);
    expect(pick(del)).toEqual({ status: 202, body: undefined });
    expect((await t.call("GET", `${Q}/p5`)).body).toEqual({ quota: unlimited });
    const [listed] = (await t.call("GET", `${Q}?project_id=p5`)).body.quotas;
    expect(listed).toMatchObject({ project_id: "p5", member: null, l7policy: null, loadbalancer: null });
    expect(pick(await t.call("DELETE", `${Q}/nope`))).toEqual(fault(404, "Quotas nope not found."));
  });

  it("lists in project order with filters, limit and marker; `fields` is ignored as Octavia ignores it", async () => {
    const other = await inProcessApp();
    for (const p of ["b", "a", "c"]) await other.call("PUT", `${Q}/${p}`, { quota: { pool: p === "b" ? 5 : 1 } });
    const all = await other.call("GET", `${Q}?fields=pool`);
    expect(all.body.quotas.map((q: { project_id: string }) => q.project_id)).toEqual(["a", "b", "c"]);
    expect(Object.keys(all.body.quotas[0])).toContain("tenant_id");
    expect((await other.call("GET", `${Q}?pool=5`)).body.quotas.map((q: { project_id: string }) => q.project_id)).toEqual(["b"]);
    expect((await other.call("GET", `${Q}?sort=pool:desc`)).body.quotas[0].project_id).toBe("b");
    const page = await other.call("GET", `${Q}?limit=1`);
    expect(page.body.quotas.map((q: { project_id: string }) => q.project_id)).toEqual(["a"]);
    expect(page.body.quotas_links).toEqual([{ href: "http://localhost/v2/lbaas/quotas?limit=1&marker=a", rel: "next" }]);
    expect((await other.call("GET", `${Q}?limit=1&marker=a`)).body.quotas[0].project_id).toBe("b");
    expect(pick(await other.call("GET", `${Q}?tenant_id=a`))).toEqual(fault(400, "One or more arguments are either duplicate or invalid"));
    expect(pick(await other.call("GET", `${Q}?marker=zz`))).toEqual(fault(400, "Supplied pagination marker 'zz' is not valid."));
  });
});

describe("providers", () => {
  const FLAVOR_CAPS = [
    {
      name: "loadbalancer_topology",
      description:
        "The load balancer topology. One of: SINGLE - One amphora per load balancer. ACTIVE_STANDBY - Two amphora per load balancer.",
    },
    { name: "compute_flavor", description: "The compute driver flavor ID." },
    { name: "amp_image_tag", description: "The amphora image tag." },
    { name: "sriov_vip", description: "When true, the VIP port will be created using an SR-IOV VF port." },
    { name: "allow_member_sriov", description: "When true, users can request a member port be SR-IOV enabled at member creation time." },
  ];

  it("lists the enabled providers; only `fields` applies", async () => {
    const providers = [
      { name: "amphora", description: "The Octavia Amphora driver." },
      { name: "octavia", description: "Deprecated alias of the Octavia Amphora driver." },
    ];
    expect(pick(await t.call("GET", "/v2/lbaas/providers"))).toEqual({ status: 200, body: { providers } });
    expect((await t.call("GET", "/v2.0/lbaas/providers?name=amphora&limit=1")).body).toEqual({ providers });
    expect((await t.call("GET", "/v2/lbaas/providers?fields=name")).body).toEqual({
      providers: [{ name: "amphora" }, { name: "octavia" }],
    });
  });

  it("answers the amphora driver's flavor and availability zone capabilities, for the octavia alias too", async () => {
    expect(pick(await t.call("GET", "/v2/lbaas/providers/amphora/flavor_capabilities"))).toEqual({
      status: 200,
      body: { flavor_capabilities: FLAVOR_CAPS },
    });
    expect((await t.call("GET", "/v2/lbaas/providers/octavia/flavor_capabilities?name=compute_flavor")).body).toEqual({
      flavor_capabilities: [FLAVOR_CAPS[1]],
    });
    expect(
      (await t.call("GET", "/v2/lbaas/providers/amphora/flavor_capabilities?fields=name&description=The%20amphora%20image%20tag.&bogus=1"))
        .body,
    ).toEqual({ flavor_capabilities: [{ name: "amp_image_tag" }] });
    expect(pick(await t.call("GET", "/v2/lbaas/providers/amphora/availability_zone_capabilities"))).toEqual({
      status: 200,
      body: {
        availability_zone_capabilities: [
          { name: "compute_zone", description: "The compute availability zone." },
          { name: "management_network", description: "The management network ID for the amphora." },
          {
            name: "valid_vip_networks",
            description:
              "List of network IDs that are allowed for VIP use. This overrides/replaces the list of allowed networks configured in `octavia.conf`.",
          },
        ],
      },
    });
  });

  it("refuses a provider that is not enabled", async () => {
    expect(pick(await t.call("GET", "/v2/lbaas/providers/bogus/flavor_capabilities"))).toEqual(
      fault(400, "Provider 'bogus' is not enabled."),
    );
    expect(pick(await t.call("GET", "/v2/lbaas/providers/bogus/availability_zone_capabilities"))).toEqual(
      fault(400, "Provider 'bogus' is not enabled."),
    );
  });
});

describe("flavor profiles", () => {
  const FP = "/v2/lbaas/flavorprofiles";
  const post = (p: Record<string, unknown>) =>
    t.call("POST", FP, { flavorprofile: { name: "x", provider_name: "amphora", flavor_data: "{}", ...p } });
  const unsupported = (m: string) => fault(501, `Provider 'amphora' does not support a requested option: ${m}`);

  it("creates, shows (with fields) and lists", async () => {
    const res = await post({ name: "ha", flavor_data: '{"loadbalancer_topology": "ACTIVE_STANDBY"}' });
    expect(res.status).toBe(201);
    const fp = res.body.flavorprofile;
    expect(fp).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "ha",
      provider_name: "amphora",
      flavor_data: '{"loadbalancer_topology": "ACTIVE_STANDBY"}',
    });
    expect(pick(await t.call("GET", `${FP}/${fp.id}`))).toEqual({ status: 200, body: { flavorprofile: fp } });
    expect((await t.call("GET", `${FP}/${fp.id}?fields=name&fields=id`)).body).toEqual({ flavorprofile: { id: fp.id, name: "ha" } });
    const listed = await t.call("GET", `/v2.0/lbaas/flavorprofiles?name=ha&fields=id`);
    expect(listed.body).toEqual({ flavorprofiles: [{ id: fp.id }], flavorprofile_links: [] });
    expect(pick(await t.call("GET", `${FP}?bogus=1`))).toEqual(fault(400, "One or more arguments are either duplicate or invalid"));
    // A null name is kept as None and answered "", as Octavia does.
    expect((await post({ name: null })).body.flavorprofile.name).toBe("");
    // The octavia alias validates with the amphora driver.
    expect((await post({ provider_name: "octavia", flavor_data: '{"compute_flavor": "m1"}' })).status).toBe(201);
  });

  it("refuses flavor_data that is not JSON and bodies wsme refuses", async () => {
    expect(pick(await post({ flavor_data: "not json" }))).toEqual(fault(400, "not json is not a valid option for flavor_data"));
    expect(pick(await post({ flavor_data: '{"loadbalancer_topology": "SINGLE",}' }))).toEqual(
      fault(400, '{"loadbalancer_topology": "SINGLE",} is not a valid option for flavor_data'),
    );
    expect(pick(await post({ flavor_data: null }))).toEqual(fault(400, "None is not a valid option for flavor_data"));
    expect(pick(await t.call("POST", FP, { flavorprofile: { name: "x", provider_name: "amphora" } }))).toEqual(
      fault(400, "Invalid input for field/attribute flavor_data. Value: 'None'. Mandatory field missing."),
    );
    expect(pick(await t.call("POST", FP, { flavorprofile: { provider_name: "amphora", flavor_data: "{}" } }))).toEqual(
      fault(400, "Invalid input for field/attribute name. Value: 'None'. Mandatory field missing."),
    );
    const notString = await post({ flavor_data: { a: 1 } });
    expect(notString.status).toBe(400);
    expect(notString.body.faultstring).toMatch(/^Invalid input for field\/attribute flavor_data\. Value: '.*'\. Value should be string$/);
    expect(pick(await post({ id: "abc" }))).toEqual(fault(400, "Unknown attribute for argument flavor_profile_.flavorprofile: id"));
    expect(pick(await post({ provider_name: "bogus" }))).toEqual(fault(400, "Provider 'bogus' is not enabled."));
  });

  it("validates flavor_data against the amphora driver's schema, answering 501 with jsonschema's message", async () => {
    expect(pick(await post({ flavor_data: '{"loadbalancer_topology": "BAD"}' }))).toEqual(
      unsupported("loadbalancer_topology 'BAD' is not one of ['ACTIVE_STANDBY', 'SINGLE']"),
    );
    expect(pick(await post({ flavor_data: '{"foo": 1}' }))).toEqual(
      unsupported("Additional properties are not allowed ('foo' was unexpected)"),
    );
    expect(pick(await post({ flavor_data: '{"foo": 1, "bar": 2}' }))).toEqual(
      unsupported("Additional properties are not allowed ('bar', 'foo' were unexpected)"),
    );
    expect(pick(await post({ flavor_data: '{"compute_flavor": 5, "foo": 1}' }))).toEqual(
      unsupported("Additional properties are not allowed ('foo' was unexpected)"),
    );
    expect(pick(await post({ flavor_data: '{"compute_flavor": 5, "loadbalancer_topology": 3}' }))).toEqual(
      unsupported("loadbalancer_topology 3 is not of type 'string'"),
    );
    expect(pick(await post({ flavor_data: '{"loadbalancer_topology": "BAD", "compute_flavor": 5}' }))).toEqual(
      unsupported("compute_flavor 5 is not of type 'string'"),
    );
    expect(pick(await post({ flavor_data: "[]" }))).toEqual(unsupported("[] is not of type 'object'"));
    expect(pick(await post({ flavor_data: "null" }))).toEqual(unsupported("None is not of type 'object'"));
    expect(pick(await post({ flavor_data: '"s"' }))).toEqual(unsupported("'s' is not of type 'object'"));
    expect(pick(await post({ flavor_data: '{"amp_image_tag": [1, "a", true, null, 1.5, {"k": "v"}]}' }))).toEqual(
      unsupported("amp_image_tag [1, 'a', True, None, 1.5, {'k': 'v'}] is not of type 'string'"),
    );
  });

  it("updates; what the driver reads cannot change while a flavor uses the profile", async () => {
    const fp = await flavorProfile('{"loadbalancer_topology": "ACTIVE_STANDBY"}', "upd");
    const url = `${FP}/${fp.id}`;
    expect((await t.call("PUT", url, { flavorprofile: { name: "renamed" } })).body.flavorprofile).toMatchObject({ name: "renamed" });
    expect(pick(await t.call("PUT", url, { flavorprofile: { name: null } }))).toEqual(fault(400, "None is not a valid option for name"));
    expect(pick(await t.call("PUT", url, { flavorprofile: { provider_name: null } }))).toEqual(
      fault(400, "None is not a valid option for provider_name"),
    );
    expect(pick(await t.call("PUT", url, { flavorprofile: { flavor_data: null } }))).toEqual(
      fault(400, "None is not a valid option for flavor_data"),
    );
    expect(pick(await t.call("PUT", url, { flavorprofile: { flavor_data: "bad" } }))).toEqual(
      fault(400, "bad is not a valid option for flavor_data"),
    );
    expect(pick(await t.call("PUT", url, { flavorprofile: { flavor_data: '{"x": 1}' } }))).toEqual(
      unsupported("Additional properties are not allowed ('x' was unexpected)"),
    );
    const single = await t.call("PUT", url, { flavorprofile: { flavor_data: '{"loadbalancer_topology": "SINGLE"}' } });
    expect(pick(single)).toEqual({
      status: 200,
      body: { flavorprofile: { id: fp.id, name: "renamed", provider_name: "amphora", flavor_data: '{"loadbalancer_topology": "SINGLE"}' } },
    });
    expect((await t.call("PUT", url, { flavorprofile: {} })).body).toEqual(single.body);

    await flavor(fp.id, "uses-upd");
    const inUse = fault(409, `Flavor profile ${fp.id} is in use and cannot be modified.`);
    expect(pick(await t.call("PUT", url, { flavorprofile: { flavor_data: "{}" } }))).toEqual(inUse);
    expect(pick(await t.call("PUT", url, { flavorprofile: { flavor_data: "bad" } }))).toEqual(inUse);
    expect(pick(await t.call("PUT", url, { flavorprofile: { provider_name: "amphora" } }))).toEqual(inUse);
    expect((await t.call("PUT", url, { flavorprofile: { name: "still-renamable" } })).status).toBe(200);
  });

  it("answers 404 as Octavia words it (GET and PUT name the data model, DELETE and the NIL id the controller)", async () => {
    expect(pick(await t.call("GET", `${FP}/bogus`))).toEqual(fault(404, "Flavor Profile bogus not found."));
    expect(pick(await t.call("PUT", `${FP}/bogus`, { flavorprofile: { name: "z" } }))).toEqual(
      fault(404, "Flavor Profile bogus not found."),
    );
    expect(pick(await t.call("PUT", `${FP}/bogus`, { flavorprofile: { flavor_data: "{}" } }))).toEqual(
      fault(404, "Flavor Profile bogus not found."),
    );
    expect(pick(await t.call("GET", `${FP}/${NIL}`))).toEqual(fault(404, `Flavor profile ${NIL} not found.`));
    expect(pick(await t.call("PUT", `${FP}/${NIL}`, { flavorprofile: { name: "z" } }))).toEqual(
      fault(404, `Flavor profile ${NIL} not found.`),
    );
    expect(pick(await t.call("DELETE", `${FP}/${MISSING}`))).toEqual(fault(404, `Flavor profile ${MISSING} not found.`));
  });

  it("refuses to delete a profile a flavor uses, then deletes it once the flavor is gone", async () => {
    const fp = await flavorProfile("{}", "del");
    const f = await flavor(fp.id, "uses-del");
    expect(pick(await t.call("DELETE", `${FP}/${fp.id}`))).toEqual(fault(409, `Flavor profile ${fp.id} is in use and cannot be modified.`));
    expect((await t.call("DELETE", `/v2/lbaas/flavors/${f.id}`)).status).toBe(204);
    expect(pick(await t.call("DELETE", `${FP}/${fp.id}`))).toEqual({ status: 204, body: undefined });
    expect(pick(await t.call("GET", `${FP}/${fp.id}`))).toEqual(fault(404, `Flavor Profile ${fp.id} not found.`));
  });

  it("a profile delete racing flavor creates never leaves a flavor without its profile", async () => {
    for (let i = 0; i < 5; i++) {
      const fp = await flavorProfile("{}", `race-${i}`);
      const [created, deleted] = await Promise.all([
        t.call("POST", "/v2/lbaas/flavors", { flavor: { name: `race-${i}`, flavor_profile_id: fp.id } }),
        t.call("DELETE", `${FP}/${fp.id}`),
      ]);
      if (created.status === 201) {
        expect(deleted.status).toBe(409);
        expect((await t.call("GET", `${FP}/${fp.id}`)).status).toBe(200);
      } else {
        expect(pick(created)).toEqual(fault(404, `Flavor Profile ${fp.id} not found.`));
        expect(deleted.status).toBe(204);
      }
    }
  });
});

describe("flavors", () => {
  const F = "/v2/lbaas/flavors";
  let fpHa: string;
  let fpSingle: string;

  beforeAll(async () => {
    fpHa = (await flavorProfile('{"loadbalancer_topology": "ACTIVE_STANDBY"}', "fl-ha")).id;
    fpSingle = (await flavorProfile("{}", "fl-single")).id;
  });

  it("creates with Octavia's defaults and shows", async () => {
    const res = await t.call("POST", F, { flavor: { name: "gold", flavor_profile_id: fpHa } });
    expect(res.status).toBe(201);
    expect(res.body.flavor).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "gold",
      description: "",
      enabled: true,
      flavor_profile_id: fpHa,
    });
    expect(pick(await t.call("GET", `${F}/${res.body.flavor.id}`))).toEqual({ status: 200, body: res.body });
    expect((await t.call("GET", `${F}/${res.body.flavor.id}?fields=bogus`)).body).toEqual({ flavor: {} });
  });

  it("refuses a taken name, a missing or malformed profile id, and an unknown profile", async () => {
    await flavor(fpSingle, "taken");
    expect(pick(await t.call("POST", F, { flavor: { name: "taken", flavor_profile_id: fpHa } }))).toEqual(
      fault(409, "A flavor of taken already exists."),
    );
    expect(pick(await t.call("POST", F, { flavor: { flavor_profile_id: fpHa } }))).toEqual(
      fault(400, "Invalid input for field/attribute name. Value: 'None'. Mandatory field missing."),
    );
    expect(pick(await t.call("POST", F, { flavor: { name: "xyz" } }))).toEqual(
      fault(400, "Invalid input for field/attribute flavor_profile_id. Value: 'None'. Mandatory field missing."),
    );
    expect(pick(await t.call("POST", F, { flavor: { name: "xyz", flavor_profile_id: "bogus" } }))).toEqual(
      fault(400, "Invalid input for field/attribute flavor_profile_id. Value: 'bogus'. Value should be UUID format"),
    );
    expect(pick(await t.call("POST", F, { flavor: { name: "xyz", flavor_profile_id: MISSING } }))).toEqual(
      fault(404, `Flavor Profile ${MISSING} not found.`),
    );
    expect(pick(await t.call("POST", F, { flavor: { name: "n".repeat(256), flavor_profile_id: fpHa } })).status).toBe(400);
    expect(pick(await t.call("POST", F, { flavor: { name: 5, flavor_profile_id: fpHa } }))).toEqual(
      fault(400, "Invalid input for field/attribute name. Value: '5'. Value should be string"),
    );
    expect(pick(await t.call("POST", F, { flavor: { name: "xyz", flavor_profile_id: fpHa, id: "x" } }))).toEqual(
      fault(400, "Unknown attribute for argument flavor_.flavor: id"),
    );
  });

  it("updates name, description and enabled; the profile is immutable; names stay unique", async () => {
    const f = await flavor(fpSingle, "silver", { description: "d", enabled: false });
    const url = `${F}/${f.id}`;
    const res = await t.call("PUT", url, { flavor: { name: "silver2", description: "dd", enabled: true } });
    expect(pick(res)).toEqual({
      status: 200,
      body: { flavor: { id: f.id, name: "silver2", description: "dd", enabled: true, flavor_profile_id: fpSingle } },
    });
    expect(pick(await t.call("PUT", url, { flavor: { flavor_profile_id: fpHa } }))).toEqual(
      fault(400, "Unknown attribute for argument flavor_.flavor: flavor_profile_id"),
    );
    await flavor(fpSingle, "bronze");
    expect(pick(await t.call("PUT", url, { flavor: { name: "bronze" } }))).toEqual(fault(409, "A flavor of bronze already exists."));
    // The old name is free again once renamed away.
    expect((await t.call("POST", F, { flavor: { name: "silver", flavor_profile_id: fpSingle } })).status).toBe(201);
    expect((await t.call("PUT", url, { flavor: { description: null } })).body.flavor.description).toBe("");
    expect(pick(await t.call("PUT", `${F}/bogus`, { flavor: { name: "zz" } }))).toEqual(fault(404, "Flavor bogus not found."));
    expect(pick(await t.call("PUT", `${F}/${NIL}`, { flavor: { name: "zz" } }))).toEqual(fault(404, `Flavor ${NIL} not found.`));
  });

  it("lists with filters, sorting, fields and paging by id", async () => {
    const other = await inProcessApp();
    const fp = (
      await other.call("POST", "/v2/lbaas/flavorprofiles", { flavorprofile: { name: "p", provider_name: "amphora", flavor_data: "{}" } })
    ).body.flavorprofile.id;
    const ids: string[] = [];
    for (const [name, enabled] of [
      ["f1", false],
      ["f2", true],
      ["f4", true],
    ] as const) {
      ids.push((await other.call("POST", F, { flavor: { name, flavor_profile_id: fp, enabled } })).body.flavor.id);
    }
    const sorted = [...ids].sort();
    const all = await other.call("GET", F);
    expect(all.body.flavors.map((f: { id: string }) => f.id)).toEqual(sorted);
    expect(all.body.flavors_links).toEqual([]);
    expect((await other.call("GET", `${F}?enabled=false&fields=name`)).body).toEqual({ flavors: [{ name: "f1" }], flavors_links: [] });
    expect((await other.call("GET", `${F}?sort=name:desc&fields=name`)).body.flavors).toEqual([
      { name: "f4" },
      { name: "f2" },
      { name: "f1" },
    ]);
    expect(pick(await other.call("GET", `${F}?sort=created_at`))).toEqual(fault(400, "Supplied sort key 'created_at' is not valid."));
    expect(pick(await other.call("GET", `${F}?marker=bogus`))).toEqual(fault(400, "Supplied pagination marker 'bogus' is not valid."));
    const page = await other.call("GET", `${F}?limit=2`);
    expect(page.body.flavors.map((f: { id: string }) => f.id)).toEqual(sorted.slice(0, 2));
    expect(page.body.flavors_links).toEqual([{ href: `http://localhost/v2/lbaas/flavors?limit=2&marker=${sorted[1]}`, rel: "next" }]);
    expect((await other.call("GET", `${F}?limit=2&marker=${sorted[1]}`)).body.flavors.map((f: { id: string }) => f.id)).toEqual([
      sorted[2],
    ]);
  });

  it("answers 404s as Octavia words them", async () => {
    expect(pick(await t.call("GET", `${F}/bogus`))).toEqual(fault(404, "Flavor bogus not found."));
    expect(pick(await t.call("GET", `${F}/${NIL}`))).toEqual(fault(404, `Flavor ${NIL} not found.`));
    expect(pick(await t.call("DELETE", `${F}/bogus`))).toEqual(fault(404, "Flavor bogus not found."));
    expect(pick(await t.call("DELETE", `${F}/${NIL}`))).toEqual(fault(404, `Flavor ${NIL} not found.`));
  });

  it("gives a load balancer the flavor's topology (two amphorae for ACTIVE_STANDBY) and refuses its delete while the LB lives", async () => {
    const f = await flavor(fpHa, "ha-for-lb");
    const lb = (await activeLb(t, { fields: { flavor_id: f.id } })).loadbalancer;
    const shown = await t.call("GET", `/v2/lbaas/loadbalancers/${lb.id}`);
    expect(shown.body.loadbalancer).toMatchObject({ flavor_id: f.id, provisioning_status: "ACTIVE" });
    const amps = await t.call("GET", `/v2/octavia/amphorae?loadbalancer_id=${lb.id}`);
    expect(amps.body.amphorae.map((a: { role: string }) => a.role).sort()).toEqual(["BACKUP", "MASTER"]);

    expect(pick(await t.call("DELETE", `${F}/${f.id}`))).toEqual(fault(409, `Flavor ${f.id} is in use and cannot be modified.`));
    expect((await t.call("DELETE", `/v2/lbaas/loadbalancers/${lb.id}`)).status).toBe(204);
    await t.settle();
    expect(pick(await t.call("DELETE", `${F}/${f.id}`))).toEqual({ status: 204, body: undefined });
    expect(pick(await t.call("GET", `${F}/${f.id}`))).toEqual(fault(404, `Flavor ${f.id} not found.`));
  });

  it("a flavor of a SINGLE profile gives one amphora", async () => {
    const f = await flavor(fpSingle, "single-for-lb");
    const lb = (await activeLb(t, { fields: { flavor_id: f.id } })).loadbalancer;
    const amps = await t.call("GET", `/v2/octavia/amphorae?loadbalancer_id=${lb.id}`);
    expect(amps.body.amphorae.map((a: { role: string }) => a.role)).toEqual(["STANDALONE"]);
  });
});

describe("availability zone profiles", () => {
  const AZP = "/v2/lbaas/availabilityzoneprofiles";
  const post = (p: Record<string, unknown>) =>
    t.call("POST", AZP, { availability_zone_profile: { name: "p", provider_name: "amphora", availability_zone_data: "{}", ...p } });
  const unsupported = (m: string) => fault(501, `Provider 'amphora' does not support a requested option: ${m}`);

  it("creates, shows and lists under Octavia's keys", async () => {
    const res = await post({ name: "p1", availability_zone_data: '{"valid_vip_networks": ["a"], "management_network": "m"}' });
    expect(res.status).toBe(201);
    const p = res.body.availability_zone_profile;
    expect(p).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "p1",
      provider_name: "amphora",
      availability_zone_data: '{"valid_vip_networks": ["a"], "management_network": "m"}',
    });
    expect(pick(await t.call("GET", `${AZP}/${p.id}`))).toEqual({ status: 200, body: { availability_zone_profile: p } });
    expect((await t.call("GET", `${AZP}?name=p1`)).body).toEqual({ availability_zone_profiles: [p], availability_zone_profile_links: [] });
  });

  it("refuses data that is not JSON or not the driver's, and unknown attributes", async () => {
    expect(pick(await post({ availability_zone_data: "nope" }))).toEqual(
      fault(400, "nope is not a valid option for availability_zone_data"),
    );
    expect(pick(await post({ availability_zone_data: null }))).toEqual(fault(400, "None is not a valid option for availability_zone_data"));
    expect(pick(await post({ availability_zone_data: '{"valid_vip_networks": "x"}' }))).toEqual(
      unsupported("valid_vip_networks 'x' is not of type 'array'"),
    );
    expect(pick(await post({ availability_zone_data: '{"zz": 1}' }))).toEqual(
      unsupported("Additional properties are not allowed ('zz' was unexpected)"),
    );
    expect(pick(await post({ x: 1 }))).toEqual(
      fault(400, "Unknown attribute for argument availability_zone_profile_.availability_zone_profile: x"),
    );
    expect(pick(await post({ provider_name: "nope" }))).toEqual(fault(400, "Provider 'nope' is not enabled."));
  });

  it("updates, with Octavia's messages (a PUT's bad data is named flavor_data, as Octavia names it)", async () => {
    const p = await zoneProfile('{"compute_zone": "nova"}', "p-upd");
    const url = `${AZP}/${p.id}`;
    expect(pick(await t.call("PUT", url, { availability_zone_profile: { availability_zone_data: "bad" } }))).toEqual(
      fault(400, "bad is not a valid option for flavor_data"),
    );
    expect(pick(await t.call("PUT", url, { availability_zone_profile: { availability_zone_data: '{"compute_zone": 1}' } }))).toEqual(
      unsupported("compute_zone 1 is not of type 'string'"),
    );
    expect(
      (await t.call("PUT", url, { availability_zone_profile: { name: "p-upd2", availability_zone_data: '{"compute_zone": "az2"}' } })).body,
    ).toEqual({
      availability_zone_profile: { id: p.id, name: "p-upd2", provider_name: "amphora", availability_zone_data: '{"compute_zone": "az2"}' },
    });
    expect(pick(await t.call("PUT", `${AZP}/bogus`, { availability_zone_profile: { name: "x" } }))).toEqual(
      fault(404, "Availability Zone Profile bogus not found."),
    );
    expect(pick(await t.call("GET", `${AZP}/bogus`))).toEqual(fault(404, "Availability Zone Profile bogus not found."));
    expect(pick(await t.call("GET", `${AZP}/${NIL}`))).toEqual(fault(404, `Availability Zone Profile ${NIL} not found.`));
    expect(pick(await t.call("DELETE", `${AZP}/${MISSING}`))).toEqual(fault(404, `Availability Zone Profile ${MISSING} not found.`));
  });
});

describe("availability zones", () => {
  const AZ = "/v2/lbaas/availabilityzones";
  let profile: string;

  beforeAll(async () => {
    profile = (await zoneProfile('{"compute_zone": "nova"}', "zones")).id;
  });

  it("creates, shows by name, updates description and enabled", async () => {
    const res = await t.call("POST", AZ, { availability_zone: { name: "az1", availability_zone_profile_id: profile, description: "d" } });
    expect(pick(res)).toEqual({
      status: 201,
      body: { availability_zone: { name: "az1", description: "d", enabled: true, availability_zone_profile_id: profile } },
    });
    expect(pick(await t.call("GET", `${AZ}/az1`))).toEqual({ status: 200, body: res.body });
    const upd = await t.call("PUT", `${AZ}/az1`, { availability_zone: { description: "x", enabled: false } });
    expect(upd.body).toEqual({
      availability_zone: { name: "az1", description: "x", enabled: false, availability_zone_profile_id: profile },
    });
    expect(pick(await t.call("PUT", `${AZ}/az1`, { availability_zone: { name: "zz" } }))).toEqual(
      fault(400, "Unknown attribute for argument availability_zone_.availability_zone: name"),
    );
    expect(pick(await t.call("PUT", `${AZ}/az1`, { availability_zone: { availability_zone_profile_id: profile } }))).toEqual(
      fault(400, "Unknown attribute for argument availability_zone_.availability_zone: availability_zone_profile_id"),
    );
  });

  it("refuses a taken name (the NIL name is Octavia's placeholder's), a missing or empty name and an unknown profile", async () => {
    await t.call("POST", AZ, { availability_zone: { name: "taken", availability_zone_profile_id: profile } });
    expect(pick(await t.call("POST", AZ, { availability_zone: { name: "taken", availability_zone_profile_id: profile } }))).toEqual(
      fault(409, "A availability zone of taken already exists."),
    );
    expect(pick(await t.call("POST", AZ, { availability_zone: { name: NIL, availability_zone_profile_id: profile } }))).toEqual(
      fault(409, `A availability zone of ${NIL} already exists.`),
    );
    expect(pick(await t.call("POST", AZ, { availability_zone: { availability_zone_profile_id: profile } }))).toEqual(
      fault(400, "Invalid input for field/attribute name. Value: 'None'. Mandatory field missing."),
    );
    expect(pick(await t.call("POST", AZ, { availability_zone: { name: "", availability_zone_profile_id: profile } }))).toEqual(
      fault(400, "Invalid input for field/attribute name. Value: ''. Value should have a minimum character requirement of 1"),
    );
    expect(pick(await t.call("POST", AZ, { availability_zone: { name: "x", availability_zone_profile_id: MISSING } }))).toEqual(
      fault(404, `Availability Zone Profile ${MISSING} not found.`),
    );
  });

  it("answers 404s as Octavia words them", async () => {
    expect(pick(await t.call("GET", `${AZ}/nope`))).toEqual(fault(404, "Availability Zone nope not found."));
    expect(pick(await t.call("GET", `${AZ}/${NIL}`))).toEqual(fault(404, `Availability Zone ${NIL} not found.`));
    expect(pick(await t.call("PUT", `${AZ}/nope`, { availability_zone: { description: "x" } }))).toEqual(
      fault(404, "Availability Zone nope not found."),
    );
    expect(pick(await t.call("DELETE", `${AZ}/nope`))).toEqual(fault(404, "Availability Zone nope not found."));
  });

  it("lists in name order, paging with the name as marker", async () => {
    const other = await inProcessApp();
    const p = (
      await other.call("POST", "/v2/lbaas/availabilityzoneprofiles", {
        availability_zone_profile: { name: "p", provider_name: "amphora", availability_zone_data: "{}" },
      })
    ).body.availability_zone_profile.id;
    for (const name of ["zb", "za", "zc"]) await other.call("POST", AZ, { availability_zone: { name, availability_zone_profile_id: p } });
    const all = await other.call("GET", AZ);
    expect(all.body.availability_zones.map((z: { name: string }) => z.name)).toEqual(["za", "zb", "zc"]);
    expect(all.body.availability_zones[0]).toEqual({ name: "za", description: "", enabled: true, availability_zone_profile_id: p });
    expect(all.body.availability_zones_links).toEqual([]);
    const page = await other.call("GET", `${AZ}?limit=1`);
    expect(page.body).toEqual({
      availability_zones: [{ name: "za", description: "", enabled: true, availability_zone_profile_id: p }],
      availability_zones_links: [{ href: "http://localhost/v2/lbaas/availabilityzones?limit=1&marker=za", rel: "next" }],
    });
    expect((await other.call("GET", `${AZ}?marker=za&fields=name`)).body.availability_zones).toEqual([{ name: "zb" }, { name: "zc" }]);
    expect((await other.call("GET", `${AZ}?name=zc&fields=name`)).body.availability_zones).toEqual([{ name: "zc" }]);
  });

  it("refuses to change or delete a profile a zone uses, and to delete a zone a load balancer is in", async () => {
    const p = await zoneProfile('{"compute_zone": "nova"}', "in-use");
    await t.call("POST", AZ, { availability_zone: { name: "busy", availability_zone_profile_id: p.id } });
    const inUse = fault(409, `Availability Zone Profile ${p.id} is in use and cannot be modified.`);
    expect(
      pick(await t.call("PUT", `/v2/lbaas/availabilityzoneprofiles/${p.id}`, { availability_zone_profile: { provider_name: "amphora" } })),
    ).toEqual(inUse);
    expect(pick(await t.call("DELETE", `/v2/lbaas/availabilityzoneprofiles/${p.id}`))).toEqual(inUse);

    const lb = (await activeLb(t, { fields: { availability_zone: "busy" } })).loadbalancer;
    expect((await t.call("GET", `/v2/lbaas/loadbalancers/${lb.id}`)).body.loadbalancer.availability_zone).toBe("busy");
    expect(pick(await t.call("DELETE", `${AZ}/busy`))).toEqual(fault(409, "Availability Zone busy is in use and cannot be modified."));
    expect((await t.call("DELETE", `/v2/lbaas/loadbalancers/${lb.id}`)).status).toBe(204);
    await t.settle();
    expect(pick(await t.call("DELETE", `${AZ}/busy`))).toEqual({ status: 204, body: undefined });
    expect(pick(await t.call("DELETE", `/v2/lbaas/availabilityzoneprofiles/${p.id}`))).toEqual({ status: 204, body: undefined });
  });

  it("a disabled zone is refused by the load-balancer create", async () => {
    await t.call("POST", AZ, { availability_zone: { name: "off", availability_zone_profile_id: profile, enabled: false } });
    const res = await t.call("POST", "/v2/lbaas/loadbalancers", {
      loadbalancer: { vip_subnet_id: SUBNET, availability_zone: "off", project_id: PROJECT },
    });
    expect(pick(res)).toEqual(fault(400, "The selected availability_zone is not allowed in this deployment: off"));
  });
});

describe("bad input", () => {
  it("answers malformed JSON, unknown fields, oversized strings and nested objects in every field with a 400", async () => {
    const fp = await flavorProfile("{}", "bad-input");
    const f = await flavor(fp.id, "bad-input");
    const azp = await zoneProfile("{}", "bad-input");
    await t.call("POST", "/v2/lbaas/availabilityzones", { availability_zone: { name: "bad-input", availability_zone_profile_id: azp.id } });
    const endpoints: [string, string, string, Record<string, unknown>][] = [
      ["PUT", "/v2/lbaas/quotas/bad-input", "quota", { listener: 1 }],
      ["POST", "/v2/lbaas/flavorprofiles", "flavorprofile", { name: "x", provider_name: "amphora", flavor_data: "{}" }],
      ["PUT", `/v2/lbaas/flavorprofiles/${fp.id}`, "flavorprofile", { name: "x" }],
      ["POST", "/v2/lbaas/flavors", "flavor", { name: "x", flavor_profile_id: fp.id }],
      ["PUT", `/v2/lbaas/flavors/${f.id}`, "flavor", { name: "x" }],
      [
        "POST",
        "/v2/lbaas/availabilityzoneprofiles",
        "availability_zone_profile",
        { name: "x", provider_name: "amphora", availability_zone_data: "{}" },
      ],
      ["PUT", `/v2/lbaas/availabilityzoneprofiles/${azp.id}`, "availability_zone_profile", { name: "x" }],
      ["POST", "/v2/lbaas/availabilityzones", "availability_zone", { name: "x", availability_zone_profile_id: azp.id }],
      ["PUT", "/v2/lbaas/availabilityzones/bad-input", "availability_zone", { description: "x" }],
    ];
    const fields: Record<string, string[]> = {
      quota: ["loadbalancer", "load_balancer", "listener", "member", "pool", "healthmonitor", "health_monitor", "l7policy", "l7rule"],
      flavorprofile: ["name", "provider_name", "flavor_data"],
      flavor: ["name", "description", "enabled", "flavor_profile_id"],
      availability_zone_profile: ["name", "provider_name", "availability_zone_data"],
      availability_zone: ["name", "description", "enabled", "availability_zone_profile_id"],
    };
    for (const [method, path, root, valid] of endpoints) {
      const bad = async (body: unknown, what: string) => {
        const res = await t.call(method, path, body);
        expect(res.status, `${method} ${path} ${what}: ${JSON.stringify(res.body)}`).toBe(400);
        expect(res.body).toEqual({ faultcode: "Client", faultstring: expect.any(String), debuginfo: null });
      };
      await bad(`{"${root}": {`, "malformed JSON");
      await bad({ [root]: { ...valid, no_such_field: 1 } }, "unknown field");
      for (const field of fields[root]!) {
        // Fields a PUT does not take (a flavor's profile, a zone's name and profile) are unknown there: 400 too.
        await bad({ [root]: { ...valid, [field]: "x".repeat(5000) } }, `${field} oversized`);
        await bad({ [root]: { ...valid, [field]: { nested: [1, 2] } } }, `${field} nested`);
      }
    }
    expect((await t.call("GET", "/v2/lbaas/quotas?project_id=bad-input")).body.quotas).toEqual([]);
    expect((await t.call("GET", `/v2/lbaas/flavors/${f.id}`)).body.flavor.name).toBe("bad-input");
  });
});
