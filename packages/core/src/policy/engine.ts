// An oslo.policy-compatible policy engine (pure: no I/O). The check-string language and its
// evaluation follow oslo_policy/_parser.py and _checks.py; rule resolution (defaults, deprecated
// defaults, operator overrides, scope) follows oslo_policy/policy.py's Enforcer as Octavia 11 uses
// it (octavia/common/policy.py, which adds the `is_admin:` check).
import { pyFloat } from "../compat/repr";
import { DEFAULT_RULES, type Scope } from "./rules";

export interface Credentials {
  roles: string[];
  project_id?: string;
  user_id?: string;
  domain_id?: string;
  /** "all" for system-scoped tokens. */
  system_scope?: string;
  /** Octavia injects it: true under noauth, else checkIsAdmin's answer. */
  is_admin: boolean;
}

/** The object acted on, for `%(key)s` substitutions: Ottava passes `{ project_id }`. */
export type Target = Record<string, string | undefined>;

/** A parsed check string (oslo's Check tree). */
export type Check =
  | { type: "true" } // @ or ""
  | { type: "false" } // !
  | { type: "not"; check: Check }
  | { type: "and" | "or"; checks: Check[] }
  | { type: "rule"; name: string } // rule:NAME
  | { type: "role"; match: string } // role:NAME, case-insensitive
  | { type: "is_admin"; expected: boolean } // is_admin:True (Octavia's IsAdminCheck)
  | { type: "literal"; value: string; match: string } // 'Member':%(role)s, True:%(enabled)s
  | { type: "creds"; path: string[]; match: string }; // project_id:%(project_id)s, a.b:c

// ---------------------------------------------------------------------------------------------
// Parsing

type Token = { t: "(" | ")" | "and" | "or" | "not" } | { t: "check"; check: Check } | { t: "string"; text: string };

class PolicySyntaxError extends Error {}

/**
 * Parses a check string; a syntax error throws an Error naming `rule`. oslo.policy logs it and
 * fails closed (the rule denies everything); Ottava refuses the policy instead.
 */
export function parseCheck(text: string, rule = "(anonymous)"): Check {
  try {
    if (text === "") return { type: "true" };
    return parseTokens(tokenize(text));
  } catch (e) {
    if (!(e instanceof PolicySyntaxError)) throw e;
    throw new Error(`policy rule "${rule}": cannot parse check string ${JSON.stringify(text)}: ${e.message}`);
  }
}

/** oslo's _parse_tokenize: split on whitespace, then peel parentheses off each word. */
function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (const word of text.split(/\s+/)) {
    let tok = word;
    while (tok.startsWith("(")) {
      tokens.push({ t: "(" });
      tok = tok.slice(1);
    }
    if (!tok) continue;
    const clean = tok.replace(/\)+$/, "");
    const lowered = clean.toLowerCase();
    if (lowered === "and" || lowered === "or" || lowered === "not") tokens.push({ t: lowered });
    else if (clean && tok.length >= 2 && (tok[0] === '"' || tok[0] === "'") && tok.at(-1) === tok[0]) {
      tokens.push({ t: "string", text: tok.slice(1, -1) });
    } else if (clean) tokens.push({ t: "check", check: parseAtom(clean) });
    for (let i = clean.length; i < tok.length; i++) tokens.push({ t: ")" });
  }
  return tokens;
}

/**
 * The grammar oslo's shift-reduce parser accepts, as recursive descent (same precedence:
 * `not` over `and` over `or`, left to right):
 *   or := and ("or" and)*    and := unary ("and" unary)*    unary := "not" unary | "(" or ")" | check
 */
function parseTokens(tokens: Token[]): Check {
  let pos = 0;
  const describe = (tok: Token | undefined) =>
    tok === undefined ? "end of rule" : tok.t === "check" ? "a check" : tok.t === "string" ? `quoted string "${tok.text}"` : `"${tok.t}"`;
  const fail = (): never => {
    throw new PolicySyntaxError(`unexpected ${describe(tokens[pos])}`);
  };
  const list = (type: "and" | "or", operand: () => Check): Check => {
    const checks = [operand()];
    while (tokens[pos]?.t === type) {
      pos++;
      checks.push(operand());
    }
    return checks.length === 1 ? checks[0]! : { type, checks };
  };
  const unary = (): Check => {
    const tok = tokens[pos];
    if (tok?.t === "check") {
      pos++;
      return tok.check;
    }
    if (tok?.t === "not") {
      pos++;
      return { type: "not", check: unary() };
    }
    if (tok?.t !== "(") return fail();
    pos++;
    const inner = or();
    if (tokens[pos]?.t !== ")") return fail();
    pos++;
    return inner;
  };
  const and = () => list("and", unary);
  const or = () => list("or", and);
  const check = or();
  if (pos !== tokens.length) fail();
  return check;
}

