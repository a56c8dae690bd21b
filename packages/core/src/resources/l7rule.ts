// The L7 rule resource (octavia/api/v2/types/l7rule.py, controllers/l7rule.py and validate.l7rule_data):
// the conditions of an L7 policy, under /v2/lbaas/l7policies/{l7policy_id}/rules.
import * as z from "zod";
import { ACTIVE, L7RULE_COMPARE_TYPES, L7RULE_TYPES, MAX_L7RULES_PER_L7POLICY, OFFLINE, PENDING_CREATE, TAG_MAX } from "../constants";
import { Fault, immutable, notFound } from "../faults";
import type { TreeRecord } from "../ports";
import { body, bool, pythonInt, str, tags } from "../validation";
import type { ChildResource, Tree } from "./child";
import { apiTime, octaviaFilters, type ResourceDescriptor } from "./descriptor";

const RULE_STRING_MAX = 255;

// ---- wsme's reading of a JSON body ----------------------------------------------------------------
// wsme reads a body's attributes in their declaration order, each first converted from JSON
// (fromjson) and then validated: a conversion that fails (int("x"), an ambiguous boolean, a list
// that is not one) fails the whole argument, quoting the whole body in Python's words; a validation
// that fails names the attribute. Unknown attributes are refused before anything else.

/**
 * A wsme attribute's conversion from JSON: the message of the ValueError it raises, or null when
 * wsme stops at a validation error before any conversion fails (undefined: all converted). A
 * TypeError escapes wsme as a 500: thrown.
 */
export type WsmeConversion = (value: unknown) => string | null | undefined;

/** Python's type() name of a JSON value. */
export const pythonType = (v: unknown) =>
  v === null
    ? "NoneType"
    : Array.isArray(v)
      ? "list"
      : typeof v === "object"
        ? "dict"
        : typeof v === "boolean"
          ? "bool"
          : typeof v === "string"
            ? "str"
            : Number.isInteger(v)
              ? "int"
              : "float";

/** Python's repr() of a JSON value. */
export function pythonLiteral(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "string") return pythonRepr(v);
  if (typeof v === "number") return String(v);
  if (Array.isArray(v)) return `[${v.map(pythonLiteral).join(", ")}]`;
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${pythonRepr(k)}: ${pythonLiteral(x)}`)
    .join(", ")}}`;
}

/** Python's str() of a JSON value. */
const pythonStr = (v: unknown) => (typeof v === "string" ? v : pythonLiteral(v));

/** int(v) as Python answers it: the number, or the message of its ValueError (or TypeError). */

/** fromjson for int attributes (IntegerType, Enum(int)). Octavia lets the TypeError of a list or dict escape as a 500; Ottava answers 400. */
export const intConversion: WsmeConversion = (v) => {
  const n = pythonInt(v);
  return typeof n === "number" ? undefined : n;
};

/** fromjson for bool attributes: integers, booleans and the (lower case) unambiguous strings. */
export const boolConversion: WsmeConversion = (v) =>
  typeof v === "boolean" ||
  Number.isInteger(v) ||
  ["true", "t", "yes", "y", "on", "1", "false", "f", "no", "n", "off", "0"].includes(v as string)
    ? undefined
    : `Value not an unambiguous boolean: ${pythonStr(v)}`;

/** fromjson for list attributes, then for their items. */
export const listConversion =
  (item?: WsmeConversion): WsmeConversion =>
  (v) => {
    if (!Array.isArray(v)) return `Value not a valid list: ${pythonStr(v)}`;
    for (const x of v) {
      const result = x === null ? undefined : item?.(x);
      if (result !== undefined) return result;
    }
    return undefined;
  };

/** Walks `v`'s attributes in `shape`'s order as wsme does: the first conversion error, null at a validation error first. */
function conversionError(shape: z.ZodRawShape, conversions: Record<string, WsmeConversion>, v: unknown): string | null | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return null;
  const fields = v as Record<string, unknown>;
  if (Object.keys(fields).some((k) => !Object.hasOwn(shape, k))) return null;
  for (const [key, schema] of Object.entries(shape)) {
    const value = fields[key];
    const result = value === undefined || value === null ? undefined : conversions[key]?.(value);
    if (result !== undefined) return result;
    if (!z.safeParse(schema, value).success) return null;
  }
  return undefined;
}

/**
 * A wsme-typed JSON object (strict), read in wsme's order. `conversions` are the attributes'
 * fromjson checks; with an `argument` (and its body's `root`) their failures are answered as wsme
 * answers them; without, they are an enclosing object's to check (see `objectConversion`).
 */
export function wsmeObject<S extends z.ZodRawShape>(
  shape: S,
  conversions: Partial<Record<keyof S, WsmeConversion>>,
  argument?: { name: string; root: string },
) {
  return z
    .unknown()
    .transform((v, ctx) => {
      if (typeof v !== "object" || v === null || Array.isArray(v)) return v;
      const unknown = Object.keys(v).filter((k) => !Object.hasOwn(shape, k));
      if (unknown.length > 0) {
        ctx.addIssue({ code: "unrecognized_keys", keys: unknown, input: v as Record<string, unknown> });
        return z.NEVER;
      }
      const error = argument ? conversionError(shape, conversions as Record<string, WsmeConversion>, v) : undefined;
      if (typeof error === "string") {
        throw new Fault(
          400,
          `Invalid input for field/attribute ${argument!.name}. Value: '${pythonLiteral({ [argument!.root]: v })}'. ${error}`,
        );
      }
      return v;
    })
    .pipe(body(shape));
}

