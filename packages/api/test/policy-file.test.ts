// The operator's policy file: JSON or YAML, a mapping of rule names to check strings.
import { describe, expect, it } from "vitest";
import { parsePolicyFile } from "../src/policy-file";

describe("policy files", () => {
  it("read JSON", async () => {
    expect(await parsePolicyFile('{"os_load-balancer_api:loadbalancer:get_all": "role:foo", "x": ""}')).toEqual({
      "os_load-balancer_api:loadbalancer:get_all": "role:foo",
      x: "",
    });
  });

  it("read YAML, comments and all", async () => {
    const yaml = [
      "# Octavia policy",
      '"os_load-balancer_api:loadbalancer:get_all": "role:foo"',
      "lb-auditor: role:auditor and project_id:%(project_id)s",
      "'context_is_admin': '@'",
    ].join("\n");
    expect(await parsePolicyFile(yaml)).toEqual({
      "os_load-balancer_api:loadbalancer:get_all": "role:foo",
      "lb-auditor": "role:auditor and project_id:%(project_id)s",
      context_is_admin: "@",
    });
    expect(await parsePolicyFile("")).toEqual({});
    expect(await parsePolicyFile("# nothing yet\n")).toEqual({});
  });

  it("refuse what is not a mapping of check strings", async () => {
    await expect(parsePolicyFile("- role:admin")).rejects.toThrow(/must be a mapping/);
    await expect(parsePolicyFile('{"a": true}')).rejects.toThrow(/rule "a" must be a check string, not boolean/);
    await expect(parsePolicyFile("a: [role:admin]")).rejects.toThrow(/rule "a" must be a check string, not a list/);
    await expect(parsePolicyFile("a: 1")).rejects.toThrow(/rule "a" must be a check string, not number/);
    await expect(parsePolicyFile("a: {b: c")).rejects.toThrow(/neither JSON nor YAML/);
    await expect(parsePolicyFile('"lb:x": "role:a and"')).rejects.toThrow(/policy rule "lb:x": cannot parse/);
  });
});
