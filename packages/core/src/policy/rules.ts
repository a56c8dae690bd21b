// The default policy: every rule of Octavia 11's octavia/policies (base.py and one module per
// resource), plus Ottava's own API rules (marked `ottava: true`) and the few rules taken from
// Octavia master (marked `master:` with where they are in master's source). An operator's policy
// file replaces rules by name (PolicyEnforcer's `overrides`). Check strings are oslo.policy's language.

export type Scope = "system" | "project";
export type Method = "GET" | "POST" | "PUT" | "DELETE";

export interface PolicyRule {
  /** The rule's name, as written in policy.yaml. */
  name: string;
  /** The default check string. */
  check: string;
  /**
   * Octavia's pre-Wallaby check string for the same name. Unless `enforce_new_defaults`, oslo.policy
   * evaluates `(check) or (deprecated)` for a rule the operator has not overridden.
   */
  deprecated?: string;
  /** The token scopes a top-level check of this rule accepts when `enforce_scope` is on. */
  scopes?: readonly Scope[];
  /** The API call the rule guards (documentation only). */
  method?: Method;
  path?: string;
  /** Not in Octavia at all: an Ottava extension. */
  ottava?: true;
  /**
   * Not in Octavia 11 as written here: a rule added or changed in Octavia master, where master's
   * source (octavia/ in openstack/octavia) defines it. Octavia 11's policy fixture does not cover it.
   */
  master?: string;
}

const base = (name: string, check: string, scopes: Scope[], deprecated?: string): PolicyRule =>
  deprecated === undefined ? { name, check, scopes } : { name, check, scopes, deprecated };

/** An `os_load-balancer_api:` rule guarding `operation` ("METHOD /path"). */
const api = (name: string, check: string, operation: string): PolicyRule => {
  const [method, path] = operation.split(" ") as [Method, string];
  return { name: `os_load-balancer_api:${name}`, check, method, path };
};
const ottava = (name: string, check: string, operation: string): PolicyRule => ({ ...api(name, check, operation), ottava: true });
/** A rule as Octavia master defines it, at `source` ("file:lines"), where Octavia 11's differs or is missing. */
const master = (rule: PolicyRule, source: string): PolicyRule => ({ ...rule, master: source });

const READ = "rule:load-balancer:read";
const READ_GLOBAL = "rule:load-balancer:read-global";
const WRITE = "rule:load-balancer:write";
const ADMIN = "rule:load-balancer:admin";
const READ_QUOTA = "rule:load-balancer:read-quota";
const READ_QUOTA_GLOBAL = "rule:load-balancer:read-quota-global";
const WRITE_QUOTA = "rule:load-balancer:write-quota";

