// Property-based bad input: fast-check generates requests for every endpoint (bodies built from each
// body schema's fields, query strings for every list, paths with odd ids) mixing valid, boundary and
// hostile values: wrong types, huge and infinite numbers, unicode, unknown and duplicated keys, deep
// and large bodies. Every answer must be below 500 (or Octavia's 501), every 4xx must carry the fault
// body, and no 4xx may have written anything: each request runs in its own DynamoDB meter scope, and a
// write DynamoDB accepted in a 4xx's scope fails the property.
//
// At least RUNS requests a run; the seed is printed, and OTTAVA_PROPERTY_SEED=<seed> replays a run.
import { beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { MAX_BODY_DEPTH, MAX_REQUEST_BODY_SIZE } from "@ottava/core";
import { DynamoMeter, addMetering } from "@ottava/db/testing";
import { PROJECT, inProcessApp } from "@ottava/local/testing";
import { ENDPOINTS, createFixtures, ids } from "./support/endpoints";

const RUNS = 10_000;
const SEED = process.env.OTTAVA_PROPERTY_SEED ? Number(process.env.OTTAVA_PROPERTY_SEED) : Date.now() % 2 ** 31;
const WRITES = new Set(["PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"]);

let t: Awaited<ReturnType<typeof inProcessApp>>;
const meter = new DynamoMeter();

beforeAll(async () => {
  // Every DynamoDB client of the app is metered (the scope of each write is known).
  t = await inProcessApp({}, { decorateClient: (client) => addMetering(client, meter) });
  await createFixtures(t);
}, 120_000);

/** JSON text written as is (what JSON.stringify cannot write: 1e400, 40-digit integers, deep nesting). */
class Raw {
  constructor(readonly text: string) {}
}
/** An object as key/value pairs, so that a key may come twice. */
class Pairs {
  constructor(readonly pairs: [string, unknown][]) {}
}

function toJson(v: unknown): string {
  if (v instanceof Raw) return v.text;
  if (v instanceof Pairs) return `{${v.pairs.map(([k, x]) => `${JSON.stringify(k)}: ${toJson(x)}`).join(", ")}}`;
  if (Array.isArray(v)) return `[${v.map(toJson).join(", ")}]`;
  if (v !== null && typeof v === "object") return toJson(new Pairs(Object.entries(v)));
  return JSON.stringify(v) ?? "null";
}

const numbers = fc.oneof(
  fc.constantFrom(
    0,
    -1,
    1,
    80,
    65535,
    65536,
    2 ** 31 - 1,
    2 ** 31,
    -(2 ** 31),
    -(2 ** 31) - 1,
    2 ** 53,
    -(2 ** 53),
    1e308,
    -1e308,
    1.5,
    -0.5,
    1e-300,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom("1e400", "-1e400", "1E999", "123456789012345678901234567890", "-0", "0.0").map((s) => new Raw(s)),
);
const strings = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.uuid(),
  fc.constantFrom(
    "",
    " ",
    "null",
    "None",
    "true",
    "True",
    "1e308",
    "1_000",
    " 12 ",
    "0x10",
    "NaN",
    "Infinity",
    "-1",
    "80",
    "192.0.2.1",
    "::1",
    "2001:db8::1",
    "300.1.1.1",
    "10.0.0.0/8",
    "HTTP",
    "TCP",
    "UDP",
    "PROXY",
    "ROUND_ROBIN",
    "SOURCE_IP",
    "ACTIVE",
    "ERROR",
    "SINGLE",
    "REJECT",
    "REDIRECT_TO_URL",
    "PATH",
    "STARTS_WITH",
    "REGEX",
    "(",
    "[a-",
    "http://",
    "https://example.com/x",
    "x".repeat(256),
    "x".repeat(5000),
    "\u0000",
    "é",
    "😀",
    "'\"\\",
    "%s%n",
    "../../etc/passwd",
    "<script>",
    "{}",
    "[]",
  ),
);
const scalars = fc.oneof(numbers, strings, fc.boolean(), fc.constant(null));
/** Nesting from 1 level to well past the bound, as text (the parser never sees the deep ones). */
const deep = fc
  .tuple(fc.integer({ min: 1, max: MAX_BODY_DEPTH * 4 }), fc.boolean())
  .map(([d, arrays]) => new Raw(arrays ? "[".repeat(d) + "]".repeat(d) : '{"a": '.repeat(d) + "1" + "}".repeat(d)));
/** Large values, made once: a long list, a long string, and one over the body size limit (413). */
const LARGE = [
  new Raw(`[${Array(20_000).fill("1").join(",")}]`),
  new Raw(JSON.stringify("y".repeat(200_000))),
  new Raw(JSON.stringify("z".repeat(MAX_REQUEST_BODY_SIZE))),
];
const values = fc.oneof(
  { weight: 6, arbitrary: scalars },
  { weight: 1, arbitrary: fc.array(scalars, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 10 }), scalars, { maxKeys: 3 }) },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: fc.constantFrom(...LARGE) },
);

