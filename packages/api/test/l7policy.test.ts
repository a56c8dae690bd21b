// L7 policies (/v2/lbaas/l7policies), against the real app over DynamoDB Local and the local ASL runner.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { fault, inProcessApp, pick, PROJECT, seed, SUBNET } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
type Obj = Record<string, unknown> & { id: string };
let t: App;
let slow: App; // flows take a while, so the PENDING_* states can be seen

const POLICIES = "/v2/lbaas/l7policies";
const status = async (app: App, kind: string, id: string) => (await app.store.getChild(kind, id))?.record.provisioning_status;
const lbStatus = async (app: App, lbId: string) => (await app.store.getLoadBalancer(lbId))?.record.provisioning_status;

async function created(app: App, path: string, root: string, body: Record<string, unknown>): Promise<Obj> {
  const res = await app.call("POST", path, { [root]: body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await app.settle();
  return res.body[root];
}

/** An ACTIVE LB with an HTTP listener and an HTTP pool. */
async function setup(app: App = t, protocol = "HTTP") {
  const lb = await created(app, "/v2/lbaas/loadbalancers", "loadbalancer", { vip_subnet_id: SUBNET });
  const listener = await created(app, "/v2/lbaas/listeners", "listener", { loadbalancer_id: lb.id, protocol, protocol_port: 80 });
  const pool = await created(app, "/v2/lbaas/pools", "pool", { loadbalancer_id: lb.id, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" });
  return { lbId: lb.id, listenerId: listener.id, poolId: pool.id };
}

async function policy(app: App, listenerId: string, fields: Record<string, unknown> = {}): Promise<Obj> {
  return created(app, POLICIES, "l7policy", { listener_id: listenerId, action: "REJECT", ...fields });
}

const positions = async (app: App, listenerId: string) =>
  ((await app.call("GET", `${POLICIES}?listener_id=${listenerId}&sort=position`)).body.l7policies as Obj[]).map((p) => [
    p.name,
    p.position,
  ]);

beforeAll(async () => {
  t = await inProcessApp();
  slow = await inProcessApp({ OTTAVA_NOOP_LATENCY: "amphora.update:500" });
});

describe("create", () => {
  it("answers 201 with Octavia's defaults; the LB and listener are PENDING_UPDATE until the flow makes all ACTIVE", async () => {
    const { lbId, listenerId } = await setup(slow);
    const res = await slow.call("POST", POLICIES, { l7policy: { listener_id: listenerId, action: "REJECT" } });
    expect(res.status).toBe(201);
    const p = res.body.l7policy;
    expect(p).toEqual({
      id: p.id,
      name: "",
      description: "",
      provisioning_status: "PENDING_CREATE",
      operating_status: "OFFLINE",
      admin_state_up: true,
      project_id: PROJECT,
      tenant_id: PROJECT,
      action: "REJECT",
      listener_id: listenerId,
      redirect_pool_id: null,
      redirect_url: null,
      redirect_prefix: null,
      position: 1,
      rules: [],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/),
      updated_at: null,
      tags: [],
      redirect_http_code: null,
    });
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    expect(await status(slow, "listener", listenerId)).toBe("PENDING_UPDATE");
    expect(await status(slow, "l7policy", p.id)).toBe("PENDING_CREATE");
    expect(pick(await slow.call("POST", POLICIES, { l7policy: { listener_id: listenerId, action: "REJECT" } }))).toEqual(
      fault(409, `Load Balancer ${lbId} is immutable and cannot be updated.`),
    );
    await slow.settle();
    // Octavia's MarkL7PolicyActiveInDB: ONLINE once configured (it is admin-up).
    expect((await slow.call("GET", `${POLICIES}/${p.id}`)).body.l7policy).toMatchObject({
      provisioning_status: "ACTIVE",
      operating_status: "ONLINE",
    });
    expect(await lbStatus(slow, lbId)).toBe("ACTIVE");
    expect(await status(slow, "listener", listenerId)).toBe("ACTIVE");
    // The listener lists its policy.
    expect((await slow.call("GET", `/v2/lbaas/listeners/${listenerId}`)).body.listener.l7policies).toEqual([{ id: p.id }]);
    // And /v2.0 is the same API.
    expect((await slow.call("GET", `/v2.0/lbaas/l7policies/${p.id}`)).body.l7policy.id).toBe(p.id);
  });

  it("keeps the given fields and sets the redirect defaults per action (302 for URL and prefix redirects)", async () => {
    const { listenerId, poolId } = await setup();
    const url = await policy(t, listenerId, {
      action: "REDIRECT_TO_URL",
      redirect_url: "http://www.example.com",
      name: "u",
      description: "d",
      admin_state_up: false,
      tags: ["a", "b"],
    });
    expect(url).toMatchObject({
      action: "REDIRECT_TO_URL",
      redirect_url: "http://www.example.com",
      redirect_http_code: 302,
      redirect_pool_id: null,
      redirect_prefix: null,
      name: "u",
      description: "d",
      admin_state_up: false,
      tags: ["a", "b"],
      position: 1,
    });
    // project_id and tenant_id are accepted and ignored: the LB's project owns the policy.
    const prefix = await policy(t, listenerId, {
      action: "REDIRECT_PREFIX",
      redirect_prefix: "https://example.com",
      redirect_http_code: "301",
      tenant_id: "other",
      project_id: "other",
    });
    expect(prefix.project_id).toBe(PROJECT);
    expect(prefix).toMatchObject({
      action: "REDIRECT_PREFIX",
      redirect_prefix: "https://example.com",
      redirect_http_code: 301,
      redirect_url: null,
      position: 2,
    });
    // A pool redirect has no HTTP code, whatever is given.
    const pool = await policy(t, listenerId, { action: "REDIRECT_TO_POOL", redirect_pool_id: poolId, redirect_http_code: 308 });
    expect(pool).toMatchObject({
      action: "REDIRECT_TO_POOL",
      redirect_pool_id: poolId,
      redirect_url: null,
      redirect_prefix: null,
      redirect_http_code: null,
      position: 3,
    });
    // REJECT drops a redirect URL or pool given with it; a null admin_state_up is false, as wsme's to_dict makes it.
    const reject = await policy(t, listenerId, {
      action: "REJECT",
      redirect_url: "http://a.com",
      redirect_pool_id: poolId,
      admin_state_up: null,
    });
    expect(reject).toMatchObject({
      action: "REJECT",
      redirect_url: null,
      redirect_pool_id: null,
      redirect_http_code: null,
      admin_state_up: false,
    });
    // A redirect target implies its action, as sanitize_l7policy_api_args makes it.
    const implied = await policy(t, listenerId, {
      action: "REDIRECT_PREFIX",
      redirect_prefix: "http://p.example.com",
      redirect_url: "http://u.example.com",
    });
    expect(implied).toMatchObject({
      action: "REDIRECT_TO_URL",
      redirect_url: "http://u.example.com",
      redirect_prefix: null,
      redirect_http_code: 302,
    });
    // The pool redirect is no parent of the change: the pool stays ACTIVE.
    expect(await status(t, "pool", poolId)).toBe("ACTIVE");
  });

  it("refuses bad input with wsme's and Octavia's messages, and writes nothing", async () => {
    const { lbId, listenerId, poolId } = await setup();
    const post = (fields: Record<string, unknown>, base: Record<string, unknown> = { listener_id: listenerId, action: "REJECT" }) =>
      t.call("POST", POLICIES, { l7policy: { ...base, ...fields } }).then(pick);
    const bad = (field: string, value: string, why: string) =>
      fault(400, `Invalid input for field/attribute ${field}. Value: '${value}'. ${why}`);
    expect(await post({}, { listener_id: listenerId })).toEqual(bad("action", "None", "Mandatory field missing."));
    expect(await post({}, { action: "REJECT" })).toEqual(bad("listener_id", "None", "Mandatory field missing."));
    expect(await post({ action: "DROP" })).toEqual(
      bad("action", "DROP", "Value should be one of: REJECT, REDIRECT_TO_URL, REDIRECT_TO_POOL, REDIRECT_PREFIX"),
    );
    expect(await post({ listener_id: "nope" })).toEqual(bad("listener_id", "nope", "Value should be UUID format"));
    expect(await post({ redirect_url: "bad url" })).toEqual(bad("redirect_url", "bad url", "Value must be a valid URL string"));
    expect(await post({ redirect_url: "" })).toEqual(bad("redirect_url", "", "Value must be a valid URL string"));
    expect(await post({ redirect_url: "www.example.com" })).toEqual(
      bad("redirect_url", "www.example.com", "Value must be a valid URL string"),
    );
    expect(await post({ redirect_prefix: "ftp://example.com" })).toEqual(
      bad("redirect_prefix", "ftp://example.com", "Value must be a valid URL string"),
    );
    expect(await post({ redirect_url: 5 })).toEqual(bad("redirect_url", "5", "expected string or bytes-like object, got 'int'"));
    expect(await post({ position: 0 })).toEqual(bad("position", "0", "Value should be greater or equal to 1"));
    expect(await post({ position: 2147483648 })).toEqual(bad("position", "2147483648", "Value should be lower or equal to 2147483647"));
    expect(await post({ redirect_http_code: 1 })).toEqual(
      bad("redirect_http_code", "1", "Value should be one of: 301, 302, 303, 307, 308"),
    );
    // int() failures are refused for the whole argument, the body in Python's words.
    expect(await post({ redirect_http_code: "" })).toEqual(
      fault(
        400,
        `Invalid input for field/attribute l7policy_. Value: '{'l7policy': {'listener_id': '${listenerId}', 'action': 'REJECT', 'redirect_http_code': ''}}'. invalid literal for int() with base 10: ''`,
      ),
    );
    expect(await post({ name: "it's", position: "HTTPCODE", admin_state_up: true, tags: null })).toEqual(
      fault(
        400,
        `Invalid input for field/attribute l7policy_. Value: '{'l7policy': {'listener_id': '${listenerId}', 'action': 'REJECT', 'name': "it's", 'position': 'HTTPCODE', 'admin_state_up': True, 'tags': None}}'. invalid literal for int() with base 10: 'HTTPCODE'`,
      ),
    );
    // Octavia lets this TypeError escape as a 500; Ottava answers it as the bad input it is.
    expect(await post({ position: [1] })).toEqual(
      fault(
        400,
        `Invalid input for field/attribute l7policy_. Value: '{'l7policy': {'listener_id': '${listenerId}', 'action': 'REJECT', 'position': [1]}}'. int() argument must be a string, a bytes-like object or a real number, not 'list'`,
      ),
    );
    // Unknown attributes are refused before anything else is looked at.
    expect(await post({ redirect_pool: {}, action: "DROP" })).toEqual(
      fault(400, "Unknown attribute for argument l7policy_.l7policy: redirect_pool"),
    );
    // wsme's conversions (int(), booleans, lists) fail the whole argument, in attribute order.
    expect(await post({ admin_state_up: "True", tags: "x" })).toEqual(
      fault(
        400,
        `Invalid input for field/attribute l7policy_. Value: '{'l7policy': {'listener_id': '${listenerId}', 'action': 'REJECT', 'admin_state_up': 'True', 'tags': 'x'}}'. Value not an unambiguous boolean: True`,
      ),
    );
    const unhashable = await t.call("POST", POLICIES, { l7policy: { listener_id: listenerId, action: ["REJECT"], position: "x" } });
    expect(unhashable.status).toBe(400);
    expect(unhashable.body.faultstring).toMatch(/^Invalid input for field\/attribute action\. Value: '.*'\. unhashable type: 'list'$/);
    // sanitize_l7policy_api_args
    const args = (msg: string) => fault(400, `Invalid L7 Policy arguments: ${msg}`);
    expect(await post({ action: "REDIRECT_TO_URL" })).toEqual(args("redirect_url must not be None"));
    expect(await post({ action: "REDIRECT_TO_URL", redirect_url: null })).toEqual(args("redirect_url must not be None"));
    expect(await post({ action: "REDIRECT_TO_POOL" })).toEqual(args("redirect_pool_id or redirect_pool must not be None"));
    expect(await post({ action: "REDIRECT_PREFIX", redirect_url: "http://a.com" })).toEqual(args("redirect_prefix must not be None"));
    expect(await post({ action: "REDIRECT_TO_POOL", redirect_pool_id: poolId, redirect_prefix: "http://a.com" })).toEqual(
      args("Cannot specify redirect_pool_id and redirect_url or redirect_prefix at the same time"),
    );
    expect(await post({ action: null })).toEqual(fault(400, "Invalid L7 Policy action specified: None"));
    // Nothing was written.
    expect((await t.call("GET", `${POLICIES}?listener_id=${listenerId}`)).body.l7policies).toEqual([]);
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
    expect(await status(t, "listener", listenerId)).toBe("ACTIVE");
  });

  it("404s an unknown listener or redirect pool, and refuses a pool of another protocol or load balancer", async () => {
    const { listenerId } = await setup();
    const other = await setup();
    const unknown = randomUUID();
    expect(pick(await t.call("POST", POLICIES, { l7policy: { listener_id: unknown, action: "REJECT" } }))).toEqual(
      fault(404, `Listener ${unknown} not found.`),
    );
    expect(pick(await t.call("POST", POLICIES, { l7policy: { listener_id: null, action: "REJECT" } }))).toEqual(
      fault(404, "Listener None not found."),
    );
    expect(
      pick(
        await t.call("POST", POLICIES, { l7policy: { listener_id: listenerId, action: "REDIRECT_TO_POOL", redirect_pool_id: unknown } }),
      ),
    ).toEqual(fault(404, `Pool ${unknown} not found.`));
    expect(
      pick(
        await t.call("POST", POLICIES, {
          l7policy: { listener_id: listenerId, action: "REDIRECT_TO_POOL", redirect_pool_id: other.poolId },
        }),
      ),
    ).toEqual(fault(404, `Pool ${other.poolId} not found.`));
    const lbId = (await t.store.getChild("listener", listenerId))!.lbId;
    const tcp = await created(t, "/v2/lbaas/pools", "pool", { loadbalancer_id: lbId, protocol: "TCP", lb_algorithm: "ROUND_ROBIN" });
    expect(
      pick(await t.call("POST", POLICIES, { l7policy: { listener_id: listenerId, action: "REDIRECT_TO_POOL", redirect_pool_id: tcp.id } })),
    ).toEqual(fault(400, "Validation failure: The pool protocol 'TCP' is invalid while the listener protocol is 'HTTP'."));
    // Checked before the redirect fields are sanitized: even with REJECT.
    expect(
      pick(await t.call("POST", POLICIES, { l7policy: { listener_id: listenerId, action: "REJECT", redirect_pool_id: tcp.id } })),
    ).toEqual(fault(400, "Validation failure: The pool protocol 'TCP' is invalid while the listener protocol is 'HTTP'."));
  });

  it("refuses policies on a PROMETHEUS listener", async () => {
    const lb = await created(t, "/v2/lbaas/loadbalancers", "loadbalancer", { vip_subnet_id: SUBNET });
    const listener = await created(t, "/v2/lbaas/listeners", "listener", {
      loadbalancer_id: lb.id,
      protocol: "PROMETHEUS",
      protocol_port: 8123,
    });
    expect(pick(await t.call("POST", POLICIES, { l7policy: { listener_id: listener.id, action: "REJECT" } }))).toEqual(
      fault(400, "Protocol PROMETHEUS listeners cannot have child objects."),
    );
  });

  it("creates the rules given inline, checked as the rule API checks them", async () => {
    const { listenerId } = await setup();
    const res = await t.call("POST", POLICIES, {
      l7policy: {
        listener_id: listenerId,
        action: "REJECT",
        rules: [
          { type: "PATH", compare_type: "STARTS_WITH", value: "/api" },
          { type: "HEADER", compare_type: "EQUAL_TO", key: "X-Test", value: "yes", invert: true },
        ],
      },
    });
    expect(res.status).toBe(201);
    const p = res.body.l7policy;
    expect(p.rules).toHaveLength(2);
    await t.settle();
    const rules = (await t.call("GET", `${POLICIES}/${p.id}/rules`)).body.rules as Obj[];
    expect(rules.map((r) => r.id).sort()).toEqual(p.rules.map((r: Obj) => r.id).sort());
    expect(rules.map((r) => [r.type, r.key, r.value, r.invert, r.provisioning_status]).sort()).toEqual([
      ["HEADER", "X-Test", "yes", true, "ACTIVE"],
      ["PATH", null, "/api", false, "ACTIVE"],
    ]);
    expect((await t.call("GET", `${POLICIES}/${p.id}`)).body.l7policy.rules).toEqual(p.rules);

    const post = (rules: unknown) =>
      t.call("POST", POLICIES, { l7policy: { listener_id: listenerId, action: "REJECT", rules } }).then(pick);
    expect(await post([{ type: "PATH", compare_type: "REGEX", value: "bad string\\" }])).toEqual(
      fault(400, "Error parsing L7Rule: Unable to parse regular expression: bad escape (end of pattern) at position 10"),
    );
    expect(await post([{ type: "HEADER", compare_type: "EQUAL_TO", value: "x" }])).toEqual(
      fault(400, "Error parsing L7Rule: Invalid L7 Rule: L7 rule type requires a key"),
    );
    expect(await post([{ type: "PATH", compare_type: "EQUAL_TO", value: "a\nb" }])).toEqual(
      fault(
        400,
        "Error parsing L7Rule: Invalid input for field/attribute value. Value: 'a\nb'. Value should match the pattern ^[^\\r\\n]*$",
      ),
    );
    expect(await post([{ type: "PATH", compare_type: "EQUAL_TO" }])).toEqual(
      fault(400, "Invalid input for field/attribute value. Value: 'None'. Mandatory field missing."),
    );
    expect(await post({})).toEqual(
      fault(
        400,
        `Invalid input for field/attribute l7policy_. Value: '{'l7policy': {'listener_id': '${listenerId}', 'action': 'REJECT', 'rules': {}}}'. Value not a valid list: {}`,
      ),
    );
    expect(await post([null])).toEqual(
      fault(400, "Error parsing L7Rule: octavia.api.v2.types.l7rule.L7RulePOST() argument after ** must be a mapping, not NoneType"),
    );
    expect(await post([{ ...{ type: "PATH", compare_type: "EQUAL_TO", value: "/a" }, bogus: 1 }])).toEqual(
      fault(400, "Unknown attribute for argument l7policy_.l7policy.rules: bogus"),
    );
    const tooMany = await t.call("POST", POLICIES, {
      l7policy: {
        listener_id: listenerId,
        action: "REJECT",
        rules: Array.from({ length: 51 }, () => ({ type: "PATH", compare_type: "STARTS_WITH", value: "/a" })),
      },
    });
    expect(tooMany.status).toBe(409);
    expect(tooMany.body.faultstring).toMatch(/^Too many rules on L7 policy [0-9a-f-]{36}$/);
    expect((await t.call("GET", `${POLICIES}?listener_id=${listenerId}`)).body.l7policies).toHaveLength(1);
  });
});

describe("positions", () => {
  it("appends by default, inserts at a 1-based position and renumbers the others on create, update and delete", async () => {
    const { lbId, listenerId } = await setup();
    const a = await policy(t, listenerId, { name: "a" });
    const b = await policy(t, listenerId, { name: "b" });
    await policy(t, listenerId, { name: "c", position: 3 });
    expect(await positions(t, listenerId)).toEqual([
      ["a", 1],
      ["b", 2],
      ["c", 3],
    ]);
    // At position 1: the others move down, keeping their order (and their status).
    const d = await policy(t, listenerId, { name: "d", position: 1 });
    expect(d.position).toBe(1);
    expect(await positions(t, listenerId)).toEqual([
      ["d", 1],
      ["a", 2],
      ["b", 3],
      ["c", 4],
    ]);
    // Past the end: appended.
    const e = await policy(t, listenerId, { name: "e", position: 99 });
    expect(e.position).toBe(5);
    // Moving one: out of the list and back in at its new place.
    const moved = await t.call("PUT", `${POLICIES}/${d.id}`, { l7policy: { position: 3 } });
    expect(moved.body.l7policy.position).toBe(3);
    await t.settle();
    expect(await positions(t, listenerId)).toEqual([
      ["a", 1],
      ["b", 2],
      ["d", 3],
      ["c", 4],
      ["e", 5],
    ]);
    expect((await t.call("PUT", `${POLICIES}/${a.id}`, { l7policy: { position: 42 } })).body.l7policy.position).toBe(5);
    await t.settle();
    expect(await positions(t, listenerId)).toEqual([
      ["b", 1],
      ["d", 2],
      ["c", 3],
      ["e", 4],
      ["a", 5],
    ]);
    // Deleting one closes the gap.
    expect((await t.call("DELETE", `${POLICIES}/${d.id}`)).status).toBe(204);
    await t.settle();
    expect(await positions(t, listenerId)).toEqual([
      ["b", 1],
      ["c", 2],
      ["e", 3],
      ["a", 4],
    ]);
    // Only the moved or created policy changed status.
    for (const p of (await t.call("GET", `${POLICIES}?listener_id=${listenerId}`)).body.l7policies)
      expect(p.provisioning_status).toBe("ACTIVE");
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
    // Another listener's policies are numbered on their own.
    const lb2 = await setup();
    expect((await policy(t, lb2.listenerId, { position: 1 })).position).toBe(1);
    expect(b.position).toBe(2);
  });
});

describe("update", () => {
  it("answers 200 PENDING_UPDATE with the new values (listener PENDING_UPDATE too), then ACTIVE", async () => {
    const { lbId, listenerId } = await setup(slow);
    const p = await policy(slow, listenerId, { tags: ["old_tag"] });
    const res = await slow.call("PUT", `${POLICIES}/${p.id}`, {
      l7policy: { action: "REDIRECT_TO_URL", redirect_url: "http://www.example.com", tags: ["new_tag"], name: "n" },
    });
    expect(res.status).toBe(200);
    expect(res.body.l7policy).toMatchObject({
      action: "REDIRECT_TO_URL",
      redirect_url: "http://www.example.com",
      redirect_http_code: 302,
      tags: ["new_tag"],
      name: "n",
      provisioning_status: "PENDING_UPDATE",
      updated_at: expect.stringMatching(/^\d{4}-/),
    });
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    expect(await status(slow, "listener", listenerId)).toBe("PENDING_UPDATE");
    expect(pick(await slow.call("PUT", `${POLICIES}/${p.id}`, { l7policy: { name: "x" } }))).toEqual(
      fault(409, `Load Balancer ${lbId} is immutable and cannot be updated.`),
    );
    await slow.settle();
    expect((await slow.call("GET", `${POLICIES}/${p.id}`)).body.l7policy).toMatchObject({
      provisioning_status: "ACTIVE",
      name: "n",
      redirect_url: "http://www.example.com",
    });
    expect(await status(slow, "listener", listenerId)).toBe("ACTIVE");
  });

  it("follows the redirect rules: implied actions, fields cleared by the new action, null codes", async () => {
    const { listenerId, poolId } = await setup();
    const p = await policy(t, listenerId, { action: "REDIRECT_TO_URL", redirect_url: "http://www.example.com", redirect_http_code: 301 });
    const put = async (fields: Record<string, unknown>) => {
      const res = await t.call("PUT", `${POLICIES}/${p.id}`, { l7policy: fields });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      await t.settle();
      return res.body.l7policy as Obj;
    };
    expect(await put({ redirect_http_code: 308 })).toMatchObject({ action: "REDIRECT_TO_URL", redirect_http_code: 308 });
    expect(await put({ redirect_http_code: null })).toMatchObject({ action: "REDIRECT_TO_URL", redirect_http_code: null });
    // A pool alone makes it a pool redirect, without HTTP code or URL.
    expect(await put({ redirect_pool_id: poolId })).toMatchObject({
      action: "REDIRECT_TO_POOL",
      redirect_pool_id: poolId,
      redirect_url: null,
      redirect_http_code: null,
    });
    // A prefix alone: a prefix redirect, 302 by default.
    expect(await put({ redirect_prefix: "https://example.com" })).toMatchObject({
      action: "REDIRECT_PREFIX",
      redirect_prefix: "https://example.com",
      redirect_pool_id: null,
      redirect_http_code: 302,
    });
    // REJECT clears every redirect field.
    expect(await put({ action: "REJECT" })).toMatchObject({
      action: "REJECT",
      redirect_prefix: null,
      redirect_url: null,
      redirect_pool_id: null,
      redirect_http_code: null,
    });
    // Nulls: name and description answer "", tags [], admin_state_up false.
    expect(await put({ name: null, description: null, tags: null, admin_state_up: null })).toMatchObject({
      name: "",
      description: "",
      tags: [],
      admin_state_up: false,
    });
  });

  it("refuses bad updates with Octavia's messages and changes nothing", async () => {
    const { lbId, listenerId } = await setup();
    const other = await setup();
    const p = await policy(t, listenerId);
    const before = (await t.call("GET", `${POLICIES}/${p.id}`)).body.l7policy;
    const put = (fields: unknown) => t.call("PUT", `${POLICIES}/${p.id}`, { l7policy: fields }).then(pick);
    const unknown = randomUUID();
    expect(await put({})).toEqual(fault(400, "Invalid L7 Policy arguments: Invalid update options"));
    expect(await put({ action: "bad action" })).toEqual(
      fault(
        400,
        "Invalid input for field/attribute action. Value: 'bad action'. Value should be one of: REJECT, REDIRECT_TO_URL, REDIRECT_TO_POOL, REDIRECT_PREFIX",
      ),
    );
    expect(await put({ action: null })).toEqual(fault(400, "Invalid L7 Policy action specified: None"));
    expect(await put({ listener_id: listenerId })).toEqual(fault(400, "Unknown attribute for argument l7policy_.l7policy: listener_id"));
    expect(await put({ action: "REDIRECT_TO_URL" })).toEqual(fault(400, "Invalid L7 Policy arguments: redirect_url must not be None"));
    expect(await put({ action: "REDIRECT_TO_POOL", redirect_pool_id: unknown })).toEqual(fault(404, `Pool ${unknown} not found.`));
    expect(await put({ redirect_pool_id: other.poolId })).toEqual(fault(404, `Pool ${other.poolId} not found.`));
    expect(await put({ redirect_url: "bad-url" })).toEqual(
      fault(400, "Invalid input for field/attribute redirect_url. Value: 'bad-url'. Value must be a valid URL string"),
    );
    expect(await put({ redirect_http_code: "" })).toEqual(
      fault(
        400,
        "Invalid input for field/attribute l7policy_. Value: '{'l7policy': {'redirect_http_code': ''}}'. invalid literal for int() with base 10: ''",
      ),
    );
    expect((await t.call("GET", `${POLICIES}/${p.id}`)).body.l7policy).toEqual(before);
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
    const gone = randomUUID();
    expect(pick(await t.call("PUT", `${POLICIES}/${gone}`, { l7policy: { name: "x" } }))).toEqual(
      fault(404, `L7 Policy ${gone} not found.`),
    );
  });
});

describe("delete", () => {
  it("answers 204, PENDING_DELETE with its rules, then 404", async () => {
    const { lbId, listenerId } = await setup(slow);
    const p = await policy(slow, listenerId, { rules: [{ type: "PATH", compare_type: "STARTS_WITH", value: "/api" }] });
    const ruleId = (p.rules as Obj[])[0]!.id;
    expect((await slow.call("DELETE", `${POLICIES}/${p.id}`)).status).toBe(204);
    expect((await slow.call("GET", `${POLICIES}/${p.id}`)).body.l7policy.provisioning_status).toBe("PENDING_DELETE");
    expect(await status(slow, "l7rule", ruleId)).toBe("PENDING_DELETE");
    expect(await status(slow, "listener", listenerId)).toBe("PENDING_UPDATE");
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    await slow.settle();
    expect(pick(await slow.call("GET", `${POLICIES}/${p.id}`))).toEqual(fault(404, `L7 Policy ${p.id} not found.`));
    expect(pick(await slow.call("DELETE", `${POLICIES}/${p.id}`))).toEqual(fault(404, `L7 Policy ${p.id} not found.`));
    expect(await status(slow, "l7rule", ruleId)).toBe("DELETED");
    expect(await status(slow, "listener", listenerId)).toBe("ACTIVE");
    expect((await slow.call("GET", `${POLICIES}?listener_id=${listenerId}`)).body.l7policies).toEqual([]);
  });

  it("goes with its listener", async () => {
    const { listenerId } = await setup();
    const p = await policy(t, listenerId);
    expect((await t.call("DELETE", `/v2/lbaas/listeners/${listenerId}`)).status).toBe(204);
    await t.settle();
    expect((await t.call("GET", `${POLICIES}/${p.id}`)).status).toBe(404);
  });

  it("on a failed flow puts the policy in ERROR and the listener and LB back to ACTIVE", async () => {
    const f = await inProcessApp({ OTTAVA_NOOP_FAULTS: "amphora.update" });
    const lb = await created(f, "/v2/lbaas/loadbalancers", "loadbalancer", { vip_subnet_id: SUBNET });
    const listener = {
      id: randomUUID(),
      project_id: PROJECT,
      loadbalancer_id: lb.id,
      protocol: "HTTP",
      protocol_port: 80,
      provisioning_status: "ACTIVE",
      operating_status: "ONLINE",
      created_at: new Date().toISOString(),
      updated_at: null,
    };
    await seed(f, lb.id, [{ kind: "listener", put: listener }]);
    expect((await f.call("POST", POLICIES, { l7policy: { listener_id: listener.id, action: "REJECT" } })).status).toBe(201);
    await f.settle();
    const [p] = (await f.call("GET", POLICIES)).body.l7policies;
    expect(p.provisioning_status).toBe("ERROR");
    expect(await status(f, "listener", listener.id)).toBe("ACTIVE");
    expect(await lbStatus(f, lb.id)).toBe("ACTIVE");
  });
});

describe("list", () => {
  it("filters on any attribute, sorts and selects fields", async () => {
    const { listenerId, poolId } = await setup();
    const a = await policy(t, listenerId, { name: "a", tags: ["x"] });
    const b = await policy(t, listenerId, { name: "b", action: "REDIRECT_TO_POOL", redirect_pool_id: poolId });
    const names = async (q: string) =>
      ((await t.call("GET", `${POLICIES}?listener_id=${listenerId}&${q}`)).body.l7policies as Obj[]).map((p) => p.name);
    expect(await names("action=REJECT")).toEqual(["a"]);
    expect(await names(`redirect_pool_id=${poolId}`)).toEqual(["b"]);
    expect(await names("position=2")).toEqual(["b"]);
    expect(await names("tags=x")).toEqual(["a"]);
    expect(await names("sort=position:desc")).toEqual(["b", "a"]);
    const fields = await t.call("GET", `${POLICIES}?listener_id=${listenerId}&fields=id&fields=position`);
    expect(fields.body.l7policies).toEqual([
      { id: a.id, position: 1 },
      { id: b.id, position: 2 },
    ]);
    expect((await t.call("GET", `${POLICIES}/${a.id}?fields=name`)).body).toEqual({ l7policy: { name: "a" } });
    expect(pick(await t.call("GET", `${POLICIES}?bogus=1`))).toEqual(fault(400, "One or more arguments are either duplicate or invalid"));
  });
});
