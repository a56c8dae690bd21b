// Listeners (octavia/api/v2/controllers/listener.py, types/listener.py) and their statistics.
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MUTABLE_STATUSES } from "@ottava/core";
import { LocalCertManager } from "@ottava/amphora";
import { makePki } from "@ottava/amphora/testing";
import { fault, inProcessApp, pick, PROJECT, record, seed, SUBNET, activeLb } from "@ottava/local/testing";

type App = Awaited<ReturnType<typeof inProcessApp>>;
let t: App;
let slow: App; // flows take a while, so the PENDING_* states can be seen
const LBS = "/v2/lbaas/loadbalancers";
const LISTENERS = "/v2/lbaas/listeners";
const NOBODY = "11111111-2222-3333-4444-555555555555";
const CIPHERS =
  "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256:DHE-RSA-AES256-GCM-SHA384:" +
  "DHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-SHA256:" +
  "DHE-RSA-AES128-SHA256:ECDHE-RSA-AES256-SHA384:ECDHE-RSA-AES128-SHA256";

async function seedPool(lbId: string, protocol: string, app: App = t) {
  const pool = record(lbId, { protocol, lb_algorithm: "ROUND_ROBIN" });
  await seed(app, lbId, [{ kind: "pool", put: pool }]);
  return pool.id;
}

async function create(listener: Record<string, unknown>, app: App = t) {
  const res = await app.call("POST", LISTENERS, { listener });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await app.settle();
  return res.body.listener as Record<string, unknown> & { id: string };
}

const status = async (app: App, kind: string, id: string) => (await app.store.getChild(kind, id))?.record.provisioning_status;
const lbStatus = async (app: App, lbId: string) => (await app.store.getLoadBalancer(lbId))?.record.provisioning_status;
const listOf = async (query = "") => (await t.call("GET", `${LISTENERS}${query}`)).body.listeners as Record<string, unknown>[];

beforeAll(async () => {
  t = await inProcessApp();
  slow = await inProcessApp({ OTTAVA_NOOP_LATENCY: "amphora.update:500" });
});

