// The L7 rule's rules (L7RuleController.post, validate.l7rule_data, the wsme types), called directly.
import { describe, expect, it } from "vitest";
import { l7RuleResource } from "@ottava/core";
import { bad, create, faultOf, item, tree, uuid } from "./support";

const LISTENER = uuid(1);
const POLICY = uuid(2);
const on = () =>
  tree([
    item("listener", { id: LISTENER, protocol: "HTTP", protocol_port: 80, l7policy_ids: [POLICY] }),
    item("l7policy", { id: POLICY, listener_id: LISTENER, action: "REJECT", position: 1, rule_ids: [] }),
  ]);
const add = (body: unknown) => create(l7RuleResource, body, on(), { l7policy_id: POLICY });
const parsing = (msg: string) => `Error parsing L7Rule: ${msg}`;

describe("an L7 rule create", () => {
  it("takes Octavia's defaults, and keeps a key given to a rule type without one", () => {
    expect(add({ type: "PATH", compare_type: "STARTS_WITH", value: "/api" })).toMatchObject({
      l7policy_id: POLICY,
      type: "PATH",
      compare_type: "STARTS_WITH",
      key: null,
      value: "/api",
      invert: false,
      admin_state_up: true,
      provisioning_status: "PENDING_CREATE",
    });
    expect(add({ type: "PATH", compare_type: "EQUAL_TO", key: "k", value: "/x" }).key).toBe("k");
    expect(add({ type: "SSL_CONN_HAS_CERT", compare_type: "EQUAL_TO", value: "tRuE" }).value).toBe("tRuE");
  });

  it("refuses bad rules with wsme's and validate.l7rule_data's messages", () => {
    const cases: [unknown, string][] = [
      [{ name: "test1" }, "Unknown attribute for argument rule_.rule: name"],
      [{ compare_type: "EQUAL_TO", value: "x" }, bad("type", "None", "Mandatory field missing.")],
      [{ type: "HOST_NAME", compare_type: "STARTS_WITH" }, bad("value", "None", "Mandatory field missing.")],
      [
        { type: "NAME", compare_type: "EQUAL_TO", value: "x" },
        bad(
          "type",
          "NAME",
          "Value should be one of: HOST_NAME, PATH, FILE_TYPE, HEADER, COOKIE, SSL_CONN_HAS_CERT, SSL_VERIFY_RESULT, SSL_DN_FIELD",
        ),
      ],
      [
        { type: "PATH", compare_type: "LIKE", value: "x" },
        bad("compare_type", "LIKE", "Value should be one of: REGEX, STARTS_WITH, ENDS_WITH, CONTAINS, EQUAL_TO"),
      ],
      [{ type: "PATH", compare_type: "EQUAL_TO", value: "a\nb" }, bad("value", "a\nb", "Value should match the pattern ^[^\\r\\n]*$")],
      [{ type: "PATH", compare_type: "EQUAL_TO", value: null }, parsing("Invalid L7 Rule: L7 rule type requires a value")],
      [{ type: null, compare_type: "EQUAL_TO", value: "x" }, parsing("Invalid L7 Rule: invalid rule type")],
      [
        { type: "PATH", compare_type: "REGEX", value: "bad string\\" },
        parsing("Unable to parse regular expression: bad escape (end of pattern) at position 10"),
      ],
      [{ type: "PATH", compare_type: "REGEX", value: "a\tb" }, parsing("Unable to parse regular expression: contains control characters")],
      [{ type: "PATH", compare_type: "EQUAL_TO", value: "some string" }, parsing("Invalid characters in comparison value")],
      [{ type: "FILE_TYPE", compare_type: "STARTS_WITH", value: "png" }, parsing("Invalid L7 Rule: invalid comparison type for rule type")],
      [{ type: "HEADER", compare_type: "CONTAINS", value: "some-string" }, parsing("Invalid L7 Rule: L7 rule type requires a key")],
      [{ type: "HEADER", compare_type: "CONTAINS", key: "bad key", value: "x" }, parsing("Invalid characters in key")],
      [{ type: "HEADER", compare_type: "CONTAINS", key: "k", value: "a b" }, parsing("Invalid characters in header value")],
      [{ type: "COOKIE", compare_type: "EQUAL_TO", key: "c", value: "a;b" }, parsing("Invalid characters in cookie value")],
      [
        { type: "SSL_CONN_HAS_CERT", compare_type: "EQUAL_TO", value: "true", key: "no-need-key" },
        parsing('Invalid L7 Rule: L7rule type SSL_CONN_HAS_CERT does not use the "key" field.'),
      ],
      [
        { type: "SSL_CONN_HAS_CERT", compare_type: "EQUAL_TO", value: "not-true-string" },
        parsing("Invalid L7 Rule: L7rule value not-true-string is not a boolean True string."),
      ],
      [
        { type: "SSL_VERIFY_RESULT", compare_type: "EQUAL_TO", value: "true" },
        parsing("Invalid L7 Rule: L7rule type SSL_VERIFY_RESULT needs a int value, which is >= 0"),
      ],
      [
        { type: "SSL_DN_FIELD", compare_type: "REGEX", value: "^.test*$" },
        parsing("Invalid L7 Rule: L7rule type SSL_DN_FIELD needs to specify a key and a value."),
      ],
      [
        { type: "SSL_DN_FIELD", compare_type: "EQUAL_TO", key: "NOT_SUPPORTED_DN_FIELD", value: "true" },
        parsing("Invalid L7 Rule: Invalid L7rule distinguished name field."),
      ],
    ];
    for (const [body, message] of cases)
      expect(
        faultOf(() => add(body)),
        message,
      ).toEqual([400, message]);
  });
});
