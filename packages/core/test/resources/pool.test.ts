// The pool's rules (PoolsController.post, _validate_create_pool, check_session_persistence, the wsme types), called directly.
import { describe, expect, it } from "vitest";
import { checkListenerPoolProtocol, poolResource } from "@ottava/core";
import { bad, create, faultOf, item, LB_ID, parseBody, tree, uuid } from "./support";

const base = { loadbalancer_id: LB_ID, protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" };
const sp = (s: Record<string, unknown>, over: Record<string, unknown> = {}) => ({ ...base, ...over, session_persistence: s });

describe("a pool create", () => {
  it("takes Octavia's defaults, and a UDP pool's source-IP persistence with its timeout and granularity", () => {
    expect(create(poolResource, base, tree())).toMatchObject({
      loadbalancer_id: LB_ID,
      provisioning_status: "PENDING_CREATE",
      operating_status: "OFFLINE",
      admin_state_up: true,
      session_persistence: null,
      tls_enabled: false,
    });
    const udp = { type: "SOURCE_IP", persistence_timeout: 3, persistence_granularity: "255.255.255.0" };
    expect(create(poolResource, sp(udp, { protocol: "UDP" }), tree()).session_persistence).toEqual({ ...udp, cookie_name: null });
  });

  it("refuses bad input with Octavia's messages", () => {
    const cases: [unknown, number, string][] = [
      [{ ...base, protocol: undefined }, 400, bad("protocol", "None", "Mandatory field missing.")],
      [{ ...base, protocol: "FTP" }, 400, bad("protocol", "FTP", "Value should be one of: TCP, HTTP, HTTPS, PROXY, PROXYV2, UDP, SCTP")],
      [
        { ...base, lb_algorithm: "RANDOM" },
        400,
        bad("lb_algorithm", "RANDOM", "Value should be one of: LEAST_CONNECTIONS, ROUND_ROBIN, SOURCE_IP, SOURCE_IP_PORT"),
      ],
      [{ ...base, bogus: 1 }, 400, "Unknown attribute for argument pool_.pool: bogus"],
      [{ ...base, admin_state_up: "perhaps" }, 400, bad("admin_state_up", "perhaps", "Value not an unambiguous boolean: perhaps")],
      [sp({}), 400, bad("type", "None", "Mandatory field missing.")],
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
        bad("cookie_name", "a b", String.raw`Value should match the pattern ^[^\s,;\\]+$`),
      ],
      [
        sp({ type: "SOURCE_IP", persistence_timeout: 3 }),
        400,
        "Validation failure: persistence_timeout and persistence_granularity is only for UDP and SCTP protocol pools.",
      ],
      [
        sp({ type: "HTTP_COOKIE" }, { protocol: "UDP" }),
        400,
        "Validation failure: Session persistence of type HTTP_COOKIE is not supported for UDP/SCTP protocol pools.",
      ],
      [
        { ...base, crl_container_ref: "crl" },
        400,
        "Validation failure: A CA certificate reference is required to specify a revocation list.",
      ],
      [
        { ...base, tls_enabled: true, tls_versions: ["TLSv1.2", "TLSv9", "SSLv2"] },
        400,
        "Validation failure: Invalid TLS versions: TLSv9, SSLv2",
      ],
      [{ ...base, alpn_protocols: ["h2", "h3"] }, 400, bad("alpn_protocols", '["h2","h3"]', "Value should be a valid ALPN protocol ID")],
      [
        { ...base, members: [{ address: "192.0.2.1", protocol_port: 80 }] },
        400,
        "Validation failure: healthmonitor and members can only be given in a fully populated load balancer create.",
      ],
    ];
    for (const [body, status, message] of cases)
      expect(
        faultOf(() => create(poolResource, body, tree())),
        message,
      ).toEqual([status, message]);
  });

  it("needs a load balancer or a listener to hang from", () => {
    expect(
      faultOf(() => poolResource.parentOf(parseBody(poolResource, { protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" }, "post"), {})),
    ).toEqual([400, "Validation failure: Must provide at least one of: loadbalancer_id, listener_id"]);
  });

  it("refuses a listener that already has a default pool, and a PROMETHEUS listener", () => {
    const [l1, l2, p1] = [uuid(1), uuid(2), uuid(3)];
    const on = tree([
      item("listener", { id: l1, protocol: "HTTP", protocol_port: 80, default_pool_id: p1 }),
      item("pool", { id: p1, protocol: "HTTP", listener_ids: [l1] }),
      item("listener", { id: l2, protocol: "PROMETHEUS", protocol_port: 9100, default_pool_id: null }),
    ]);
    const pool = { protocol: "HTTP", lb_algorithm: "ROUND_ROBIN" };
    expect(faultOf(() => create(poolResource, { ...pool, listener_id: l1 }, on))).toEqual([
      409,
      "This listener already has a default pool",
    ]);
    expect(faultOf(() => create(poolResource, { ...pool, listener_id: l2 }, on))).toEqual([
      400,
      "Protocol PROMETHEUS listeners cannot have child objects.",
    ]);
  });
});

describe("a listener's pool protocol (VALID_LISTENER_POOL_PROTOCOL_MAP)", () => {
  it("accepts the pairs Octavia accepts and words the refusal as Octavia", () => {
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
    for (const [listener, pool, ok] of cases) {
      expect(
        faultOf(() => checkListenerPoolProtocol(listener, pool)),
        `${listener}/${pool}`,
      ).toEqual(
        ok ? undefined : [400, `Validation failure: The pool protocol '${pool}' is invalid while the listener protocol is '${listener}'.`],
      );
    }
  });
});