describe("create", () => {
  it("answers 201 PENDING_CREATE/OFFLINE with Octavia's defaults; the flow makes it ACTIVE and unlocks the LB", async () => {
    const lbId = (await activeLb(slow)).id;
    const res = await slow.call("POST", LISTENERS, { listener: { loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80 } });
    expect(res.status).toBe(201);
    const l = res.body.listener;
    expect(l).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "",
      description: "",
      provisioning_status: "PENDING_CREATE",
      operating_status: "OFFLINE",
      admin_state_up: true,
      protocol: "HTTP",
      protocol_port: 80,
      connection_limit: -1,
      default_tls_container_ref: null,
      sni_container_refs: [],
      project_id: PROJECT,
      default_pool_id: null,
      l7policies: [],
      insert_headers: {},
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/),
      updated_at: null,
      loadbalancers: [{ id: lbId }],
      timeout_client_data: 50000,
      timeout_member_connect: 5000,
      timeout_member_data: 50000,
      timeout_tcp_inspect: 0,
      tags: [],
      client_ca_tls_container_ref: null,
      client_authentication: "NONE",
      client_crl_container_ref: null,
      allowed_cidrs: null,
      tls_ciphers: null,
      tls_versions: null,
      alpn_protocols: null,
      hsts_max_age: null,
      hsts_include_subdomains: false,
      hsts_preload: false,
    });
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    expect(await status(slow, "listener", l.id)).toBe("PENDING_CREATE");
    await slow.settle();
    expect(await lbStatus(slow, lbId)).toBe("ACTIVE");
    const shown = await slow.call("GET", `/v2.0/lbaas/listeners/${l.id}`);
    expect(shown.body.listener).toMatchObject({ provisioning_status: "ACTIVE", operating_status: "OFFLINE", protocol_port: 80 });
    expect(shown.body.listener.updated_at).not.toBeNull();
  });

  it("keeps the given values, normalises and deduplicates allowed CIDRs, and takes the LB's project", async () => {
    const lbId = (await activeLb(t)).id;
    const l = await create({
      loadbalancer_id: lbId,
      protocol: "TCP",
      protocol_port: "8080",
      name: "web",
      description: "d",
      admin_state_up: false,
      connection_limit: 10,
      project_id: "ignored",
      tags: ["a", "b"],
      timeout_client_data: 1,
      timeout_member_connect: 2,
      timeout_member_data: 0,
      timeout_tcp_inspect: 2073600000,
      allowed_cidrs: ["10.0.1.5/24", "10.0.1.0/24", "172.16.55.0/25", "192.0.2.1"],
    });
    expect(l).toMatchObject({
      name: "web",
      description: "d",
      admin_state_up: false,
      protocol_port: 8080,
      connection_limit: 10,
      project_id: PROJECT,
      tags: ["a", "b"],
      timeout_client_data: 1,
      timeout_member_connect: 2,
      timeout_member_data: 0,
      timeout_tcp_inspect: 2073600000,
      allowed_cidrs: ["10.0.1.0/24", "172.16.55.0/25", "192.0.2.1/32"],
    });
  });

  it("treats null as wsme does: false for admin_state_up, the defaults for timeouts, null kept for connection_limit", async () => {
    const lbId = (await activeLb(t)).id;
    const l = await create({
      loadbalancer_id: lbId,
      protocol: "HTTP",
      protocol_port: 80,
      admin_state_up: null,
      timeout_client_data: null,
      connection_limit: null,
      allowed_cidrs: [],
    });
    expect(l).toMatchObject({ admin_state_up: false, timeout_client_data: 50000, connection_limit: null, allowed_cidrs: null });
  });

  it("creates TERMINATED_HTTPS listeners with the TLS defaults, and PROMETHEUS and SCTP ones", async () => {
    const lbId = (await activeLb(t)).id;
    const tls = await create({
      loadbalancer_id: lbId,
      protocol: "TERMINATED_HTTPS",
      protocol_port: 443,
      default_tls_container_ref: "cert",
      sni_container_refs: ["sni1", "sni2", "sni1"],
      client_ca_tls_container_ref: "ca",
      client_authentication: "MANDATORY",
      client_crl_container_ref: "crl",
      insert_headers: { "X-Forwarded-For": "true", "X-SSL-Client-DN": "true" },
    });
    expect(tls).toMatchObject({
      default_tls_container_ref: "cert",
      sni_container_refs: ["sni1", "sni2"],
      client_ca_tls_container_ref: "ca",
      client_authentication: "MANDATORY",
      client_crl_container_ref: "crl",
      insert_headers: { "X-Forwarded-For": "true", "X-SSL-Client-DN": "true" },
      tls_ciphers: CIPHERS,
      tls_versions: ["TLSv1.2", "TLSv1.3"],
      alpn_protocols: ["h2", "http/1.1", "http/1.0"],
    });
    const chosen = await create({
      loadbalancer_id: lbId,
      protocol: "TERMINATED_HTTPS",
      protocol_port: 8443,
      sni_container_refs: ["sni"],
      tls_versions: ["TLSv1.3"],
      tls_ciphers: "TLS_AES_256_GCM_SHA384",
      alpn_protocols: ["h2"],
    });
    expect(chosen).toMatchObject({ tls_versions: ["TLSv1.3"], tls_ciphers: "TLS_AES_256_GCM_SHA384", alpn_protocols: ["h2"] });
    // Octavia only checks the TLS lists of TLS-offloading listeners; others keep what they are given.
    expect(await create({ loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80, tls_versions: ["TLSv1.3"] })).toMatchObject({
      tls_versions: ["TLSv1.3"],
      tls_ciphers: null,
    });
    expect((await create({ loadbalancer_id: lbId, protocol: "PROMETHEUS", protocol_port: 9100 })).protocol).toBe("PROMETHEUS");
    expect(
      (await create({ loadbalancer_id: lbId, protocol: "PROMETHEUS", protocol_port: 9443, default_tls_container_ref: "c" }))
        .default_tls_container_ref,
    ).toBe("c");
    expect((await create({ loadbalancer_id: lbId, protocol: "SCTP", protocol_port: 80 })).protocol).toBe("SCTP");
  });

  it("lets UDP and SCTP listeners share a port with a TCP-family one, but not two of one L4 protocol (409)", async () => {
    const lbId = (await activeLb(t)).id;
    await create({ loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80 });
    await create({ loadbalancer_id: lbId, protocol: "UDP", protocol_port: 80 });
    await create({ loadbalancer_id: lbId, protocol: "SCTP", protocol_port: 80 });
    for (const protocol of ["HTTP", "TCP", "HTTPS", "PROMETHEUS"]) {
      expect(pick(await t.call("POST", LISTENERS, { listener: { loadbalancer_id: lbId, protocol, protocol_port: 80 } }))).toEqual(
        fault(409, "Another Listener on this Load Balancer is already using protocol HTTP and protocol_port 80"),
      );
    }
    expect(pick(await t.call("POST", LISTENERS, { listener: { loadbalancer_id: lbId, protocol: "UDP", protocol_port: 80 } }))).toEqual(
      fault(409, "Another Listener on this Load Balancer is already using protocol UDP and protocol_port 80"),
    );
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
    const onPort80 = (await listOf("?protocol_port=80")).filter((l) => (l.loadbalancers as { id: string }[])[0]!.id === lbId);
    expect(onPort80.map((l) => l.protocol)).toEqual(["HTTP", "UDP", "SCTP"]);
  });

  it("uses a default pool of the same LB with a compatible protocol", async () => {
    const lbId = (await activeLb(t)).id;
    const http = await seedPool(lbId, "HTTP");
    const udp = await seedPool(lbId, "UDP");
    const otherLbPool = await seedPool((await activeLb(t)).id, "HTTP");
    const l = await create({ loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80, default_pool_id: http });
    expect(l.default_pool_id).toBe(http);
    // A pool may be the default pool of several listeners.
    expect((await create({ loadbalancer_id: lbId, protocol: "TCP", protocol_port: 81, default_pool_id: http })).default_pool_id).toBe(http);
    const post = (listener: Record<string, unknown>) =>
      t.call("POST", LISTENERS, { listener: { loadbalancer_id: lbId, protocol_port: 90, ...listener } });
    expect(pick(await post({ protocol: "HTTP", default_pool_id: NOBODY }))).toEqual(fault(404, `Pool ${NOBODY} not found.`));
    expect(pick(await post({ protocol: "HTTP", default_pool_id: otherLbPool }))).toEqual(fault(404, `Pool ${otherLbPool} not found.`));
    expect(pick(await post({ protocol: "HTTP", default_pool_id: udp }))).toEqual(
      fault(400, "Validation failure: The pool protocol 'UDP' is invalid while the listener protocol is 'HTTP'."),
    );
    expect(pick(await post({ protocol: "PROMETHEUS", default_pool_id: http }))).toEqual(
      fault(400, "Protocol PROMETHEUS listeners cannot have child objects."),
    );
  });

  it("answers bad input with Octavia's 400/404/409 and writes nothing", async () => {
    const lbId = (await activeLb(t)).id;
    const base = { loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80 };
    const tls = { ...base, protocol: "TERMINATED_HTTPS", default_tls_container_ref: "cert" };
    const cases: [unknown, number, string][] = [
      [{ listener: { ...base, bogus: 1 } }, 400, "Unknown attribute for argument listener_.listener: bogus"],
      [
        { listener: { ...base, provisioning_status: "ACTIVE" } },
        400,
        "Unknown attribute for argument listener_.listener: provisioning_status",
      ],
      [
        { listener: { ...base, protocol: undefined } },
        400,
        "Invalid input for field/attribute protocol. Value: 'None'. Mandatory field missing.",
      ],
      [
        { listener: { ...base, protocol_port: undefined } },
        400,
        "Invalid input for field/attribute protocol_port. Value: 'None'. Mandatory field missing.",
      ],
      [
        { listener: { ...base, loadbalancer_id: undefined } },
        400,
        "Invalid input for field/attribute loadbalancer_id. Value: 'None'. Mandatory field missing.",
      ],
      [
        { listener: { ...base, protocol: "PROXY" } },
        400,
        "Invalid input for field/attribute protocol. Value: 'PROXY'. Value should be one of: TCP, HTTPS, HTTP, TERMINATED_HTTPS, UDP, SCTP, PROMETHEUS",
      ],
      [
        { listener: { ...base, protocol_port: 0 } },
        400,
        "Invalid input for field/attribute protocol_port. Value: '0'. Value should be greater or equal to 1",
      ],
      [
        { listener: { ...base, protocol_port: 65536 } },
        400,
        "Invalid input for field/attribute protocol_port. Value: '65536'. Value should be lower or equal to 65535",
      ],
      [
        { listener: { ...base, protocol_port: "http" } },
        400,
        "Invalid input for field/attribute protocol_port. Value: 'http'. invalid literal for int() with base 10: 'http'",
      ],
      [
        { listener: { ...base, connection_limit: -2 } },
        400,
        "Invalid input for field/attribute connection_limit. Value: '-2'. Value should be greater or equal to -1",
      ],
      [
        { listener: { ...base, timeout_client_data: 2073600001 } },
        400,
        "Invalid input for field/attribute timeout_client_data. Value: '2073600001'. Value should be lower or equal to 2073600000",
      ],
      [
        { listener: { ...base, timeout_tcp_inspect: -1 } },
        400,
        "Invalid input for field/attribute timeout_tcp_inspect. Value: '-1'. Value should be greater or equal to 0",
      ],
      [
        { listener: { ...base, name: "x".repeat(256) } },
        400,
        `Invalid input for field/attribute name. Value: '${"x".repeat(256)}'. Value should have a maximum character requirement of 255`,
      ],
      [
        { listener: { ...base, loadbalancer_id: "lb" } },
        400,
        "Invalid input for field/attribute loadbalancer_id. Value: 'lb'. Value should be UUID format",
      ],
      [
        { listener: { ...base, client_authentication: "SOMETIMES" } },
        400,
        "Invalid input for field/attribute client_authentication. Value: 'SOMETIMES'. Value should be one of: NONE, OPTIONAL, MANDATORY",
      ],
      [
        { listener: { ...base, allowed_cidrs: ["10.0.1.0/33", "172.16.55.1.0/25"] } },
        400,
        'Invalid input for field/attribute allowed_cidrs. Value: \'["10.0.1.0/33","172.16.55.1.0/25"]\'. Value should be IPv4 or IPv6 CIDR format',
      ],
      [
        { listener: { ...base, alpn_protocols: ["h3"] } },
        400,
        "Invalid input for field/attribute alpn_protocols. Value: '[\"h3\"]'. Value should be a valid ALPN protocol ID",
      ],
      [
        { listener: { ...base, tls_ciphers: ["cipher-insecure"] } },
        400,
        "Invalid input for field/attribute tls_ciphers. Value: '[\"cipher-insecure\"]'. Value should be string",
      ],
      [
        { listener: { ...base, sni_container_refs: "x" } },
        400,
        "Invalid input for field/attribute sni_container_refs. Value: 'x'. Value not a valid list: x",
      ],
      [
        { listener: { ...base, insert_headers: ["X-Forwarded-For"] } },
        400,
        "Invalid input for field/attribute insert_headers. Value: '[\"X-Forwarded-For\"]'. Value not a valid dict: ['X-Forwarded-For']",
      ],
      [{ listener: { ...base, loadbalancer_id: NOBODY } }, 404, `Load Balancer ${NOBODY} not found.`],
      // Header insertion.
      [
        { listener: { ...base, protocol: "TCP", insert_headers: { "X-Forwarded-For": "true" } } },
        400,
        "insert-headers is not a valid option for a TCP protocol listener.",
      ],
      [
        { listener: { ...base, protocol: "UDP", insert_headers: { "X-Forwarded-Port": "true" } } },
        400,
        "insert-headers is not a valid option for a UDP protocol listener.",
      ],
      [
        { listener: { ...base, insert_headers: { "X-Forwarded-Four": "true" } } },
        400,
        "dict_keys(['X-Forwarded-Four']) is not a valid option for insert_headers",
      ],
      [
        { listener: { ...base, insert_headers: { "X-Forwarded-For": "true", "X-SSL-Client-DN": "true" } } },
        400,
        "['X-SSL-Client-DN'] is not a valid option for HTTP protocol listener.",
      ],
      // Certificates.
      [
        { listener: { ...base, protocol: "UDP", default_tls_container_ref: "cert" } },
        400,
        "Validation failure: UDP protocol listener does not support TLS.",
      ],
      [
        { listener: { ...base, protocol: "SCTP", sni_container_refs: ["sni"] } },
        400,
        "Validation failure: SCTP protocol listener does not support TLS.",
      ],
      [
        { listener: { ...base, protocol: "TCP", default_tls_container_ref: "cert" } },
        400,
        "Validation failure: Certificate container references are not allowed on TCP protocol listeners.",
      ],
      [
        { listener: { ...base, client_ca_tls_container_ref: "ca" } },
        400,
        "Validation failure: An SNI or default certificate container reference must be provided with a client CA container reference.",
      ],
      [
        { listener: { ...tls, default_tls_container_ref: null } },
        400,
        "Validation failure: An SNI or default certificate container reference must be provided for TERMINATED_HTTPS protocol listeners.",
      ],
      [
        { listener: { ...tls, client_authentication: "OPTIONAL" } },
        400,
        "Validation failure: Client authentication setting OPTIONAL requires a client CA container reference.",
      ],
      [
        { listener: { ...tls, client_authentication: null } },
        400,
        "Validation failure: Client authentication setting None requires a client CA container reference.",
      ],
      [
        { listener: { ...tls, client_crl_container_ref: "crl" } },
        400,
        "Validation failure: A client authentication CA reference is required to specify a client authentication revocation list.",
      ],
      [{ listener: { ...tls, sni_container_refs: ["", "sni"] } }, 400, "Could not retrieve certificate: ['']"],
      // TLS settings.
      [{ listener: { ...tls, tls_versions: ["TLSv1.3", "insecure"] } }, 400, "Validation failure: Invalid TLS versions: insecure"],
      [
        { listener: { ...tls, tls_versions: [] } },
        400,
        "Validation failure: Empty TLS version list. Either specify at least one TLS version or remove this parameter to use the default.",
      ],
      [
        { listener: { ...tls, alpn_protocols: [] } },
        400,
        "Validation failure: Empty ALPN protocol list. Either specify at least one ALPN protocol or remove this parameter to use the default.",
      ],
      [
        { listener: { ...tls, tls_ciphers: "A B" } },
        400,
        "Validation failure: Invalid characters in cipher string. Only alphanumeric, -, +, !, :, @, =, _, and . are allowed.",
      ],
      [
        { listener: { ...base, tls_ciphers: "AES::B" } },
        400,
        "Validation failure: The following ciphers have been prohibited by an administrator: ",
      ],
      // The VIP is IPv4.
      [
        { listener: { ...base, allowed_cidrs: ["10.0.0.0/8", "2001:DB8:a0b:12f0::1/64"] } },
        400,
        "Validation failure: CIDR 2001:db8:a0b:12f0::/64 IP version incompatible with VIP 198.51.100.1 IP version.",
      ],
      // A full create's graph cannot be given to a listener's own create: Octavia fails on it.
      [
        { listener: { ...base, l7policies: [{ action: "REJECT" }] } },
        400,
        "Validation failure: default_pool and l7policies can only be given in a fully populated load balancer create.",
      ],
      [{ listener: {} }, 400, "Invalid input for field/attribute protocol. Value: 'None'. Mandatory field missing."],
      [{ listeners: {} }, 400, "Unknown attribute for argument listener_: listeners"],
      ["{not json", 400, "Request is not in valid JSON format"],
    ];
    for (const [body, code, message] of cases) expect(pick(await t.call("POST", LISTENERS, body)), message).toEqual(fault(code, message));
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
    expect((await t.store.tree(lbId)).items.filter((i) => i.kind === "listener")).toEqual([]);
  });

  it("refuses a create while the LB is locked (409)", async () => {
    const lbId = (await activeLb(slow)).id;
    expect((await slow.call("POST", LISTENERS, { listener: { loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80 } })).status).toBe(
      201,
    );
    expect(pick(await slow.call("POST", LISTENERS, { listener: { loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 81 } }))).toEqual(
      fault(409, `Load Balancer ${lbId} is immutable and cannot be updated.`),
    );
    await slow.settle();
  });
});