/** fromjson for an attribute that is itself a wsme object (a list's items): anything but a dict (Octavia's 500) is a 400. */
export const objectConversion =
  (shape: z.ZodRawShape, conversions: Record<string, WsmeConversion>): WsmeConversion =>
  (v) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return `'${pythonType(v)}' object has no attribute 'keys'`;
    return conversionError(shape, conversions, v);
  };

/** wsme Enum(str, ...): any other value is refused with the choices (a list or dict cannot even be looked up); null passes. */
export const wsmeChoice = <T extends string>(values: readonly T[]) =>
  z.unknown().transform((v, ctx) => {
    if (v === null || (values as readonly unknown[]).includes(v)) return v as T | null;
    const message = typeof v === "object" ? `unhashable type: '${pythonType(v)}'` : `Value should be one of: ${values.join(", ")}`;
    ctx.addIssue({ code: "custom", message });
    return z.NEVER;
  });

/**
 * The rules' key and value: wsme StringType(max_length=255), and in L7RulePOST/PUT also
 * pattern=r'^[^\r\n]*$' (Python's `$` also matches before a final newline, so one is let through).
 */
const ruleString = (pattern: boolean) =>
  z.unknown().transform((v, ctx) => {
    if (v === null) return null;
    const problem = ruleStringProblem(v, pattern);
    if (problem === undefined) return v as string;
    ctx.addIssue({ code: "custom", message: problem });
    return z.NEVER;
  });

function ruleStringProblem(v: unknown, pattern: boolean): string | undefined {
  if (typeof v !== "string") return "Value should be string";
  if (Array.from(v).length > RULE_STRING_MAX) return `Value should have a maximum character requirement of ${RULE_STRING_MAX}`;
  if (pattern && hasLineBreak(v)) return "Value should match the pattern ^[^\\r\\n]*$";
  return undefined;
}

const hasLineBreak = (v: string) => /[\r\n]/.test(v.endsWith("\n") ? v.slice(0, -1) : v);

const RULE_CONVERSIONS = { invert: boolConversion, admin_state_up: boolConversion, tags: listConversion() };

export const L7RulePost = wsmeObject(
  {
    type: wsmeChoice(L7RULE_TYPES),
    compare_type: wsmeChoice(L7RULE_COMPARE_TYPES),
    key: ruleString(true).optional(),
    value: ruleString(true),
    invert: bool().nullish(),
    admin_state_up: bool().nullish(),
    // Deprecated and ignored (as tenant_id): a rule belongs to its load balancer's project.
    project_id: str(36).nullish(),
    tags: tags().nullish(),
    tenant_id: str(36).nullish(),
  },
  RULE_CONVERSIONS,
  { name: "rule_", root: "rule" },
);
export type L7RulePost = z.output<typeof L7RulePost>;

export const L7RulePut = wsmeObject(
  {
    type: wsmeChoice(L7RULE_TYPES).optional(),
    compare_type: wsmeChoice(L7RULE_COMPARE_TYPES).optional(),
    key: ruleString(true).optional(),
    value: ruleString(true).optional(),
    invert: bool().nullish(),
    admin_state_up: bool().nullish(),
    tags: tags().nullish(),
  },
  RULE_CONVERSIONS,
  { name: "l7rule_", root: "rule" },
);
export type L7RulePut = z.output<typeof L7RulePut>;

const SINGLE_CREATE = {
  type: wsmeChoice(L7RULE_TYPES),
  compare_type: wsmeChoice(L7RULE_COMPARE_TYPES),
  key: ruleString(false).optional(),
  value: ruleString(false),
  invert: bool().nullish(),
  admin_state_up: bool().nullish(),
  tags: z.array(str(TAG_MAX), { error: "Value should be a list" }).nullish(),
};
/** L7RuleSingleCreate: a rule given inline with its policy (no pattern on key and value there). */
export const L7RuleSingleCreate = wsmeObject(SINGLE_CREATE, RULE_CONVERSIONS);
/** fromjson for a list of L7RuleSingleCreate. */
export const inlineRulesConversion = listConversion(objectConversion(SINGLE_CREATE, RULE_CONVERSIONS));
export type L7RuleSingleCreate = z.output<typeof L7RuleSingleCreate>;

/** A rule as stored: `l7policy_id` (from the path) and `loadbalancer_id` are kept but not answered. */
export type L7Rule = TreeRecord & {
  id: string;
  project_id: string;
  l7policy_id: string;
  loadbalancer_id: string;
  type: string;
  compare_type: string;
  key: string | null;
  value: string;
  invert: boolean;
  admin_state_up: boolean;
  tags: string[];
  provisioning_status: string;
  operating_status: string;
  created_at: string;
  updated_at: string | null;
};

export const l7RuleDescriptor: ResourceDescriptor<L7Rule> = {
  kind: "l7rule",
  displayName: "L7 Rule",
  quotaField: "l7rule",
  root: "rule",
  collection: "rules",
  attributes: [
    "id",
    "type",
    "compare_type",
    "key",
    "value",
    "invert",
    "provisioning_status",
    "operating_status",
    "created_at",
    "updated_at",
    "project_id",
    "tenant_id",
    "admin_state_up",
    "tags",
  ],
  filters: octaviaFilters(
    [
      "compare_type",
      "created_at",
      "enabled",
      "id",
      "invert",
      "key",
      "l7policy_id",
      "operating_status",
      "project_id",
      "provisioning_status",
      "type",
      "updated_at",
      "value",
    ],
    { admin_state_up: "enabled" },
  ),
  model: (r) => ({ enabled: r.admin_state_up, l7policy_id: r.l7policy_id }),
  // L7RuleResponse: no l7policy_id.
  listReads: { tenant_id: ["project_id"], enabled: ["admin_state_up"] },
  toResponse: (r) => ({
    id: r.id,
    type: r.type,
    compare_type: r.compare_type,
    key: r.key,
    value: r.value,
    invert: r.invert,
    provisioning_status: r.provisioning_status,
    operating_status: r.operating_status,
    created_at: apiTime(r.created_at),
    updated_at: apiTime(r.updated_at),
    project_id: r.project_id,
    tenant_id: r.project_id,
    admin_state_up: r.admin_state_up,
    tags: r.tags,
  }),
};

