// Bad input on every endpoint that takes a body: malformed JSON, unknown fields, and for every field
// of the schema an oversized string (5000 characters: longer than any field allows, not an enum value, not a
// number, UUID, list or object) and a nested object (a wrong type for every scalar field).
// Each must answer 400 with Octavia's fault body and leave the table exactly as it was.
import { beforeAll, describe, expect, it } from "vitest";
import { SUBNET, inProcessApp } from "@ottava/local/testing";
import { ENDPOINTS, createFixtures, ids, tableSnapshot } from "./support/endpoints";

let t: Awaited<ReturnType<typeof inProcessApp>>;

beforeAll(async () => {
  t = await inProcessApp();
  await createFixtures(t);
});

function expectFault(res: { status: number; body: unknown }, what: string) {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(400);
  expect(res.body, what).toEqual({ faultcode: "Client", faultstring: expect.any(String), debuginfo: null });
}

describe.each(ENDPOINTS)("$name", (e) => {
  const wrap = (inner: Record<string, unknown>) => ({ [e.root]: e.list ? [inner] : inner });

  it("answers every bad input with a 400 fault and changes nothing", async () => {
    const before = await tableSnapshot(t);
    expectFault(await t.call(e.method, e.path(), `{"${e.root}": {`), "malformed JSON");
    expectFault(await t.call(e.method, e.path(), wrap({ ...e.valid(), no_such_field: 1 })), "unknown field");
    expectFault(await t.call(e.method, e.path(), { ...wrap(e.valid()), bogus_root: {} }), "unknown root field");
    for (const field of Object.keys(e.schema.shape)) {
      expectFault(await t.call(e.method, e.path(), wrap({ ...e.valid(), [field]: "x".repeat(5000) })), `${field}: oversized string`);
      expectFault(await t.call(e.method, e.path(), wrap({ ...e.valid(), [field]: { nested: [1, 2] } })), `${field}: nested object`);
    }
    const after = await tableSnapshot(t);
    expect(
      after.filter((i) => !before.includes(i)),
      "items written or changed",
    ).toEqual([]);
    expect(after.length, "items count").toBe(before.length);
  });
});

describe("numbers, depth and size", () => {
  const listener = (extra: string) => `{"listener": {"loadbalancer_id": "${ids.lb}", "protocol": "HTTP", "protocol_port": 8081, ${extra}}}`;

  it("bounds every integer by Octavia's 32-bit columns, refuses infinities, deep and oversized bodies, and changes nothing", async () => {
    const before = await tableSnapshot(t);
    for (const [extra, says] of [
      ['"connection_limit": 1e308', "Value should be lower or equal to 2147483647"],
      ['"connection_limit": 2147483648', "Value should be lower or equal to 2147483647"],
      ['"timeout_client_data": "99999999999999999999"', "Value should be lower or equal to"],
      ['"connection_limit": -1e400', "cannot convert float infinity to integer"],
      ['"hsts_max_age": 1e400', "cannot convert float infinity to integer"],
    ]) {
      const res = await t.call("POST", "/v2/lbaas/listeners", listener(extra!));
      expectFault(res, extra!);
      expect((res.body as { faultstring: string }).faultstring, extra).toContain(says);
    }
    const quota = await t.call("PUT", `/v2/lbaas/quotas/${ids.lb}`, '{"quota": {"member": 1e400}}');
    expectFault(quota, "quota infinity");
    // Refused before parsing: nothing recurses over 5,000 levels.
    for (const deep of ["[".repeat(5000) + "]".repeat(5000), `{"loadbalancer": ${'{"a": '.repeat(5000)}1${"}".repeat(5000)}}`]) {
      const res = await t.call("POST", "/v2/lbaas/loadbalancers", deep);
      expectFault(res, "deep body");
      expect(res.body).toEqual({ faultcode: "Client", faultstring: "Request body nests deeper than 32 levels", debuginfo: null });
    }
    // Brackets inside strings are text, not depth.
    const named = await t.call("PUT", `/v2/lbaas/listeners/${ids.listener}`, { listener: { description: "[".repeat(300) } });
    expect(named.status, JSON.stringify(named.body)).toBe(400); // too long a description: the validator's 400, not the depth's
    expect(named.body.faultstring).not.toContain("nests deeper");
    const big = await t.call(
      "POST",
      "/v2/lbaas/loadbalancers",
      JSON.stringify({ loadbalancer: { vip_subnet_id: SUBNET, description: "x".repeat(t.config.maxRequestBodySize) } }),
    );
    expect(big).toMatchObject({
      status: 413,
      body: {
        faultcode: "Client",
        faultstring: `Request is too large: the body may hold at most ${t.config.maxRequestBodySize} bytes.`,
        debuginfo: null,
      },
    });
    const after = await tableSnapshot(t);
    expect(after).toEqual(before);
  });
});

describe("ids and markers longer than any key", () => {
  it("name nothing: 404s, empty lists and Octavia's invalid-marker 400, never DynamoDB's refusal (a 500)", async () => {
    const long = "x".repeat(5000);
    expect((await t.call("GET", `/v2/lbaas/loadbalancers/${long}`)).status).toBe(404);
    expect((await t.call("GET", `/v2/lbaas/pools/${long}/members`)).status).toBe(404);
    expect((await t.call("GET", `/v2/lbaas/flavorprofiles/${long}`)).status).toBe(404);
    expect((await t.call("GET", `/v2/lbaas/flavorprofiles?marker=${long}`)).body).toEqual({
      faultcode: "Client",
      faultstring: `Supplied pagination marker '${long}' is not valid.`,
      debuginfo: null,
    });
    expect((await t.call("GET", `/v2/lbaas/loadbalancers?marker=${long}`)).status).toBe(400);
    const listed = await t.call("GET", `/v2/lbaas/loadbalancers?project_id=${long}`);
    expect(listed).toMatchObject({ status: 200, body: { loadbalancers: [] } });
    // A project id no key can hold is refused where it is given: a quota's path, X-Project-Id.
    const refused = {
      faultcode: "Client",
      faultstring: `Invalid input for field/attribute project_id. Value: '${"x".repeat(64)}…'. Value should have a maximum character requirement of 255`,
      debuginfo: null,
    };
    expect(await t.call("PUT", `/v2/lbaas/quotas/${long}`, { quota: { member: 5 } })).toMatchObject({ status: 400, body: refused });
    expect(
      await t.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET } }, { "x-project-id": long }),
    ).toMatchObject({ status: 400, body: refused });
  });
});