describe("update", () => {
  it("changes the given attributes: 200 PENDING_UPDATE, the LB locked, then ACTIVE", async () => {
    const lbId = (await activeLb(slow)).id;
    const pool = await seedPool(lbId, "HTTP", slow);
    const l = await create({ loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80, name: "a", tags: ["old"] }, slow);
    const res = await slow.call("PUT", `${LISTENERS}/${l.id}`, {
      listener: {
        name: "b",
        admin_state_up: false,
        default_pool_id: pool,
        timeout_client_data: 1,
        tags: ["new"],
        insert_headers: { "X-Forwarded-Proto": "true" },
        allowed_cidrs: ["10.0.0.0/8", "10.0.0.1/8"],
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.listener).toMatchObject({
      name: "b",
      admin_state_up: false,
      default_pool_id: pool,
      timeout_client_data: 1,
      tags: ["new"],
      insert_headers: { "X-Forwarded-Proto": "true" },
      allowed_cidrs: ["10.0.0.0/8"],
      provisioning_status: "PENDING_UPDATE",
      protocol: "HTTP",
      protocol_port: 80,
      created_at: l.created_at,
    });
    expect(res.body.listener.updated_at).not.toBeNull();
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    expect(pick(await slow.call("PUT", `${LISTENERS}/${l.id}`, { listener: { name: "c" } }))).toEqual(
      fault(409, `Load Balancer ${lbId} is immutable and cannot be updated.`),
    );
    await slow.settle();
    expect((await slow.call("GET", `${LISTENERS}/${l.id}`)).body.listener).toMatchObject({ name: "b", provisioning_status: "ACTIVE" });
    expect(await lbStatus(slow, lbId)).toBe("ACTIVE");
    // null unsets the default pool and the CIDRs; null tags leave the tags.
    const unset = await slow.call("PUT", `${LISTENERS}/${l.id}`, {
      listener: { default_pool_id: null, allowed_cidrs: null, tags: null, name: null },
    });
    expect(unset.body.listener).toMatchObject({ default_pool_id: null, allowed_cidrs: null, tags: ["new"], name: "" });
    await slow.settle();
  });

  it("restores Octavia's defaults for null values", async () => {
    const lbId = (await activeLb(t)).id;
    const l = await create({
      loadbalancer_id: lbId,
      protocol: "TERMINATED_HTTPS",
      protocol_port: 443,
      default_tls_container_ref: "cert",
      connection_limit: 10,
      timeout_client_data: 1,
      timeout_member_connect: 2,
      timeout_member_data: 3,
      timeout_tcp_inspect: 4,
      client_ca_tls_container_ref: "ca",
      client_crl_container_ref: "crl",
      client_authentication: "OPTIONAL",
      insert_headers: { "X-Forwarded-For": "true" },
      tls_versions: ["TLSv1.3"],
      tls_ciphers: "TLS_AES_256_GCM_SHA384",
      alpn_protocols: ["http/1.0"],
    });
    const unset = Object.fromEntries(
      [
        "name",
        "description",
        "connection_limit",
        "default_tls_container_ref",
        "sni_container_refs",
        "insert_headers",
        "timeout_client_data",
        "timeout_member_connect",
        "timeout_member_data",
        "timeout_tcp_inspect",
        "client_ca_tls_container_ref",
        "client_authentication",
        "default_pool_id",
        "client_crl_container_ref",
        "tls_versions",
        "tls_ciphers",
        "alpn_protocols",
      ].map((k) => [k, null]),
    );
    const res = await t.call("PUT", `${LISTENERS}/${l.id}`, { listener: unset });
    expect(res.status).toBe(200);
    expect(res.body.listener).toMatchObject({
      name: "",
      description: "",
      connection_limit: -1,
      default_tls_container_ref: null,
      sni_container_refs: [],
      insert_headers: {},
      timeout_client_data: 50000,
      timeout_member_connect: 5000,
      timeout_member_data: 50000,
      timeout_tcp_inspect: 0,
      client_ca_tls_container_ref: null,
      client_crl_container_ref: null,
      client_authentication: "NONE",
      default_pool_id: null,
      tls_versions: ["TLSv1.2", "TLSv1.3"],
      tls_ciphers: CIPHERS,
      alpn_protocols: ["h2", "http/1.1", "http/1.0"],
    });
    await t.settle();
  });

  it("refuses what Octavia refuses and changes nothing", async () => {
    const lbId = (await activeLb(t)).id;
    const pool = await seedPool(lbId, "UDP");
    const http = await create({ loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80, name: "same" });
    const udp = await create({ loadbalancer_id: lbId, protocol: "UDP", protocol_port: 53 });
    const tls = await create({
      loadbalancer_id: lbId,
      protocol: "TERMINATED_HTTPS",
      protocol_port: 443,
      default_tls_container_ref: "cert",
    });
    const prom = await create({ loadbalancer_id: lbId, protocol: "PROMETHEUS", protocol_port: 9100 });
    const cases: [string, unknown, number, string][] = [
      [http.id, { listener: { protocol: "TCP" } }, 400, "Unknown attribute for argument listener_.listener: protocol"],
      [http.id, { listener: { protocol_port: 81 } }, 400, "Unknown attribute for argument listener_.listener: protocol_port"],
      [http.id, { listener: { loadbalancer_id: lbId } }, 400, "Unknown attribute for argument listener_.listener: loadbalancer_id"],
      [http.id, {}, 400, "Validation failure: No listener object supplied."],
      [NOBODY, {}, 404, `Listener ${NOBODY} not found.`],
      [NOBODY, { listener: { name: "x" } }, 404, `Listener ${NOBODY} not found.`],
      [
        http.id,
        { listener: { timeout_member_data: 2073600001 } },
        400,
        "Invalid input for field/attribute timeout_member_data. Value: '2073600001'. Value should be lower or equal to 2073600000",
      ],
      [
        http.id,
        { listener: { default_tls_container_ref: "cert" } },
        400,
        "Validation failure: Certificate container references are not allowed on HTTP protocol listeners.",
      ],
      [
        http.id,
        { listener: { sni_container_refs: ["a", "b"] } },
        400,
        "Validation failure: Certificate container references are not allowed on HTTP protocol listeners.",
      ],
      [
        http.id,
        { listener: { insert_headers: { "X-Bad-Header": "true" } } },
        400,
        "['X-Bad-Header'] is not a valid option for insert_headers",
      ],
      [
        http.id,
        { listener: { insert_headers: { "X-SSL-Client-CN": "true" } } },
        400,
        "['X-SSL-Client-CN'] is not a valid option for HTTP protocol listener.",
      ],
      [http.id, { listener: { default_pool_id: NOBODY } }, 404, `Pool ${NOBODY} not found.`],
      [
        http.id,
        { listener: { default_pool_id: pool } },
        400,
        "Validation failure: The pool protocol 'UDP' is invalid while the listener protocol is 'HTTP'.",
      ],
      [
        http.id,
        { listener: { allowed_cidrs: ["::/0"] } },
        400,
        "Validation failure: CIDR ::/0 IP version incompatible with VIP 198.51.100.1 IP version.",
      ],
      [
        udp.id,
        { listener: { insert_headers: { "X-Forwarded-Port": "true" } } },
        400,
        "Validation failure: UDP protocol listener does not support TLS or header insertion.",
      ],
      [
        udp.id,
        { listener: { default_tls_container_ref: "cert" } },
        400,
        "Validation failure: UDP protocol listener does not support TLS or header insertion.",
      ],
      [prom.id, { listener: { default_pool_id: pool } }, 400, "Protocol PROMETHEUS listeners cannot have child objects."],
      [
        tls.id,
        { listener: { client_authentication: "MANDATORY" } },
        400,
        "Validation failure: Client authentication setting MANDATORY requires a client CA container reference.",
      ],
      [
        tls.id,
        { listener: { client_crl_container_ref: "crl" } },
        400,
        "Validation failure: A client authentication CA reference is required to specify a client authentication revocation list.",
      ],
      [tls.id, { listener: { tls_versions: ["TLSv1.3", "insecure"] } }, 400, "Validation failure: Invalid TLS versions: insecure"],
      [
        tls.id,
        { listener: { alpn_protocols: [] } },
        400,
        "Validation failure: Empty ALPN protocol list. Either specify at least one ALPN protocol or remove this parameter to use the default.",
      ],
      [
        tls.id,
        { listener: { tls_ciphers: "a;b" } },
        400,
        "Validation failure: Invalid characters in cipher string. Only alphanumeric, -, +, !, :, @, =, _, and . are allowed.",
      ],
      [tls.id, { listener: { sni_container_refs: [""] } }, 400, "Could not retrieve certificate: ['']"],
    ];
    for (const [id, body, code, message] of cases)
      expect(pick(await t.call("PUT", `${LISTENERS}/${id}`, body)), message).toEqual(fault(code, message));
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
    expect((await t.call("GET", `${LISTENERS}/${http.id}`)).body.listener).toMatchObject({
      name: "same",
      provisioning_status: "ACTIVE",
      insert_headers: {},
    });
  });

  it("accepts the client CA settings Octavia accepts on update", async () => {
    const lbId = (await activeLb(t)).id;
    const l = await create({ loadbalancer_id: lbId, protocol: "TERMINATED_HTTPS", protocol_port: 443, default_tls_container_ref: "cert" });
    const res = await t.call("PUT", `${LISTENERS}/${l.id}`, {
      listener: { client_ca_tls_container_ref: "ca", client_authentication: "OPTIONAL", client_crl_container_ref: "crl" },
    });
    expect(res.body.listener).toMatchObject({
      client_ca_tls_container_ref: "ca",
      client_authentication: "OPTIONAL",
      client_crl_container_ref: "crl",
    });
    await t.settle();
    // The CA in force is the listener's: a CRL alone can change.
    const crl = await t.call("PUT", `${LISTENERS}/${l.id}`, { listener: { client_crl_container_ref: "crl2" } });
    expect(crl.body.listener).toMatchObject({ client_ca_tls_container_ref: "ca", client_crl_container_ref: "crl2" });
    await t.settle();
  });
});

describe("delete", () => {
  it("deletes (204) with its L7 policies and rules; the LB's pools stay", async () => {
    const lbId = (await activeLb(slow)).id;
    const pool = await seedPool(lbId, "HTTP", slow);
    const l = await create({ loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80, default_pool_id: pool }, slow);
    const other = await create({ loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 81 }, slow);
    const p2 = record(lbId, { listener_id: l.id, position: 2, action: "REJECT" });
    const p1 = record(lbId, { listener_id: l.id, position: 1, action: "REDIRECT_TO_POOL", redirect_pool_id: pool });
    const kept = record(lbId, { listener_id: other.id, position: 1, action: "REJECT" });
    const rule = record(lbId, { l7policy_id: p1.id, type: "PATH", compare_type: "STARTS_WITH", value: "/" });
    const keptRule = record(lbId, { l7policy_id: kept.id, type: "PATH", compare_type: "STARTS_WITH", value: "/" });
    await seed(
      slow,
      lbId,
      [p2, p1, kept].map((p) => ({ kind: "l7policy", put: p })).concat([rule, keptRule].map((r) => ({ kind: "l7rule", put: r }))),
    );
    expect((await slow.call("GET", `${LISTENERS}/${l.id}`)).body.listener.l7policies).toEqual([{ id: p1.id }, { id: p2.id }]);

    const res = await slow.call("DELETE", `${LISTENERS}/${l.id}`);
    expect(res.status).toBe(204);
    expect((await slow.call("GET", `${LISTENERS}/${l.id}`)).body.listener.provisioning_status).toBe("PENDING_DELETE");
    expect(await status(slow, "l7policy", p1.id)).toBe("PENDING_DELETE");
    expect(await status(slow, "l7rule", rule.id)).toBe("PENDING_DELETE");
    expect(await lbStatus(slow, lbId)).toBe("PENDING_UPDATE");
    expect(pick(await slow.call("DELETE", `${LISTENERS}/${other.id}`))).toEqual(
      fault(409, `Load Balancer ${lbId} is immutable and cannot be updated.`),
    );
    await slow.settle();
    expect(pick(await slow.call("GET", `${LISTENERS}/${l.id}`))).toEqual(fault(404, `Listener ${l.id} not found.`));
    expect(pick(await slow.call("GET", `${LISTENERS}/${l.id}/stats`))).toEqual(fault(404, `Listener ${l.id} not found.`));
    expect(await status(slow, "l7policy", p1.id)).toBe("DELETED");
    expect(await status(slow, "l7policy", p2.id)).toBe("DELETED");
    expect(await status(slow, "l7rule", rule.id)).toBe("DELETED");
    expect(await status(slow, "l7policy", kept.id)).toBe("ACTIVE");
    expect(await status(slow, "l7rule", keptRule.id)).toBe("ACTIVE");
    expect(await status(slow, "pool", pool)).toBe("ACTIVE");
    expect(await lbStatus(slow, lbId)).toBe("ACTIVE");
    // The port is free again.
    expect((await create({ loadbalancer_id: lbId, protocol: "TCP", protocol_port: 80 }, slow)).protocol_port).toBe(80);
    expect(pick(await slow.call("DELETE", `${LISTENERS}/${l.id}`))).toEqual(fault(404, `Listener ${l.id} not found.`));
  });
});

describe("lists and stats", () => {
  it("lists with filters, fields and paging", async () => {
    const lbId = (await activeLb(t)).id;
    const a = await create({ loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80, name: "list-a", tags: ["x"] });
    const b = await create({ loadbalancer_id: lbId, protocol: "TCP", protocol_port: 81, name: "list-b" });
    expect((await listOf("?name=list-a")).map((l) => l.id)).toEqual([a.id]);
    expect((await listOf("?protocol=TCP&name=list-b")).map((l) => l.id)).toEqual([b.id]);
    expect((await listOf("?protocol_port=81&name=list-b")).map((l) => l.id)).toEqual([b.id]);
    expect((await listOf("?tags=x")).map((l) => l.id)).toEqual([a.id]);
    expect(await listOf(`?name=list-a&fields=id,loadbalancers`)).toEqual([{ id: a.id, loadbalancers: [{ id: lbId }] }]);
    const page = await t.call("GET", `${LISTENERS}?limit=1&sort=name:desc&name=list-a&name=list-b`);
    expect(page.body.listeners.map((l: { id: string }) => l.id)).toEqual([b.id]);
    expect(page.body.listeners_links[0].rel).toBe("next");
    const one = await t.call("GET", `${LISTENERS}/${a.id}?fields=name`);
    expect(pick(one)).toEqual({ status: 200, body: { listener: { name: "list-a" } } });
  });

  it("answers the statistics, zero until amphorae report, 404 for an unknown listener", async () => {
    const lbId = (await activeLb(t)).id;
    const l = await create({ loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80 });
    const zeros = { bytes_in: 0, bytes_out: 0, active_connections: 0, total_connections: 0, request_errors: 0 };
    expect(pick(await t.call("GET", `${LISTENERS}/${l.id}/stats`))).toEqual({ status: 200, body: { stats: zeros } });
    expect(pick(await t.call("GET", `/v2.0/lbaas/listeners/${NOBODY}/stats`))).toEqual(fault(404, `Listener ${NOBODY} not found.`));
    // What the health work will write on the record.
    const owner = `stats-${randomUUID()}`;
    await t.store.lockWith(lbId, { from: MUTABLE_STATUSES, to: "PENDING_UPDATE", owner, executionArn: "stats" }, [
      { kind: "listener", id: l.id, set: { stats: { bytes_in: 5, bytes_out: 7, active_connections: 1, total_connections: 9 } } },
    ]);
    await t.store.updateLoadBalancer(lbId, owner, { provisioning_status: "ACTIVE" }, true);
    expect((await t.call("GET", `${LISTENERS}/${l.id}/stats`)).body).toEqual({
      stats: { ...zeros, bytes_in: 5, bytes_out: 7, active_connections: 1, total_connections: 9 },
    });
  });
});

describe("HSTS (v2.27)", () => {
  const HSTS_PROTOCOL = "Validation failure: The HSTS feature can only be used for listeners using the TERMINATED_HTTPS protocol.";
  const tlsListener = (lbId: string, extra: Record<string, unknown> = {}) => ({
    loadbalancer_id: lbId,
    protocol: "TERMINATED_HTTPS",
    protocol_port: 443,
    default_tls_container_ref: "cert",
    ...extra,
  });

  it("creates a TERMINATED_HTTPS listener with HSTS, off by default", async () => {
    const lbId = (await activeLb(t)).id;
    const l = await create(tlsListener(lbId, { hsts_max_age: "31536000", hsts_include_subdomains: true, hsts_preload: "yes" }));
    expect(l).toMatchObject({ protocol: "TERMINATED_HTTPS", hsts_max_age: 31536000, hsts_include_subdomains: true, hsts_preload: true });
    expect((await t.call("GET", `${LISTENERS}/${l.id}`)).body.listener).toMatchObject({
      hsts_max_age: 31536000,
      hsts_include_subdomains: true,
      hsts_preload: true,
    });
    // A max age alone (0 counts as set); the flags default to false.
    expect(await create(tlsListener(lbId, { protocol_port: 8443, hsts_max_age: 0 }))).toMatchObject({
      hsts_max_age: 0,
      hsts_include_subdomains: false,
      hsts_preload: false,
    });
    expect(await create(tlsListener(lbId, { protocol_port: 9443 }))).toMatchObject({
      hsts_max_age: null,
      hsts_include_subdomains: false,
      hsts_preload: false,
    });
    // An explicit null is stored as None (the columns are nullable) and answered as null; false flags need no max age.
    expect(
      await create(tlsListener(lbId, { protocol_port: 10443, hsts_max_age: null, hsts_include_subdomains: null, hsts_preload: false })),
    ).toMatchObject({ hsts_max_age: null, hsts_include_subdomains: null, hsts_preload: false });
  });

  it("refuses what validate.check_hsts_options and the wsme types refuse, and writes nothing", async () => {
    const lbId = (await activeLb(t)).id;
    const flags =
      "Validation failure: HSTS configuration options hsts_include_subdomains and hsts_preload only make sense if hsts_max_age is set as well.";
    const cases: [Record<string, unknown>, number, string][] = [
      [
        tlsListener(lbId, { hsts_max_age: -1 }),
        400,
        "Invalid input for field/attribute hsts_max_age. Value: '-1'. Value should be greater or equal to 0",
      ],
      [
        tlsListener(lbId, { hsts_max_age: "a year" }),
        400,
        "Invalid input for field/attribute hsts_max_age. Value: 'a year'. invalid literal for int() with base 10: 'a year'",
      ],
      [
        tlsListener(lbId, { hsts_preload: "maybe" }),
        400,
        "Invalid input for field/attribute hsts_preload. Value: 'maybe'. Value not an unambiguous boolean: maybe",
      ],
      [tlsListener(lbId, { hsts_include_subdomains: true }), 400, flags],
      [tlsListener(lbId, { hsts_preload: true, hsts_max_age: null }), 400, flags],
      // The flags are checked before the protocol.
      [{ loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80, hsts_preload: true }, 400, flags],
      [{ loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80, hsts_max_age: 300 }, 400, HSTS_PROTOCOL],
      [{ loadbalancer_id: lbId, protocol: "HTTPS", protocol_port: 443, hsts_max_age: 300 }, 400, HSTS_PROTOCOL],
      [
        { loadbalancer_id: lbId, protocol: "PROMETHEUS", protocol_port: 9443, default_tls_container_ref: "cert", hsts_max_age: 300 },
        400,
        HSTS_PROTOCOL,
      ],
      // Octavia checks HSTS last: the TLS checks answer first.
      [
        tlsListener(lbId, { hsts_include_subdomains: true, alpn_protocols: [] }),
        400,
        "Validation failure: Empty ALPN protocol list. Either specify at least one ALPN protocol or remove this parameter to use the default.",
      ],
    ];
    for (const [listener, code, message] of cases)
      expect(pick(await t.call("POST", LISTENERS, { listener })), message).toEqual(fault(code, message));
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
    expect((await t.store.tree(lbId)).items.filter((i) => i.kind === "listener")).toEqual([]);
  });

  it("updates as check_hsts_options_put allows: flags need a max age given or stored; null flags become false", async () => {
    const lbId = (await activeLb(t)).id;
    const put = (id: string, listener: Record<string, unknown>) => t.call("PUT", `${LISTENERS}/${id}`, { listener });
    const l = await create(tlsListener(lbId));
    const noMaxAge = "Validation failure: Cannot enable hsts_include_subdomains or hsts_preload if hsts_max_age was not set as well.";
    expect(pick(await put(l.id, { hsts_include_subdomains: true }))).toEqual(fault(400, noMaxAge));
    expect(pick(await put(l.id, { hsts_preload: true, hsts_max_age: null }))).toEqual(fault(400, noMaxAge));
    expect(pick(await put(l.id, { hsts_max_age: -5 }))).toEqual(
      fault(400, "Invalid input for field/attribute hsts_max_age. Value: '-5'. Value should be greater or equal to 0"),
    );
    expect((await t.call("GET", `${LISTENERS}/${l.id}`)).body.listener).toMatchObject({
      provisioning_status: "ACTIVE",
      hsts_max_age: null,
      hsts_include_subdomains: false,
    });

    // Given together with a max age.
    let res = await put(l.id, { hsts_max_age: 600, hsts_include_subdomains: true });
    expect(res.status).toBe(200);
    expect(res.body.listener).toMatchObject({ hsts_max_age: 600, hsts_include_subdomains: true, hsts_preload: false });
    await t.settle();
    // The stored max age is enough for a flag alone.
    res = await put(l.id, { hsts_preload: true });
    expect(res.body.listener).toMatchObject({ hsts_max_age: 600, hsts_include_subdomains: true, hsts_preload: true });
    await t.settle();
    // Null flags become false (_set_default_on_none); a flag given false needs nothing.
    res = await put(l.id, { hsts_include_subdomains: null, hsts_preload: false });
    expect(res.body.listener).toMatchObject({ hsts_max_age: 600, hsts_include_subdomains: false, hsts_preload: false });
    await t.settle();
    // A flag beside a null max age passes while one is stored, and the max age is then cleared.
    res = await put(l.id, { hsts_max_age: null, hsts_preload: true });
    expect(res.body.listener).toMatchObject({ hsts_max_age: null, hsts_include_subdomains: false, hsts_preload: true });
    await t.settle();
    // Now nothing is stored: the flag alone is refused again, a false one is not.
    expect(pick(await put(l.id, { hsts_include_subdomains: "on" }))).toEqual(fault(400, noMaxAge));
    res = await put(l.id, { hsts_preload: null });
    expect(res.body.listener).toMatchObject({ hsts_max_age: null, hsts_preload: false });
    await t.settle();
  });

  it("refuses a max age on an update of a listener of another protocol", async () => {
    const lbId = (await activeLb(t)).id;
    const http = await create({ loadbalancer_id: lbId, protocol: "HTTP", protocol_port: 80 });
    const put = (listener: Record<string, unknown>) => t.call("PUT", `${LISTENERS}/${http.id}`, { listener });
    expect(pick(await put({ hsts_max_age: 300 }))).toEqual(fault(400, HSTS_PROTOCOL));
    expect(pick(await put({ hsts_max_age: 0, hsts_include_subdomains: true }))).toEqual(fault(400, HSTS_PROTOCOL));
    expect(pick(await put({ hsts_preload: true }))).toEqual(
      fault(400, "Validation failure: Cannot enable hsts_include_subdomains or hsts_preload if hsts_max_age was not set as well."),
    );
    // Clearing or leaving it off is no HSTS.
    const res = await put({ hsts_max_age: null, hsts_include_subdomains: false, hsts_preload: null });
    expect(res.status).toBe(200);
    expect(res.body.listener).toMatchObject({ hsts_max_age: null, hsts_include_subdomains: false, hsts_preload: false });
    await t.settle();
    expect(await lbStatus(t, lbId)).toBe("ACTIVE");
  });

  it("takes HSTS on the listeners of a fully populated load balancer create, with the same rules", async () => {
    const graph = (listener: Record<string, unknown>) => ({
      loadbalancer: {
        vip_subnet_id: SUBNET,
        listeners: [{ protocol: "TERMINATED_HTTPS", protocol_port: 443, default_tls_container_ref: "cert", ...listener }],
      },
    });
    const res = await t.call("POST", LBS, graph({ name: "hsts-graph", hsts_max_age: 7776000, hsts_preload: true }));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const [listener] = res.body.loadbalancer.listeners;
    expect(listener).toMatchObject({ name: "hsts-graph", hsts_max_age: 7776000, hsts_include_subdomains: false, hsts_preload: true });
    await t.settle();
    expect((await t.call("GET", `${LISTENERS}/${listener.id}`)).body.listener).toMatchObject({
      provisioning_status: "ACTIVE",
      hsts_max_age: 7776000,
      hsts_preload: true,
    });
    // Filtered by max age (a value only this listener has).
    expect((await listOf("?hsts_max_age=7776000")).map((l) => l.id)).toEqual([listener.id]);
    expect((await listOf(`?hsts_max_age=7776000&hsts_preload=false`)).map((l) => l.id)).toEqual([]);

    expect(pick(await t.call("POST", LBS, graph({ hsts_include_subdomains: true })))).toEqual(
      fault(
        400,
        "Validation failure: HSTS configuration options hsts_include_subdomains and hsts_preload only make sense if hsts_max_age is set as well.",
      ),
    );
    expect(pick(await t.call("POST", LBS, graph({ protocol: "HTTP", default_tls_container_ref: null, hsts_max_age: 60 })))).toEqual(
      fault(400, HSTS_PROTOCOL),
    );
    await t.settle();
  });

  it("takes a negative max age inline, as master's ListenerSingleCreate (IntegerType() with no minimum) does, where ListenerPOST refuses it", async () => {
    const res = await t.call("POST", LBS, {
      loadbalancer: {
        vip_subnet_id: SUBNET,
        listeners: [{ protocol: "TERMINATED_HTTPS", protocol_port: 443, default_tls_container_ref: "cert", hsts_max_age: -1 }],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.loadbalancer.listeners[0]).toMatchObject({ hsts_max_age: -1, hsts_include_subdomains: false, hsts_preload: false });
    await t.settle();
    const own = await t.call("POST", LISTENERS, {
      listener: {
        loadbalancer_id: res.body.loadbalancer.id,
        protocol: "TERMINATED_HTTPS",
        protocol_port: 444,
        default_tls_container_ref: "cert",
        hsts_max_age: -1,
      },
    });
    expect(own.status).toBe(400);
    expect(own.body.faultstring).toContain("Value should be greater or equal to 0");
  });
});

describe("listener lists by load balancer", () => {
  it("filter on loadbalancer_id (as `openstack loadbalancer listener list --loadbalancer` asks) without answering it", async () => {
    const t2 = await inProcessApp();
    const lbs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await t2.call("POST", "/v2/lbaas/loadbalancers", { loadbalancer: { vip_subnet_id: SUBNET } });
      lbs.push(res.body.loadbalancer.id);
      await t2.settle();
      expect(
        (
          await t2.call("POST", "/v2/lbaas/listeners", {
            listener: { loadbalancer_id: res.body.loadbalancer.id, protocol: "HTTP", protocol_port: 80 },
          })
        ).status,
      ).toBe(201);
      await t2.settle();
    }
    const res = await t2.call("GET", `/v2/lbaas/listeners?loadbalancer_id=${lbs[1]}`);
    expect(res.status).toBe(200);
    expect(res.body.listeners).toHaveLength(1);
    expect(res.body.listeners[0].loadbalancers).toEqual([{ id: lbs[1] }]);
    expect(res.body.listeners[0]).not.toHaveProperty("loadbalancer_id");
  });
});

describe("TLS references through OTTAVA_CERT_MANAGER=local (_validate_tls_refs, _validate_client_ca_and_crl_refs)", () => {
  let dir: string;
  let local: App;
  let certs: LocalCertManager;
  let lbId: string;
  let cert: string;
  const pem = (name: string) => readFileSync(join(dir, name), "utf8");
  let port = 1000;
  /** A TERMINATED_HTTPS listener of the LB on a port of its own. */
  const next = (fields: Record<string, unknown>) => ({
    loadbalancer_id: lbId,
    protocol: "TERMINATED_HTTPS",
    protocol_port: port++,
    ...fields,
  });
  const post = (fields: Record<string, unknown>) => local.call("POST", LISTENERS, { listener: next(fields) });

  beforeAll(async () => {
    // A CA (RSA, ca/) and another (EC, other/) with their CRLs, and a server certificate (EC) the first one signs, made with openssl.
    dir = mkdtempSync(join(tmpdir(), "ottava-listener-certs-"));
    makePki(dir);
    const storagePath = join(dir, "certificates");
    local = await inProcessApp({ OTTAVA_CERT_MANAGER: "local", OTTAVA_CERT_STORAGE_PATH: storagePath });
    certs = new LocalCertManager({ storagePath });
    cert = await certs.storeCert({ certificate: pem("server.pem"), private_key: pem("server.key") });
    lbId = (await activeLb(local)).id;
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("a TERMINATED_HTTPS listener referencing a stored certificate is accepted; unknown references are refused with Octavia's message", async () => {
    const created = await create(next({ default_tls_container_ref: cert, sni_container_refs: [cert] }), local);
    expect(created).toMatchObject({ default_tls_container_ref: cert, sni_container_refs: [cert], provisioning_status: "PENDING_CREATE" });
    expect(pick(await post({ default_tls_container_ref: "unknown" }))).toEqual(fault(400, "Could not retrieve certificate: ['unknown']"));
    // The SNI references first, then the default one, as Octavia lists them.
    expect(pick(await post({ default_tls_container_ref: "nope", sni_container_refs: [cert, "sni-nope"] }))).toEqual(
      fault(400, "Could not retrieve certificate: ['sni-nope', 'nope']"),
    );
    // A client CA alone (get_secret) is not a certificate container (get_cert needs its key).
    const caOnly = await certs.storeSecret(pem("ca/ca.pem"));
    expect(pick(await post({ default_tls_container_ref: caOnly }))).toEqual(fault(400, `Could not retrieve certificate: ['${caOnly}']`));
    // Updates too; nothing was written by the refused requests.
    expect(pick(await local.call("PUT", `${LISTENERS}/${created.id}`, { listener: { default_tls_container_ref: "gone" } }))).toEqual(
      fault(400, "Could not retrieve certificate: ['gone']"),
    );
    const other = await certs.storeCert({ certificate: pem("server.pem"), private_key: pem("server.key") });
    const put = await local.call("PUT", `${LISTENERS}/${created.id}`, { listener: { default_tls_container_ref: other } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.listener.default_tls_container_ref).toBe(other);
    await local.settle();
    expect((await local.call("GET", `${LISTENERS}?loadbalancer_id=${lbId}`)).body.listeners).toHaveLength(1);
  });

  it("client CA and CRL are read with get_secret: retrievable, an X.509 CA, a CRL that CA signed", async () => {
    const ca = await certs.storeSecret(pem("ca/ca.pem"));
    const crl = await certs.storeSecret(pem("ca/ca.crl"));
    const created = await create(
      next({
        default_tls_container_ref: cert,
        client_ca_tls_container_ref: ca,
        client_crl_container_ref: crl,
        client_authentication: "MANDATORY",
      }),
      local,
    );
    expect(created).toMatchObject({ client_ca_tls_container_ref: ca, client_crl_container_ref: crl });

    expect(
      pick(await post({ default_tls_container_ref: cert, client_ca_tls_container_ref: "no-ca", client_crl_container_ref: "no-crl" })),
    ).toEqual(fault(400, "Could not retrieve certificate: ['no-ca', 'no-crl']"));
    const otherCrl = await certs.storeSecret(pem("other/ca.crl"));
    expect(
      pick(await post({ default_tls_container_ref: cert, client_ca_tls_container_ref: ca, client_crl_container_ref: otherCrl })),
    ).toEqual(fault(400, "Validation failure: The CRL specified is not valid for client certificate authority reference supplied."));
    // The CA and CRL in force are read again on update: the CRL gone from the store, a rename fails.
    await certs.deleteCert(crl);
    expect(pick(await local.call("PUT", `${LISTENERS}/${created.id}`, { listener: { name: "renamed" } }))).toEqual(
      fault(400, `Could not retrieve certificate: ['${crl}']`),
    );
    const fresh = await certs.storeSecret(pem("ca/ca.crl"));
    const put = await local.call("PUT", `${LISTENERS}/${created.id}`, { listener: { name: "renamed", client_crl_container_ref: fresh } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    await local.settle();
  });

  it("a CA or CRL that does not parse: Octavia's messages, with python-cryptography's own error text", async () => {
    const notPem = await certs.storeSecret("not a PEM at all\n");
    const aKey = await certs.storeSecret(pem("server.key"));
    const badDer = await certs.storeSecret("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    const badCrl = await certs.storeSecret("-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n");
    const ca = await certs.storeSecret(pem("ca/ca.pem"));
    // What python-cryptography (Octavia's x509.load_pem_x509_certificate / load_pem_x509_crl) says of each.
    const py = spawnSync(
      "/usr/bin/python3",
      [
        "-c",
        "import json,sys\nfrom cryptography import x509\nout=[]\nfor f,d in json.load(sys.stdin):\n  try:\n    getattr(x509,f)(d.encode()); out.append(None)\n  except Exception as e:\n    out.append(str(e))\nprint(json.dumps(out))",
      ],
      {
        input: JSON.stringify([
          ["load_pem_x509_certificate", "not a PEM at all\n"],
          ["load_pem_x509_certificate", pem("server.key")],
          ["load_pem_x509_crl", pem("ca/ca.pem")],
        ]),
        encoding: "utf8",
      },
    );
    expect(py.status, py.stderr).toBe(0);
    const [framing, notCert, notCrl] = JSON.parse(py.stdout) as string[];
    const CA_INVALID =
      "Validation failure: The client authentication CA certificate is invalid. It must be a valid x509 PEM format certificate. Error: ";
    const CRL_INVALID =
      "Validation failure: The client authentication certificate revocation list is invalid. It must be a valid x509 PEM format certificate revocation list. Error: ";
    const withCaFields = (caRef: string, crlRef?: string) => ({
      default_tls_container_ref: cert,
      client_ca_tls_container_ref: caRef,
      ...(crlRef ? { client_crl_container_ref: crlRef } : {}),
    });
    expect(pick(await post(withCaFields(notPem)))).toEqual(fault(400, CA_INVALID + framing));
    expect(pick(await post(withCaFields(aKey)))).toEqual(fault(400, CA_INVALID + notCert));
    expect((await post(withCaFields(badDer))).body.faultstring).toMatch(
      new RegExp(`^${CA_INVALID.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}error parsing asn1 value: `),
    );
    const caAsCrl = await certs.storeSecret(pem("ca/ca.pem"));
    expect(pick(await post(withCaFields(ca, caAsCrl)))).toEqual(fault(400, CRL_INVALID + notCrl));
    expect((await post(withCaFields(ca, badCrl))).body.faultstring).toMatch(
      /^Validation failure: The client authentication certificate revocation list is invalid\. .* Error: error parsing asn1 value: /,
    );
  });

  it("a fully populated load balancer's listeners are checked the same way", async () => {
    const graph = (ref: string) => ({
      loadbalancer: {
        vip_subnet_id: SUBNET,
        listeners: [{ protocol: "TERMINATED_HTTPS", protocol_port: 443, default_tls_container_ref: ref }],
      },
    });
    expect(pick(await local.call("POST", LBS, graph("unknown")))).toEqual(fault(400, "Could not retrieve certificate: ['unknown']"));
    const ok = await local.call("POST", LBS, graph(cert));
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    await local.settle();
  });

  it("the no-op manager (the default) still accepts any non-empty reference and reads no CA", async () => {
    const lb = (await activeLb(t)).id;
    const l = await create({
      loadbalancer_id: lb,
      protocol: "TERMINATED_HTTPS",
      protocol_port: 443,
      default_tls_container_ref: "never-stored",
      client_ca_tls_container_ref: "no-ca",
      client_crl_container_ref: "no-crl",
    });
    expect(l).toMatchObject({
      default_tls_container_ref: "never-stored",
      client_ca_tls_container_ref: "no-ca",
      client_crl_container_ref: "no-crl",
    });
    expect(
      pick(
        await t.call("POST", LISTENERS, {
          listener: { loadbalancer_id: lb, protocol: "TERMINATED_HTTPS", protocol_port: 444, sni_container_refs: [""] },
        }),
      ),
    ).toEqual(fault(400, "Could not retrieve certificate: ['']"));
  });
});
