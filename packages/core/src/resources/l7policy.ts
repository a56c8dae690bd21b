// The L7 policy resource (octavia/api/v2/types/l7policy.py, controllers/l7policy.py,
// validate.sanitize_l7policy_api_args and L7PolicyRepository): what a listener does with the
// requests an L7 policy's rules match, under /v2/lbaas/l7policies.
import { randomUUID } from "node:crypto";
import * as z from "zod";
import {
  DESCRIPTION_MAX,
  L7POLICY_ACTION_REDIRECT_PREFIX,
  L7POLICY_ACTION_REDIRECT_TO_POOL,
  L7POLICY_ACTION_REDIRECT_TO_URL,
  L7POLICY_ACTION_REJECT,
  L7POLICY_ACTIONS,
  L7POLICY_REDIRECT_HTTP_CODES,
  MAX_L7RULES_PER_L7POLICY,
  MAX_POLICY_POSITION,
  MIN_POLICY_POSITION,
  NAME_MAX,
  OFFLINE,
  PENDING_CREATE,
  VALID_LISTENER_POOL_PROTOCOL_MAP,
} from "../constants";
import { Fault, notFound, validation } from "../faults";
import type { TreeRecord } from "../ports";
import { bool, integer, str, tags, uuid } from "../validation";
import { pythonType, pyTruthy } from "../compat/repr";
import { isValidUrl } from "../compat/url";
import { boolConversion, intConversion, issue, listConversion, pythonInt, wsmeChoice, wsmeObject } from "../compat/wsme";
import type { ChildRef, ChildResource, Tree } from "./child";
import { apiTime, octaviaFilters, type ResourceDescriptor } from "./descriptor";
import { policiesOf as listenerPolicies } from "./relations";
import { checkInlineL7Rule, inlineRulesConversion, L7RuleSingleCreate, newL7Rule, type L7Rule } from "./l7rule";

const ROOT = "l7policy";

/** wsme Enum(int, ...), once intConversion has let the value through. */
const httpCode = () =>
  z.unknown().transform((v, ctx) => {
    const n = pythonInt(v);
    if (typeof n === "number" && (L7POLICY_REDIRECT_HTTP_CODES as readonly number[]).includes(n)) return n;
    return issue(ctx, typeof n !== "number" ? n : `Value should be one of: ${L7POLICY_REDIRECT_HTTP_CODES.join(", ")}`);
  });

/** Octavia's URLType: validate.url, requiring an http or https URL. */
const url = () =>
  z.unknown().transform((v, ctx) => {
    if (typeof v === "string" && isValidUrl(v)) return v;
    const message =
      typeof v === "string" ? "Value must be a valid URL string" : `expected string or bytes-like object, got '${pythonType(v)}'`;
    return issue(ctx, message);
  });

const CONVERSIONS = {
  admin_state_up: boolConversion,
  position: intConversion,
  rules: inlineRulesConversion,
  tags: listConversion(),
  redirect_http_code: intConversion,
};

export const L7PolicyPost = wsmeObject(
  {
    name: str(NAME_MAX).nullish(),
    description: str(DESCRIPTION_MAX).nullish(),
    admin_state_up: bool().nullish(),
    // Deprecated and ignored (as tenant_id): a policy belongs to its load balancer's project.
    project_id: str(36).nullish(),
    action: wsmeChoice(L7POLICY_ACTIONS),
    redirect_pool_id: uuid().nullish(),
    redirect_url: url().nullish(),
    redirect_prefix: url().nullish(),
    position: integer(MIN_POLICY_POSITION, MAX_POLICY_POSITION).nullish(),
    listener_id: uuid().nullable(),
    rules: z.array(L7RuleSingleCreate.nullable(), { error: "Value should be a list" }).nullish(),
    tags: tags().nullish(),
    redirect_http_code: httpCode().nullish(),
    tenant_id: str(36).nullish(),
  },
  CONVERSIONS,
  { name: "l7policy_", root: ROOT },
);
export type L7PolicyPost = z.output<typeof L7PolicyPost>;

export const L7PolicyPut = wsmeObject(
  {
    name: str(NAME_MAX).nullish(),
    description: str(DESCRIPTION_MAX).nullish(),
    admin_state_up: bool().nullish(),
    action: wsmeChoice(L7POLICY_ACTIONS).optional(),
    redirect_pool_id: uuid().nullish(),
    redirect_url: url().nullish(),
    redirect_prefix: url().nullish(),
    position: integer(MIN_POLICY_POSITION, MAX_POLICY_POSITION).nullish(),
    tags: tags().nullish(),
    redirect_http_code: httpCode().nullish(),
  },
  CONVERSIONS,
  { name: "l7policy_", root: ROOT },
);
export type L7PolicyPut = z.output<typeof L7PolicyPut>;