/** oslo's _parse_check: one `kind:match` (or @, !). */
function parseAtom(text: string): Check {
  if (text === "!") return { type: "false" };
  if (text === "@") return { type: "true" };
  const colon = text.indexOf(":");
  // oslo logs "Failed to understand rule" and makes it a check that always fails.
  if (colon < 0) throw new PolicySyntaxError(`"${text}" is not a check (kind:match, @ or !)`);
  const kind = text.slice(0, colon);
  const match = text.slice(colon + 1);
  switch (kind) {
    case "rule":
      return { type: "rule", name: match };
    case "role":
      return { type: "role", match: checkFormat(match) };
    case "is_admin":
      return { type: "is_admin", expected: match.toLowerCase() === "true" };
    case "http":
    case "https":
      throw new PolicySyntaxError(`remote ${kind}: checks are not supported`);
  }
  const value = pythonLiteral(kind);
  if (value !== undefined) return { type: "literal", value, match: checkFormat(match) };
  return { type: "creds", path: kind.split("."), match: checkFormat(match) };
}

/**
 * GenericCheck's kind goes through Python's ast.literal_eval first: True, False, None, a quoted
 * string or a number is a literal (compared as Python's str() of it), anything else a credential
 * path. Returns the literal's str(), undefined for a path.
 */
