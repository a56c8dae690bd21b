#!/usr/bin/python3
"""Writes python-fixture.json: what Python (3.11) and the libraries Octavia uses answer for the inputs
that core/src/compat ports, for compat.test.ts to hold the ports to.

Run: /usr/bin/python3 packages/core/test/compat/python-fixture.py (with Octavia, wsme and
python3-rfc3986 installed, as on the development machine); commit the JSON it writes.
"""
import ipaddress
import json
import os
import re
import sys
import unicodedata

import rfc3986  # noqa: F401  (validate.url's library: fail here if it is missing)
import wsme.exc
import wsme.rest.json
from octavia.api.v2.types import l7policy as l7policy_types
from octavia.api.v2.types import l7rule as l7rule_types
from octavia.common import validate

HERE = os.path.dirname(os.path.abspath(__file__))


def error(f):
    """f()'s value, or {"error": the text of what it raised}."""
    try:
        return {"value": f()}
    except Exception as e:  # noqa: BLE001 (any of Python's errors is an answer)
        return {"error": str(e)}


# ---- repr.ts ----------------------------------------------------------------------------------
# JSON texts (what a request body carries), read as json.loads reads them. Integral floats (1.0)
# and integers beyond 2**53 are left out: JavaScript's JSON.parse cannot tell them apart.
JSON_VALUES = [
    'null', 'true', 'false', '0', '-7', '9007199254740991', '1.5', '-2.25', '0.1', '1e16', '1.5e300',
    '1e-05', '0.0001', '0.00012', '1e400', '-1e400', '123456789.125', '-0.0',
    '""', '"plain"', '"it\'s"', '"say \\"hi\\""', '"both \' and \\""', '"back\\\\slash"', '"\\\\\'"',
    '"tab\\tnew\\nline\\rcr"', '"\\u0000\\u0001\\u001f\\u007f\\u0080\\u009f\\u00a0\\u00ad"',
    '"caf\\u00e9 \\u65e5\\u672c \\ud83d\\ude00"', '"\\u2028\\u2029\\u200b\\u202f\\u3000\\ufeff"',
    '"\\ue000\\uffff\\udb40\\udc01"', '"\\ud800 lone"', '" "', '"\\u1680"',
    '[]', '{}', '[1, "a", null, [true, {"k": "v"}]]', '{"a": 1, "b\'": ["x", 2.5], "c": {"d": null}}',
]
repr_cases = []
for text in JSON_VALUES:
    v = json.loads(text)
    repr_cases.append({"json": text, "repr": repr(v), "str": str(v), "type": type(v).__name__, "truthy": bool(v)})

# Floats as repr() writes them (the policy engine's literals, the templates' HTTP versions).
FLOATS = [0.0, -0.0, 1.0, 1.1, 2.5, 100.0, 1e15, 1e16, 1.5e16, 1e22, 1e-4, 1e-5, 1.25e-7, 123456789.123,
          2.0 ** 60, float("inf"), float("-inf"), float("nan")]
float_cases = [{"float": f if f == f and abs(f) != float("inf") else str(f), "repr": repr(f)} for f in FLOATS]

INT_TEXTS = ["0", "12", " 12 ", "+5", "-0", "-17", "1_000", "1__0", "_1", "1_", "0x10", "1.5", "", " ", "--1",
             "\x1c5\x1f", "\x855\xa0", "\u30005\u2028", "\ufeff5", "5\u200b", "\t\n\v\f\r9\r\n", "99999999999"]
int_cases = [{"text": t, **error(lambda t=t: int(t))} for t in INT_TEXTS]

# str.isspace(): the characters int() and str.strip() skip.
space = [c for c in range(0x10000) if chr(c).isspace()]

