// Who may do what: the caller's context (from X-Project-Id under noauth, from a validated Keystone
// token under keystone) checked against Octavia's policy (./policy/rules.ts, ./policy/engine.ts) on
// the object's project, as octavia/common/policy.py and api/v2/controllers/base.py do.
import { policyForbidden, projectIdOf } from "./faults";
import { PolicyEnforcer, type Credentials } from "./policy/engine";

export { PolicyEnforcer, parseCheck, type Credentials, type PolicyOptions } from "./policy/engine";
export { DEFAULT_RULES } from "./policy/rules";

export interface RequestContext {
  requestId: string;
  /** The caller's project: X-Project-Id under noauth, the token's project under keystone. */
  projectId: string | undefined;
  userId: string | undefined;
  roles: string[];
  /** "all" for a system-scoped token. */
  systemScope: string | undefined;
  /** Octavia's context.is_admin: context_is_admin holds, or the strategy is noauth. */
  isAdmin: boolean;
  /** The rules in force (defaults, switches and the operator's policy file). */
  policy: PolicyEnforcer;
}

let defaults: PolicyEnforcer | undefined;

/** Octavia 11's default policy with its default switches, parsed on first use (the API parses its own, with the settings). */
export const defaultPolicy = (): PolicyEnforcer => (defaults ??= new PolicyEnforcer());

/** Octavia's noauth context: the project from X-Project-Id, every caller an admin. */
export function noauthContext(
  requestId: string,
  projectHeader: string | undefined,
  policy: PolicyEnforcer = defaultPolicy(),
): RequestContext {
  return {
    requestId,
    projectId: projectHeader ? projectIdOf(projectHeader) : undefined,
    userId: undefined,
    roles: ["admin"],
    systemScope: undefined,
    isAdmin: true,
    policy,
  };
}

/** A Keystone caller's context: is_admin as Octavia's Context computes it (check_is_admin). */
export function tokenContext(
  requestId: string,
  token: { projectId: string | undefined; userId: string; domainId?: string; roles: string[]; systemScope: string | undefined },
  policy: PolicyEnforcer,
): RequestContext {
  const creds = {
    roles: token.roles,
    project_id: token.projectId,
    user_id: token.userId,
    domain_id: token.domainId,
    system_scope: token.systemScope,
  };
  return {
    requestId,
    projectId: token.projectId,
    userId: token.userId,
    roles: token.roles,
    systemScope: token.systemScope,
    isAdmin: policy.checkIsAdmin(creds),
    policy,
  };
}

function credentials(ctx: RequestContext): Credentials {
  return { roles: ctx.roles, project_id: ctx.projectId, user_id: ctx.userId, system_scope: ctx.systemScope, is_admin: ctx.isAdmin };
}

/** Does the policy let the caller do `rule` on an object of `ownerProject`? */
export function can(ctx: RequestContext, rule: string, ownerProject: string | undefined): boolean {
  return ctx.policy.enforce(rule, { project_id: ownerProject }, credentials(ctx));
}

/** Enforces a rule on an object of `ownerProject`; 403 as Octavia answers when denied. */
export function authorize(ctx: RequestContext, rule: string, ownerProject: string | undefined): void {
  if (!can(ctx, rule, ownerProject)) throw policyForbidden();
}

/**
 * Whose objects a list of `kind` shows (Octavia's _auth_get_all): every project's (undefined) or the
 * filtered one for callers allowed `<kind>:get_all-global`; otherwise the caller's own project
 * (asking for another's is a 403).
 */
export function listScope(ctx: RequestContext, kind: string, projectFilter: string | undefined): string | undefined {
  if (can(ctx, `os_load-balancer_api:${kind}:get_all-global`, projectFilter)) return projectFilter;
  const project = projectFilter ?? ctx.projectId;
  if (project === undefined) throw policyForbidden();
  authorize(ctx, `os_load-balancer_api:${kind}:get_all`, project);
  return project;
}