/** Ids: the fixtures' (sometimes the wrong kind's), random UUIDs, and strings no id looks like. */
const anyId = () =>
  fc.oneof(
    fc.constantFrom(...Object.values(ids)),
    fc.uuid(),
    fc.constantFrom(
      "x",
      "00000000-0000-0000-0000-000000000000",
      "%00",
      "..",
      "%2F",
      "a".repeat(300),
      "b".repeat(3000),
      "%E2%9C%93",
      "%zz",
      "12345",
    ),
    fc.string({ maxLength: 20 }).map(encodeURIComponent),
  );
/** An id that names no fixture (for DELETE, so that the fixtures stay). */
const garbageId = fc.oneof(
  fc.uuid(),
  fc.constantFrom("x", "%00", "..", "a".repeat(300), "b".repeat(3000), "%zz"),
  fc.string({ maxLength: 20 }).map(encodeURIComponent),
);

interface Request {
  method: string;
  path: string;
  body?: string;
}

/** A body for an endpoint: its valid body with up to 3 fields replaced or added (or none), in a root that may be odd too. */
function bodies(): fc.Arbitrary<Request> {
  return fc.constantFrom(...ENDPOINTS).chain((e) =>
    fc
      .record({
        fields: fc.array(
          fc.tuple(fc.constantFrom(...Object.keys(e.schema.shape), "no_such_field", "id", "provisioning_status", "project_id"), values),
          { maxLength: 3 },
        ),
        root: fc.constantFrom("as is", "as is", "as is", "as is", "list", "scalar", "missing", "extra key", "empty", "deep", "not json"),
      })
      .map(({ fields, root }): Request => {
        const inner = new Pairs([...Object.entries(e.valid()), ...fields]);
        const wrapped = e.list ? [inner] : inner;
        const text =
          root === "as is"
            ? toJson(new Pairs([[e.root, wrapped]]))
            : root === "list"
              ? toJson([new Pairs([[e.root, wrapped]])])
              : root === "scalar"
                ? toJson(wrapped instanceof Pairs ? "x" : 1)
                : root === "missing"
                  ? toJson(wrapped)
                  : root === "extra key"
                    ? toJson(
                        new Pairs([
                          [e.root, wrapped],
                          ["other", {}],
                        ]),
                      )
                    : root === "empty"
                      ? ""
                      : root === "deep"
                        ? `{"${e.root}": ${"[".repeat(MAX_BODY_DEPTH + 5)}${"]".repeat(MAX_BODY_DEPTH + 5)}}`
                        : `{"${e.root}": {`;
        return { method: e.method, path: e.path(), body: text };
      }),
  );
}

const COLLECTIONS = [
  "loadbalancers",
  "listeners",
  "pools",
  "healthmonitors",
  "l7policies",
  "flavors",
  "flavorprofiles",
  "availabilityzones",
  "availabilityzoneprofiles",
  "quotas",
  "providers",
];
const LIST_KEYS = [
  "limit",
  "marker",
  "sort",
  "sort_key",
  "sort_dir",
  "page_reverse",
  "fields",
  "name",
  "id",
  "project_id",
  "tenant_id",
  "provisioning_status",
  "operating_status",
  "tags",
  "tags-any",
  "not-tags",
  "not-tags-any",
  "loadbalancer_id",
  "load_balancer_id",
  "pool_id",
  "protocol_port",
  "admin_state_up",
  "description",
  "created_at",
  "vip_address",
  "address",
  "weight",
  "type",
  "compute_id",
  "role",
];

/** A list with a random query: keys Octavia knows and does not, values of every sort (repeated keys included). */
function lists(): fc.Arbitrary<Request> {
  const collection = fc.oneof(
    fc.constantFrom(...COLLECTIONS).map((c) => `/v2/lbaas/${c}`),
    fc.constant("/v2/octavia/amphorae"),
    anyId().map((id) => `/v2/lbaas/pools/${id}/members`),
    anyId().map((id) => `/v2/lbaas/l7policies/${id}/rules`),
  );
  const value = fc.oneof(
    strings,
    numbers.map((n) => (n instanceof Raw ? n.text : String(n))),
    fc.constantFrom(...Object.values(ids)),
    fc.constantFrom("name:desc", "created_at:asc,id:desc", "bogus:up", "%zz", "%00"),
  );
  const query = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...LIST_KEYS), fc.string({ maxLength: 10 })), value), { maxLength: 4 });
  return fc.tuple(collection, query).map(([path, q]) => ({
    method: "GET",
    path: `${path}?${q.map(([k, v]) => `${encodeURIComponent(k)}=${String(v).startsWith("%") ? v : encodeURIComponent(String(v))}`).join("&")}`,
  }));
}