# ---- re.ts ----------------------------------------------------------------------------------------
# \N{...} names are checked for their form only (Node has no Unicode name table): no made-up name here.
PATTERNS = [
    "abc", "^/api/v[0-9]+$", "a|b|", "(a)(?P<n>b)(?P=n)\\2", "(?i)x", "x(?i)", "(?i:a)b", "(?-i:a)", "(?x) a b # c",
    "(", ")", "(?", "(?P", "(?P<", "(?P<1>x)", "(?P<n>a)(?P<n>b)", "(?P=m)", "(?<=ab)c", "(?<=a+)c", "(?<!a|bc)d",
    "(?<=(a))\\1", "(a)(?(1)b|c)", "(?(x)a)", "(?(0)a)", "(?(2)a)", "(a)(?(1)b|c|d)", "[", "[a", "[]", "[]a]",
    "[z-a]", "[a-\\d]", "[\\w-z]", "a{2,1}", "a{,3}", "a{99999999999}", "a**", "*a", "a{1}{2}", "+", "^*",
    "\\", "\\q", "\\8", "(a)\\2", "\\x4", "\\x41", "\\u12", "\\U00110000", "\\U0001F600", "\\N{LATIN SMALL LETTER A}",
    "\\N{LATIN SMALL LETTER B}", "\\N{AB}", "\\N", "\\N{", "[\\777]", "\\777", "\\0", "\\08", "(?#comment", "(?#ok)a", "(?L)a", "(?au)a",
    "(?-a:b)", "(?i-i:a)", "(?z)", "(?-z:a)", "(?i", "(?i-", "(?>a+)b", "(?<x>a)", "(?<", "(?P>a)", "a++", "a?+",
    "(?u)(?a)x", "\\b\\B\\A\\Z", "[\\d-z]", "(?<=\\d{2})x", "(?<=x{1,2})y", "caf\u00e9+", "\u00e9{2", "[\u00e9-a]",
]
re_cases = []
for p in PATTERNS:
    compiled = error(lambda p=p: re.compile(p) and None)
    octavia = error(lambda p=p: validate.regex(p))
    re_cases.append({"pattern": p, "error": compiled.get("error"), "octavia": octavia.get("error")})

# ---- ipaddress.ts ---------------------------------------------------------------------------------
ADDRESSES = [
    "10.0.0.1", "0.0.0.0", "255.255.255.255", "256.0.0.1", "01.2.3.4", "1.2.3", "1.2.3.4.5", " 1.2.3.4", "1.2.3.4 ",
    "1.2.3.04", "1.2.3.0x1", "", "::", "::1", "1::", "1::2", "2001:db8::1", "2001:DB8:0:0:0:0:0:1", "1:2:3:4:5:6:7:8",
    "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "1::2::3", ":1::2", "1::2:", "12345::", "::ffff:1.2.3.4",
    "::1.2.3.4", "1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:7:1.2.3.4", "::ffff:1.2.3", "fe80::1%eth0", "fe80::1%", "fe80::1%a%b",
    "fe80::%1", "10.0.0.1%eth0", "::g", "1:2:3:4:5:6:7", "10.0.0.1/32", "::1/128", "0:0:1:0:0:1:0:0", "1:0:0:1:0:0:0:0",
    "0:0:0:0:0:0:0:1", "1:0:0:0:1:0:0:1", "a:b:c:d:e:f:0:0",
]
address_cases = []
for a in ADDRESSES:
    address_cases.append({
        "text": a,
        "version": error(lambda a=a: ipaddress.ip_address(a).version).get("value"),
        "str": error(lambda a=a: str(ipaddress.ip_address(a))).get("value"),
        "exploded": error(lambda a=a: ipaddress.ip_address(a).exploded).get("value"),
    })
NETWORKS = [
    "10.0.0.0/24", "10.0.0.1/24", "10.0.0.7", "10.0.0.0/0", "10.0.0.0/32", "10.0.0.0/33", "10.0.0.0/024", "10.0.0.0/+24",
    "10.0.0.0/", "10.0.0.0/24/1", "10.0.0.0/255.255.255.0", "10.0.0.0/0.0.0.255", "10.0.0.0/255.0.255.0",
    "0.0.0.0/0.0.0.0", "10.0.0.0/255.255.255.255", "2001:db8::/64", "2001:DB8:0:0::/64", "2001:db8::1/64", "::/0",
    "::1/128", "2001:db8::/129", "0:0:1:0:0:1:0:0/128", "1:0:0:1:0:0:0:0/64", "::ffff:1.2.3.0/120", "::ffff:1.2.3.4/96",
    "fe80::%eth0/64", "fe80::1%eth0/64", "fe80::/ffff::", "x", "", "1.2.3.4/x", "2001:db8::/64 ",
]
network_cases = []
for n in NETWORKS:
    network_cases.append({
        "text": n,
        "strict": error(lambda n=n: ipaddress.ip_network(n).with_prefixlen),
        "loose": error(lambda n=n: ipaddress.ip_network(n, strict=False).with_prefixlen),
    })

