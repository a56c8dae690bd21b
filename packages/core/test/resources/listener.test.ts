// The listener's rules (ListenersController.post, _validate_create_listener, the wsme types), called directly.
import { describe, expect, it } from "vitest";
import { listenerResource } from "@ottava/core";
import { bad, create, faultOf, item, LB_ID, tree, update } from "./support";

const base = { loadbalancer_id: LB_ID, protocol: "HTTP", protocol_port: 80 };
const tls = { ...base, protocol: "TERMINATED_HTTPS", default_tls_container_ref: "cert" };

describe("a listener create", () => {
  it("takes Octavia's defaults", () => {
    expect(create(listenerResource, base, tree())).toMatchObject({
      project_id: tree().lb.project_id,
      loadbalancer_id: LB_ID,
      provisioning_status: "PENDING_CREATE",
      operating_status: "OFFLINE",
      admin_state_up: true,
      connection_limit: -1,
      default_tls_container_ref: null,
      sni_container_refs: [],
      default_pool_id: null,
      timeout_client_data: 50000,
      timeout_member_connect: 5000,
      timeout_member_data: 50000,
      timeout_tcp_inspect: 0,
      client_authentication: "NONE",
      allowed_cidrs: [], // the record's; the API shows an empty list as null
      tls_ciphers: null,
      tls_versions: null,
      alpn_protocols: null,
      hsts_max_age: null,
      hsts_include_subdomains: false,
      hsts_preload: false,
    });
  });

  it("refuses bad input with Octavia's messages", () => {
    const cases: [unknown, number, string][] = [
      [{ ...base, bogus: 1 }, 400, "Unknown attribute for argument listener_.listener: bogus"],
      [{ ...base, provisioning_status: "ACTIVE" }, 400, "Unknown attribute for argument listener_.listener: provisioning_status"],
      [{ ...base, protocol: undefined }, 400, bad("protocol", "None", "Mandatory field missing.")],
      [
        { ...base, protocol: "PROXY" },
        400,
        bad("protocol", "PROXY", "Value should be one of: TCP, HTTPS, HTTP, TERMINATED_HTTPS, UDP, SCTP, PROMETHEUS"),
      ],
      [{ ...base, protocol_port: 0 }, 400, bad("protocol_port", "0", "Value should be greater or equal to 1")],
      [{ ...base, protocol_port: 65536 }, 400, bad("protocol_port", "65536", "Value should be lower or equal to 65535")],
      [{ ...base, protocol_port: "http" }, 400, bad("protocol_port", "http", "invalid literal for int() with base 10: 'http'")],
      [{ ...base, connection_limit: -2 }, 400, bad("connection_limit", "-2", "Value should be greater or equal to -1")],
      [{ ...base, loadbalancer_id: "lb" }, 400, bad("loadbalancer_id", "lb", "Value should be UUID format")],
      [
        { ...base, client_authentication: "SOMETIMES" },
        400,
        bad("client_authentication", "SOMETIMES", "Value should be one of: NONE, OPTIONAL, MANDATORY"),
      ],
      [
        { ...base, allowed_cidrs: ["10.0.1.0/33", "172.16.55.1.0/25"] },
        400,
        bad("allowed_cidrs", '["10.0.1.0/33","172.16.55.1.0/25"]', "Value should be IPv4 or IPv6 CIDR format"),
      ],
      [{ ...base, sni_container_refs: "x" }, 400, bad("sni_container_refs", "x", "Value not a valid list: x")],
      [
        { ...base, protocol: "TCP", insert_headers: { "X-Forwarded-For": "true" } },
        400,
        "insert-headers is not a valid option for a TCP protocol listener.",
      ],
      [
        { ...base, insert_headers: { "X-Forwarded-Four": "true" } },
        400,
        "dict_keys(['X-Forwarded-Four']) is not a valid option for insert_headers",
      ],
      [
        { ...base, insert_headers: { "X-Forwarded-For": "true", "X-SSL-Client-DN": "true" } },
        400,
        "['X-SSL-Client-DN'] is not a valid option for HTTP protocol listener.",
      ],
      [
        { ...base, protocol: "UDP", default_tls_container_ref: "cert" },
        400,
        "Validation failure: UDP protocol listener does not support TLS.",
      ],
      [
        { ...base, protocol: "TCP", default_tls_container_ref: "cert" },
        400,
        "Validation failure: Certificate container references are not allowed on TCP protocol listeners.",
      ],
      [
        { ...tls, default_tls_container_ref: null },
        400,
        "Validation failure: An SNI or default certificate container reference must be provided for TERMINATED_HTTPS protocol listeners.",
      ],
      [
        { ...tls, client_authentication: null },
        400,
        "Validation failure: Client authentication setting None requires a client CA container reference.",
      ],
      [{ ...tls, tls_versions: ["TLSv1.3", "insecure"] }, 400, "Validation failure: Invalid TLS versions: insecure"],
      [
        { ...tls, alpn_protocols: [] },
        400,
        "Validation failure: Empty ALPN protocol list. Either specify at least one ALPN protocol or remove this parameter to use the default.",
      ],
      [
        { ...tls, tls_ciphers: "A B" },
        400,
        "Validation failure: Invalid characters in cipher string. Only alphanumeric, -, +, !, :, @, =, _, and . are allowed.",
      ],
      [
        { ...base, allowed_cidrs: ["10.0.0.0/8", "2001:DB8:a0b:12f0::1/64"] },
        400,
        "Validation failure: CIDR 2001:db8:a0b:12f0::/64 IP version incompatible with VIP 198.51.100.1 IP version.",
      ],
    ];
    for (const [body, status, message] of cases)
      expect(
        faultOf(() => create(listenerResource, body, tree())),
        message,
      ).toEqual([status, message]);
  });

  it("normalises and deduplicates allowed CIDRs", () => {
    expect(
      create(listenerResource, { ...base, allowed_cidrs: ["10.0.0.1/8", "10.0.0.0/8", "192.0.2.0/24"] }, tree()).allowed_cidrs,
    ).toEqual(["10.0.0.0/8", "192.0.2.0/24"]);
  });

  it("refuses a port taken by a listener of the same L4 protocol, not one of another", () => {
    const taken = tree([item("listener", { id: "l1", protocol: "HTTP", protocol_port: 80 })]);
    expect(faultOf(() => create(listenerResource, base, taken))).toEqual([
      409,
      "Another Listener on this Load Balancer is already using protocol HTTP and protocol_port 80",
    ]);
    expect(faultOf(() => create(listenerResource, { ...base, protocol: "UDP" }, taken))).toBeUndefined();
  });
});

describe("a listener update", () => {
  it("refuses what wsme refuses, attributes a PUT cannot change, and HSTS without TLS", () => {
    const l = create(listenerResource, base, tree());
    expect(faultOf(() => update(listenerResource, { hsts_max_age: -5 }, l, tree()))).toEqual([
      400,
      bad("hsts_max_age", "-5", "Value should be greater or equal to 0"),
    ]);
    expect(faultOf(() => update(listenerResource, { protocol: "TCP" }, l, tree()))).toEqual([
      400,
      "Unknown attribute for argument listener_.listener: protocol",
    ]);
    expect(faultOf(() => update(listenerResource, { hsts_max_age: 300 }, l, tree()))).toEqual([
      400,
      "Validation failure: The HSTS feature can only be used for listeners using the TERMINATED_HTTPS protocol.",
    ]);
  });
});