/**
 * The rules given inline with a new policy, carried from create() to sideEffects() on the record
 * under a symbol: it survives the mechanism's spreads, is never stored (the DynamoDB marshaller only
 * reads string keys) and lets the 201 body list them.
 */
const INLINE_RULES: unique symbol = Symbol("l7policy inline rules");

/** A policy as stored: `loadbalancer_id` is kept but not answered. */
export type L7Policy = TreeRecord & {
  id: string;
  project_id: string;
  listener_id: string;
  loadbalancer_id: string;
  name: string | null;
  description: string | null;
  admin_state_up: boolean;
  action: string;
  redirect_pool_id: string | null;
  redirect_url: string | null;
  redirect_prefix: string | null;
  redirect_http_code: number | null;
  position: number;
  tags: string[];
  provisioning_status: string;
  operating_status: string;
  created_at: string;
  updated_at: string | null;
  [INLINE_RULES]?: L7Rule[];
  /** Its rules' ids, oldest first (relations.ts). */
  rule_ids?: string[];
};

const policiesOf = (tree: Tree, listenerId: string, except?: string) => listenerPolicies<L7Policy>(tree, listenerId, except);

export const l7PolicyDescriptor: ResourceDescriptor<L7Policy> = {
  kind: "l7policy",
  displayName: "L7 Policy",
  quotaField: "l7policy",
  root: ROOT,
  collection: "l7policies",
  attributes: [
    "id",
    "name",
    "description",
    "provisioning_status",
    "operating_status",
    "admin_state_up",
    "project_id",
    "tenant_id",
    "action",
    "listener_id",
    "redirect_pool_id",
    "redirect_url",
    "redirect_prefix",
    "position",
    "rules",
    "created_at",
    "updated_at",
    "tags",
    "redirect_http_code",
  ],
  filters: octaviaFilters(
    [
      "action",
      "created_at",
      "description",
      "enabled",
      "id",
      "listener_id",
      "name",
      "operating_status",
      "position",
      "project_id",
      "provisioning_status",
      "redirect_http_code",
      "redirect_pool_id",
      "redirect_prefix",
      "redirect_url",
      "updated_at",
    ],
    { admin_state_up: "enabled" },
  ),
  model: (p) => ({ enabled: p.admin_state_up }),
  listReads: { tenant_id: ["project_id"], rules: ["rule_ids"], enabled: ["admin_state_up"] },
  toResponse: (p) => {
    return {
      id: p.id,
      name: p.name ?? "",
      description: p.description ?? "",
      provisioning_status: p.provisioning_status,
      operating_status: p.operating_status,
      admin_state_up: p.admin_state_up,
      project_id: p.project_id,
      tenant_id: p.project_id,
      action: p.action,
      listener_id: p.listener_id,
      redirect_pool_id: p.redirect_pool_id,
      redirect_url: p.redirect_url,
      redirect_prefix: p.redirect_prefix,
      position: p.position,
      rules: (p.rule_ids ?? []).map((id) => ({ id })),
      created_at: apiTime(p.created_at),
      updated_at: apiTime(p.updated_at),
      tags: p.tags,
      redirect_http_code: p.redirect_http_code,
    };
  },
};

// ---- sanitize_l7policy_api_args ---------------------------------------------------------------

type Args = Record<string, unknown>;
const invalidArgs = (msg: string) => new Fault(400, `Invalid L7 Policy arguments: ${msg}`);

/**
 * validate.sanitize_l7policy_api_args, line for line: the action and the redirect fields made
 * consistent (a redirect target given implies its action), or a 400. `args` holds the attributes
 * given (all of them on create), explicit nulls included. The URLs were checked when parsed.
 */
