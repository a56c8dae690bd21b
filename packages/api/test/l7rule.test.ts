// L7 rules (/v2/lbaas/l7policies/{l7policy_id}/rules), against the real app over DynamoDB Local and
// the local ASL runner.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { MUTABLE_STATUSES, type ChildWrite } from "@ottava/core";
import { fault, inProcessApp, pick, PROJECT, SUBNET } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
type Obj = Record<string, unknown> & { id: string };
let t: App;
let slow: App; // flows take a while, so the PENDING_* states can be seen

const rules = (policyId: string) => `/v2/lbaas/l7policies/${policyId}/rules`;
const status = async (app: App, kind: string, id: string) => (await app.store.getChild(kind, id))?.record.provisioning_status;
const lbStatus = async (app: App, lbId: string) => (await app.store.getLoadBalancer(lbId))?.record.provisioning_status;
const parsing = (msg: string) => fault(400, `Error parsing L7Rule: ${msg}`);

async function created(app: App, path: string, root: string, body: Record<string, unknown>): Promise<Obj> {
  const res = await app.call("POST", path, { [root]: body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await app.settle();
  return res.body[root];
}

/** An ACTIVE LB with an HTTP listener and a REJECT policy (with inline rules, if given). */
async function setup(app: App = t, inline: unknown[] = []) {
  const lb = await created(app, "/v2/lbaas/loadbalancers", "loadbalancer", { vip_subnet_id: SUBNET });
  const listener = await created(app, "/v2/lbaas/listeners", "listener", { loadbalancer_id: lb.id, protocol: "HTTP", protocol_port: 80 });
  const policy = await created(app, "/v2/lbaas/l7policies", "l7policy", { listener_id: listener.id, action: "REJECT", rules: inline });
  return { lbId: lb.id, listenerId: listener.id, policyId: policy.id };
}

const rule = (app: App, policyId: string, fields: Record<string, unknown>) => created(app, rules(policyId), "rule", fields);
const PATH_RULE = { type: "PATH", compare_type: "STARTS_WITH", value: "/api" };

beforeAll(async () => {
  t = await inProcessApp();
  slow = await inProcessApp({ OTTAVA_NOOP_LATENCY: "amphora.update:500" });
});

describe("create", () => {
  it("answers 201 with Octavia's defaults; the policy, listener and LB are PENDING_UPDATE until the flow makes all ACTIVE", async () => {
    const { lbId, listenerId, policyId } = await setup(slow);
    const res = await slow.call("POST", rules(policyId), {
      rule: { type: "HOST_NAME", compare_type: "EQUAL_TO", value: "www.example.com" },
    });
    expect(res.status).toBe(201);
    const r = res.body.rule;
    expect(r).toEqual({
      id: r.id,
      type: "HOST_NAME",
      compare_type: "EQUAL_TO",
      key: null,
      value: "www.example.com",
      invert: false,
      provisioning_status: "PENDING_CREATE",
      operating_status: "OFFLINE",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/),
      updated_at: null,
      project_id: PROJECT,
      tenant_id: PROJECT,
      admin_state_up: true,
      tags: [],
    });
    expect(await status(slow, "l7policy", policyId)).toBe("PENDING_UPDATE");
    expect(await status(slow, "listener", listenerId)).toBe("PENDING_UPDATE");
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    // Octavia checks the policy first, which is PENDING_UPDATE.
    expect(pick(await slow.call("POST", rules(policyId), { rule: PATH_RULE }))).toEqual(
      fault(409, `L7Policy ${policyId} is immutable and cannot be updated.`),
    );
    await slow.settle();
    // Octavia's MarkL7RuleActiveInDB: ONLINE once configured (it is admin-up).
    expect((await slow.call("GET", `${rules(policyId)}/${r.id}`)).body.rule).toMatchObject({
      provisioning_status: "ACTIVE",
      operating_status: "ONLINE",
    });
    expect(await status(slow, "l7policy", policyId)).toBe("ACTIVE");
    expect(await status(slow, "listener", listenerId)).toBe("ACTIVE");
    expect(await lbStatus(slow, lbId)).toBe("ACTIVE");
    expect((await slow.call("GET", `/v2/lbaas/l7policies/${policyId}`)).body.l7policy.rules).toEqual([{ id: r.id }]);
    expect((await slow.call("GET", `/v2.0/lbaas/l7policies/${policyId}/rules/${r.id}`)).body.rule.id).toBe(r.id);
  });

  it("keeps each rule type's fields: header, cookie, file type and the SSL types", async () => {
    const { policyId } = await setup();
    expect(
      await rule(t, policyId, {
        type: "HEADER",
        compare_type: "EQUAL_TO",
        key: "Some-header",
        value: '"some string"',
        invert: true,
        admin_state_up: false,
        tags: ["a"],
      }),
    ).toMatchObject({
      type: "HEADER",
      key: "Some-header",
      value: '"some string"',
      invert: true,
      admin_state_up: false,
      tags: ["a"],
    });
    expect(await rule(t, policyId, { type: "COOKIE", compare_type: "CONTAINS", key: "some-cookie", value: "some-value" })).toMatchObject({
      key: "some-cookie",
      value: "some-value",
    });
    expect(await rule(t, policyId, { type: "FILE_TYPE", compare_type: "REGEX", value: "jpg|png" })).toMatchObject({ value: "jpg|png" });
    expect(await rule(t, policyId, { type: "SSL_CONN_HAS_CERT", compare_type: "EQUAL_TO", value: "tRuE" })).toMatchObject({
      value: "tRuE",
      key: null,
    });
    expect(await rule(t, policyId, { type: "SSL_VERIFY_RESULT", compare_type: "EQUAL_TO", value: "0" })).toMatchObject({ value: "0" });
    expect(
      await rule(t, policyId, { type: "SSL_DN_FIELD", compare_type: "STARTS_WITH", key: "st-1", value: "ST-FIELD1-PREFIX" }),
    ).toMatchObject({ key: "st-1" });
    // A key given to a rule type without one is kept on create, as Octavia does.
    expect(await rule(t, policyId, { type: "PATH", compare_type: "EQUAL_TO", key: "k", value: "/x" })).toMatchObject({ key: "k" });
    expect((await t.call("GET", rules(policyId))).body.rules).toHaveLength(7);
  });

  it("refuses bad rules with wsme's and validate.l7rule_data's messages, and writes nothing", async () => {
    const { lbId, policyId } = await setup();
    const post = (body: Record<string, unknown>) => t.call("POST", rules(policyId), { rule: body }).then(pick);
    const bad = (field: string, value: string, why: string) =>
      fault(400, `Invalid input for field/attribute ${field}. Value: '${value}'. ${why}`);
    expect(await post({ name: "test1" })).toEqual(fault(400, "Unknown attribute for argument rule_.rule: name"));
    expect(await post({ compare_type: "EQUAL_TO", value: "x" })).toEqual(bad("type", "None", "Mandatory field missing."));
    expect(await post({ type: "HOST_NAME", compare_type: "STARTS_WITH" })).toEqual(bad("value", "None", "Mandatory field missing."));
    expect(await post({ type: "NAME", compare_type: "EQUAL_TO", value: "x" })).toEqual(
      bad(
        "type",
        "NAME",
        "Value should be one of: HOST_NAME, PATH, FILE_TYPE, HEADER, COOKIE, SSL_CONN_HAS_CERT, SSL_VERIFY_RESULT, SSL_DN_FIELD",
      ),
    );
    expect(await post({ type: "PATH", compare_type: "LIKE", value: "x" })).toEqual(
      bad("compare_type", "LIKE", "Value should be one of: REGEX, STARTS_WITH, ENDS_WITH, CONTAINS, EQUAL_TO"),
    );
    expect(await post({ type: "PATH", compare_type: "EQUAL_TO", value: 5 })).toEqual(bad("value", "5", "Value should be string"));
    expect(await post({ type: "PATH", compare_type: "EQUAL_TO", value: "x".repeat(256) })).toEqual(
      bad("value", "x".repeat(256), "Value should have a maximum character requirement of 255"),
    );
    expect(await post({ type: "PATH", compare_type: "EQUAL_TO", value: "a\nb" })).toEqual(
      bad("value", "a\nb", "Value should match the pattern ^[^\\r\\n]*$"),
    );
    expect(await post({ type: "HEADER", compare_type: "EQUAL_TO", key: "a\rb", value: "x" })).toEqual(
      bad("key", "a\rb", "Value should match the pattern ^[^\\r\\n]*$"),
    );
    expect(await post({ type: "PATH", compare_type: "EQUAL_TO", value: null })).toEqual(
      parsing("Invalid L7 Rule: L7 rule type requires a value"),
    );
    expect(await post({ type: null, compare_type: "EQUAL_TO", value: "x" })).toEqual(parsing("Invalid L7 Rule: invalid rule type"));
    expect(await post({ type: "PATH", compare_type: "REGEX", value: "bad string\\" })).toEqual(
      parsing("Unable to parse regular expression: bad escape (end of pattern) at position 10"),
    );
    expect(await post({ type: "PATH", compare_type: "REGEX", value: "(?<=a+)b" })).toEqual(
      parsing("Unable to parse regular expression: look-behind requires fixed-width pattern"),
    );
    expect(await post({ type: "PATH", compare_type: "REGEX", value: "a\tb" })).toEqual(
      parsing("Unable to parse regular expression: contains control characters"),
    );
    expect(await post({ type: "PATH", compare_type: "EQUAL_TO", value: "some string" })).toEqual(
      parsing("Invalid characters in comparison value"),
    );
    expect(await post({ type: "FILE_TYPE", compare_type: "STARTS_WITH", value: "png" })).toEqual(
      parsing("Invalid L7 Rule: invalid comparison type for rule type"),
    );
    expect(await post({ type: "HEADER", compare_type: "CONTAINS", value: "some-string" })).toEqual(
      parsing("Invalid L7 Rule: L7 rule type requires a key"),
    );
    expect(await post({ type: "HEADER", compare_type: "CONTAINS", key: "bad key", value: "x" })).toEqual(
      parsing("Invalid characters in key"),
    );
    expect(await post({ type: "HEADER", compare_type: "CONTAINS", key: "k", value: "a b" })).toEqual(
      parsing("Invalid characters in header value"),
    );
    expect(await post({ type: "COOKIE", compare_type: "EQUAL_TO", key: "bad cookie name", value: "some-string" })).toEqual(
      parsing("Invalid characters in key"),
    );
    expect(await post({ type: "COOKIE", compare_type: "EQUAL_TO", key: "c", value: "a;b" })).toEqual(
      parsing("Invalid characters in cookie value"),
    );
    // The SSL rule types (the cases of Octavia's _test_bad_cases_with_ssl_rule_types).
    const ssl = (type: string, fields: Record<string, unknown>) => post({ type, compare_type: "EQUAL_TO", value: "true", ...fields });
    expect(await ssl("SSL_CONN_HAS_CERT", { key: "no-need-key" })).toEqual(
      parsing('Invalid L7 Rule: L7rule type SSL_CONN_HAS_CERT does not use the "key" field.'),
    );
    expect(await ssl("SSL_CONN_HAS_CERT", { value: "not-true-string" })).toEqual(
      parsing("Invalid L7 Rule: L7rule value not-true-string is not a boolean True string."),
    );
    expect(await ssl("SSL_CONN_HAS_CERT", { value: "tRUe", compare_type: "STARTS_WITH" })).toEqual(
      parsing("Invalid L7 Rule: L7rule type SSL_CONN_HAS_CERT only supports the EQUAL_TO compare type."),
    );
    expect(await ssl("SSL_VERIFY_RESULT", { key: "no-need-key" })).toEqual(
      parsing('Invalid L7 Rule: L7rule type SSL_VERIFY_RESULT does not use the "key" field.'),
    );
    expect(await ssl("SSL_VERIFY_RESULT", {})).toEqual(
      parsing("Invalid L7 Rule: L7rule type SSL_VERIFY_RESULT needs a int value, which is >= 0"),
    );
    expect(await ssl("SSL_VERIFY_RESULT", { value: "0", compare_type: "STARTS_WITH" })).toEqual(
      parsing("Invalid L7 Rule: L7rule type SSL_VERIFY_RESULT only supports the EQUAL_TO compare type."),
    );
    expect(await ssl("SSL_DN_FIELD", { compare_type: "REGEX", value: "bad regex\\" })).toEqual(
      parsing("Unable to parse regular expression: bad escape (end of pattern) at position 9"),
    );
    expect(await ssl("SSL_DN_FIELD", { compare_type: "REGEX", value: "^.test*$" })).toEqual(
      parsing("Invalid L7 Rule: L7rule type SSL_DN_FIELD needs to specify a key and a value."),
    );
    expect(await ssl("SSL_DN_FIELD", { key: "NOT_SUPPORTED_DN_FIELD" })).toEqual(
      parsing("Invalid L7 Rule: Invalid L7rule distinguished name field."),
    );
    // Nothing was written.
    expect((await t.call("GET", rules(policyId))).body.rules).toEqual([]);
    expect(await status(t, "l7policy", policyId)).toBe("ACTIVE");
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
  });

  it('answers 404 "L7Policy <id> not found." under an unknown policy, whatever the request', async () => {
    const unknown = randomUUID();
    const missing = fault(404, `L7Policy ${unknown} not found.`);
    expect(pick(await t.call("GET", rules(unknown)))).toEqual(missing);
    expect(pick(await t.call("POST", rules(unknown), { rule: PATH_RULE }))).toEqual(missing);
    expect(pick(await t.call("POST", rules(unknown), { rule: { bogus: 1 } }))).toEqual(missing);
    expect(pick(await t.call("GET", `${rules(unknown)}/${randomUUID()}`))).toEqual(missing);
    expect(pick(await t.call("PUT", `${rules(unknown)}/${randomUUID()}`, { rule: {} }))).toEqual(missing);
    expect(pick(await t.call("DELETE", `${rules(unknown)}/${randomUUID()}`))).toEqual(missing);
    // A rule is found under its own policy only.
    const a = await setup();
    const b = await setup();
    const r = await rule(t, a.policyId, PATH_RULE);
    expect(pick(await t.call("GET", `${rules(b.policyId)}/${r.id}`))).toEqual(fault(404, `L7 Rule ${r.id} not found.`));
    const gone = randomUUID();
    expect(pick(await t.call("GET", `${rules(a.policyId)}/${gone}`))).toEqual(fault(404, `L7 Rule ${gone} not found.`));
  });

  it("allows at most MAX_L7RULES_PER_L7POLICY (50) rules on a policy", async () => {
    const { policyId } = await setup(
      t,
      Array.from({ length: 50 }, (_, i) => ({ type: "PATH", compare_type: "STARTS_WITH", value: `/p${i}` })),
    );
    expect((await t.call("GET", rules(policyId))).body.rules).toHaveLength(50);
    expect(pick(await t.call("POST", rules(policyId), { rule: PATH_RULE }))).toEqual(fault(409, `Too many rules on L7 policy ${policyId}`));
  });

  it("refuses rule changes while the policy is not ACTIVE (ERROR here)", async () => {
    const { lbId, policyId } = await setup();
    const r = await rule(t, policyId, PATH_RULE);
    const owner = `seed-${randomUUID()}`;
    const writes: ChildWrite[] = [{ kind: "l7policy", id: policyId, set: { provisioning_status: "ERROR" } }];
    await t.store.lockWith(lbId, { from: MUTABLE_STATUSES, to: "PENDING_UPDATE", owner, executionArn: "seed" }, writes);
    await t.store.updateLoadBalancer(lbId, owner, { provisioning_status: "ACTIVE" }, true);
    const immutable = fault(409, `L7Policy ${policyId} is immutable and cannot be updated.`);
    expect(pick(await t.call("POST", rules(policyId), { rule: PATH_RULE }))).toEqual(immutable);
    expect(pick(await t.call("PUT", `${rules(policyId)}/${r.id}`, { rule: { value: "/b" } }))).toEqual(immutable);
    expect(pick(await t.call("DELETE", `${rules(policyId)}/${r.id}`))).toEqual(immutable);
    // Rule checks come first.
    expect(pick(await t.call("POST", rules(policyId), { rule: { ...PATH_RULE, value: "a b" } }))).toEqual(
      parsing("Invalid characters in comparison value"),
    );
  });
});

describe("update", () => {
  it("answers 200 PENDING_UPDATE (policy, listener and LB PENDING_UPDATE), then ACTIVE", async () => {
    const { lbId, listenerId, policyId } = await setup(slow);
    const r = await rule(slow, policyId, { ...PATH_RULE, tags: ["old"] });
    const res = await slow.call("PUT", `${rules(policyId)}/${r.id}`, { rule: { value: "/images", tags: ["new"] } });
    expect(res.status).toBe(200);
    expect(res.body.rule).toMatchObject({
      value: "/images",
      tags: ["new"],
      type: "PATH",
      provisioning_status: "PENDING_UPDATE",
      updated_at: expect.stringMatching(/^\d{4}-/),
    });
    expect(await status(slow, "l7policy", policyId)).toBe("PENDING_UPDATE");
    expect(await status(slow, "listener", listenerId)).toBe("PENDING_UPDATE");
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    await slow.settle();
    expect((await slow.call("GET", `${rules(policyId)}/${r.id}`)).body.rule).toMatchObject({
      value: "/images",
      provisioning_status: "ACTIVE",
    });
    expect(await status(slow, "l7policy", policyId)).toBe("ACTIVE");
  });

  it("checks the rule as it would be; nulls: invert false, key cleared by rule types without one", async () => {
    const { policyId } = await setup();
    const r = await rule(t, policyId, { type: "HEADER", compare_type: "EQUAL_TO", key: "X-A", value: "b", invert: true, tags: ["x"] });
    const put = async (fields: Record<string, unknown>) => {
      const res = await t.call("PUT", `${rules(policyId)}/${r.id}`, { rule: fields });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      await t.settle();
      return res.body.rule as Obj;
    };
    expect(await put({ invert: null, admin_state_up: null, tags: null })).toMatchObject({
      invert: false,
      admin_state_up: false,
      tags: [],
      key: "X-A",
    });
    expect(await put({ type: "SSL_DN_FIELD", key: "CN", value: "x", compare_type: "EQUAL_TO" })).toMatchObject({
      type: "SSL_DN_FIELD",
      key: "CN",
    });
    expect(await put({ type: "HOST_NAME" })).toMatchObject({ type: "HOST_NAME", key: null, value: "x", compare_type: "EQUAL_TO" });
    for (const [type, fields] of [
      ["SSL_CONN_HAS_CERT", { value: "tRuE", compare_type: "EQUAL_TO" }],
      ["SSL_VERIFY_RESULT", { value: "0", compare_type: "EQUAL_TO" }],
    ] as const) {
      expect(await put({ type, ...fields })).toMatchObject({ type, ...fields, key: null, invert: false });
    }
    // The stored rule with the given fields laid over it must still be a rule.
    const bad = async (fields: Record<string, unknown>, msg: string) =>
      expect(pick(await t.call("PUT", `${rules(policyId)}/${r.id}`, { rule: fields }))).toEqual(parsing(msg));
    await bad({ compare_type: "STARTS_WITH" }, "Invalid L7 Rule: L7rule type SSL_VERIFY_RESULT only supports the EQUAL_TO compare type.");
    await bad(
      { type: "PATH", compare_type: "REGEX", value: "bad string\\" },
      "Unable to parse regular expression: bad escape (end of pattern) at position 10",
    );
    await bad({ type: "COOKIE", value: "v" }, "Invalid L7 Rule: L7 rule type requires a key");
    await bad({ value: null }, "Invalid L7 Rule: L7 rule type requires a value");
    expect(pick(await t.call("PUT", `${rules(policyId)}/${r.id}`, { rule: { type: "bad type" } }))).toEqual(
      fault(
        400,
        "Invalid input for field/attribute type. Value: 'bad type'. Value should be one of: HOST_NAME, PATH, FILE_TYPE, HEADER, COOKIE, SSL_CONN_HAS_CERT, SSL_VERIFY_RESULT, SSL_DN_FIELD",
      ),
    );
    expect(pick(await t.call("PUT", `${rules(policyId)}/${r.id}`, { rule: { project_id: PROJECT } }))).toEqual(
      fault(400, "Unknown attribute for argument l7rule_.rule: project_id"),
    );
    expect((await t.call("GET", `${rules(policyId)}/${r.id}`)).body.rule).toMatchObject({
      type: "SSL_VERIFY_RESULT",
      value: "0",
      provisioning_status: "ACTIVE",
    });
  });
});

describe("delete", () => {
  it("answers 204, PENDING_DELETE (policy PENDING_UPDATE), then 404 and gone from its policy", async () => {
    const { lbId, listenerId, policyId } = await setup(slow);
    const r = await rule(slow, policyId, PATH_RULE);
    const keep = await rule(slow, policyId, { ...PATH_RULE, value: "/keep" });
    expect((await slow.call("DELETE", `${rules(policyId)}/${r.id}`)).status).toBe(204);
    expect((await slow.call("GET", `${rules(policyId)}/${r.id}`)).body.rule.provisioning_status).toBe("PENDING_DELETE");
    expect(await status(slow, "l7policy", policyId)).toBe("PENDING_UPDATE");
    expect(await status(slow, "listener", listenerId)).toBe("PENDING_UPDATE");
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    await slow.settle();
    expect(pick(await slow.call("GET", `${rules(policyId)}/${r.id}`))).toEqual(fault(404, `L7 Rule ${r.id} not found.`));
    expect(pick(await slow.call("DELETE", `${rules(policyId)}/${r.id}`))).toEqual(fault(404, `L7 Rule ${r.id} not found.`));
    expect((await slow.call("GET", `/v2/lbaas/l7policies/${policyId}`)).body.l7policy).toMatchObject({
      rules: [{ id: keep.id }],
      provisioning_status: "ACTIVE",
    });
  });
});

describe("list", () => {
  it("lists a policy's rules only, with filters, sorting and fields", async () => {
    const { policyId } = await setup();
    const other = await setup();
    await rule(t, other.policyId, PATH_RULE);
    const a = await rule(t, policyId, { ...PATH_RULE, tags: ["x"] });
    const b = await rule(t, policyId, { type: "HOST_NAME", compare_type: "ENDS_WITH", value: ".example.com", invert: true });
    const ids = async (q = "") => ((await t.call("GET", `${rules(policyId)}${q}`)).body.rules as Obj[]).map((r) => r.id);
    expect(await ids()).toEqual([a.id, b.id]);
    expect(await ids("/")).toEqual([a.id, b.id]);
    expect(await ids("?type=HOST_NAME")).toEqual([b.id]);
    expect(await ids("?invert=true")).toEqual([b.id]);
    expect(await ids("?compare_type=STARTS_WITH")).toEqual([a.id]);
    expect(await ids("?tags=x")).toEqual([a.id]);
    expect(await ids("?sort=value:desc")).toEqual([a.id, b.id]);
    expect(await ids("?limit=1")).toEqual([a.id]);
    expect(await ids(`?marker=${a.id}`)).toEqual([b.id]);
    expect((await t.call("GET", `${rules(policyId)}?fields=id,type`)).body).toMatchObject({
      rules: [
        { id: a.id, type: "PATH" },
        { id: b.id, type: "HOST_NAME" },
      ],
      rules_links: [],
    });
  });
});
