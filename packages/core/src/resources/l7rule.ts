// The L7 rule resource (octavia/api/v2/types/l7rule.py, controllers/l7rule.py and validate.l7rule_data):
// the conditions of an L7 policy, under /v2/lbaas/l7policies/{l7policy_id}/rules.
import * as z from "zod";
import {
  L7RULE_COMPARE_TYPES,
  L7RULE_TYPES,
  MAX_L7RULES_PER_L7POLICY,
  MUTABLE_STATUSES,
  OFFLINE,
  PENDING_CREATE,
  TAG_MAX,
} from "../constants";
import { Fault, requireStatus } from "../faults";
import type { TreeRecord } from "../ports";
import { bool, str, tags } from "../validation";
import { pythonRegexError } from "../compat/re";
import { boolConversion, issue, listConversion, objectConversion, wsmeChoice, wsmeObject } from "../compat/wsme";
import type { ChildResource, Tree } from "./child";
import { apiTime, octaviaFilters, type ResourceDescriptor } from "./descriptor";

const RULE_STRING_MAX = 255;

/**
 * The rules' key and value: wsme StringType(max_length=255), and in L7RulePOST/PUT also
 * pattern=r'^[^\r\n]*$' (Python's `$` also matches before a final newline, so one is let through).
 */
const ruleString = (pattern: boolean) =>
  z.unknown().transform((v, ctx) => {
    if (v === null) return null;
    const problem = ruleStringProblem(v, pattern);
    if (problem === undefined) return v as string;
    return issue(ctx, problem);
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
  scope: { param: "l7policy_id", field: "l7policy_id", parentKind: "l7policy", parentName: "L7Policy" },
  parentOf: (_body, params) => ({ kind: "l7policy", id: params.l7policy_id ?? "" }),
  create({ body: b, tree, id, now, params }) {
    const policyId = params.l7policy_id ?? "";
    const policy = tree.require("l7policy", policyId, "L7 Policy");
    checkL7Rule({ type: b.type, compare_type: b.compare_type, key: b.key ?? null, value: b.value });
    checkL7RuleCount(rulesOf(tree, policyId).length, policyId);
    // Octavia refuses rule changes unless the policy is mutable (_test_lb_listener_policy_statuses).
    requireStatus(policy, MUTABLE_STATUSES, "L7Policy", policyId);
    return newL7Rule(b, tree, policyId, id, now);
  },
  update({ body: b, record, tree }) {
    // Octavia validates the stored rule with the given fields (nulls included) laid over it.
    const merged = { ...record, ...definedOnly(b), invert: b.invert === null ? false : (b.invert ?? record.invert) };
    checkL7Rule(merged as L7RuleFields);
    requireStatus(tree.require("l7policy", record.l7policy_id, "L7 Policy"), MUTABLE_STATUSES, "L7Policy", record.l7policy_id);
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
    requireStatus(tree.require("l7policy", record.l7policy_id, "L7 Policy"), MUTABLE_STATUSES, "L7Policy", record.l7policy_id);
  },
};

/** The fields a PUT gave (explicit nulls included), as a partial record. */
function definedOnly(b: L7RulePut): Partial<L7Rule> {
  return Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined)) as Partial<L7Rule>;
}