// HTTP token and value characters (constants.HTTP_HEADER_NAME_REGEX, HTTP_COOKIE_VALUE_REGEX,
// HTTP_HEADER_VALUE_REGEX, HTTP_QUOTED_HEADER_VALUE_REGEX); `+-.` and `,-.` are ranges there too.
const HEADER_NAME = /^[a-zA-Z0-9!#$%&'*+-.^_`|~]+$/;
const COOKIE_VALUE = /^[a-zA-Z0-9!#$%&'()*+-./:<=>?@[\]^_`{|}~]+$/;
const HEADER_VALUE = /^[a-zA-Z0-9!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~\\]+$/;
const QUOTED_HEADER_VALUE = /^"[a-zA-Z0-9 \t!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~\\]*"$/;
/** constants.DISTINGUISHED_NAME_FIELD_REGEX, matched with Python's `$` (which allows a final newline). */
const DN_FIELD = /^([a-zA-Z][A-Za-z0-9-]*)$/;
const INVALID_CONFIG_CHARS = /[\x00-\x1f\x7f-\x9f]/;
const STRING_COMPARES: readonly (string | null)[] = ["STARTS_WITH", "ENDS_WITH", "CONTAINS", "EQUAL_TO"];

export interface L7RuleFields {
  type: string | null;
  compare_type: string | null;
  key: string | null;
  value: string | null;
}

/**
 * validate.l7rule_data, as the rule controller answers it: 400 "Error parsing L7Rule: <why>".
 * Octavia reads a rule consistent on its own, whatever its policy.
 */
export function checkL7Rule(rule: L7RuleFields): void {
  const fail = (msg: string): never => {
    throw new Fault(400, `Error parsing L7Rule: ${msg}`);
  };
  const invalid = (msg: string) => fail(`Invalid L7 Rule: ${msg}`);
  const invalidString = (what: string) => fail(`Invalid characters in ${what}`);
  const regex = (v: string) => {
    if (INVALID_CONFIG_CHARS.test(v)) fail("Unable to parse regular expression: contains control characters");
    const error = pythonRegexError(v);
    if (error !== undefined) fail(`Unable to parse regular expression: ${error}`);
  };
  const headerValue = (v: string, what: string) => {
    if (!HEADER_VALUE.test(v) && !QUOTED_HEADER_VALUE.test(v)) invalidString(what);
  };
  const { type, compare_type: compare, key } = rule;
  const value = rule.value ?? "";
  if (!value) invalid("L7 rule type requires a value");
  switch (type) {
    case "HEADER":
    case "COOKIE":
      if (!key) return invalid("L7 rule type requires a key");
      if (!HEADER_NAME.test(key)) invalidString("key");
      if (compare === "REGEX") regex(value);
      else if (!STRING_COMPARES.includes(compare)) invalid("invalid comparison type for rule type");
      else if (type === "HEADER") headerValue(value, "header value");
      else if (!COOKIE_VALUE.test(value)) invalidString("cookie value");
      return;
    case "HOST_NAME":
    case "PATH":
      if (STRING_COMPARES.includes(compare)) headerValue(value, "comparison value");
      else if (compare === "REGEX") regex(value);
      else invalid("invalid comparison type for rule type");
      return;
    case "FILE_TYPE":
      if (compare === "REGEX") regex(value);
      else if (compare === "EQUAL_TO") headerValue(value, "comparison value");
      else invalid("invalid comparison type for rule type");
      return;
    case "SSL_CONN_HAS_CERT":
      if (key) invalid(`L7rule type ${type} does not use the "key" field.`);
      else if (value.toLowerCase() !== "true") invalid(`L7rule value ${value} is not a boolean True string.`);
      else if (compare !== "EQUAL_TO") invalid(`L7rule type ${type} only supports the EQUAL_TO compare type.`);
      return;
    case "SSL_VERIFY_RESULT":
      if (key) invalid(`L7rule type ${type} does not use the "key" field.`);
      else if (!/^\p{Nd}+$/u.test(value)) invalid(`L7rule type ${type} needs a int value, which is >= 0`);
      else if (compare !== "EQUAL_TO") invalid(`L7rule type ${type} only supports the EQUAL_TO compare type.`);
      return;
    case "SSL_DN_FIELD":
      if (compare === "REGEX") regex(value);
      if (!key) invalid(`L7rule type ${type} needs to specify a key and a value.`);
      else if (!DN_FIELD.test(key.endsWith("\n") ? key.slice(0, -1) : key)) invalid("Invalid L7rule distinguished name field.");
      return;
    default:
      invalid("invalid rule type");
  }
}

/** A rule given inline with a new policy, as db_prepare.create_l7policy checks it: as L7RulePOST(**rule), then l7rule_data. */
export function checkInlineL7Rule(r: L7RuleSingleCreate | null): void {
  const fail = (msg: string) => new Fault(400, `Error parsing L7Rule: ${msg}`);
  if (r === null) throw fail("octavia.api.v2.types.l7rule.L7RulePOST() argument after ** must be a mapping, not NoneType");
  // L7RulePOST's pattern on key and value, which L7RuleSingleCreate lacks.
  for (const field of ["key", "value"] as const) {
    const v = r[field];
    if (typeof v === "string" && hasLineBreak(v))
      throw fail(`Invalid input for field/attribute ${field}. Value: '${v}'. Value should match the pattern ^[^\\r\\n]*$`);
  }
  checkL7Rule({ type: r.type, compare_type: r.compare_type, key: r.key ?? null, value: r.value });
}

/** The policy a rule request names; Octavia refuses rule changes unless the policy is ACTIVE. */
function mutablePolicy(tree: Tree, policyId: string): TreeRecord {
  const policy = tree.get("l7policy", policyId);
  if (!policy) throw notFound("L7 Policy", policyId);
  if (policy.provisioning_status !== ACTIVE) throw immutable("L7Policy", policyId);
  return policy;
}

/** _check_l7policy_max_rules: 409 once a policy has MAX_L7RULES_PER_L7POLICY rules. */
export function checkL7RuleCount(count: number, policyId: string): void {
  if (count >= MAX_L7RULES_PER_L7POLICY) throw new Fault(409, `Too many rules on L7 policy ${policyId}`);
}

/** A new rule of a policy (db_prepare.create_l7rule), PENDING_CREATE/OFFLINE. */
export function newL7Rule(b: L7RulePost | L7RuleSingleCreate, tree: Tree, policyId: string, id: string, now: string): L7Rule {
  return {
    id,
    project_id: tree.lb.project_id,
    l7policy_id: policyId,
    loadbalancer_id: tree.lb.id,
    type: b.type!,
    compare_type: b.compare_type!,
    key: b.key ?? null,
    value: b.value!,
    invert: b.invert ?? false,
    // wsme's to_dict makes a null admin_state_up False.
    admin_state_up: b.admin_state_up === undefined ? true : b.admin_state_up === true,
    tags: [...new Set(b.tags ?? [])],
    provisioning_status: PENDING_CREATE,
    operating_status: OFFLINE,
    created_at: now,
    updated_at: null,
  };
}

const rulesOf = (tree: Tree, policyId: string) => tree.of<L7Rule>("l7rule").filter((r) => r.l7policy_id === policyId);

export const l7RuleResource: ChildResource<L7Rule, L7RulePost, L7RulePut> = {
  descriptor: l7RuleDescriptor,
  argument: "rule_",
  post: L7RulePost,
  put: L7RulePut,
  scope: { param: "l7policy_id", field: "l7policy_id", parentKind: "l7policy" },
  parentOf: (_body, params) => ({ kind: "l7policy", id: params.l7policy_id ?? "" }),
  create({ body: b, tree, id, now, params }) {
    const policyId = params.l7policy_id ?? "";
    if (!tree.get("l7policy", policyId)) throw notFound("L7 Policy", policyId);
    checkL7Rule({ type: b.type, compare_type: b.compare_type, key: b.key ?? null, value: b.value });
    checkL7RuleCount(rulesOf(tree, policyId).length, policyId);
    mutablePolicy(tree, policyId);
    return newL7Rule(b, tree, policyId, id, now);
  },
  update({ body: b, record, tree }) {
    // Octavia validates the stored rule with the given fields (nulls included) laid over it.
    const merged = { ...record, ...definedOnly(b), invert: b.invert === null ? false : (b.invert ?? record.invert) };
    checkL7Rule(merged as L7RuleFields);
    mutablePolicy(tree, record.l7policy_id);
    const set: Partial<L7Rule> = { ...definedOnly(b), updated_at: new Date().toISOString() };
    if (b.invert === null) set.invert = false;
    if (b.admin_state_up === null) set.admin_state_up = false;
    if (b.tags === null) set.tags = [];
    // The repository clears the key of the rule types that have none.
    if (["HOST_NAME", "PATH", "FILE_TYPE"].includes(String(merged.type))) set.key = null;
    return set;
  },
  parents(record, tree) {
    const policy = tree.get("l7policy", record.l7policy_id);
    return [{ kind: "l7policy", id: record.l7policy_id }, ...(policy ? [{ kind: "listener", id: String(policy.listener_id) }] : [])];
  },
  checkDelete(record, tree) {
    mutablePolicy(tree, record.l7policy_id);
  },
};

/** The fields a PUT gave (explicit nulls included), as a partial record. */
function definedOnly(b: L7RulePut): Partial<L7Rule> {
  return Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined)) as Partial<L7Rule>;
}
// ---- Python's re.compile, for its errors only ----------------------------------------------------
// Octavia checks a REGEX rule's value with Python's re.compile and answers its error text. A port of
// the checks of CPython 3.11's re._parser (and the compiler's look-behind width check), building
// just enough of the parse tree to know widths.

