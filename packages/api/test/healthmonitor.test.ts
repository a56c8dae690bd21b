// Health monitors (octavia/api/v2/controllers/health_monitor.py), in process over DynamoDB Local and the real ASL.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { MUTABLE_STATUSES } from "@ottava/core";
import { activePool, fault, inProcessApp, pick, PROJECT, seed } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
let t: App;
let slow: App; // flows take a while, so the PENDING_* states can be seen
const HMS = "/v2/lbaas/healthmonitors";
const NOBODY = "11111111-2222-3333-4444-555555555555";

async function createHm(app: App, healthmonitor: Record<string, unknown>) {
  const res = await app.call("POST", HMS, { healthmonitor: { delay: 5, timeout: 3, max_retries: 2, ...healthmonitor } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await app.settle();
  return res.body.healthmonitor as Record<string, unknown> & { id: string };
}

const status = async (app: App, kind: string, id: string) => (await app.store.getChild(kind, id))?.record.provisioning_status;
const lbStatus = async (app: App, lbId: string) => (await app.store.getLoadBalancer(lbId))?.record.provisioning_status;
const count = async (app: App = t) => ((await app.call("GET", HMS)).body.healthmonitors as unknown[]).length;

beforeAll(async () => {
  t = await inProcessApp();
  slow = await inProcessApp({ OTTAVA_NOOP_LATENCY: "amphora.update:500" });
});

describe("create", () => {
  it("answers 201 with Octavia's HTTP defaults, OFFLINE; the pool and its listener PENDING_UPDATE until the flow ends", async () => {
    const { lbId, poolId } = await activePool(slow);
    const listener = {
      id: randomUUID(),
      project_id: PROJECT,
      loadbalancer_id: lbId,
      provisioning_status: "ACTIVE",
      operating_status: "ONLINE",
      protocol: "HTTP",
      protocol_port: 80,
      default_pool_id: poolId,
      created_at: new Date().toISOString(),
      updated_at: null,
    };
    await seed(slow, lbId, [{ kind: "listener", put: listener }]);

    const res = await slow.call("POST", HMS, { healthmonitor: { pool_id: poolId, type: "HTTP", delay: 5, timeout: 3, max_retries: 2 } });
    expect(res.status).toBe(201);
    const hm = res.body.healthmonitor;
    expect(hm).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "",
      type: "HTTP",
      delay: 5,
      timeout: 3,
      max_retries: 2,
      max_retries_down: 3,
      http_method: "GET",
      url_path: "/",
      expected_codes: "200",
      admin_state_up: true,
      project_id: PROJECT,
      tenant_id: PROJECT,
      pools: [{ id: poolId }],
      provisioning_status: "PENDING_CREATE",
      operating_status: "OFFLINE",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/),
      updated_at: null,
      tags: [],
      http_version: null,
      domain_name: null,
    });
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    expect(await status(slow, "pool", poolId)).toBe("PENDING_UPDATE");
    expect(await status(slow, "listener", listener.id)).toBe("PENDING_UPDATE");
    // The pool is locked: Octavia refuses on the pool's status first.
    expect(
      pick(await slow.call("POST", HMS, { healthmonitor: { pool_id: poolId, type: "TCP", delay: 1, timeout: 1, max_retries: 1 } })),
    ).toEqual(fault(409, `Pool ${poolId} is immutable and cannot be updated.`));
    await slow.settle();
    expect((await slow.call("GET", `${HMS}/${hm.id}`)).body.healthmonitor).toMatchObject({ provisioning_status: "ACTIVE" });
    expect(await status(slow, "pool", poolId)).toBe("ACTIVE");
    expect(await status(slow, "listener", listener.id)).toBe("ACTIVE");
    expect(await lbStatus(slow, lbId)).toBe("ACTIVE");
    expect((await slow.call("GET", `/v2/lbaas/pools/${poolId}`)).body.pool.healthmonitor_id).toBe(hm.id);
    expect((await slow.store.getChild("healthmonitor", hm.id))!.record).toMatchObject({ pool_id: poolId, loadbalancer_id: lbId });
  });

  it("keeps every given field; non-HTTP monitors have no HTTP fields", async () => {
    const { poolId } = await activePool(t);
    const hm = await createHm(t, {
      pool_id: poolId.toUpperCase(),
      type: "HTTPS",
      name: "check",
      delay: "10",
      timeout: 20, // Octavia does not compare the timeout with the delay
      max_retries: 10,
      max_retries_down: 1,
      http_method: "HEAD",
      url_path: "/health?full=1",
      expected_codes: "200-299",
      admin_state_up: false,
      tags: ["a"],
      http_version: 1.1,
      domain_name: "www.example.com",
      project_id: "ignored",
    });
    expect(hm).toMatchObject({
      pools: [{ id: poolId }],
      type: "HTTPS",
      name: "check",
      delay: 10,
      timeout: 20,
      max_retries: 10,
      max_retries_down: 1,
      http_method: "HEAD",
      url_path: "/health?full=1",
      expected_codes: "200-299",
      admin_state_up: false,
      tags: ["a"],
      http_version: 1.1,
      domain_name: "www.example.com",
      project_id: PROJECT,
    });
    for (const type of ["TCP", "PING", "TLS-HELLO"]) {
      const p = await activePool(t);
      const m = await createHm(t, { pool_id: p.poolId, type, http_method: null }); // a null HTTP field is no field
      expect(m).toMatchObject({ type, http_method: null, url_path: null, expected_codes: null });
    }
  });

  it("one monitor per pool (409)", async () => {
    const { poolId } = await activePool(t);
    await createHm(t, { pool_id: poolId, type: "TCP" });
    expect(
      pick(await t.call("POST", HMS, { healthmonitor: { pool_id: poolId, type: "PING", delay: 1, timeout: 1, max_retries: 1 } })),
    ).toEqual(fault(409, "This pool already has a health monitor"));
  });

  it("answers bad input with Octavia's faults and writes nothing", async () => {
    const { lbId, poolId } = await activePool(t);
    const before = await count();
    const base = { pool_id: poolId, type: "HTTP", delay: 5, timeout: 3, max_retries: 2 };
    const without = (k: keyof typeof base) => Object.fromEntries(Object.entries(base).filter(([key]) => key !== k));
    const cases: [unknown, number, string][] = [
      [without("pool_id"), 400, "Invalid input for field/attribute pool_id. Value: 'None'. Mandatory field missing."],
      [without("type"), 400, "Invalid input for field/attribute type. Value: 'None'. Mandatory field missing."],
      [without("delay"), 400, "Invalid input for field/attribute delay. Value: 'None'. Mandatory field missing."],
      [without("timeout"), 400, "Invalid input for field/attribute timeout. Value: 'None'. Mandatory field missing."],
      [without("max_retries"), 400, "Invalid input for field/attribute max_retries. Value: 'None'. Mandatory field missing."],
      [{ ...base, pool_id: NOBODY }, 404, `Pool ${NOBODY} not found.`],
      [{ ...base, pool_id: "x" }, 400, "Invalid input for field/attribute pool_id. Value: 'x'. Value should be UUID format"],
      [
        { ...base, type: "ICMP" },
        400,
        "Invalid input for field/attribute type. Value: 'ICMP'. Value should be one of: HTTP, HTTPS, PING, TCP, TLS-HELLO, UDP-CONNECT, SCTP",
      ],
      [{ ...base, delay: -1 }, 400, "Invalid input for field/attribute delay. Value: '-1'. Value should be greater or equal to 0"],
      [
        { ...base, timeout: "soon" },
        400,
        "Invalid input for field/attribute timeout. Value: 'soon'. invalid literal for int() with base 10: 'soon'",
      ],
      [
        { ...base, max_retries: 0 },
        400,
        "Invalid input for field/attribute max_retries. Value: '0'. Value should be greater or equal to 1",
      ],
      [
        { ...base, max_retries: 11 },
        400,
        "Invalid input for field/attribute max_retries. Value: '11'. Value should be lower or equal to 10",
      ],
      [
        { ...base, max_retries_down: 11 },
        400,
        "Invalid input for field/attribute max_retries_down. Value: '11'. Value should be lower or equal to 10",
      ],
      [
        { ...base, http_method: "FETCH" },
        400,
        "Invalid input for field/attribute http_method. Value: 'FETCH'. Value should be one of: GET, HEAD, POST, PUT, DELETE, TRACE, OPTIONS, CONNECT, PATCH",
      ],
      [
        { ...base, url_path: "health" },
        400,
        "Invalid input for field/attribute url_path. Value: 'health'. Value must be a valid URL Path string",
      ],
      [
        { ...base, url_path: "http://h/x" },
        400,
        "Invalid input for field/attribute url_path. Value: 'http://h/x'. Value must be a valid URL Path string",
      ],
      [
        { ...base, url_path: "/a b" },
        400,
        "Invalid input for field/attribute url_path. Value: '/a b'. Value must be a valid URL Path string",
      ],
      [
        { ...base, expected_codes: "20x" },
        400,
        String.raw`Invalid input for field/attribute expected_codes. Value: '20x'. Value should match the pattern ^(\d{3}(\s*,\s*\d{3})*)$|^(\d{3}-\d{3})$`,
      ],
      [{ ...base, http_version: 2 }, 400, "Invalid input for field/attribute http_version. Value: '2'. Value should be one of: 1.0, 1.1"],
      [
        { ...base, http_version: 1.1, domain_name: "-bad-.example" },
        400,
        String.raw`Invalid input for field/attribute domain_name. Value: '-bad-.example'. Value should match the pattern ^(?=.{1,253}\.?$)(?:(?!-|[^.]+_)[A-Za-z0-9-_]{1,63}(?<!-)(?:\.|$))+$`,
      ],
      [{ ...base, bogus: 1 }, 400, "Unknown attribute for argument health_monitor_.healthmonitor: bogus"],
      [{ ...base, delay: null }, 400, "None is not a valid option for delay"],
      [{ ...base, type: null }, 400, "None is not a valid option for type"],
      [{ ...base, max_retries: null }, 400, "None is not a valid option for max_retries"],
      [{ ...base, type: "TCP", http_method: "GET" }, 400, "http_method is not a valid option for health monitors of type TCP"],
      [{ ...base, type: "PING", url_path: "/" }, 400, "url_path is not a valid option for health monitors of type PING"],
      [
        { ...base, type: "TLS-HELLO", expected_codes: "200" },
        400,
        "expected_codes is not a valid option for health monitors of type TLS-HELLO",
      ],
      [
        { ...base, domain_name: "example.com" },
        400,
        "Validation failure: 'http_version' must be specified when 'domain_name' is provided.",
      ],
      [
        { ...base, domain_name: "example.com", http_version: 1.0 },
        400,
        "http_version 1.0 is not a valid option for health monitors HTTP 1.1 domain name health check",
      ],
      [{ ...base, type: "UDP-CONNECT" }, 400, "Validation failure: The UDP-CONNECT type is only supported for pools of type UDP/SCTP."],
      [{ ...base, type: "SCTP" }, 400, "Validation failure: The SCTP type is only supported for pools of type UDP/SCTP."],
    ];
    for (const [healthmonitor, st, message] of cases) {
      expect(pick(await t.call("POST", HMS, { healthmonitor })), message).toEqual(fault(st, message));
    }
    expect(await count()).toBe(before);
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
    expect(await status(t, "pool", poolId)).toBe("ACTIVE");
  });

  it("UDP and SCTP pools take UDP-CONNECT, SCTP, TCP and HTTP monitors, UDP-CONNECT no faster than 3 s", async () => {
    for (const protocol of ["UDP", "SCTP"]) {
      const { poolId } = await activePool(t, { protocol });
      for (const type of ["PING", "HTTPS", "TLS-HELLO"]) {
        expect(pick(await t.call("POST", HMS, { healthmonitor: { pool_id: poolId, type, delay: 5, timeout: 3, max_retries: 2 } }))).toEqual(
          fault(
            400,
            `Validation failure: The associated pool protocol is ${protocol}, so only a UDP-CONNECT/SCTP/TCP/HTTP health monitor is supported.`,
          ),
        );
      }
      expect(
        pick(await t.call("POST", HMS, { healthmonitor: { pool_id: poolId, type: "UDP-CONNECT", delay: 2, timeout: 1, max_retries: 2 } })),
      ).toEqual(fault(400, "Validation failure: The request delay value 2 should be larger than 3 for UDP-CONNECT health monitor type."));
      const hm = await createHm(t, { pool_id: poolId, type: "UDP-CONNECT", delay: 3 });
      expect(hm).toMatchObject({ type: "UDP-CONNECT", http_method: null });
      expect(pick(await t.call("PUT", `${HMS}/${hm.id}`, { healthmonitor: { delay: 1 } }))).toEqual(
        fault(400, "Validation failure: The request delay value 1 should be larger than 3 for UDP-CONNECT health monitor type."),
      );
    }
    for (const type of ["SCTP", "TCP", "HTTP"]) {
      const { poolId } = await activePool(t, { protocol: "SCTP" });
      expect((await createHm(t, { pool_id: poolId, type })).type).toBe(type);
    }
  });

  it("refuses a pool that is not ACTIVE", async () => {
    const { lbId, poolId } = await activePool(t);
    const owner = `seed-${randomUUID()}`;
    await t.store.lockWith(lbId, { from: MUTABLE_STATUSES, to: "PENDING_UPDATE", owner, executionArn: "seed" }, [
      { kind: "pool", id: poolId, set: { provisioning_status: "ERROR" } },
    ]);
    await t.store.updateLoadBalancer(lbId, owner, { provisioning_status: "ACTIVE" }, true);
    expect(
      pick(await t.call("POST", HMS, { healthmonitor: { pool_id: poolId, type: "TCP", delay: 1, timeout: 1, max_retries: 1 } })),
    ).toEqual(fault(409, `Pool ${poolId} is immutable and cannot be updated.`));
  });
});