export const DEFAULT_RULES: readonly PolicyRule[] = [
  // OpenStack-wide personas (octavia/policies/base.py)
  base("system-admin", "role:admin and system_scope:all", ["system"]),
  base("system-reader", "role:reader and system_scope:all", ["system"]),
  base("project-member", "role:member and project_id:%(project_id)s", ["project"]),
  base("project-reader", "role:reader and project_id:%(project_id)s", ["project"]),

  // Octavia's roles. `is_admin:True` is the credential Octavia injects: noauth, or context_is_admin.
  base("context_is_admin", "role:load-balancer_admin or rule:system-admin", ["system"], "role:admin or role:load-balancer_admin"),
  base("load-balancer:owner", "project_id:%(project_id)s", ["project"]),
  base(
    "load-balancer:observer_and_owner",
    "role:load-balancer_observer and rule:project-reader",
    ["project"],
    "role:load-balancer_observer and rule:load-balancer:owner",
  ),
  base("load-balancer:global_observer", "role:load-balancer_global_observer or rule:system-reader", ["system"]),
  base(
    "load-balancer:member_and_owner",
    "role:load-balancer_member and rule:project-member",
    ["project"],
    "role:load-balancer_member and rule:load-balancer:owner",
  ),

  // API access methods, what the API rules below refer to
  base("load-balancer:admin", "is_admin:True or role:load-balancer_admin or rule:system-admin", ["system"]),
  base(
    "load-balancer:read",
    "rule:load-balancer:observer_and_owner or rule:load-balancer:global_observer or " +
      "rule:load-balancer:member_and_owner or rule:load-balancer:admin",
    ["project", "system"],
  ),
  base("load-balancer:read-global", "rule:load-balancer:global_observer or rule:load-balancer:admin", ["system"]),
  base("load-balancer:write", "rule:load-balancer:member_and_owner or rule:load-balancer:admin", ["project", "system"]),
  base(
    "load-balancer:read-quota",
    "rule:load-balancer:observer_and_owner or rule:load-balancer:global_observer or " +
      "rule:load-balancer:member_and_owner or role:load-balancer_quota_admin or rule:load-balancer:admin",
    ["project", "system"],
  ),
  base(
    "load-balancer:read-quota-global",
    "rule:load-balancer:global_observer or role:load-balancer_quota_admin or rule:load-balancer:admin",
    ["system"],
  ),
  base("load-balancer:write-quota", "role:load-balancer_quota_admin or rule:load-balancer:admin", ["system"]),
  // Octavia master's keystone service role (the Aodh evaluator's user), not in Octavia 11.
  master(base("service", "role:service", ["project"]), "octavia/policies/keystone_default_roles.py:54-57"),

  // The API rules (os_load-balancer_api:*). No scope_types: never denied for the token's scope.
  // Paths as Octavia documents them (flavors and availability zones under /v2.0).
  // flavor
  api("flavor:get_all", READ, "GET /v2.0/lbaas/flavors"),
  api("flavor:post", ADMIN, "POST /v2.0/lbaas/flavors"),
  api("flavor:put", ADMIN, "PUT /v2.0/lbaas/flavors/{flavor_id}"),
  api("flavor:get_one", READ, "GET /v2.0/lbaas/flavors/{flavor_id}"),
  api("flavor:delete", ADMIN, "DELETE /v2.0/lbaas/flavors/{flavor_id}"),

  // flavor-profile
  api("flavor-profile:get_all", ADMIN, "GET /v2.0/lbaas/flavorprofiles"),
  api("flavor-profile:post", ADMIN, "POST /v2.0/lbaas/flavorprofiles"),
  api("flavor-profile:put", ADMIN, "PUT /v2.0/lbaas/flavorprofiles/{flavor_profile_id}"),
  api("flavor-profile:get_one", ADMIN, "GET /v2.0/lbaas/flavorprofiles/{flavor_profile_id}"),
  api("flavor-profile:delete", ADMIN, "DELETE /v2.0/lbaas/flavorprofiles/{flavor_profile_id}"),

  // availability-zone
  api("availability-zone:get_all", READ, "GET /v2.0/lbaas/availabilityzones"),
  api("availability-zone:post", ADMIN, "POST /v2.0/lbaas/availabilityzones"),
  api("availability-zone:put", ADMIN, "PUT /v2.0/lbaas/availabilityzones/{availability_zone_id}"),
  api("availability-zone:get_one", READ, "GET /v2.0/lbaas/availabilityzones/{availability_zone_id}"),
  api("availability-zone:delete", ADMIN, "DELETE /v2.0/lbaas/availabilityzones/{availability_zone_id}"),

  // availability-zone-profile
  api("availability-zone-profile:get_all", ADMIN, "GET /v2.0/lbaas/availabilityzoneprofiles"),
  api("availability-zone-profile:post", ADMIN, "POST /v2.0/lbaas/availabilityzoneprofiles"),
  api("availability-zone-profile:put", ADMIN, "PUT /v2.0/lbaas/availabilityzoneprofiles/{availability_zone_profile_id}"),
  api("availability-zone-profile:get_one", ADMIN, "GET /v2.0/lbaas/availabilityzoneprofiles/{availability_zone_profile_id}"),
  api("availability-zone-profile:delete", ADMIN, "DELETE /v2.0/lbaas/availabilityzoneprofiles/{availability_zone_profile_id}"),

  // healthmonitor
  api("healthmonitor:get_all", READ, "GET /v2/lbaas/healthmonitors"),
  api("healthmonitor:get_all-global", READ_GLOBAL, "GET /v2/lbaas/healthmonitors"),
  api("healthmonitor:post", WRITE, "POST /v2/lbaas/healthmonitors"),
  api("healthmonitor:get_one", READ, "GET /v2/lbaas/healthmonitors/{healthmonitor_id}"),
  api("healthmonitor:put", WRITE, "PUT /v2/lbaas/healthmonitors/{healthmonitor_id}"),
  api("healthmonitor:delete", WRITE, "DELETE /v2/lbaas/healthmonitors/{healthmonitor_id}"),

  // l7policy
  api("l7policy:get_all", READ, "GET /v2/lbaas/l7policies"),
  api("l7policy:get_all-global", READ_GLOBAL, "GET /v2/lbaas/l7policies"),
  api("l7policy:post", WRITE, "POST /v2/lbaas/l7policies"),
  api("l7policy:get_one", READ, "GET /v2/lbaas/l7policies/{l7policy_id}"),
  api("l7policy:put", WRITE, "PUT /v2/lbaas/l7policies/{l7policy_id}"),
  api("l7policy:delete", WRITE, "DELETE /v2/lbaas/l7policies/{l7policy_id}"),

  // l7rule
  api("l7rule:get_all", READ, "GET /v2/lbaas/l7policies/{l7policy_id}/rules"),
  api("l7rule:post", WRITE, "POST /v2/lbaas/l7policies/{l7policy_id}/rules"),
  api("l7rule:get_one", READ, "GET /v2/lbaas/l7policies/{l7policy_id}/rules/{l7rule_id}"),
  api("l7rule:put", WRITE, "PUT /v2/lbaas/l7policies/{l7policy_id}/rules/{l7rule_id}"),
  api("l7rule:delete", WRITE, "DELETE /v2/lbaas/l7policies/{l7policy_id}/rules/{l7rule_id}"),

  // listener
  api("listener:get_all", READ, "GET /v2/lbaas/listeners"),
  api("listener:get_all-global", READ_GLOBAL, "GET /v2/lbaas/listeners"),
  api("listener:post", WRITE, "POST /v2/lbaas/listeners"),
  api("listener:get_one", READ, "GET /v2/lbaas/listeners/{listener_id}"),
  api("listener:put", WRITE, "PUT /v2/lbaas/listeners/{listener_id}"),
  api("listener:delete", WRITE, "DELETE /v2/lbaas/listeners/{listener_id}"),
  api("listener:get_stats", READ, "GET /v2/lbaas/listeners/{listener_id}/stats"),

  // loadbalancer
  api("loadbalancer:get_all", READ, "GET /v2/lbaas/loadbalancers"),
  api("loadbalancer:get_all-global", READ_GLOBAL, "GET /v2/lbaas/loadbalancers"),
  api("loadbalancer:post", WRITE, "POST /v2/lbaas/loadbalancers"),
  // v2.29, not in Octavia 11: checked only when vip_sg_ids is given.
  master(api("loadbalancer:post:vip_sg_ids", WRITE, "POST /v2/lbaas/loadbalancers"), "octavia/policies/loadbalancer.py:37-42"),
  api("loadbalancer:get_one", READ, "GET /v2/lbaas/loadbalancers/{loadbalancer_id}"),
  api("loadbalancer:put", WRITE, "PUT /v2/lbaas/loadbalancers/{loadbalancer_id}"),
  // v2.29, not in Octavia 11: checked only when vip_sg_ids is given.
  master(
    api("loadbalancer:put:vip_sg_ids", WRITE, "PUT /v2/lbaas/loadbalancers/{loadbalancer_id}"),
    "octavia/policies/loadbalancer.py:57-63",
  ),
  api("loadbalancer:delete", WRITE, "DELETE /v2/lbaas/loadbalancers/{loadbalancer_id}"),
  api("loadbalancer:get_stats", READ, "GET /v2/lbaas/loadbalancers/{loadbalancer_id}/stats"),
  api("loadbalancer:get_status", READ, "GET /v2/lbaas/loadbalancers/{loadbalancer_id}/status"),
  api("loadbalancer:put_failover", ADMIN, "PUT /v2/lbaas/loadbalancers/{loadbalancer_id}/failover"),

  // member
  // Octavia master (not 11): the service role may list any pool's members too (common/constants.py:768-770
  // RULE_MEMBER_API_READ = f'{RULE_API_READ} or rule:service', used at policies/member.py:19-24).
  master(api("member:get_all", `${READ} or rule:service`, "GET /v2/lbaas/pools/{pool_id}/members"), "octavia/policies/member.py:19-24"),
  api("member:post", WRITE, "POST /v2/lbaas/pools/{pool_id}/members"),
  api("member:get_one", READ, "GET /v2/lbaas/pools/{pool_id}/members/{member_id}"),
  api("member:put", WRITE, "PUT /v2/lbaas/pools/{pool_id}/members/{member_id}"),
  api("member:delete", WRITE, "DELETE /v2/lbaas/pools/{pool_id}/members/{member_id}"),

  // pool
  api("pool:get_all", READ, "GET /v2/lbaas/pools"),
  api("pool:get_all-global", READ_GLOBAL, "GET /v2/lbaas/pools"),
  api("pool:post", WRITE, "POST /v2/lbaas/pools"),
  api("pool:get_one", READ, "GET /v2/lbaas/pools/{pool_id}"),
  api("pool:put", WRITE, "PUT /v2/lbaas/pools/{pool_id}"),
  api("pool:delete", WRITE, "DELETE /v2/lbaas/pools/{pool_id}"),

  // provider
  api("provider:get_all", READ, "GET /v2/lbaas/providers"),

  // quota
  api("quota:get_all", READ_QUOTA, "GET /v2/lbaas/quotas"),
  api("quota:get_all-global", READ_QUOTA_GLOBAL, "GET /v2/lbaas/quotas"),
  api("quota:get_one", READ_QUOTA, "GET /v2/lbaas/quotas/{project_id}"),
  api("quota:put", WRITE_QUOTA, "PUT /v2/lbaas/quotas/{project_id}"),
  api("quota:delete", WRITE_QUOTA, "DELETE /v2/lbaas/quotas/{project_id}"),
  api("quota:get_defaults", READ_QUOTA, "GET /v2/lbaas/quotas/{project_id}/default"),

  // amphora
  api("amphora:get_all", ADMIN, "GET /v2/octavia/amphorae"),
  api("amphora:get_one", ADMIN, "GET /v2/octavia/amphorae/{amphora_id}"),
  api("amphora:delete", ADMIN, "DELETE /v2/octavia/amphorae/{amphora_id}"),
  api("amphora:put_config", ADMIN, "PUT /v2/octavia/amphorae/{amphora_id}/config"),
  api("amphora:put_failover", ADMIN, "PUT /v2/octavia/amphorae/{amphora_id}/failover"),
  api("amphora:get_stats", ADMIN, "GET /v2/octavia/amphorae/{amphora_id}/stats"),

  // provider-flavor
  api("provider-flavor:get_all", ADMIN, "GET /v2/lbaas/providers/{provider}/flavor_capabilities"),

  // provider-availability-zone
  api("provider-availability-zone:get_all", ADMIN, "GET /v2/lbaas/providers/{provider}/availability_zone_capabilities"),

  // Ottava's own rules
  ottava("loadbalancer:put_resize", WRITE, "PUT /v2/lbaas/loadbalancers/{loadbalancer_id}/resize"),
  ottava("loadbalancer:delete_resize", WRITE, "DELETE /v2/lbaas/loadbalancers/{loadbalancer_id}/resize"),
  // Like Octavia's single-pool batch update, which checks member:put.
  ottava("member:put_cross_pool", WRITE, "PUT /v2/lbaas/pools/members"),
  ottava("healthmanager:get", ADMIN, "GET /v2/octavia/healthmanager"),
  ottava("healthmanager:put", ADMIN, "PUT /v2/octavia/healthmanager"),
  // A load balancer's flow trail: admins and the LB's own project only (its observers and members);
  // global observers are not owners, so unlike loadbalancer:get_one they are not allowed.
  ottava(
    "loadbalancer:get_flows",
    "rule:load-balancer:observer_and_owner or rule:load-balancer:member_and_owner or rule:load-balancer:admin",
    "GET /v2/lbaas/loadbalancers/{loadbalancer_id}/flows",
  ),
];
