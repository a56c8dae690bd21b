// Pools (octavia/api/v2/controllers/pool.py), in process over DynamoDB Local and the real ASL.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { activeLb, fault, inProcessApp, pick, PROJECT, seed } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
let t: App;
let slow: App; // flows take a while, so the PENDING_* states can be seen
const POOLS = "/v2/lbaas/pools";
const NOBODY = "11111111-2222-3333-4444-555555555555";

const record = (lbId: string, fields: Record<string, unknown>) => ({
  id: randomUUID(),
  project_id: PROJECT,
  loadbalancer_id: lbId,
  provisioning_status: "ACTIVE",
  operating_status: "ONLINE",
  admin_state_up: true,
  name: null,
  created_at: new Date().toISOString(),
  updated_at: null,
  ...fields,
});
async function seedListener(app: App, lbId: string, protocol = "HTTP", defaultPoolId: string | null = null) {
  const l = record(lbId, { protocol, protocol_port: 80, default_pool_id: defaultPoolId });
  await seed(app, lbId, [{ kind: "listener", put: l }]);
  return l.id;
}

async function createPool(app: App, pool: Record<string, unknown>) {
  const res = await app.call("POST", POOLS, { pool: { protocol: "HTTP", lb_algorithm: "ROUND_ROBIN", ...pool } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await app.settle();
  return res.body.pool as Record<string, unknown> & { id: string };
}

const stored = async (app: App, kind: string, id: string) => (await app.store.getChild(kind, id))?.record;
const status = async (app: App, kind: string, id: string) => (await stored(app, kind, id))?.provisioning_status;
const lbStatus = async (app: App, lbId: string) => (await app.store.getLoadBalancer(lbId))?.record.provisioning_status;
const count = async (app: App = t) => ((await app.call("GET", POOLS)).body.pools as unknown[]).length;

beforeAll(async () => {
  t = await inProcessApp();
  slow = await inProcessApp({ OTTAVA_NOOP_LATENCY: "amphora.update:500" });
});

describe("create", () => {
  it("on a load balancer: 201 with Octavia's defaults, PENDING_CREATE/OFFLINE under an LB in PENDING_UPDATE, then ACTIVE", async () => {
    const lbId = (await activeLb(slow)).id;
    const res = await slow.call("POST", POOLS, { pool: { loadbalancer_id: lbId, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" } });
    expect(res.status).toBe(201);
    const p = res.body.pool;
    expect(p).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "",
      description: "",
      provisioning_status: "PENDING_CREATE",
      operating_status: "OFFLINE",
      admin_state_up: true,
      protocol: "HTTP",
      lb_algorithm: "ROUND_ROBIN",
      session_persistence: null,
      project_id: PROJECT,
      tenant_id: PROJECT,
      loadbalancers: [{ id: lbId }],
      listeners: [],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/),
      updated_at: null,
      healthmonitor_id: null,
      members: [],
      tags: [],
      tls_container_ref: null,
      ca_tls_container_ref: null,
      crl_container_ref: null,
      tls_enabled: false,
      tls_ciphers: null,
      tls_versions: null,
      alpn_protocols: null,
    });
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    expect(pick(await slow.call("POST", POOLS, { pool: { loadbalancer_id: lbId, protocol: "TCP", lb_algorithm: "ROUND_ROBIN" } }))).toEqual(
      fault(409, `Load Balancer ${lbId} is immutable and cannot be updated.`),
    );
    await slow.settle();
    expect((await slow.call("GET", `${POOLS}/${p.id}`)).body.pool).toMatchObject({
      provisioning_status: "ACTIVE",
      operating_status: "OFFLINE",
    });
    expect(await lbStatus(slow, lbId)).toBe("ACTIVE");
    expect(await stored(slow, "pool", p.id)).toMatchObject({ loadbalancer_id: lbId });
  });

  it("on a listener: becomes its default pool, the listener PENDING_UPDATE with it", async () => {
    const lbId = (await activeLb(slow)).id;
    const listenerId = await seedListener(slow, lbId);
    const res = await slow.call("POST", POOLS, { pool: { listener_id: listenerId, protocol: "HTTP", lb_algorithm: "LEAST_CONNECTIONS" } });
    expect(res.status).toBe(201);
    const p = res.body.pool;
    expect(p).toMatchObject({ loadbalancers: [{ id: lbId }], listeners: [{ id: listenerId }], provisioning_status: "PENDING_CREATE" });
    expect(await stored(slow, "listener", listenerId)).toMatchObject({ provisioning_status: "PENDING_UPDATE", default_pool_id: p.id });
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    expect((await slow.call("GET", `${POOLS}/${p.id}`)).body.pool.listeners).toEqual([{ id: listenerId }]);
    await slow.settle();
    expect(await stored(slow, "listener", listenerId)).toMatchObject({ provisioning_status: "ACTIVE", default_pool_id: p.id });
    expect((await slow.call("GET", `${POOLS}/${p.id}`)).body.pool).toMatchObject({
      provisioning_status: "ACTIVE",
      listeners: [{ id: listenerId }],
    });
  });

  it("refuses a listener that already has a default pool (409), writing nothing", async () => {
    const lbId = (await activeLb(t)).id;
    const listenerId = await seedListener(t, lbId);
    const first = await createPool(t, { listener_id: listenerId });
    const before = await count();
    for (const pool of [{ listener_id: listenerId }, { loadbalancer_id: lbId, listener_id: listenerId }]) {
      expect(pick(await t.call("POST", POOLS, { pool: { ...pool, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" } }))).toEqual(
        fault(409, "This listener already has a default pool"),
      );
    }
    expect(await count()).toBe(before);
    expect(await stored(t, "listener", listenerId)).toMatchObject({ default_pool_id: first.id, provisioning_status: "ACTIVE" });
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
  });

  it("checks the listener's protocol against VALID_LISTENER_POOL_PROTOCOL_MAP", async () => {
    const lbId = (await activeLb(t)).id;
    const cases: [string, string, boolean][] = [
      ["HTTP", "UDP", false],
      ["HTTP", "TCP", false],
      ["HTTP", "PROXYV2", true],
      ["TCP", "HTTPS", true],
      ["HTTPS", "TCP", true],
      ["TERMINATED_HTTPS", "HTTPS", false],
      ["TERMINATED_HTTPS", "PROXY", true],
      ["UDP", "UDP", true],
      ["UDP", "TCP", false],
      ["SCTP", "SCTP", true],
    ];
    for (const [listenerProtocol, poolProtocol, ok] of cases) {
      const listenerId = await seedListener(t, lbId, listenerProtocol);
      const res = await t.call("POST", POOLS, { pool: { listener_id: listenerId, protocol: poolProtocol, lb_algorithm: "ROUND_ROBIN" } });
      if (ok) expect(res.status, `${listenerProtocol}/${poolProtocol}`).toBe(201);
      else {
        expect(pick(res)).toEqual(
          fault(
            400,
            `Validation failure: The pool protocol '${poolProtocol}' is invalid while the listener protocol is '${listenerProtocol}'.`,
          ),
        );
      }
      await t.settle();
    }
    const prometheus = await seedListener(t, lbId, "PROMETHEUS");
    expect(pick(await t.call("POST", POOLS, { pool: { listener_id: prometheus, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" } }))).toEqual(
      fault(400, "Protocol PROMETHEUS listeners cannot have child objects."),
    );
  });

  it("keeps every given field and tags", async () => {
    const lbId = (await activeLb(t)).id;
    const p = await createPool(t, {
      loadbalancer_id: lbId.toUpperCase(),
      name: "web",
      description: "the web servers",
      admin_state_up: false,
      protocol: "PROXY",
      lb_algorithm: "SOURCE_IP",
      tags: ["a", "b", "a"],
      project_id: "ignored",
      session_persistence: { type: "APP_COOKIE", cookie_name: "JSESSIONID" },
    });
    expect(p).toMatchObject({
      name: "web",
      description: "the web servers",
      admin_state_up: false,
      protocol: "PROXY",
      lb_algorithm: "SOURCE_IP",
      tags: ["a", "b"],
      project_id: PROJECT,
      loadbalancers: [{ id: lbId }],
      session_persistence: { type: "APP_COOKIE", cookie_name: "JSESSIONID", persistence_timeout: null, persistence_granularity: null },
    });
  });

  it("answers bad input with Octavia's faults and writes nothing", async () => {
    const lbId = (await activeLb(t)).id;
    const listenerId = await seedListener(t, lbId);
    const before = await count();
    const base = { loadbalancer_id: lbId, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" };
    const sp = (s: Record<string, unknown>) => ({ ...base, session_persistence: s });
    const cases: [unknown, number, string][] = [
      [
        { protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" },
        400,
        "Validation failure: Must provide at least one of: loadbalancer_id, listener_id",
      ],
      [{ ...base, loadbalancer_id: NOBODY }, 404, `Load Balancer ${NOBODY} not found.`],
      [{ listener_id: NOBODY, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" }, 404, `Listener ${NOBODY} not found.`],
      [{ ...base, listener_id: NOBODY }, 404, `Listener ${NOBODY} not found.`],
      [
        { loadbalancer_id: lbId, lb_algorithm: "ROUND_ROBIN" },
        400,
        "Invalid input for field/attribute protocol. Value: 'None'. Mandatory field missing.",
      ],
      [
        { ...base, protocol: "FTP" },
        400,
        "Invalid input for field/attribute protocol. Value: 'FTP'. Value should be one of: TCP, HTTP, HTTPS, PROXY, PROXYV2, UDP, SCTP",
      ],
      [
        { ...base, lb_algorithm: "RANDOM" },
        400,
        "Invalid input for field/attribute lb_algorithm. Value: 'RANDOM'. Value should be one of: LEAST_CONNECTIONS, ROUND_ROBIN, SOURCE_IP, SOURCE_IP_PORT",
      ],
      [
        { ...base, loadbalancer_id: "x" },
        400,
        "Invalid input for field/attribute loadbalancer_id. Value: 'x'. Value should be UUID format",
      ],
      [{ ...base, bogus: 1 }, 400, "Unknown attribute for argument pool_.pool: bogus"],
      [{ ...base, provisioning_status: "ACTIVE" }, 400, "Unknown attribute for argument pool_.pool: provisioning_status"],
      [
        { ...base, name: "x".repeat(256) },
        400,
        `Invalid input for field/attribute name. Value: '${"x".repeat(256)}'. Value should have a maximum character requirement of 255`,
      ],
      [
        { ...base, admin_state_up: "perhaps" },
        400,
        "Invalid input for field/attribute admin_state_up. Value: 'perhaps'. Value not an unambiguous boolean: perhaps",
      ],
      // The amphora provider driver's refusal, as call_provider words it.
      [
        { ...base, lb_algorithm: "SOURCE_IP_PORT" },
        501,
        "Provider 'amphora' does not support a requested option: Amphora provider does not support SOURCE_IP_PORT algorithm.",
      ],
      // Session persistence (validate.check_session_persistence and the pool controller).
      [sp({}), 400, "Invalid input for field/attribute type. Value: 'None'. Mandatory field missing."],
      [
        sp({ type: "COOKIE" }),
        400,
        "Invalid input for field/attribute type. Value: 'COOKIE'. Value should be one of: SOURCE_IP, HTTP_COOKIE, APP_COOKIE",
      ],
      [sp({ type: "SOURCE_IP", bogus: 1 }), 400, "Unknown attribute for argument pool_.pool.session_persistence: bogus"],
      [
        sp({ type: "APP_COOKIE" }),
        400,
        'Validation failure: Field "cookie_name" must be specified when using the "APP_COOKIE" session persistence type.',
      ],
      [
        sp({ type: "HTTP_COOKIE", cookie_name: "c" }),
        400,
        'Validation failure: Field "cookie_name" can only be specified with session persistence of type "APP_COOKIE".',
      ],
      [sp({ type: "APP_COOKIE", cookie_name: "a/b" }), 400, 'Validation failure: Supplied "cookie_name" is invalid.'],
      [
        sp({ type: "APP_COOKIE", cookie_name: "a b" }),
        400,
        String.raw`Invalid input for field/attribute cookie_name. Value: 'a b'. Value should match the pattern ^[^\s,;\\]+$`,
      ],
      [
        sp({ type: "SOURCE_IP", persistence_timeout: 3 }),
        400,
        "Validation failure: persistence_timeout and persistence_granularity is only for UDP and SCTP protocol pools.",
      ],
      [
        sp({ type: "SOURCE_IP", persistence_granularity: "255.255.255.0" }),
        400,
        "Validation failure: persistence_timeout and persistence_granularity is only for UDP and SCTP protocol pools.",
      ],
      [
        sp({ type: "SOURCE_IP", persistence_granularity: "nope" }),
        400,
        "Invalid input for field/attribute persistence_granularity. Value: 'nope'. Value should be IPv4 or IPv6 format",
      ],
      // TLS (_validate_create_pool).
      [
        { ...base, crl_container_ref: "crl" },
        400,
        "Validation failure: A CA certificate reference is required to specify a revocation list.",
      ],
      [
        { ...base, tls_ciphers: "AES 128" },
        400,
        "Validation failure: Invalid characters in cipher string. Only alphanumeric, -, +, !, :, @, =, _, and . are allowed.",
      ],
      // An empty cipher name is in the (empty) prohibit list, as Octavia's split(':') makes it.
      [
        { ...base, tls_ciphers: "AES128::AES256" },
        400,
        "Validation failure: The following ciphers have been prohibited by an administrator: ",
      ],
      [
        { ...base, tls_enabled: true, tls_versions: [] },
        400,
        "Validation failure: Empty TLS version list. Either specify at least one TLS version or remove this parameter to use the default.",
      ],
      [
        { ...base, tls_enabled: true, tls_versions: ["TLSv1.2", "TLSv9", "SSLv2"] },
        400,
        "Validation failure: Invalid TLS versions: TLSv9, SSLv2",
      ],
      [
        { ...base, tls_enabled: true, alpn_protocols: [] },
        400,
        "Validation failure: Empty ALPN protocol list. Either specify at least one ALPN protocol or remove this parameter to use the default.",
      ],
      [
        { ...base, alpn_protocols: ["h2", "h3"] },
        400,
        `Invalid input for field/attribute alpn_protocols. Value: '["h2","h3"]'. Value should be a valid ALPN protocol ID`,
      ],
      // Only a load balancer's fully populated create builds a pool's monitor and members.
      [
        { ...base, members: [{ address: "192.0.2.1", protocol_port: 80 }] },
        400,
        "Validation failure: healthmonitor and members can only be given in a fully populated load balancer create.",
      ],
      [
        { ...base, healthmonitor: { type: "TCP", delay: 1, timeout: 1, max_retries: 1 } },
        400,
        "Validation failure: healthmonitor and members can only be given in a fully populated load balancer create.",
      ],
      ["{not json", 400, "Request is not in valid JSON format"],
    ];
    for (const [pool, st, message] of cases) {
      const res = await t.call("POST", POOLS, typeof pool === "string" ? pool : { pool });
      expect(pick(res), message).toEqual(fault(st, message));
    }
    expect(pick(await t.call("POST", POOLS, { pools: {} }))).toEqual(fault(400, "Unknown attribute for argument pool_: pools"));
    expect(await count()).toBe(before);
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
    expect(await stored(t, "listener", listenerId)).toMatchObject({ default_pool_id: null, provisioning_status: "ACTIVE" });
  });

  it("names the load balancer's provider in the driver's 501", async () => {
    const lbId = (await activeLb(t, { fields: { provider: "octavia" } })).id;
    expect(pick(await t.call("POST", POOLS, { pool: { loadbalancer_id: lbId, protocol: "TCP", lb_algorithm: "SOURCE_IP_PORT" } }))).toEqual(
      fault(501, "Provider 'octavia' does not support a requested option: Amphora provider does not support SOURCE_IP_PORT algorithm."),
    );
  });

  it("UDP and SCTP pools: source IP persistence with timeout and granularity, no cookies", async () => {
    const lbId = (await activeLb(t)).id;
    const sp = { type: "SOURCE_IP", persistence_timeout: 3, persistence_granularity: "255.255.255.0" };
    const p = await createPool(t, { loadbalancer_id: lbId, protocol: "UDP", session_persistence: sp });
    expect(p.session_persistence).toEqual({ ...sp, cookie_name: null });
    const s = await createPool(t, { loadbalancer_id: lbId, protocol: "SCTP", session_persistence: { type: "SOURCE_IP" } });
    expect(s.session_persistence).toEqual({
      type: "SOURCE_IP",
      cookie_name: null,
      persistence_timeout: null,
      persistence_granularity: null,
    });

    const before = await count();
    const cases: [Record<string, unknown>, string][] = [
      [
        { ...sp, cookie_name: "c" },
        "Validation failure: session_persistence SOURCE_IP type for UDP and SCTP protocols only accepts: type, persistence_timeout, persistence_granularity.",
      ],
      [{ type: "HTTP_COOKIE", cookie_name: "c" }, "Validation failure: Cookie names are not supported for UDP/SCTP pools."],
      [
        { type: "HTTP_COOKIE" },
        "Validation failure: Session persistence of type HTTP_COOKIE is not supported for UDP/SCTP protocol pools.",
      ],
      [
        { type: "APP_COOKIE", persistence_timeout: 3 },
        "Validation failure: Session persistence of type APP_COOKIE is not supported for UDP/SCTP protocol pools.",
      ],
    ];
    for (const [session_persistence, message] of cases) {
      const res = await t.call("POST", POOLS, {
        pool: { loadbalancer_id: lbId, protocol: "UDP", lb_algorithm: "ROUND_ROBIN", session_persistence },
      });
      expect(pick(res), message).toEqual(fault(400, message));
    }
    expect(await count()).toBe(before);
  });

  it("TLS: a TLS-enabled pool gets Octavia's default ciphers, versions and ALPN protocols; any container reference is taken", async () => {
    const lbId = (await activeLb(t)).id;
    const p = await createPool(t, { loadbalancer_id: lbId, tls_enabled: true });
    expect(p).toMatchObject({
      tls_enabled: true,
      tls_ciphers:
        "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-SHA256:DHE-RSA-AES128-SHA256:ECDHE-RSA-AES256-SHA384:ECDHE-RSA-AES128-SHA256",
      tls_versions: ["TLSv1.2", "TLSv1.3"],
      alpn_protocols: ["h2", "http/1.1", "http/1.0"],
    });
    const refs = {
      tls_container_ref: "https://barbican.example/v1/containers/a",
      ca_tls_container_ref: "https://barbican.example/v1/secrets/ca",
      crl_container_ref: "https://barbican.example/v1/secrets/crl",
    };
    const q = await createPool(t, {
      loadbalancer_id: lbId,
      protocol: "HTTPS",
      tls_enabled: true,
      tls_ciphers: "ECDHE-RSA-AES128-GCM-SHA256",
      tls_versions: ["TLSv1.3"],
      alpn_protocols: ["h2"],
      ...refs,
    });
    expect(q).toMatchObject({ ...refs, tls_ciphers: "ECDHE-RSA-AES128-GCM-SHA256", tls_versions: ["TLSv1.3"], alpn_protocols: ["h2"] });
    // Without tls_enabled nothing is defaulted, and the version list is not checked (as Octavia).
    const r = await createPool(t, { loadbalancer_id: lbId, tls_versions: ["TLSv9"] });
    expect(r).toMatchObject({ tls_enabled: false, tls_ciphers: null, tls_versions: ["TLSv9"], alpn_protocols: null });
  });

  it("answers on /v2.0 too", async () => {
    const lbId = (await activeLb(t)).id;
    const res = await t.call("POST", "/v2.0/lbaas/pools", {
      pool: { loadbalancer_id: lbId, protocol: "TCP", lb_algorithm: "ROUND_ROBIN" },
    });
    expect(res.status).toBe(201);
    expect((await t.call("GET", `/v2.0/lbaas/pools/${res.body.pool.id}`)).body.pool.id).toBe(res.body.pool.id);
    await t.settle();
  });
});

describe("relations", () => {
  it("answers the monitor, the members and the listeners using the pool (by default or through an enabled L7 policy with rules)", async () => {
    // amphora.update takes 500 ms there: the update's PENDING_UPDATE lasts long enough to be seen.
    const t = slow;
    const lbId = (await activeLb(t)).id;
    const p = await createPool(t, { loadbalancer_id: lbId });
    const byDefault = await seedListener(t, lbId, "HTTP", p.id);
    const byPolicy = await seedListener(t, lbId);
    const unruled = await seedListener(t, lbId);
    const disabled = await seedListener(t, lbId);
    const policy = record(lbId, { listener_id: byPolicy, redirect_pool_id: p.id, action: "REDIRECT_TO_POOL" });
    const noRules = record(lbId, { listener_id: unruled, redirect_pool_id: p.id, action: "REDIRECT_TO_POOL" });
    const off = record(lbId, { listener_id: disabled, redirect_pool_id: p.id, action: "REDIRECT_TO_POOL", admin_state_up: false });
    const member = record(lbId, { pool_id: p.id, address: "192.0.2.10", protocol_port: 80 });
    const hm = record(lbId, { pool_id: p.id, type: "TCP", delay: 1, timeout: 1, max_retries: 1, max_retries_down: 3 });
    await seed(t, lbId, [
      { kind: "l7policy", put: policy },
      { kind: "l7policy", put: noRules },
      { kind: "l7policy", put: off },
      { kind: "l7rule", put: record(lbId, { l7policy_id: policy.id, type: "PATH", compare_type: "STARTS_WITH", value: "/" }) },
      { kind: "l7rule", put: record(lbId, { l7policy_id: off.id, type: "PATH", compare_type: "STARTS_WITH", value: "/" }) },
      { kind: "member", put: member },
      { kind: "healthmonitor", put: hm },
    ]);
    const shown = (await t.call("GET", `${POOLS}/${p.id}`)).body.pool;
    expect(shown.listeners.map((l: { id: string }) => l.id).sort()).toEqual([byDefault, byPolicy].sort());
    expect(shown.members).toEqual([{ id: member.id }]);
    expect(shown.healthmonitor_id).toBe(hm.id);

    // The listeners using the pool go PENDING_UPDATE with an update.
    const res = await t.call("PUT", `${POOLS}/${p.id}`, { pool: { name: "x" } });
    expect(res.status).toBe(200);
    expect(await status(t, "listener", byDefault)).toBe("PENDING_UPDATE");
    expect(await status(t, "listener", byPolicy)).toBe("PENDING_UPDATE");
    expect(await status(t, "listener", unruled)).toBe("ACTIVE");
    await t.settle();
    expect(await status(t, "listener", byPolicy)).toBe("ACTIVE");

    // A pool an L7 policy redirects to cannot be deleted (whatever the policy's rules).
    const del = await t.call("DELETE", `${POOLS}/${p.id}`);
    expect(del.status).toBe(409);
    expect(del.body.faultstring).toMatch(new RegExp(`^Pool ${p.id} is in use by L7 policy (${policy.id}|${noRules.id}|${off.id})$`));
    expect(await status(t, "pool", p.id)).toBe("ACTIVE");
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
  });
});

describe("update", () => {
  it("changes the given fields: PENDING_UPDATE with its LB and listener, then ACTIVE", async () => {
    const lbId = (await activeLb(slow)).id;
    const listenerId = await seedListener(slow, lbId);
    const p = await createPool(slow, { listener_id: listenerId, name: "a", tags: ["t"] });
    const res = await slow.call("PUT", `${POOLS}/${p.id}`, {
      pool: { name: "b", description: "d", admin_state_up: false, lb_algorithm: "SOURCE_IP", tags: null },
    });
    expect(res.status).toBe(200);
    expect(res.body.pool).toMatchObject({
      name: "b",
      description: "d",
      admin_state_up: false,
      lb_algorithm: "SOURCE_IP",
      tags: ["t"],
      provisioning_status: "PENDING_UPDATE",
      listeners: [{ id: listenerId }],
    });
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    expect(await status(slow, "listener", listenerId)).toBe("PENDING_UPDATE");
    await slow.settle();
    const shown = (await slow.call("GET", `${POOLS}/${p.id}`)).body.pool;
    expect(shown).toMatchObject({ name: "b", provisioning_status: "ACTIVE", updated_at: expect.stringMatching(/^\d{4}-/) });
    expect(await status(slow, "listener", listenerId)).toBe("ACTIVE");
    expect(await lbStatus(slow, lbId)).toBe("ACTIVE");

    // Null name and description answer "", null admin_state_up is False, and tags can be replaced.
    const cleared = await slow.call("PUT", `${POOLS}/${p.id}`, {
      pool: { name: null, description: null, admin_state_up: true, tags: ["u"] },
    });
    expect(cleared.body.pool).toMatchObject({ name: "", description: "", admin_state_up: true, tags: ["u"] });
    await slow.settle();
  });

  it("refuses what Octavia refuses, changing nothing", async () => {
    const lbId = (await activeLb(t)).id;
    const p = await createPool(t, { loadbalancer_id: lbId, session_persistence: { type: "HTTP_COOKIE" } });
    const before = (await t.call("GET", `${POOLS}/${p.id}`)).body.pool;
    const cases: [unknown, number, string][] = [
      [{ protocol: "TCP" }, 400, "Unknown attribute for argument pool_.pool: protocol"],
      [{ loadbalancer_id: lbId }, 400, "Unknown attribute for argument pool_.pool: loadbalancer_id"],
      [
        { lb_algorithm: "SOURCE_IP_PORT" },
        501,
        "Provider 'amphora' does not support a requested option: Amphora provider does not support SOURCE_IP_PORT algorithm.",
      ],
      [
        { session_persistence: { type: "SOURCE_IP", persistence_timeout: 3 } },
        400,
        "Validation failure: persistence_timeout and persistence_granularity is only for UDP protocol pools.",
      ],
      [
        { session_persistence: { type: "APP_COOKIE" } },
        400,
        'Validation failure: Field "cookie_name" must be specified when using the "APP_COOKIE" session persistence type.',
      ],
      // No type: the pool's type (HTTP_COOKIE) is kept, so a cookie name is refused.
      [
        { session_persistence: { cookie_name: "c" } },
        400,
        'Validation failure: Field "cookie_name" can only be specified with session persistence of type "APP_COOKIE".',
      ],
      [{ crl_container_ref: "crl" }, 400, "Validation failure: A CA reference is required to specify a certificate revocation list."],
      [
        { ca_tls_container_ref: null, crl_container_ref: "crl" },
        400,
        "Validation failure: A CA reference is required to specify a certificate revocation list.",
      ],
      [
        { tls_versions: [] },
        400,
        "Validation failure: Empty TLS version list. Either specify at least one TLS version or remove this parameter to use the default.",
      ],
      [{ tls_versions: ["TLSv0"] }, 400, "Validation failure: Invalid TLS versions: TLSv0"],
      [
        { alpn_protocols: [] },
        400,
        "Validation failure: Empty ALPN protocol list. Either specify at least one ALPN protocol or remove this parameter to use the default.",
      ],
      [
        { tls_ciphers: "a;b" },
        400,
        "Validation failure: Invalid characters in cipher string. Only alphanumeric, -, +, !, :, @, =, _, and . are allowed.",
      ],
    ];
    for (const [pool, st, message] of cases)
      expect(pick(await t.call("PUT", `${POOLS}/${p.id}`, { pool })), message).toEqual(fault(st, message));
    expect((await t.call("GET", `${POOLS}/${p.id}`)).body.pool).toEqual(before);
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
    expect(pick(await t.call("PUT", `${POOLS}/${NOBODY}`, { pool: { name: "x" } }))).toEqual(fault(404, `Pool ${NOBODY} not found.`));
  });

  it("session persistence: replaced, typeless keeps the type, null removes it", async () => {
    const lbId = (await activeLb(t)).id;
    const udp = await createPool(t, {
      loadbalancer_id: lbId,
      protocol: "UDP",
      session_persistence: { type: "SOURCE_IP", persistence_timeout: 3, persistence_granularity: "255.255.255.0" },
    });
    const upd = await t.call("PUT", `${POOLS}/${udp.id}`, {
      pool: { session_persistence: { persistence_timeout: 4, persistence_granularity: "255.255.0.0" } },
    });
    expect(upd.body.pool.session_persistence).toEqual({
      type: "SOURCE_IP",
      cookie_name: null,
      persistence_timeout: 4,
      persistence_granularity: "255.255.0.0",
    });
    await t.settle();
    // The fields left out are cleared.
    const rep = await t.call("PUT", `${POOLS}/${udp.id}`, { pool: { session_persistence: { type: "SOURCE_IP" } } });
    expect(rep.body.pool.session_persistence).toEqual({
      type: "SOURCE_IP",
      cookie_name: null,
      persistence_timeout: null,
      persistence_granularity: null,
    });
    await t.settle();
    for (const [sp, message] of [
      [{ type: "HTTP_COOKIE", cookie_name: "c" }, "Validation failure: Cookie names are not supported for UDP/SCTP pools."],
      [{ type: "APP_COOKIE" }, "Validation failure: Session persistence of type APP_COOKIE is not supported for UDP/SCTP protocol pools."],
    ] as const) {
      expect(pick(await t.call("PUT", `${POOLS}/${udp.id}`, { pool: { session_persistence: sp } }))).toEqual(fault(400, message));
    }
    const removed = await t.call("PUT", `${POOLS}/${udp.id}`, { pool: { session_persistence: null } });
    expect(removed.body.pool.session_persistence).toBeNull();
    await t.settle();

    const http = await createPool(t, { loadbalancer_id: lbId });
    expect(pick(await t.call("PUT", `${POOLS}/${http.id}`, { pool: { session_persistence: {} } }))).toEqual(
      fault(400, "Validation failure: Invalid session_persistence provided."),
    );
    const added = await t.call("PUT", `${POOLS}/${http.id}`, { pool: { session_persistence: { type: "APP_COOKIE", cookie_name: "sid" } } });
    expect(added.body.pool.session_persistence).toEqual({
      type: "APP_COOKIE",
      cookie_name: "sid",
      persistence_timeout: null,
      persistence_granularity: null,
    });
    await t.settle();
  });

  it("TLS: null versions and ciphers go back to the defaults; CA and CRL references follow Octavia's rules", async () => {
    const lbId = (await activeLb(t)).id;
    const p = await createPool(t, {
      loadbalancer_id: lbId,
      tls_enabled: true,
      tls_versions: ["TLSv1.3"],
      tls_ciphers: "DHE-RSA-AES128-GCM-SHA256",
      ca_tls_container_ref: "ca",
      crl_container_ref: "crl",
    });
    const put = async (pool: Record<string, unknown>) => {
      const res = await t.call("PUT", `${POOLS}/${p.id}`, { pool });
      await t.settle();
      return res;
    };
    let res = await put({ tls_versions: null, tls_ciphers: null, alpn_protocols: ["http/1.1"] });
    expect(res.body.pool).toMatchObject({ tls_versions: ["TLSv1.2", "TLSv1.3"], alpn_protocols: ["http/1.1"] });
    expect(res.body.pool.tls_ciphers).toMatch(/^TLS_AES_256_GCM_SHA384:/);
    expect(pick(await put({ ca_tls_container_ref: null }))).toEqual(
      fault(400, "Validation failure: A CA reference cannot be removed when a certificate revocation list is present."),
    );
    res = await put({ crl_container_ref: null });
    expect(res.body.pool).toMatchObject({ ca_tls_container_ref: "ca", crl_container_ref: null });
    res = await put({ crl_container_ref: "crl2", tls_container_ref: "cert", tls_enabled: false });
    expect(res.body.pool).toMatchObject({
      ca_tls_container_ref: "ca",
      crl_container_ref: "crl2",
      tls_container_ref: "cert",
      tls_enabled: false,
    });
    res = await put({ ca_tls_container_ref: null, crl_container_ref: null, alpn_protocols: null });
    expect(res.body.pool).toMatchObject({ ca_tls_container_ref: null, crl_container_ref: null, alpn_protocols: null });
  });
});

describe("delete", () => {
  it("takes the pool's members and monitor with it; 404 once the flow is done", async () => {
    const lbId = (await activeLb(slow)).id;
    const p = await createPool(slow, { loadbalancer_id: lbId });
    const member = record(lbId, { pool_id: p.id, address: "192.0.2.10", protocol_port: 80 });
    await seed(slow, lbId, [{ kind: "member", put: member }]);
    const hm = await slow.call("POST", "/v2/lbaas/healthmonitors", {
      healthmonitor: { pool_id: p.id, type: "TCP", delay: 1, timeout: 1, max_retries: 1 },
    });
    expect(hm.status).toBe(201);
    await slow.settle();

    const res = await slow.call("DELETE", `${POOLS}/${p.id}`);
    expect(res.status).toBe(204);
    expect(await status(slow, "pool", p.id)).toBe("PENDING_DELETE");
    // As Octavia's API: the members are left as they are until the flow deletes them with the pool.
    expect(await status(slow, "member", member.id)).toBe("ACTIVE");
    expect(await status(slow, "healthmonitor", hm.body.healthmonitor.id)).toBe("PENDING_DELETE");
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    await slow.settle();
    expect(pick(await slow.call("GET", `${POOLS}/${p.id}`))).toEqual(fault(404, `Pool ${p.id} not found.`));
    expect((await slow.call("GET", `/v2/lbaas/healthmonitors/${hm.body.healthmonitor.id}`)).status).toBe(404);
    expect(await status(slow, "member", member.id)).toBe("DELETED");
    expect(await lbStatus(slow, lbId)).toBe("ACTIVE");
    expect(pick(await slow.call("DELETE", `${POOLS}/${p.id}`))).toEqual(fault(404, `Pool ${p.id} not found.`));
  });

  it("a listener's default pool can go: the listener loses its default_pool_id", async () => {
    const lbId = (await activeLb(slow)).id;
    const listenerId = await seedListener(slow, lbId);
    const p = await createPool(slow, { listener_id: listenerId });
    expect((await slow.call("DELETE", `${POOLS}/${p.id}`)).status).toBe(204);
    expect(await stored(slow, "listener", listenerId)).toMatchObject({ provisioning_status: "PENDING_UPDATE", default_pool_id: null });
    await slow.settle();
    expect(await stored(slow, "listener", listenerId)).toMatchObject({ provisioning_status: "ACTIVE", default_pool_id: null });
    // The listener can take a new default pool.
    const q = await createPool(slow, { listener_id: listenerId });
    expect(q.listeners).toEqual([{ id: listenerId }]);
  });

  it("is refused while the load balancer is busy", async () => {
    const lbId = (await activeLb(slow)).id;
    const p = await createPool(slow, { loadbalancer_id: lbId });
    expect((await slow.call("PUT", `${POOLS}/${p.id}`, { pool: { name: "x" } })).status).toBe(200);
    expect(pick(await slow.call("DELETE", `${POOLS}/${p.id}`))).toEqual(
      fault(409, `Load Balancer ${lbId} is immutable and cannot be updated.`),
    );
    await slow.settle();
  });
});

describe("lists", () => {
  it("filters, selects fields and pages as Octavia's lists", async () => {
    const app = await inProcessApp();
    const lbId = (await activeLb(app)).id;
    const a = await createPool(app, { loadbalancer_id: lbId, name: "a", protocol: "TCP", tags: ["x"] });
    const b = await createPool(app, { loadbalancer_id: lbId, name: "b" });
    const hm = await app.call("POST", "/v2/lbaas/healthmonitors", {
      healthmonitor: { pool_id: b.id, type: "HTTP", delay: 1, timeout: 1, max_retries: 1 },
    });
    await app.settle();
    const list = async (q: string) => ((await app.call("GET", `${POOLS}${q}`)).body.pools as { id: string }[]).map((p) => p.id);
    expect(await list("")).toEqual([a.id, b.id]);
    expect(await list("?name=b")).toEqual([b.id]);
    expect(await list("?protocol=TCP")).toEqual([a.id]);
    expect(await list(`?healthmonitor_id=${hm.body.healthmonitor.id}`)).toEqual([b.id]);
    expect(await list("?tags=x")).toEqual([a.id]);
    expect(await list("?sort=name:desc")).toEqual([b.id, a.id]);
    expect(await list("?limit=1")).toEqual([a.id]);
    expect(await list(`?loadbalancer_id=${lbId}`)).toEqual([a.id, b.id]);
    expect(await list(`?loadbalancer_id=${NOBODY}`)).toEqual([]);
    const fields = await app.call("GET", `${POOLS}?fields=id&fields=name`);
    expect(fields.body.pools).toEqual([
      { id: a.id, name: "a" },
      { id: b.id, name: "b" },
    ]);
    expect(pick(await app.call("GET", `${POOLS}?bogus=1`))).toEqual(fault(400, "One or more arguments are either duplicate or invalid"));
    expect((await app.call("GET", `${POOLS}/${a.id}?fields=protocol`)).body).toEqual({ pool: { protocol: "TCP" } });
  });
});