const MAXREPEAT = 4294967295;
const DIGITS = "0123456789";
const OCTDIGITS = "01234567";
const HEXDIGITS = "0123456789abcdefABCDEF";
const ASCIILETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const WHITESPACE = " \t\n\r\v\f";
const SPECIAL_CHARS = ".\\[{()*+?^$|";
const FLAGS: Record<string, number> = { i: 2, L: 4, m: 8, s: 16, x: 64, a: 256, t: 1, u: 32 };
const TYPE_FLAGS = 4 | 32 | 256;
const GLOBAL_FLAGS = 1 | 128;
const VERBOSE = 64;
const CLASS_CATEGORIES = new Set(["\\d", "\\D", "\\s", "\\S", "\\w", "\\W"]);
const AT_CATEGORIES = new Set(["\\A", "\\b", "\\B", "\\Z"]);

type Width = [number, number];
type Item =
  | { op: "unit" }
  | { op: "at" }
  | { op: "repeat"; min: number; max: number; item: Item[] }
  | { op: "sub"; group: number | null; flags: boolean; p: Item[] }
  | { op: "atomic"; p: Item[] }
  | { op: "branch"; items: Item[][] }
  | { op: "assert"; dir: number; p: Item[] }
  | { op: "groupref"; group: number }
  | { op: "exists"; yes: Item[]; no: Item[] | null };

