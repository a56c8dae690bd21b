// Who may do what. Under Octavia's `noauth` strategy every caller is an admin; the Keystone
// strategy (with Octavia's full default policy) plugs in here by building a different context.
import { policyForbidden } from "./faults";

export interface RequestContext {
  requestId: string;
  /** The caller's project: X-Project-Id under noauth, the token's project under keystone. */
  projectId: string | undefined;
  roles: string[];
  /** Admins see and change every project's objects. */
  isAdmin: boolean;
}

/** Octavia's noauth context: the project from X-Project-Id, every caller an admin. */
export function noauthContext(requestId: string, projectHeader: string | undefined): RequestContext {
  return { requestId, projectId: projectHeader || undefined, roles: ["admin"], isAdmin: true };
}

/** The API actions of Octavia's policy (octavia/policies), named as there. */
export type Action = "get_all" | "get_one" | "post" | "put" | "delete" | "get_stats" | "get_status" | "put_failover";

/** Enforces a rule on an object of `ownerProject`; 403 as Octavia answers when denied. */
export function authorize(ctx: RequestContext, _rule: string, ownerProject: string | undefined): void {
  if (ctx.isAdmin) return;
  if (ownerProject === undefined || ctx.projectId !== ownerProject) throw policyForbidden();
}

/** Whose objects a list shows: undefined means every project's (admins). */
export function listScope(ctx: RequestContext, projectFilter: string | undefined): string | undefined {
  if (ctx.isAdmin) return projectFilter;
  return ctx.projectId;
}