describe("update", () => {
  it("changes the given fields, nulls back to defaults; pool PENDING_UPDATE with it", async () => {
    const { lbId, poolId } = await activePool(slow);
    const hm = await createHm(slow, {
      pool_id: poolId,
      type: "HTTP",
      http_method: "POST",
      url_path: "/x",
      expected_codes: "202",
      max_retries_down: 5,
      tags: ["a"],
    });
    const res = await slow.call("PUT", `${HMS}/${hm.id}`, {
      healthmonitor: {
        name: "n",
        delay: 7,
        timeout: 8,
        max_retries: 4,
        http_method: null,
        url_path: null,
        expected_codes: null,
        max_retries_down: null,
        tags: null,
        admin_state_up: null,
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.healthmonitor).toMatchObject({
      name: "n",
      delay: 7,
      timeout: 8,
      max_retries: 4,
      http_method: "GET",
      url_path: "/",
      expected_codes: "200",
      max_retries_down: 3,
      tags: ["a"],
      admin_state_up: false,
      provisioning_status: "PENDING_UPDATE",
    });
    expect(await status(slow, "pool", poolId)).toBe("PENDING_UPDATE");
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    await slow.settle();
    expect((await slow.call("GET", `${HMS}/${hm.id}`)).body.healthmonitor).toMatchObject({
      provisioning_status: "ACTIVE",
      updated_at: expect.stringMatching(/^\d{4}-/),
    });
    expect(await status(slow, "pool", poolId)).toBe("ACTIVE");

    const dn = await slow.call("PUT", `${HMS}/${hm.id}`, { healthmonitor: { http_version: 1.1, domain_name: "example.com" } });
    expect(dn.body.healthmonitor).toMatchObject({ http_version: 1.1, domain_name: "example.com" });
    await slow.settle();
    // The stored version counts: 1.0 with the stored domain name is refused.
    expect(pick(await slow.call("PUT", `${HMS}/${hm.id}`, { healthmonitor: { http_version: 1.0 } }))).toEqual(
      fault(400, "http_version 1.0 is not a valid option for health monitors HTTP 1.1 domain name health check"),
    );
  });

  it("refuses what Octavia refuses, changing nothing", async () => {
    const { lbId, poolId } = await activePool(t);
    const hm = await createHm(t, { pool_id: poolId, type: "TCP" });
    const before = (await t.call("GET", `${HMS}/${hm.id}`)).body.healthmonitor;
    const cases: [unknown, number, string][] = [
      [{ type: "HTTP" }, 400, "Unknown attribute for argument health_monitor_.healthmonitor: type"],
      [{ pool_id: poolId }, 400, "Unknown attribute for argument health_monitor_.healthmonitor: pool_id"],
      [{ delay: null }, 400, "None is not a valid option for delay"],
      [{ max_retries: null }, 400, "None is not a valid option for max_retries"],
      [{ timeout: null }, 400, "None is not a valid option for timeout"],
      [{ timeout: -2 }, 400, "Invalid input for field/attribute timeout. Value: '-2'. Value should be greater or equal to 0"],
      // Even a null HTTP field is refused for a TCP monitor.
      [{ http_method: null }, 400, "http_method is not a valid option for health monitors of type TCP"],
      [{ url_path: "/" }, 400, "url_path is not a valid option for health monitors of type TCP"],
      [{ expected_codes: "200" }, 400, "expected_codes is not a valid option for health monitors of type TCP"],
      [{ domain_name: "example.com" }, 400, "Validation failure: 'http_version' must be specified when 'domain_name' is provided."],
    ];
    for (const [healthmonitor, st, message] of cases) {
      expect(pick(await t.call("PUT", `${HMS}/${hm.id}`, { healthmonitor })), message).toEqual(fault(st, message));
    }
    expect((await t.call("GET", `${HMS}/${hm.id}`)).body.healthmonitor).toEqual(before);
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
    expect(pick(await t.call("PUT", `${HMS}/${NOBODY}`, { healthmonitor: { delay: 1 } }))).toEqual(
      fault(404, `Health Monitor ${NOBODY} not found.`),
    );
  });
});

describe("delete", () => {
  it("PENDING_DELETE with its pool PENDING_UPDATE, then 404; the pool has no monitor any more", async () => {
    const { lbId, poolId } = await activePool(slow);
    const hm = await createHm(slow, { pool_id: poolId, type: "PING" });
    expect((await slow.call("DELETE", `${HMS}/${hm.id}`)).status).toBe(204);
    expect(await status(slow, "healthmonitor", hm.id)).toBe("PENDING_DELETE");
    expect(await status(slow, "pool", poolId)).toBe("PENDING_UPDATE");
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    await slow.settle();
    expect(pick(await slow.call("GET", `${HMS}/${hm.id}`))).toEqual(fault(404, `Health Monitor ${hm.id} not found.`));
    expect(pick(await slow.call("DELETE", `${HMS}/${hm.id}`))).toEqual(fault(404, `Health Monitor ${hm.id} not found.`));
    expect((await slow.call("GET", `/v2/lbaas/pools/${poolId}`)).body.pool).toMatchObject({
      healthmonitor_id: null,
      provisioning_status: "ACTIVE",
    });
    expect(await lbStatus(slow, lbId)).toBe("ACTIVE");
    // The pool can take a new monitor.
    await createHm(slow, { pool_id: poolId, type: "TCP" });
  });
});

describe("lists", () => {
  it("filters and selects fields, on /v2 and /v2.0", async () => {
    const app = await inProcessApp();
    const a = await activePool(app);
    const b = await activePool(app, { protocol: "TCP" });
    const x = await createHm(app, { pool_id: a.poolId, type: "HTTP", name: "x" });
    const y = await createHm(app, { pool_id: b.poolId, type: "TCP", name: "y" });
    const list = async (q: string, base = HMS) =>
      ((await app.call("GET", `${base}${q}`)).body.healthmonitors as { id: string }[]).map((h) => h.id);
    expect(await list("")).toEqual([x.id, y.id]);
    expect(await list("", "/v2.0/lbaas/healthmonitors")).toEqual([x.id, y.id]);
    expect(await list("?type=TCP")).toEqual([y.id]);
    expect(await list("?name=x")).toEqual([x.id]);
    expect(await list("?sort=name:desc")).toEqual([y.id, x.id]);
    expect((await app.call("GET", `${HMS}?fields=id,type`)).body.healthmonitors).toEqual([
      { id: x.id, type: "HTTP" },
      { id: y.id, type: "TCP" },
    ]);
  });
});

describe("operating status", () => {
  it("is ONLINE once the monitor's flow has configured it, OFFLINE when it is admin-down (Octavia's MarkHealthMonitorActiveInDB)", async () => {
    const { poolId } = await activePool(t);
    const up = await t.call("POST", HMS, { healthmonitor: { pool_id: poolId, type: "TCP", delay: 5, timeout: 3, max_retries: 2 } });
    expect(up.body.healthmonitor.operating_status).toBe("OFFLINE");
    await t.settle();
    expect((await t.call("GET", `${HMS}/${up.body.healthmonitor.id}`)).body.healthmonitor.operating_status).toBe("ONLINE");
    await t.call("PUT", `${HMS}/${up.body.healthmonitor.id}`, { healthmonitor: { admin_state_up: false } });
    await t.settle();
    expect((await t.call("GET", `${HMS}/${up.body.healthmonitor.id}`)).body.healthmonitor.operating_status).toBe("OFFLINE");
  });
});