class ReError extends Error {}

class Source {
  readonly chars: string[];
  index = 0;
  next: string | null = null;
  /** The next token's length in code points (an escape is two). */
  private nextLen = 0;
  constructor(pattern: string) {
    this.chars = Array.from(pattern);
    this.advance();
  }
  private advance() {
    let index = this.index;
    let char = this.chars[index];
    if (char === undefined) {
      this.next = null;
      this.nextLen = 0;
      return;
    }
    if (char === "\\") {
      index += 1;
      const c = this.chars[index];
      if (c === undefined) throw new ReError(`bad escape (end of pattern) at position ${this.chars.length - 1}`);
      char += c;
    }
    this.nextLen = index + 1 - this.index;
    this.index = index + 1;
    this.next = char;
  }
  match(c: string) {
    if (c === this.next) {
      this.advance();
      return true;
    }
    return false;
  }
  get() {
    const c = this.next;
    this.advance();
    return c;
  }
  getwhile(n: number, set: string) {
    let result = "";
    for (let i = 0; i < n; i++) {
      const c = this.next;
      if (c === null || !set.includes(c) || c.length !== 1) break;
      result += c;
      this.advance();
    }
    return result;
  }
  getuntil(terminator: string, name: string) {
    let result = "";
    for (;;) {
      const c = this.next;
      this.advance();
      if (c === null) {
        if (!result) throw this.error(`missing ${name}`);
        throw this.error(`missing ${terminator}, unterminated name`, Array.from(result).length);
      }
      if (c === terminator) {
        if (!result) throw this.error(`missing ${name}`, 1);
        break;
      }
      result += c;
    }
    return result;
  }
  tell() {
    return this.index - this.nextLen;
  }
  seek(index: number) {
    this.index = index;
    this.advance();
  }
  error(msg: string, offset = 0) {
    return new ReError(`${msg} at position ${this.tell() - offset}`);
  }
  checkgroupname(name: string, offset: number) {
    if (!isIdentifier(name)) throw this.error(`bad character in group name ${pythonRepr(name)}`, Array.from(name).length + offset);
  }
}

class State {
  flags = 0;
  groupdict = new Map<string, number>();
  groupwidths: (Width | null)[] = [null];
  lookbehindgroups: number | null = null;
  grouprefpos = new Map<number, number>();
  get groups() {
    return this.groupwidths.length;
  }
  opengroup(name: string | null, source: Source) {
    const gid = this.groups;
    this.groupwidths.push(null);
    if (name !== null) {
      const ogid = this.groupdict.get(name);
      if (ogid !== undefined) {
        throw source.error(
          `redefinition of group name ${pythonRepr(name)} as group ${gid}; was group ${ogid}`,
          Array.from(name).length + 1,
        );
      }
      this.groupdict.set(name, gid);
    }
    return gid;
  }
  checkgroup(gid: number) {
    return gid < this.groups && this.groupwidths[gid] != null;
  }
  checklookbehindgroup(gid: number, source: Source) {
    if (this.lookbehindgroups !== null) {
      if (!this.checkgroup(gid)) throw source.error("cannot refer to an open group");
      if (gid >= this.lookbehindgroups) throw source.error("cannot refer to group defined in the same lookbehind subpattern");
    }
  }
}

function width(p: Item[], state: State): Width {
  let lo = 0;
  let hi = 0;
  for (const item of p) {
    let w: Width = [0, 0];
    switch (item.op) {
      case "unit":
        w = [1, 1];
        break;
      case "branch": {
        let i = MAXREPEAT - 1;
        let j = 0;
        for (const b of item.items) {
          const [l, h] = width(b, state);
          i = Math.min(i, l);
          j = Math.max(j, h);
        }
        w = [i, j];
        break;
      }
      case "atomic":
      case "sub":
        w = width(item.p, state);
        break;
      case "repeat": {
        const [i, j] = width(item.item, state);
        w = [i * item.min, j * item.max];
        break;
      }
      case "groupref":
        w = state.groupwidths[item.group] ?? [0, 0];
        break;
      case "exists": {
        const [i, j] = width(item.yes, state);
        if (item.no) {
          const [l, h] = width(item.no, state);
          w = [Math.min(i, l), Math.max(j, h)];
        } else w = [0, j];
        break;
      }
    }
    lo += w[0];
    hi += w[1];
  }
  return [Math.min(lo, MAXREPEAT - 1), Math.min(hi, MAXREPEAT)];
}

/** What an escape in a character class stands for: a literal (with its code point) or a category. */
type ClassCode = { literal: boolean; value: number };
const ESCAPE_VALUES: Record<string, number> = { "\\a": 7, "\\b": 8, "\\f": 12, "\\n": 10, "\\r": 13, "\\t": 9, "\\v": 11, "\\\\": 92 };