function sanitize(args: Args, create: boolean): Args {
  if ("action" in args) {
    switch (args.action) {
      case L7POLICY_ACTION_REJECT:
        args.redirect_url = null;
        args.redirect_pool_id = null;
        break;
      case L7POLICY_ACTION_REDIRECT_TO_URL:
        if (!pyTruthy(args.redirect_url)) throw invalidArgs("redirect_url must not be None");
        args.redirect_pool_id = null;
        break;
      case L7POLICY_ACTION_REDIRECT_TO_POOL:
        if (!pyTruthy(args.redirect_pool_id)) throw invalidArgs("redirect_pool_id or redirect_pool must not be None");
        args.redirect_url = null;
        break;
      case L7POLICY_ACTION_REDIRECT_PREFIX:
        if (!pyTruthy(args.redirect_prefix)) throw invalidArgs("redirect_prefix must not be None");
        break;
      default:
        throw new Fault(400, `Invalid L7 Policy action specified: ${args.action ?? "None"}`);
    }
  }
  if (pyTruthy(args.redirect_pool_id) && (pyTruthy(args.redirect_url) || pyTruthy(args.redirect_prefix))) {
    throw invalidArgs("Cannot specify redirect_pool_id and redirect_url or redirect_prefix at the same time");
  }
  if (pyTruthy(args.redirect_pool_id)) {
    Object.assign(args, { action: L7POLICY_ACTION_REDIRECT_TO_POOL, redirect_url: null, redirect_prefix: null, redirect_http_code: null });
  }
  if (pyTruthy(args.redirect_url)) {
    Object.assign(args, { action: L7POLICY_ACTION_REDIRECT_TO_URL, redirect_pool_id: null, redirect_prefix: null });
    if (!pyTruthy(args.redirect_http_code)) args.redirect_http_code = 302;
  }
  if (pyTruthy(args.redirect_prefix)) {
    Object.assign(args, { action: L7POLICY_ACTION_REDIRECT_PREFIX, redirect_pool_id: null, redirect_url: null });
    if (!pyTruthy(args.redirect_http_code)) args.redirect_http_code = 302;
  }
  if (create && !("action" in args)) throw new Fault(400, "Invalid L7 Policy action specified: None");
  if (Object.keys(args).length === 0) throw invalidArgs("Invalid update options");
  return args;
}

// ---- checks against the tree --------------------------------------------------------------------

function listenerOf(tree: Tree, listenerId: string): TreeRecord {
  const listener = tree.get("listener", listenerId);
  if (!listener) throw notFound("Listener", listenerId);
  return listener;
}

/** The controller's redirect pool lookup and _validate_protocol. */
function checkRedirectPool(tree: Tree, listener: TreeRecord, poolId: string): void {
  const pool = tree.get("pool", poolId);
  if (!pool) throw notFound("Pool", poolId);
  const allowed = VALID_LISTENER_POOL_PROTOCOL_MAP[String(listener.protocol)] ?? [];
  if (!allowed.includes(String(pool.protocol))) {
    throw validation(
      `The pool protocol '${String(pool.protocol)}' is invalid while the listener protocol is '${String(listener.protocol)}'.`,
    );
  }
}

// ---- positions (the listener's ordering list, as L7PolicyRepository keeps it) ----------------------

/** Writes giving `ordered` the positions 1..n, for the policies whose position changes. */
function renumber(ordered: L7Policy[], except?: string) {
  return ordered.flatMap((p, i) =>
    p.id !== except && p.position !== i + 1 ? [{ kind: "l7policy", id: p.id, set: { position: i + 1 } }] : [],
  );
}

/** The list with `policy` (re)inserted at its position, as Python's list.insert places it. */
function placed(tree: Tree, policy: L7Policy): L7Policy[] {
  const list = policiesOf(tree, policy.listener_id, policy.id);
  list.splice(policy.position - 1, 0, policy);
  return list;
}

// ---- the resource -------------------------------------------------------------------------------

