// The ports of Python in core/src/compat, held to what Python answers: python-fixture.json is written by
// python-fixture.py (beside it) with Python 3.11's repr/int/re/ipaddress, Octavia's validate.url and
// validate.regex (rfc3986) and wsme's reading of Octavia's body types.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { explodedAddress, ipNetwork, ipVersion } from "../../src/compat/ipaddress";
import { pythonRegexError } from "../../src/compat/re";
import { intFromText, pyFloat, pyRepr, pyStr, pyStrip, pyTruthy, pythonType } from "../../src/compat/repr";
import { isValidUrl } from "../../src/compat/url";
import { boolConversion, ENUM_FALSE, ENUM_TRUE, pythonInt } from "../../src/compat/wsme";
import { Fault } from "../../src/faults";
import { L7PolicyPost } from "../../src/resources/l7policy";
import { L7RulePost } from "../../src/resources/l7rule";
import { parseRoot } from "../../src/validation";

interface Fixture {
  wsme_true: string[];
  wsme_false: string[];
  repr: { json: string; repr: string; str: string; type: string; truthy: boolean }[];
  floats: { float: number | string; repr: string }[];
  int: { text: string; value?: number; error?: string }[];
  space: number[];
  re: { pattern: string; error: string | null; octavia: string | null }[];
  addresses: { text: string; version: number | null; str: string | null; exploded: string | null }[];
  networks: { text: string; strict: { value?: string; error?: string }; loose: { value?: string; error?: string } }[];
  urls: { url: string; valid: boolean }[];
  wsme: { argument: string; root: string; body: string; fault: string | null }[];
  bool: { value: unknown; value_?: boolean; error?: string }[];
}

const fixture = JSON.parse(readFileSync(new URL("./python-fixture.json", import.meta.url), "utf8")) as Fixture;

describe("repr.ts: Python's builtins on JSON values", () => {
  it.each(fixture.repr)("repr/str/type/bool of $json", (c) => {
    const v: unknown = JSON.parse(c.json);
    // JSON's -0.0 is a float to Python, an integral number to JavaScript (which cannot tell them apart).
    if (c.json !== "-0.0") expect(pyRepr(v)).toBe(c.repr);
    if (c.json !== "-0.0") expect(pyStr(v)).toBe(c.str);
    if (c.json !== "-0.0") expect(pythonType(v)).toBe(c.type);
    expect(pyTruthy(v)).toBe(c.truthy);
  });

  it.each(fixture.floats)("repr($float)", (c) => {
    expect(pyFloat(typeof c.float === "number" ? c.float : Number(c.float.replace("inf", "Infinity").replace("nan", "NaN")))).toBe(c.repr);
  });

  it.each(fixture.int)("int($text)", (c) => {
    expect(intFromText(c.text)).toBe(c.value);
    expect(pythonInt(c.text)).toBe(c.value ?? c.error);
  });

  it("strips what str.isspace() holds, and nothing else", () => {
    const space = new Set(fixture.space);
    for (let cp = 0; cp < 0x10000; cp++) {
      if (cp >= 0xd800 && cp < 0xe000) continue;
      expect(pyStrip(`${String.fromCodePoint(cp)}x`), `U+${cp.toString(16)}`).toBe(space.has(cp) ? "x" : `${String.fromCodePoint(cp)}x`);
    }
  });
});

describe("re.ts: re.compile's errors, as validate.regex answers them", () => {
  it.each(fixture.re)("re.compile($pattern)", (c) => {
    const error = pythonRegexError(c.pattern);
    expect(error ?? null).toBe(c.error);
    expect(error === undefined ? null : `Unable to parse regular expression: ${error}`).toBe(c.octavia);
  });
});

describe("ipaddress.ts", () => {
  it.each(fixture.addresses)("ip_address($text)", (c) => {
    if (c.version === null) expect(() => ipVersion(c.text)).toThrow(/does not appear to be an IPv4 or IPv6 address/);
    else expect(ipVersion(c.text)).toBe(c.version);
    expect(explodedAddress(c.text) ?? null).toBe(c.exploded);
  });

  it.each(fixture.networks)("ip_network($text)", (c) => {
    for (const [strict, answer] of [
      [true, c.strict],
      [false, c.loose],
    ] as const) {
      if (answer.value !== undefined) expect(ipNetwork(c.text, strict)).toBe(answer.value);
      else expect(() => ipNetwork(c.text, strict)).toThrow(answer.error);
    }
  });
});

describe("url.ts: validate.url (rfc3986)", () => {
  it.each(fixture.urls)("$url", (c) => {
    expect(isValidUrl(c.url)).toBe(c.valid);
  });
});

describe("wsme.ts", () => {
  it("has wsme's boolean words", () => {
    expect(ENUM_TRUE).toEqual(fixture.wsme_true);
    expect(ENUM_FALSE).toEqual(fixture.wsme_false);
  });

  it.each(fixture.bool)("fromjson(bool, $value)", (c) => {
    expect(boolConversion(c.value) ?? null).toBe(c.error ?? null);
  });

  const schemas: Record<string, Parameters<typeof parseRoot>[2]> = { rule_: L7RulePost, l7policy_: L7PolicyPost };
  it.each(fixture.wsme)("$argument $body", (c) => {
    let fault: string | null = null;
    try {
      // Python's json.dumps writes a float infinity as Infinity; JSON's 1e400 is read as one.
      parseRoot(c.argument, c.root, schemas[c.argument]!, JSON.parse(c.body.replaceAll("Infinity", "1e400")));
    } catch (e) {
      if (!(e instanceof Fault)) throw e;
      fault = e.message;
    }
    // Where wsme takes the body, Ottava's own validation may still refuse an attribute, never the whole body.
    if (c.fault === null) expect(fault ?? "").not.toMatch(`Invalid input for field/attribute ${c.argument}.`);
    else expect(fault).toBe(c.fault);
  });
});