function classEscape(source: Source, escape: string): ClassCode {
  if (Object.hasOwn(ESCAPE_VALUES, escape)) return { literal: true, value: ESCAPE_VALUES[escape]! };
  if (CLASS_CATEGORIES.has(escape)) return { literal: false, value: NaN };
  return { literal: true, value: codeEscape(source, escape, true) };
}

function escapeCode(source: Source, escape: string, state: State): Item {
  if (AT_CATEGORIES.has(escape)) return { op: "at" };
  if (CLASS_CATEGORIES.has(escape) || Object.hasOwn(ESCAPE_VALUES, escape)) return { op: "unit" };
  const c = escape[1]!;
  if (c !== "0" && DIGITS.includes(c)) {
    // octal escape *or* decimal group reference
    let esc = escape;
    if (source.next !== null && DIGITS.includes(source.next)) {
      esc += source.get();
      if (OCTDIGITS.includes(esc[1]!) && OCTDIGITS.includes(esc[2]!) && source.next !== null && OCTDIGITS.includes(source.next)) {
        esc += source.get();
        if (parseInt(esc.slice(1), 8) > 0o377) throw source.error(`octal escape value ${esc} outside of range 0-0o377`, esc.length);
        return { op: "unit" };
      }
    }
    const group = parseInt(esc.slice(1), 10);
    if (group < state.groups) {
      if (!state.checkgroup(group)) throw source.error("cannot refer to an open group", esc.length);
      state.checklookbehindgroup(group, source);
      return { op: "groupref", group };
    }
    throw source.error(`invalid group reference ${group}`, esc.length - 1);
  }
  codeEscape(source, escape, false);
  return { op: "unit" };
}

/** The escapes _escape and _class_escape share (\x, \u, \U, \N, octal, plain characters): the code point. */
function codeEscape(source: Source, escape: string, inClass: boolean): number {
  const c = Array.from(escape)[1]!;
  const hex = (n: number) => {
    const esc = escape + source.getwhile(n, HEXDIGITS);
    if (esc.length !== n + 2) throw source.error(`incomplete escape ${esc}`, esc.length);
    return esc;
  };
  if (c === "x") return parseInt(hex(2).slice(2), 16);
  if (c === "u") return parseInt(hex(4).slice(2), 16);
  if (c === "U") {
    const esc = hex(8);
    const value = parseInt(esc.slice(2), 16);
    if (value > 0x10ffff) throw source.error(`bad escape ${esc}`, esc.length);
    return value;
  }
  if (c === "N") {
    if (!source.match("{")) throw source.error("missing {");
    const charname = source.getuntil("}", "character name");
    if (!knownCharacterName(charname)) {
      throw source.error(`undefined character name ${pythonRepr(charname)}`, Array.from(charname).length + 4);
    }
    return NaN;
  }
  if (inClass ? OCTDIGITS.includes(c) : c === "0") {
    const esc = escape + source.getwhile(2, OCTDIGITS);
    const value = parseInt(esc.slice(1), 8);
    if (inClass && value > 0o377) throw source.error(`octal escape value ${esc} outside of range 0-0o377`, esc.length);
    return value;
  }
  if (!DIGITS.includes(c) && !ASCIILETTERS.includes(c)) return c.codePointAt(0)!;
  throw source.error(`bad escape ${escape}`, Array.from(escape).length);
}

/**
 * \N{...}: Python looks the name up in the Unicode database, which Node does not carry. Unicode
 * names are words of letters and digits joined by spaces or hyphens, and none is shorter than 4.
 */
function knownCharacterName(name: string): boolean {
  return /^[A-Z][A-Z0-9]*(?:[ -][A-Z0-9]+)*$/i.test(name) && name.length >= 4;
}

function parseSub(source: Source, state: State, verbose: boolean, nested: number): Item[] {
  const items: Item[][] = [];
  for (;;) {
    items.push(parse(source, state, verbose, nested + 1, nested === 0 && items.length === 0));
    if (!source.match("|")) break;
    if (!nested) verbose = (state.flags & VERBOSE) !== 0;
  }
  if (items.length === 1) return items[0]!;
  return [{ op: "branch", items }];
}