/** One object: GET, PUT with a body of odd values, DELETE of an id no fixture has, and the LB and amphora sub-resources. */
function objects(): fc.Arbitrary<Request> {
  const object = fc.tuple(fc.constantFrom(...COLLECTIONS, "pools/members"), anyId()).map(([c, id]) => `/v2/lbaas/${c}/${id}`);
  const put = fc
    .tuple(object, fc.dictionary(fc.string({ maxLength: 12 }), values, { maxKeys: 2 }))
    .map(([path, b]) => ({ method: "PUT", path, body: toJson({ [path.split("/")[3]!.replace(/s$/, "")]: b }) }));
  const sub = fc
    .tuple(
      fc.constantFrom(
        "GET /loadbalancers/{}/status",
        "GET /loadbalancers/{}/stats",
        "PUT /loadbalancers/{}/failover",
        "GET /listeners/{}/stats",
        "PUT /loadbalancers/{}/resize",
        "DELETE /loadbalancers/{}/resize",
        "GET /octavia/amphorae/{}",
        "GET /octavia/amphorae/{}/stats",
        "PUT /octavia/amphorae/{}/config",
        "PUT /octavia/amphorae/{}/failover",
        "GET /quotas/{}",
        "PUT /quotas/{}",
        "GET /providers/{}/flavor_capabilities",
      ),
      anyId(),
      values,
    )
    .map(([route, id, b]) => {
      const [method, template] = route.split(" ") as [string, string];
      const path = template.startsWith("/octavia") ? `/v2${template.replace("{}", id)}` : `/v2/lbaas${template.replace("{}", id)}`;
      return {
        method,
        path,
        ...(method === "PUT"
          ? {
              body: toJson(
                new Pairs(
                  [
                    ["quota", b],
                    ["loadbalancer", b],
                  ].slice(0, 1 + (id.length % 2)) as [string, unknown][],
                ),
              ),
            }
          : {}),
      };
    });
  return fc.oneof(
    object.map((path) => ({ method: "GET", path })),
    put,
    fc.tuple(fc.constantFrom(...COLLECTIONS), garbageId).map(([c, id]) => ({ method: "DELETE", path: `/v2/lbaas/${c}/${id}` })),
    sub,
    fc.tuple(fc.constantFrom("PATCH", "POST", "HEAD", "OPTIONS"), object).map(([method, path]) => ({ method, path })),
    fc
      .constant({ method: "PUT", path: "/v2/octavia/healthmanager" })
      .chain((r) => values.map((b) => ({ ...r, body: toJson({ healthmanager: b }) }))),
  );
}

/** A request's writes that DynamoDB accepted (operations and targets), from its meter scope. */
function acceptedWrites(scope: string): string[] {
  return meter
    .rows()
    .filter((r) => r.scope === scope && WRITES.has(r.op) && r.counts.requests > r.counts.errors)
    .map((r) => `${r.op} ${r.target}`);
}

let sent = 0;

/** Sends one request and checks its answer; returns its status. */
async function check(r: Request): Promise<number> {
  const scope = `request-${sent++}`;
  const res = await meter.scope(scope, () =>
    t.app.request(r.path, {
      method: r.method,
      headers: { "content-type": "application/json", "x-project-id": PROJECT },
      ...(r.body !== undefined ? { body: r.body } : {}),
    }),
  );
  const text = await res.text();
  const what = `${r.method} ${r.path} ${r.body?.slice(0, 300) ?? ""} → ${res.status} ${text.slice(0, 300)}`;
  if (res.status >= 500 && res.status !== 501) throw new Error(`a 5xx: ${what}`);
  if (res.status >= 400 && r.method !== "HEAD") {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`a fault that is not JSON: ${what}`);
    }
    const f = body as Record<string, unknown>;
    const keys = Object.keys(f ?? {})
      .sort()
      .join(",");
    if (
      keys !== "debuginfo,faultcode,faultstring" ||
      f.debuginfo !== null ||
      typeof f.faultstring !== "string" ||
      f.faultcode !== (res.status >= 500 ? "Server" : "Client")
    ) {
      throw new Error(`not Octavia's fault body: ${what}`);
    }
  }
  if (res.status >= 400 && res.status < 500) {
    const writes = acceptedWrites(scope);
    if (writes.length > 0) throw new Error(`a ${res.status} that wrote ${writes.join(", ")}: ${what}`);
  }
  return res.status;
}

describe("any request", () => {
  it(
    `answers below 500 (or 501), with the fault body for every 4xx, and writes nothing for a 4xx (${RUNS} requests)`,
    { timeout: 600_000 },
    async () => {
      console.log(`property test seed: ${SEED} (replay with OTTAVA_PROPERTY_SEED=${SEED})`);
      const statuses = new Map<number, number>();
      const request = fc.oneof({ weight: 5, arbitrary: bodies() }, { weight: 3, arbitrary: lists() }, { weight: 3, arbitrary: objects() });
      await fc.assert(
        fc.asyncProperty(request, async (r) => {
          const status = await check(r);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
      console.log(
        `answers by status: ${[...statuses]
          .sort(([a], [b]) => a - b)
          .map(([s, n]) => `${s}: ${n}`)
          .join(", ")}`,
      );
      expect(sent).toBeGreaterThanOrEqual(RUNS);
      // The accepted requests' flows end too, and none of them failed into a 5xx-worthy state.
      await t.settle();
    },
  );
});