function pythonLiteral(kind: string): string | undefined {
  if (kind === "True" || kind === "False" || kind === "None") return kind;
  const quoted = /^(['"])([^'"\\]*)\1$/.exec(kind);
  if (quoted) return quoted[2];
  if (/^[+-]?(0|[1-9]\d*)$/.test(kind)) return BigInt(kind.replace(/^\+/, "")).toString();
  if (/^[+-]?(\d+\.\d*|\.\d+|\d+(?=e))(e[+-]?\d+)?$/i.test(kind)) return pyFloat(Number(kind));
  // Something literal_eval would take (or choke on) in a form not supported here.
  if (/^[+-]?[\d.'"[{]|['"]/.test(kind)) throw new PolicySyntaxError(`unsupported literal ${kind}`);
  return undefined;
}

const FORMAT = /%(?:%|\(([^)]*)\)s)/g;

/** Only `%(key)s` and `%%` are supported in a match (Python's `match % target`). */
function checkFormat(match: string): string {
  if (match.replace(FORMAT, "").includes("%")) throw new PolicySyntaxError(`unsupported % format in "${match}" (only %(key)s)`);
  return match;
}

/** `match % target`; undefined where oslo gets a KeyError (and the check fails). */
function substitute(match: string, target: Target): string | undefined {
  let missing = false;
  const out = match.replace(FORMAT, (_spec, key: string | undefined) => {
    if (key === undefined) return "%";
    const value = Object.hasOwn(target, key) ? target[key] : undefined;
    if (value === undefined) missing = true;
    return value ?? "";
  });
  return missing ? undefined : out;
}

// ---------------------------------------------------------------------------------------------
// Enforcement

export interface PolicyOptions {
  /** The operator's rules (policy file): replace defaults by name, may add names. */
  overrides?: Record<string, string>;
  /** oslo.policy [oslo_policy] enforce_new_defaults (Octavia 11: false). */
  enforceNewDefaults?: boolean;
  /** oslo.policy [oslo_policy] enforce_scope (Octavia 11: false). */
  enforceScope?: boolean;
}

type Creds = Record<string, unknown> & Credentials;

export class PolicyEnforcer {
  readonly #rules = new Map<string, Check>();
  readonly #scopes = new Map<string, readonly Scope[]>();
  readonly #enforceScope: boolean;

  constructor(opts: PolicyOptions = {}) {
    const overrides = opts.overrides ?? {};
    this.#enforceScope = opts.enforceScope ?? false;
    for (const rule of DEFAULT_RULES) {
      // Scope types stay the registered default's, even when the operator overrides the rule.
      if (rule.scopes) this.#scopes.set(rule.name, rule.scopes);
      if (Object.hasOwn(overrides, rule.name)) continue;
      const check = parseCheck(rule.check, rule.name);
      const orDeprecated = rule.deprecated !== undefined && rule.deprecated !== rule.check && !opts.enforceNewDefaults;
      this.#rules.set(rule.name, orDeprecated ? { type: "or", checks: [check, parseCheck(rule.deprecated!, rule.name)] } : check);
    }
    for (const [name, text] of Object.entries(overrides)) {
      if (typeof text !== "string") throw new Error(`policy rule "${name}" must be a check string`);
      this.#rules.set(name, parseCheck(text, name));
    }
    this.#refuseCycles();
  }

  /** Whether `rule` is defined (a default or an operator's rule). */
  has(rule: string): boolean {
    return this.#rules.has(rule);
  }

  /** Whether `creds` may do `rule` on `target`. An undefined rule is a bug: it throws. */
  enforce(rule: string, target: Target, creds: Credentials): boolean {
    const check = this.#rules.get(rule);
    if (check === undefined) throw new Error(`policy rule "${rule}" is not defined`);
    const scopes = this.#scopes.get(rule);
    if (this.#enforceScope && scopes && !scopes.includes(tokenScope(creds) as Scope)) return false;
    // oslo.policy mirrors system_scope as `system` in the credentials.
    const c: Creds = creds.system_scope ? { ...creds, system: creds.system_scope } : { ...creds };
    return this.#check(check, target, c);
  }

  /**
   * Octavia's check_is_admin: `context_is_admin` with the credentials as the target (is_admin
   * itself not yet known: false). A token that is not system-scoped is never admin under
   * enforce_scope (oslo raises InvalidScope, Octavia answers False).
   */
  checkIsAdmin(creds: Omit<Credentials, "is_admin">): boolean {
    const { project_id, user_id, domain_id, system_scope } = creds;
    return this.enforce("context_is_admin", { project_id, user_id, domain_id, system_scope }, { ...creds, is_admin: false });
  }

  #check(check: Check, target: Target, creds: Creds): boolean {
    switch (check.type) {
      case "true":
        return true;
      case "false":
        return false;
      case "not":
        return !this.#check(check.check, target, creds);
      case "and":
        return check.checks.every((c) => this.#check(c, target, creds));
      case "or":
        return check.checks.some((c) => this.#check(c, target, creds));
      case "rule": {
        const rule = this.#rules.get(check.name);
        return rule !== undefined && this.#check(rule, target, creds); // an undefined rule fails closed
      }
      case "role": {
        const role = substitute(check.match, target)?.toLowerCase();
        return role !== undefined && creds.roles.some((r) => r.toLowerCase() === role);
      }
      case "is_admin":
        return creds.is_admin === check.expected;
      case "literal":
        return substitute(check.match, target) === check.value;
      case "creds": {
        const match = substitute(check.match, target);
        return match !== undefined && findInCreds(creds, check.path, match);
      }
    }
  }

  /** oslo recurses forever on a rule that refers to itself; refuse such a policy. */
  #refuseCycles(): void {
    const done = new Set<string>();
    const visit = (name: string, trail: string[]): void => {
      if (trail.includes(name)) throw new Error(`policy rule "${name}" refers to itself: ${[...trail, name].join(" -> ")}`);
      if (done.has(name)) return;
      const refs: string[] = [];
      const walk = (c: Check): void => {
        if (c.type === "rule") refs.push(c.name);
        else if (c.type === "not") walk(c.check);
        else if (c.type === "and" || c.type === "or") c.checks.forEach(walk);
      };
      const check = this.#rules.get(name);
      if (check) walk(check);
      for (const ref of refs) visit(ref, [...trail, name]);
      done.add(name);
    };
    for (const name of this.#rules.keys()) visit(name, []);
  }
}

/** oslo's Enforcer._enforce_scope: which kind of token this is. */
function tokenScope(creds: Credentials): "system" | "domain" | "project" {
  return creds.system_scope ? "system" : creds.domain_id ? "domain" : "project";
}

/** GenericCheck._find_in_dict: follow `path` (any list element may match) and compare str(). */
function findInCreds(value: unknown, path: string[], match: string): boolean {
  if (path.length === 0) return pythonStr(value) === match;
  const [key, ...rest] = path as [string, ...string[]];
  if (value === null || typeof value !== "object" || !Object.hasOwn(value, key)) return false;
  const next = (value as Record<string, unknown>)[key];
  return Array.isArray(next) ? next.some((v) => findInCreds(v, rest, match)) : findInCreds(next, rest, match);
}

/** Python's str() of a credential value; undefined for none (never matches, where oslo compares "None"). */
function pythonStr(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : pyFloat(value);
  return undefined;
}