function parse(source: Source, state: State, verbose: boolean, nested: number, first = false): Item[] {
  const sub: Item[] = [];
  for (;;) {
    const thisChar = source.next;
    if (thisChar === null || thisChar === "|" || thisChar === ")") break;
    source.get();
    if (verbose) {
      if (WHITESPACE.includes(thisChar) && thisChar.length === 1) continue;
      if (thisChar === "#") {
        for (;;) {
          const c = source.get();
          if (c === null || c === "\n") break;
        }
        continue;
      }
    }
    if (thisChar[0] === "\\") {
      sub.push(escapeCode(source, thisChar, state));
    } else if (!SPECIAL_CHARS.includes(thisChar)) {
      sub.push({ op: "unit" });
    } else if (thisChar === "[") {
      const here = source.tell() - 1;
      let count = 0;
      source.match("^");
      for (;;) {
        const t = source.get();
        if (t === null) throw source.error("unterminated character set", source.tell() - here);
        if (t === "]" && count > 0) break;
        const code1: ClassCode = t[0] === "\\" ? classEscape(source, t) : { literal: true, value: t.codePointAt(0)! };
        if (source.match("-")) {
          const that = source.get();
          if (that === null) throw source.error("unterminated character set", source.tell() - here);
          if (that === "]") {
            count += 2;
            break;
          }
          const code2: ClassCode = that[0] === "\\" ? classEscape(source, that) : { literal: true, value: that.codePointAt(0)! };
          const range = `bad character range ${t}-${that}`;
          const offset = Array.from(t).length + 1 + Array.from(that).length;
          if (!code1.literal || !code2.literal || code2.value < code1.value) throw source.error(range, offset);
        }
        count++;
      }
      sub.push({ op: "unit" });
    } else if ("*+?{".includes(thisChar)) {
      const here = source.tell();
      let min = 0;
      let max = MAXREPEAT;
      if (thisChar === "?") max = 1;
      else if (thisChar === "+") min = 1;
      else if (thisChar === "{") {
        if (source.next === "}") {
          sub.push({ op: "unit" });
          continue;
        }
        let lo = "";
        let hi = "";
        while (source.next !== null && DIGITS.includes(source.next)) lo += source.get();
        if (source.match(",")) {
          while (source.next !== null && DIGITS.includes(source.next)) hi += source.get();
        } else hi = lo;
        if (!source.match("}")) {
          sub.push({ op: "unit" });
          source.seek(here);
          continue;
        }
        if (lo) {
          min = Number(lo);
          if (min >= MAXREPEAT) throw new ReError("the repetition number is too large");
        }
        if (hi) {
          max = Number(hi);
          if (max >= MAXREPEAT) throw new ReError("the repetition number is too large");
          if (max < min) throw source.error("min repeat greater than max repeat", source.tell() - here);
        }
      }
      const last = sub[sub.length - 1];
      if (!last || last.op === "at") throw source.error("nothing to repeat", source.tell() - here + thisChar.length);
      if (last.op === "repeat") throw source.error("multiple repeat", source.tell() - here + thisChar.length);
      const item = last.op === "sub" && last.group === null && !last.flags ? last.p : [last];
      if (!source.match("?")) source.match("+");
      sub[sub.length - 1] = { op: "repeat", min, max, item };
    } else if (thisChar === ".") {
      sub.push({ op: "unit" });
    } else if (thisChar === "(") {
      const start = source.tell() - 1;
      let capture = true;
      let atomic = false;
      let name: string | null = null;
      let scopedFlags = false;
      let subVerbose = verbose;
      if (source.match("?")) {
        const char = source.get();
        if (char === null) throw source.error("unexpected end of pattern");
        if (char === "P") {
          if (source.match("<")) {
            name = source.getuntil(">", "group name");
            source.checkgroupname(name, 1);
          } else if (source.match("=")) {
            const ref = source.getuntil(")", "group name");
            source.checkgroupname(ref, 1);
            const gid = state.groupdict.get(ref);
            if (gid === undefined) throw source.error(`unknown group name ${pythonRepr(ref)}`, Array.from(ref).length + 1);
            if (!state.checkgroup(gid)) throw source.error("cannot refer to an open group", Array.from(ref).length + 1);
            state.checklookbehindgroup(gid, source);
            sub.push({ op: "groupref", group: gid });
            continue;
          } else {
            const c = source.get();
            if (c === null) throw source.error("unexpected end of pattern");
            throw source.error(`unknown extension ?P${c}`, cpLen(c) + 2);
          }
        } else if (char === ":") {
          capture = false;
        } else if (char === "#") {
          for (;;) {
            if (source.next === null) throw source.error("missing ), unterminated comment", source.tell() - start);
            if (source.get() === ")") break;
          }
          continue;
        } else if ("=!<".includes(char) && char.length === 1) {
          let dir = 1;
          let saved: number | null = null;
          if (char === "<") {
            const c = source.get();
            if (c === null) throw source.error("unexpected end of pattern");
            if (!"=!".includes(c) || c.length !== 1) throw source.error(`unknown extension ?<${c}`, cpLen(c) + 2);
            dir = -1;
            saved = state.lookbehindgroups;
            if (saved === null) state.lookbehindgroups = state.groups;
          }
          const p = parseSub(source, state, verbose, nested + 1);
          if (dir < 0 && saved === null) state.lookbehindgroups = null;
          if (!source.match(")")) throw source.error("missing ), unterminated subpattern", source.tell() - start);
          sub.push({ op: "assert", dir, p });
          continue;
        } else if (char === "(") {
          const condname = source.getuntil(")", "group name");
          let condgroup: number;
          const len = Array.from(condname).length;
          if (isIdentifier(condname)) {
            const g = state.groupdict.get(condname);
            if (g === undefined) throw source.error(`unknown group name ${pythonRepr(condname)}`, len + 1);
            condgroup = g;
          } else {
            // int(condname), as Python reads it
            const m = /^\s*([+-]?)(\d+(?:_\d+)*)\s*$/.exec(condname);
            condgroup = m ? parseInt(m[2]!.replace(/_/g, ""), 10) : NaN;
            if (!m || (m[1] === "-" && condgroup > 0)) throw source.error(`bad character in group name ${pythonRepr(condname)}`, len + 1);
            if (!condgroup) throw source.error("bad group number", len + 1);
            if (condgroup >= 1073741823) throw source.error(`invalid group reference ${condgroup}`, len + 1);
            if (!state.grouprefpos.has(condgroup)) state.grouprefpos.set(condgroup, source.tell() - len - 1);
          }
          state.checklookbehindgroup(condgroup, source);
          const yes = parse(source, state, verbose, nested + 1);
          let no: Item[] | null = null;
          if (source.match("|")) {
            no = parse(source, state, verbose, nested + 1);
            if (source.next === "|") throw source.error("conditional backref with more than two branches");
          }
          if (!source.match(")")) throw source.error("missing ), unterminated subpattern", source.tell() - start);
          sub.push({ op: "exists", yes, no });
          continue;
        } else if (char === ">") {
          capture = false;
          atomic = true;
        } else if (Object.hasOwn(FLAGS, char) || char === "-") {
          const flags = parseFlags(source, state, char);
          if (flags === null) {
            if (!first || sub.length > 0) throw source.error("global flags not at the start of the expression", source.tell() - start);
            verbose = (state.flags & VERBOSE) !== 0;
            continue;
          }
          const [add, del] = flags;
          scopedFlags = add !== 0 || del !== 0;
          subVerbose = (verbose || (add & VERBOSE) !== 0) && (del & VERBOSE) === 0;
          capture = false;
        } else {
          throw source.error(`unknown extension ?${char}`, cpLen(char) + 1);
        }
      }
      const group = capture ? state.opengroup(name, source) : null;
      const p = parseSub(source, state, subVerbose, nested + 1);
      if (!source.match(")")) throw source.error("missing ), unterminated subpattern", source.tell() - start);
      if (group !== null) state.groupwidths[group] = width(p, state);
      sub.push(atomic ? { op: "atomic", p } : { op: "sub", group, flags: scopedFlags, p });
    } else if (thisChar === "^" || thisChar === "$") {
      sub.push({ op: "at" });
    }
  }
  // Non-capturing groups without flags are unpacked into their parent.
  for (let i = sub.length - 1; i >= 0; i--) {
    const it = sub[i]!;
    if (it.op === "sub" && it.group === null && !it.flags) sub.splice(i, 1, ...it.p);
  }
  return sub;
}