# ---- url.ts ---------------------------------------------------------------------------------------
URLS = [
    "http://example.com", "https://example.com/a/b?c=d#e", "http://example.com:8080/", "HTTP://example.com", "ftp://x",
    "example.com", "//example.com", "http://", "http:///path", "http://user:pw@host/", "http://10.0.0.1/",
    "http://256.1.1.1/", "http://[::1]/", "http://[fe80::1%25eth0]/", "http://[fe80::1%eth0]/", "http://[::1",
    "http://[v1.x]/", "http://ex ample.com", "http://example.com/a b", "http://example.com/\u00e9", "http://ex\u00e4mple.com",
    "http://example.com/%zz", "http://example.com/%41", "http://exa%41mple.com/", "http://h/\x7f", "http://h/\x85",
    "http://h/p|q", "http://h/[x]", "http://h:99999/", "http://h:port/", "https://h/?q=a b", "http://h/#frag ment",
    "javascript:alert(1)", "http://-h-/", "http://h_h/", "http://[1:2:3:4:5:6:7:8:9]/",
]
url_cases = [{"url": u, "valid": error(lambda u=u: validate.url(u)).get("value") is True} for u in URLS]

# ---- wsme.ts --------------------------------------------------------------------------------------
# Bodies read as Octavia's controllers read them (wsme.rest.json.parse with the root type): wsme's
# fault text, or null where wsme takes the body. Enum refusals are left out (wsme lists a set's
# values in hash order).
RULE = {"type": "PATH", "compare_type": "STARTS_WITH", "value": "/api"}
POLICY = {"action": "REJECT", "listener_id": "a3a5b4a7-0000-4000-8000-000000000001"}
BODIES = [
    ("rule_", l7rule_types.L7RuleRootPOST, "rule", RULE),
    ("rule_", l7rule_types.L7RuleRootPOST, "rule", {**RULE, "invert": "maybe"}),
    ("rule_", l7rule_types.L7RuleRootPOST, "rule", {**RULE, "invert": "TRUE"}),
    ("rule_", l7rule_types.L7RuleRootPOST, "rule", {**RULE, "invert": 1.5}),
    ("rule_", l7rule_types.L7RuleRootPOST, "rule", {**RULE, "invert": "on", "admin_state_up": "0"}),
    ("rule_", l7rule_types.L7RuleRootPOST, "rule", {**RULE, "admin_state_up": [1]}),
    ("rule_", l7rule_types.L7RuleRootPOST, "rule", {**RULE, "tags": "x'y"}),
    ("rule_", l7rule_types.L7RuleRootPOST, "rule", {**RULE, "key": "k\u00e9\"'\\\n", "tags": {"a": "\u2028"}}),
    ("rule_", l7rule_types.L7RuleRootPOST, "rule", {**RULE, "value": "v", "tags": 1e400}),
    ("l7policy_", l7policy_types.L7PolicyRootPOST, "l7policy", POLICY),
    ("l7policy_", l7policy_types.L7PolicyRootPOST, "l7policy", {**POLICY, "position": "x"}),
    ("l7policy_", l7policy_types.L7PolicyRootPOST, "l7policy", {**POLICY, "position": " 7 "}),
    ("l7policy_", l7policy_types.L7PolicyRootPOST, "l7policy", {**POLICY, "redirect_http_code": "3O1"}),
    ("l7policy_", l7policy_types.L7PolicyRootPOST, "l7policy", {**POLICY, "admin_state_up": "yes", "tags": ["a", None]}),
    ("l7policy_", l7policy_types.L7PolicyRootPOST, "l7policy", {**POLICY, "rules": "none"}),
    ("l7policy_", l7policy_types.L7PolicyRootPOST, "l7policy", {**POLICY, "rules": [{**RULE, "invert": "nope"}]}),
]
wsme_cases = []
for argname, datatype, root, inner in BODIES:
    text = json.dumps({root: inner})
    try:
        wsme.rest.json.parse(text, {argname: datatype}, True)
        fault = None
    except wsme.exc.ClientSideError as e:
        fault = e.faultstring
    wsme_cases.append({"argument": argname, "root": root, "body": text, "fault": fault})

BOOL_VALUES = [True, False, 0, 1, -3, "true", "t", "yes", "y", "on", "1", "false", "f", "no", "n", "off", "0",
               "TRUE", "Yes", "2", "", "maybe", 1.5, [], {}]
bool_cases = [{"value": v, **error(lambda v=v: wsme.rest.json.fromjson(bool, v))} for v in BOOL_VALUES]

fixture = {
    "python": sys.version.split()[0],
    "unicode": unicodedata.unidata_version,
    "wsme_true": list(wsme.rest.json.ENUM_TRUE),
    "wsme_false": list(wsme.rest.json.ENUM_FALSE),
    "repr": repr_cases,
    "floats": float_cases,
    "int": int_cases,
    "space": space,
    "re": re_cases,
    "addresses": address_cases,
    "networks": network_cases,
    "urls": url_cases,
    "wsme": wsme_cases,
    "bool": bool_cases,
}
with open(os.path.join(HERE, "python-fixture.json"), "w", encoding="utf-8") as f:
    json.dump(fixture, f, ensure_ascii=True, indent=1)
    f.write("\n")
