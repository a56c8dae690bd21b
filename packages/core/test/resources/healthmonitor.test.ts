// The health monitor's rules (HealthMonitorController.post, _validate_create_hm, the wsme types), called directly.
import { describe, expect, it } from "vitest";
import { healthMonitorResource } from "@ottava/core";
import { bad, create, faultOf, item, tree, update, uuid } from "./support";

const POOL = uuid(1);
const withPool = (protocol = "HTTP", monitors: ReturnType<typeof item>[] = []) =>
  tree([item("pool", { id: POOL, protocol, listener_ids: [] }), ...monitors]);
const base = { pool_id: POOL, type: "HTTP", delay: 5, timeout: 3, max_retries: 2 };

describe("a health monitor create", () => {
  it("takes Octavia's defaults for an HTTP monitor", () => {
    expect(create(healthMonitorResource, base, withPool())).toMatchObject({
      pool_id: POOL,
      type: "HTTP",
      max_retries_down: 3,
      http_method: "GET",
      url_path: "/",
      expected_codes: "200",
      admin_state_up: true,
      provisioning_status: "PENDING_CREATE",
    });
  });

  it("refuses bad input with Octavia's messages", () => {
    const without = (k: keyof typeof base) => Object.fromEntries(Object.entries(base).filter(([key]) => key !== k));
    const cases: [unknown, string][] = [
      [without("type"), bad("type", "None", "Mandatory field missing.")],
      [without("delay"), bad("delay", "None", "Mandatory field missing.")],
      [{ ...base, pool_id: "x" }, bad("pool_id", "x", "Value should be UUID format")],
      [{ ...base, type: "ICMP" }, bad("type", "ICMP", "Value should be one of: HTTP, HTTPS, PING, TCP, TLS-HELLO, UDP-CONNECT, SCTP")],
      [{ ...base, delay: -1 }, bad("delay", "-1", "Value should be greater or equal to 0")],
      [{ ...base, timeout: "soon" }, bad("timeout", "soon", "invalid literal for int() with base 10: 'soon'")],
      [{ ...base, max_retries: 11 }, bad("max_retries", "11", "Value should be lower or equal to 10")],
      [
        { ...base, http_method: "FETCH" },
        bad("http_method", "FETCH", "Value should be one of: GET, HEAD, POST, PUT, DELETE, TRACE, OPTIONS, CONNECT, PATCH"),
      ],
      [{ ...base, url_path: "health" }, bad("url_path", "health", "Value must be a valid URL Path string")],
      [{ ...base, url_path: "/a b" }, bad("url_path", "/a b", "Value must be a valid URL Path string")],
      [
        { ...base, expected_codes: "20x" },
        bad("expected_codes", "20x", String.raw`Value should match the pattern ^(\d{3}(\s*,\s*\d{3})*)$|^(\d{3}-\d{3})$`),
      ],
      [{ ...base, http_version: 2 }, bad("http_version", "2", "Value should be one of: 1.0, 1.1")],
      [{ ...base, delay: null }, "None is not a valid option for delay"],
      [{ ...base, type: "TCP", http_method: "GET" }, "http_method is not a valid option for health monitors of type TCP"],
      [{ ...base, type: "PING", url_path: "/" }, "url_path is not a valid option for health monitors of type PING"],
      [{ ...base, domain_name: "example.com" }, "Validation failure: 'http_version' must be specified when 'domain_name' is provided."],
      [
        { ...base, domain_name: "example.com", http_version: 1.0 },
        "http_version 1.0 is not a valid option for health monitors HTTP 1.1 domain name health check",
      ],
      [{ ...base, type: "UDP-CONNECT" }, "Validation failure: The UDP-CONNECT type is only supported for pools of type UDP/SCTP."],
    ];
    for (const [body, message] of cases)
      expect(
        faultOf(() => create(healthMonitorResource, body, withPool())),
        message,
      ).toEqual([400, message]);
  });

  it("refuses a second monitor on a pool, and on a UDP pool the types and delays Octavia refuses", () => {
    expect(
      faultOf(() =>
        create(healthMonitorResource, base, withPool("HTTP", [item("healthmonitor", { id: uuid(9), pool_id: POOL, type: "TCP" })])),
      ),
    ).toEqual([409, "This pool already has a health monitor"]);
    expect(faultOf(() => create(healthMonitorResource, { ...base, type: "PING" }, withPool("UDP")))).toEqual([
      400,
      "Validation failure: The associated pool protocol is UDP, so only a UDP-CONNECT/SCTP/TCP/HTTP health monitor is supported.",
    ]);
    const udp = { pool_id: POOL, type: "UDP-CONNECT", delay: 2, timeout: 1, max_retries: 2 };
    expect(faultOf(() => create(healthMonitorResource, udp, withPool("UDP")))).toEqual([
      400,
      "Validation failure: The request delay value 2 should be larger than 3 for UDP-CONNECT health monitor type.",
    ]);
    const hm = create(healthMonitorResource, { ...udp, delay: 3 }, withPool("UDP"));
    expect(faultOf(() => update(healthMonitorResource, { delay: 1 }, hm, withPool("UDP")))).toEqual([
      400,
      "Validation failure: The request delay value 1 should be larger than 3 for UDP-CONNECT health monitor type.",
    ]);
  });
});