function parseFlags(source: Source, state: State, first: string): [number, number] | null {
  let char: string | null = first;
  let add = 0;
  let del = 0;
  if (char !== "-") {
    for (;;) {
      const flag = FLAGS[char]!;
      if (char === "L") throw source.error("bad inline flags: cannot use 'L' flag with a str pattern");
      add |= flag;
      if (flag & TYPE_FLAGS && (add & TYPE_FLAGS) !== flag) throw source.error("bad inline flags: flags 'a', 'u' and 'L' are incompatible");
      char = source.get();
      if (char === null) throw source.error("missing -, : or )");
      if (")-:".includes(char) && char.length === 1) break;
      if (!Object.hasOwn(FLAGS, char)) throw source.error(isAlpha(char) ? "unknown flag" : "missing -, : or )", cpLen(char));
    }
  }
  if (char === ")") {
    state.flags |= add;
    return null;
  }
  if (add & GLOBAL_FLAGS) throw source.error("bad inline flags: cannot turn on global flag", 1);
  if (char === "-") {
    char = source.get();
    if (char === null) throw source.error("missing flag");
    if (!Object.hasOwn(FLAGS, char)) throw source.error(isAlpha(char) ? "unknown flag" : "missing flag", cpLen(char));
    for (;;) {
      const flag = FLAGS[char]!;
      if (flag & TYPE_FLAGS) throw source.error("bad inline flags: cannot turn off flags 'a', 'u' and 'L'");
      del |= flag;
      char = source.get();
      if (char === null) throw source.error("missing :");
      if (char === ":") break;
      if (!Object.hasOwn(FLAGS, char)) throw source.error(isAlpha(char) ? "unknown flag" : "missing :", cpLen(char));
    }
  }
  if (del & GLOBAL_FLAGS) throw source.error("bad inline flags: cannot turn off global flag", 1);
  if (add & del) throw source.error("bad inline flags: flag turned on and off", 1);
  return [add, del];
}

/** The compiler's check: a look-behind must match a fixed width. */
function checkLookbehinds(p: Item[], state: State): void {
  for (const item of p) {
    switch (item.op) {
      case "assert":
        if (item.dir < 0) {
          const [lo, hi] = width(item.p, state);
          if (lo !== hi) throw new ReError("look-behind requires fixed-width pattern");
        }
        checkLookbehinds(item.p, state);
        break;
      case "repeat":
        checkLookbehinds(item.item, state);
        break;
      case "sub":
      case "atomic":
        checkLookbehinds(item.p, state);
        break;
      case "branch":
        item.items.forEach((b) => checkLookbehinds(b, state));
        break;
      case "exists":
        checkLookbehinds(item.yes, state);
        if (item.no) checkLookbehinds(item.no, state);
        break;
    }
  }
}

/** Why Python's re.compile(pattern) fails (its message), or undefined when it compiles. */
export function pythonRegexError(pattern: string): string | undefined {
  try {
    const source = new Source(pattern);
    const state = new State();
    const p = parseSub(source, state, false, 0);
    if ((state.flags & 256) !== 0 && (state.flags & 32) !== 0) return "ASCII and UNICODE flags are incompatible";
    if (source.next !== null) throw source.error("unbalanced parenthesis");
    for (const [g, pos] of state.grouprefpos) {
      if (g >= state.groups) throw new ReError(`invalid group reference ${g} at position ${pos}`);
    }
    checkLookbehinds(p, state);
    return undefined;
  } catch (e) {
    if (e instanceof ReError) return e.message;
    throw e;
  }
}

const cpLen = (s: string) => Array.from(s).length;
const isAlpha = (c: string) => /^\p{L}$/u.test(c);
const isIdentifier = (s: string) => /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*$/u.test(s);

/** Python's repr() of a str. */
export function pythonRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === quote || ch === "\\") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, "0")}`;
    else if (cp >= 0x80 && cp <= 0xa0) out += `\\x${cp.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return quote + out + quote;
}