export const l7PolicyResource: ChildResource<L7Policy, L7PolicyPost, L7PolicyPut> = {
  descriptor: l7PolicyDescriptor,
  argument: "l7policy_",
  post: L7PolicyPost,
  put: L7PolicyPut,
  // wsme lets a null listener_id through: Octavia then looks up "None".
  parentOf: (b) => ({ kind: "listener", id: b.listener_id ?? "None" }),
  create({ body: b, tree, id, now }) {
    const listener = listenerOf(tree, b.listener_id ?? "None");
    if (listener.protocol === "PROMETHEUS") throw new Fault(400, "Protocol PROMETHEUS listeners cannot have child objects.");
    if (b.redirect_pool_id) checkRedirectPool(tree, listener, b.redirect_pool_id);
    const args = sanitize({ ...b, admin_state_up: b.admin_state_up !== null && b.admin_state_up !== false }, true);

    // db_prepare.create_l7policy: the inline rules, checked as the rule controller checks them.
    const rules = b.rules ?? [];
    if (rules.length > MAX_L7RULES_PER_L7POLICY) throw new Fault(409, `Too many rules on L7 policy ${id}`);
    rules.forEach(checkInlineL7Rule);

    const action = String(args.action);
    // The repository's _pool_check: the redirect pool must be of this load balancer.
    if (action === L7POLICY_ACTION_REDIRECT_TO_POOL && !tree.get("pool", String(args.redirect_pool_id))) {
      throw notFound("Pool", String(args.redirect_pool_id));
    }
    // A new policy goes at the end, then moves to the position asked for (1-based) if there is one.
    const count = policiesOf(tree, listener.id).length;
    const position = Math.min(b.position ?? MAX_POLICY_POSITION, count + 1);
    return {
      id,
      project_id: tree.lb.project_id,
      listener_id: listener.id,
      loadbalancer_id: tree.lb.id,
      name: b.name ?? null,
      description: b.description ?? null,
      admin_state_up: args.admin_state_up as boolean,
      action,
      redirect_pool_id: (args.redirect_pool_id as string | null) ?? null,
      redirect_url: (args.redirect_url as string | null) ?? null,
      redirect_prefix: (args.redirect_prefix as string | null) ?? null,
      redirect_http_code: (args.redirect_http_code as number | null) ?? null,
      position,
      tags: b.tags ?? [],
      provisioning_status: PENDING_CREATE,
      operating_status: OFFLINE,
      created_at: now,
      updated_at: null,
      [INLINE_RULES]: rules.map((r) => newL7Rule(r!, tree, id, randomUUID(), now)),
    };
  },
  update({ body: b, record, tree }) {
    // The attributes given, explicit nulls included; wsme's to_dict makes a null admin_state_up False.
    const given: Args = Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined));
    if (given.admin_state_up === null) given.admin_state_up = false;
    const args = sanitize(given, false);
    const listener = listenerOf(tree, record.listener_id);
    if (pyTruthy(args.redirect_pool_id)) checkRedirectPool(tree, listener, String(args.redirect_pool_id));
    if (args.action === L7POLICY_ACTION_REDIRECT_TO_POOL && !tree.get("pool", String(args.redirect_pool_id))) {
      throw notFound("Pool", String(args.redirect_pool_id));
    }
    // The repository clears what the (new) action does not use.
    const cleared: Record<string, Args> = {
      [L7POLICY_ACTION_REJECT]: { redirect_url: null, redirect_pool_id: null, redirect_prefix: null, redirect_http_code: null },
      [L7POLICY_ACTION_REDIRECT_TO_URL]: { redirect_pool_id: null, redirect_prefix: null },
      [L7POLICY_ACTION_REDIRECT_TO_POOL]: { redirect_url: null, redirect_prefix: null, redirect_http_code: null },
      [L7POLICY_ACTION_REDIRECT_PREFIX]: { redirect_url: null, redirect_pool_id: null },
    };
    const { position, ...rest } = args;
    const set: Partial<L7Policy> = {
      ...rest,
      ...(typeof args.action === "string" ? cleared[args.action] : {}),
      updated_at: new Date().toISOString(),
    };
    if (set.tags === null) set.tags = [];
    // A new position: out of the listener's list and back in at that (1-based) place.
    if (typeof position === "number" && position !== record.position) {
      const list = policiesOf(tree, record.listener_id, record.id);
      list.splice(position - 1, 0, record);
      set.position = list.indexOf(record) + 1;
    }
    return set;
  },
  parents: (record) => [{ kind: "listener", id: record.listener_id }],
  cascade: (record, tree): ChildRef[] =>
    tree
      .of<L7Rule>("l7rule")
      .filter((r) => r.l7policy_id === record.id)
      .map((r) => ({ kind: "l7rule", id: r.id })),
  sideEffects(action, record, tree) {
    // The listener's policies keep positions 1..n: renumbered around a new, moved or deleted one.
    const writes: ReturnType<NonNullable<ChildResource["sideEffects"]>> =
      action === "delete" ? renumber(policiesOf(tree, record.listener_id, record.id)) : renumber(placed(tree, record), record.id);
    // The inline rules of a new policy are created with it (ChildWrite puts, which the mechanism passes on).
    const inline = action === "create" ? (record[INLINE_RULES] ?? []) : [];
    return [...writes, ...(inline.map((rule) => ({ kind: "l7rule", put: rule })) as unknown as typeof writes)];
  },
};
