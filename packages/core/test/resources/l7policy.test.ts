// The L7 policy's rules (L7PolicyController.post, sanitize_l7policy_api_args, the wsme types), called directly.
import { describe, expect, it } from "vitest";
import { l7PolicyResource } from "@ottava/core";
import { bad, create, faultOf, item, tree, uuid } from "./support";

const LISTENER = uuid(1);
const POOL = uuid(2);
const on = (protocol = "HTTP", policies: ReturnType<typeof item>[] = []) =>
  tree([
    item("listener", { id: LISTENER, protocol, protocol_port: 80, l7policy_ids: policies.map((p) => p.record.id) }),
    item("pool", { id: POOL, protocol: "HTTP", listener_ids: [] }),
    ...policies,
  ]);
const base = { listener_id: LISTENER, action: "REJECT" };
const args = (msg: string) => `Invalid L7 Policy arguments: ${msg}`;

describe("an L7 policy create", () => {
  it("takes Octavia's defaults and goes at the end of its listener's policies", () => {
    expect(create(l7PolicyResource, base, on())).toMatchObject({
      listener_id: LISTENER,
      action: "REJECT",
      redirect_pool_id: null,
      redirect_url: null,
      redirect_prefix: null,
      redirect_http_code: null,
      position: 1,
      admin_state_up: true,
      provisioning_status: "PENDING_CREATE",
      operating_status: "OFFLINE",
    });
    const first = item("l7policy", { id: uuid(3), listener_id: LISTENER, action: "REJECT", position: 1 });
    expect(create(l7PolicyResource, { ...base, position: 7 }, on("HTTP", [first])).position).toBe(2);
  });

  it("refuses bad input with wsme's and Octavia's messages", () => {
    const cases: [unknown, string][] = [
      [{ listener_id: LISTENER }, bad("action", "None", "Mandatory field missing.")],
      [
        { ...base, action: "DROP" },
        bad("action", "DROP", "Value should be one of: REJECT, REDIRECT_TO_URL, REDIRECT_TO_POOL, REDIRECT_PREFIX"),
      ],
      [{ ...base, listener_id: "nope" }, bad("listener_id", "nope", "Value should be UUID format")],
      [{ ...base, redirect_url: "bad url" }, bad("redirect_url", "bad url", "Value must be a valid URL string")],
      [{ ...base, redirect_url: "www.example.com" }, bad("redirect_url", "www.example.com", "Value must be a valid URL string")],
      [{ ...base, redirect_prefix: "ftp://example.com" }, bad("redirect_prefix", "ftp://example.com", "Value must be a valid URL string")],
      [{ ...base, redirect_url: 5 }, bad("redirect_url", "5", "expected string or bytes-like object, got 'int'")],
      [{ ...base, position: 0 }, bad("position", "0", "Value should be greater or equal to 1")],
      [{ ...base, redirect_http_code: 1 }, bad("redirect_http_code", "1", "Value should be one of: 301, 302, 303, 307, 308")],
      [
        { ...base, redirect_http_code: "" },
        bad(
          "l7policy_",
          `{'l7policy': {'listener_id': '${LISTENER}', 'action': 'REJECT', 'redirect_http_code': ''}}`,
          "invalid literal for int() with base 10: ''",
        ),
      ],
      [{ ...base, redirect_pool: {}, action: "DROP" }, "Unknown attribute for argument l7policy_.l7policy: redirect_pool"],
      [{ ...base, action: "REDIRECT_TO_URL" }, args("redirect_url must not be None")],
      [{ ...base, action: "REDIRECT_TO_POOL" }, args("redirect_pool_id or redirect_pool must not be None")],
      [{ ...base, action: "REDIRECT_PREFIX", redirect_url: "http://a.com" }, args("redirect_prefix must not be None")],
      [
        { ...base, action: "REDIRECT_TO_POOL", redirect_pool_id: POOL, redirect_prefix: "http://a.com" },
        args("Cannot specify redirect_pool_id and redirect_url or redirect_prefix at the same time"),
      ],
      [{ ...base, action: null }, "Invalid L7 Policy action specified: None"],
    ];
    for (const [body, message] of cases)
      expect(
        faultOf(() => create(l7PolicyResource, body, on())),
        message,
      ).toEqual([400, message]);
  });

  it("checks its inline rules as the rule controller does, and refuses a PROMETHEUS listener", () => {
    expect(
      faultOf(() => create(l7PolicyResource, { ...base, rules: [{ type: "HEADER", compare_type: "CONTAINS", value: "x" }] }, on())),
    ).toEqual([400, "Error parsing L7Rule: Invalid L7 Rule: L7 rule type requires a key"]);
    expect(faultOf(() => create(l7PolicyResource, base, on("PROMETHEUS")))).toEqual([
      400,
      "Protocol PROMETHEUS listeners cannot have child objects.",
    ]);
  });
});
