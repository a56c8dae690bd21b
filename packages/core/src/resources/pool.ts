// Over 400 lines because PoolsController's create and update rules, the pool's types and descriptor are one
// resource's rules; its session persistence (session-persistence.ts) and TLS options (tls-options.ts) live apart.
// The pool resource (octavia/api/v2/types/pool.py, controllers/pool.py): created on a load
// balancer, or on a listener whose default pool it becomes.
import * as z from "zod";
import {
  AMPHORA_LB_ALGORITHMS,
  DEFAULT_POOL_ALPN_PROTOCOLS,
  DEFAULT_POOL_CIPHERS,
  DEFAULT_POOL_TLS_VERSIONS,
  DESCRIPTION_MAX,
  LB_ALGORITHMS,
  NAME_MAX,
  OFFLINE,
  PENDING_CREATE,
  PENDING_STATUSES,
  PENDING_UPDATE,
  POOL_PROTOCOLS,
  SUPPORTED_ALPN_PROTOCOLS,
  VALID_LISTENER_POOL_PROTOCOL_MAP,
} from "../constants";
import { Fault, notFound, validation } from "../faults";
import type { TreeRecord } from "../ports";
import { body, bool, str, tags, uuid } from "../validation";
import { wsmeEnum } from "../compat/wsme";
import type { ChildRef, ChildResource, Tree } from "./child";
import { checkClientCaAndCrl, checkTlsRefs, TlsLookup } from "./tls-refs";
import { checkAlpnProtocols, checkCiphers, checkTlsVersions } from "./tls-options";
import { apiTime, octaviaFilters, type ResourceDescriptor } from "./descriptor";
import { poolListenerIds } from "./relations";
import {
  checkSessionPersistence,
  SessionPersistencePost,
  SessionPersistencePut,
  storedSessionPersistence,
  type SessionPersistence,
  type SessionPersistenceBody,
} from "./session-persistence";

const ref = () => str(255);
const list = <T extends z.ZodTypeAny>(item: T) => z.array(item, { error: "Value should be a list" });
/** ArrayType(AlpnProtocolType): wsme validates the list as a whole. */
const alpnList = () =>
  list(z.unknown()).refine((l) => l.every((p) => SUPPORTED_ALPN_PROTOCOLS.includes(p as string)), {
    error: "Value should be a valid ALPN protocol ID",
  }) as unknown as z.ZodType<string[], unknown>;

export const PoolPost = body({
  name: str(NAME_MAX).nullish(),
  description: str(DESCRIPTION_MAX).nullish(),
  // wsme turns a null admin_state_up into False (BaseType.to_dict).
  admin_state_up: bool().nullable().default(true),
  listener_id: uuid().nullish(),
  loadbalancer_id: uuid().nullish(),
  protocol: wsmeEnum(POOL_PROTOCOLS),
  lb_algorithm: wsmeEnum(LB_ALGORITHMS),
  session_persistence: SessionPersistencePost.nullish(),
  // Deprecated and ignored: a pool belongs to its load balancer's project.
  project_id: str(36).nullish(),
  tenant_id: str(36).nullish(),
  // Accepted by Octavia's type, but only a load balancer's single-call create builds them.
  healthmonitor: z.unknown().nullish(),
  members: list(z.unknown()).nullish(),
  tags: tags().nullish(),
  tls_container_ref: ref().nullish(),
  ca_tls_container_ref: ref().nullish(),
  crl_container_ref: ref().nullish(),
  tls_enabled: bool().nullish(),
  tls_ciphers: str(2048).nullish(),
  tls_versions: list(str(32)).nullish(),
  alpn_protocols: alpnList().nullish(),
});
export type PoolPost = z.output<typeof PoolPost>;

export const PoolPut = body({
  name: str(NAME_MAX).nullish(),
  description: str(DESCRIPTION_MAX).nullish(),
  admin_state_up: bool().nullish(),
  lb_algorithm: wsmeEnum(LB_ALGORITHMS).nullish(),
  session_persistence: SessionPersistencePut.nullish(),
  tags: tags().nullish(),
  tls_container_ref: ref().nullish(),
  ca_tls_container_ref: ref().nullish(),
  crl_container_ref: ref().nullish(),
  tls_enabled: bool().nullish(),
  tls_ciphers: str(2048).nullish(),
  tls_versions: list(str(32)).nullish(),
  alpn_protocols: alpnList().nullish(),
});
export type PoolPut = z.output<typeof PoolPut>;

export type Pool = TreeRecord & {
  id: string;
  project_id: string;
  loadbalancer_id: string;
  name: string | null;
  description: string | null;
  admin_state_up: boolean;
  protocol: string;
  lb_algorithm: string;
  session_persistence: SessionPersistence | null;
  tls_enabled: boolean;
  tls_container_ref: string | null;
  ca_tls_container_ref: string | null;
  crl_container_ref: string | null;
  tls_ciphers: string | null;
  tls_versions: string[] | null;
  alpn_protocols: string[] | null;
  tags: string[];
  provisioning_status: string;
  operating_status: string;
  created_at: string;
  updated_at: string | null;
  /** The listener named by the create (listener_id), whose default pool this pool became. */
  create_listener_id: string | null;
  /** Carried (relations.ts): the listeners using it, its health monitor. */
  listener_ids?: string[];
  healthmonitor_id?: string | null;
  /** Its members' ids: read by their key range with the pool, never stored on it. */
  member_ids?: string[];
};

const idOnly = (id: string) => ({ id });

export const poolDescriptor: ResourceDescriptor<Pool> = {
  kind: "pool",
  displayName: "Pool",
  quotaField: "pool",
  root: "pool",
  collection: "pools",
  attributes: [
    "id",
    "name",
    "description",
    "provisioning_status",
    "operating_status",
    "admin_state_up",
    "protocol",
    "lb_algorithm",
    "session_persistence",
    "project_id",
    "tenant_id",
    "loadbalancers",
    "listeners",
    "created_at",
    "updated_at",
    "healthmonitor_id",
    "members",
    "tags",
    "tls_container_ref",
    "ca_tls_container_ref",
    "crl_container_ref",
    "tls_enabled",
    "tls_ciphers",
    "tls_versions",
    "alpn_protocols",
  ],
  filters: octaviaFilters(
    [
      "alpn_protocols",
      "ca_tls_certificate_id",
      "created_at",
      "crl_container_id",
      "description",
      "enabled",
      "id",
      "lb_algorithm",
      "load_balancer_id",
      "name",
      "operating_status",
      "project_id",
      "protocol",
      "provisioning_status",
      "tls_certificate_id",
      "tls_ciphers",
      "tls_enabled",
      "tls_versions",
      "updated_at",
    ],
    {
      admin_state_up: "enabled",
      ca_tls_container_ref: "ca_tls_certificate_id",
      crl_container_ref: "crl_container_id",
      healthmonitor_id: "health_monitor.id",
      loadbalancer_id: "load_balancer_id",
      tls_container_ref: "tls_certificate_id",
    },
  ),
  model: (p, r) => ({
    enabled: p.admin_state_up,
    load_balancer_id: p.loadbalancer_id,
    tls_certificate_id: r.tls_container_ref,
    ca_tls_certificate_id: r.ca_tls_container_ref,
    crl_container_id: r.crl_container_ref,
    "health_monitor.id": r.healthmonitor_id,
  }),
  listReads: {
    tenant_id: ["project_id"],
    loadbalancers: ["loadbalancer_id"],
    listeners: ["listener_ids"],
    healthmonitor_id: ["healthmonitor_id"],
    // Read by their key range with each whole pool.
    members: null,
    enabled: ["admin_state_up"],
    load_balancer_id: ["loadbalancer_id"],
    tls_certificate_id: ["tls_container_ref"],
    ca_tls_certificate_id: ["ca_tls_container_ref"],
    crl_container_id: ["crl_container_ref"],
    "health_monitor.id": ["healthmonitor_id"],
  },
  toResponse: (p) => {
    const sp = p.session_persistence;
    return {
      id: p.id,
      name: p.name ?? "",
      description: p.description ?? "",
      provisioning_status: p.provisioning_status,
      operating_status: p.operating_status,
      admin_state_up: p.admin_state_up,
      protocol: p.protocol,
      lb_algorithm: p.lb_algorithm,
      session_persistence: sp && {
        type: sp.type,
        cookie_name: sp.cookie_name,
        persistence_timeout: sp.persistence_timeout,
        persistence_granularity: sp.persistence_granularity,
      },
      project_id: p.project_id,
      tenant_id: p.project_id,
      loadbalancers: [idOnly(p.loadbalancer_id)],
      listeners: (p.listener_ids ?? []).map(idOnly),
      created_at: apiTime(p.created_at),
      updated_at: apiTime(p.updated_at),
      healthmonitor_id: p.healthmonitor_id ?? null,
      members: (p.member_ids ?? []).map(idOnly),
      tags: p.tags,
      tls_container_ref: p.tls_container_ref,
      ca_tls_container_ref: p.ca_tls_container_ref,
      crl_container_ref: p.crl_container_ref,
      tls_enabled: p.tls_enabled,
      tls_ciphers: p.tls_ciphers,
      tls_versions: p.tls_versions,
      alpn_protocols: p.alpn_protocols,
    };
  },
};

// ---- Octavia's validations, in its words ---------------------------------------------------------

/** BaseController._validate_protocol. */
export function checkListenerPoolProtocol(listenerProtocol: string, poolProtocol: string): void {
  if ((VALID_LISTENER_POOL_PROTOCOL_MAP[listenerProtocol] ?? []).includes(poolProtocol)) return;
  throw validation(`The pool protocol '${poolProtocol}' is invalid while the listener protocol is '${listenerProtocol}'.`);
}

/** The amphora provider driver's _validate_pool_algorithm, as call_provider reports it. */
function checkProviderAlgorithm(tree: Tree, algorithm: string): void {
  if (AMPHORA_LB_ALGORITHMS.includes(algorithm)) return;
  throw new Fault(
    501,
    `Provider '${tree.lb.provider}' does not support a requested option: Amphora provider does not support ${algorithm} algorithm.`,
  );
}

// ---- the resource ----------------------------------------------------------------------------------

export const poolResource: ChildResource<Pool, PoolPost, PoolPut> = {
  descriptor: poolDescriptor,
  argument: "pool_",
  post: PoolPost,
  put: PoolPut,
  // Octavia takes the load balancer from loadbalancer_id first, else from the listener.
  parentOf: (b) => {
    if (b.loadbalancer_id) return { kind: "loadbalancer", id: b.loadbalancer_id };
    if (b.listener_id) return { kind: "listener", id: b.listener_id };
    throw validation("Must provide at least one of: loadbalancer_id, listener_id");
  },

  // In the order of PoolsController.post, _validate_create_pool and the amphora driver's pool_create.
  create({ body: b, tree, id, now, certs = TlsLookup.unchecked }) {
    // Octavia's ORM fails (500) on a single create given a monitor or members; Ottava refuses them
    // clearly: they belong to the fully populated load-balancer create.
    if (b.healthmonitor != null || (b.members?.length ?? 0) > 0) {
      throw validation("healthmonitor and members can only be given in a fully populated load balancer create.");
    }
    const listener = b.listener_id ? tree.get("listener", b.listener_id) : undefined;
    if (b.listener_id && !listener) throw notFound("Listener", b.listener_id);
    if (listener) {
      if (listener.protocol === "PROMETHEUS") throw new Fault(400, "Protocol PROMETHEUS listeners cannot have child objects.");
      checkListenerPoolProtocol(String(listener.protocol), b.protocol);
    }
    checkSessionPersistence(
      b.protocol,
      b.session_persistence,
      "persistence_timeout and persistence_granularity is only for UDP and SCTP protocol pools.",
    );
    if (listener?.default_pool_id && tree.get("pool", String(listener.default_pool_id))) {
      throw new Fault(409, "This listener already has a default pool");
    }

    // db_prepare.create_pool: a TLS-enabled pool gets the configured defaults.
    const tlsEnabled = b.tls_enabled ?? false;
    const tlsCiphers = b.tls_ciphers ?? (tlsEnabled ? DEFAULT_POOL_CIPHERS : null);
    const tlsVersions = b.tls_versions ?? (tlsEnabled ? [...DEFAULT_POOL_TLS_VERSIONS] : null);
    const alpnProtocols = b.alpn_protocols ?? (tlsEnabled ? [...DEFAULT_POOL_ALPN_PROTOCOLS] : null);
    if (b.crl_container_ref && !b.ca_tls_container_ref) {
      throw validation("A CA certificate reference is required to specify a revocation list.");
    }
    checkTlsRefs(certs, b.tls_container_ref ? [b.tls_container_ref] : []);
    if (b.ca_tls_container_ref) checkClientCaAndCrl(certs, b.ca_tls_container_ref, b.crl_container_ref);
    if (tlsCiphers) checkCiphers(tlsCiphers);
    if (tlsEnabled) {
      checkTlsVersions(tlsVersions);
      checkAlpnProtocols(alpnProtocols);
    }
    checkProviderAlgorithm(tree, b.lb_algorithm);

    return {
      id,
      project_id: tree.lb.project_id,
      loadbalancer_id: tree.lb.id,
      name: b.name ?? null,
      description: b.description ?? null,
      admin_state_up: b.admin_state_up ?? false,
      protocol: b.protocol,
      lb_algorithm: b.lb_algorithm,
      session_persistence: storedSessionPersistence(b.session_persistence),
      tls_enabled: tlsEnabled,
      tls_container_ref: b.tls_container_ref ?? null,
      ca_tls_container_ref: b.ca_tls_container_ref ?? null,
      crl_container_ref: b.crl_container_ref ?? null,
      tls_ciphers: tlsCiphers,
      tls_versions: tlsVersions,
      alpn_protocols: alpnProtocols,
      tags: b.tags ?? [],
      provisioning_status: PENDING_CREATE,
      operating_status: OFFLINE,
      created_at: now,
      updated_at: null,
      create_listener_id: listener ? listener.id : null,
    };
  },

  // The client certificate given, the CA and CRL in force (_validate_pool_PUT's ca_ref and crl_ref).
  tlsRefs(input) {
    const b = input.body;
    if (input.action === "create")
      return { certificates: [b.tls_container_ref], secrets: b.ca_tls_container_ref ? [b.ca_tls_container_ref, b.crl_container_ref] : [] };
    const r = input.record;
    const crl = b.crl_container_ref ? b.crl_container_ref : b.crl_container_ref === undefined ? r.crl_container_ref : null;
    const ca = b.ca_tls_container_ref !== undefined ? b.ca_tls_container_ref : r.ca_tls_container_ref;
    return { certificates: [b.tls_container_ref], secrets: ca ? [ca, crl] : [] };
  },

  // In the order of PoolsController.put, _validate_pool_PUT and the amphora driver's pool_update.
  update({ body: b, record, tree, certs = TlsLookup.unchecked }) {
    // A null TLS version list or cipher string goes back to the configured default.
    const tlsVersions = b.tls_versions === null ? [...DEFAULT_POOL_TLS_VERSIONS] : b.tls_versions;
    const tlsCiphers = b.tls_ciphers === null ? DEFAULT_POOL_CIPHERS : b.tls_ciphers;
    // A session persistence without a type keeps the pool's type; the other fields are replaced.
    let sp: SessionPersistenceBody | null | undefined = b.session_persistence;
    if (sp && !sp.type && record.session_persistence?.type) sp = { ...sp, type: record.session_persistence.type };

    checkSessionPersistence(record.protocol, sp, "persistence_timeout and persistence_granularity is only for UDP protocol pools.");

    const crlRef = b.crl_container_ref ? b.crl_container_ref : b.crl_container_ref === undefined ? record.crl_container_ref : null;
    const dbCaRef = record.ca_tls_container_ref;
    if (b.ca_tls_container_ref !== undefined) {
      if (!b.ca_tls_container_ref && dbCaRef && crlRef) {
        throw validation("A CA reference cannot be removed when a certificate revocation list is present.");
      }
      if (!b.ca_tls_container_ref && !dbCaRef && crlRef) {
        throw validation("A CA reference is required to specify a certificate revocation list.");
      }
    } else if (!dbCaRef && crlRef) {
      throw validation("A CA reference is required to specify a certificate revocation list.");
    }
    if (b.tls_container_ref) checkTlsRefs(certs, [b.tls_container_ref]);
    const caRef = b.ca_tls_container_ref !== undefined ? b.ca_tls_container_ref : dbCaRef;
    if (caRef) checkClientCaAndCrl(certs, caRef, crlRef);
    if (tlsCiphers) checkCiphers(tlsCiphers);
    if (tlsVersions !== undefined) checkTlsVersions(tlsVersions);
    if (b.alpn_protocols !== undefined) checkAlpnProtocols(b.alpn_protocols);
    if (b.lb_algorithm) checkProviderAlgorithm(tree, b.lb_algorithm);

    const set: Partial<Pool> = { updated_at: new Date().toISOString() };
    if (b.name !== undefined) set.name = b.name;
    if (b.description !== undefined) set.description = b.description;
    if (b.admin_state_up !== undefined) set.admin_state_up = b.admin_state_up ?? false;
    if (b.lb_algorithm) set.lb_algorithm = b.lb_algorithm;
    if (sp !== undefined) set.session_persistence = storedSessionPersistence(sp);
    // A null tags list leaves the tags as they are (the repository ignores None).
    if (b.tags !== undefined && b.tags !== null) set.tags = b.tags;
    if (b.tls_container_ref !== undefined) set.tls_container_ref = b.tls_container_ref;
    if (b.ca_tls_container_ref !== undefined) set.ca_tls_container_ref = b.ca_tls_container_ref;
    if (b.crl_container_ref !== undefined) set.crl_container_ref = b.crl_container_ref;
    if (b.tls_enabled !== undefined && b.tls_enabled !== null) set.tls_enabled = b.tls_enabled;
    if (tlsCiphers !== undefined) set.tls_ciphers = tlsCiphers;
    if (tlsVersions !== undefined) set.tls_versions = tlsVersions;
    if (b.alpn_protocols !== undefined) set.alpn_protocols = b.alpn_protocols;
    return set;
  },

  /**
   * The listeners using the pool (Octavia moves them PENDING_UPDATE with it). Listeners whose
   * default pool a create sets or a delete unsets are marked by sideEffects instead, in the same
   * write (one transaction may not write an item twice): on a create the tree read before it has no
   * listener using the new pool, and a delete (the record as stored, not PENDING_*) leaves them out.
   */
  parents(record, tree) {
    const deleting = !PENDING_STATUSES.includes(record.provisioning_status);
    return poolListenerIds(tree, record.id)
      .filter((id) => !(deleting && tree.get("listener", id)?.default_pool_id === record.id))
      .map((id): ChildRef => ({ kind: "listener", id }));
  },

  /**
   * Octavia deletes the pool's health monitor and members with it (cascade="delete"). The members
   * are not marked at the lock, as Octavia's API leaves them: its flow deletes them when it ends.
   */
  cascade: (record, tree) =>
    tree
      .of("healthmonitor")
      .filter((h) => h.pool_id === record.id)
      .map((h) => ({ kind: "healthmonitor", id: h.id })),
  emptiesPools: (record) => [record.id],

  /** A pool an L7 policy redirects to cannot be deleted; a listener's default pool can. */
  checkDelete(record, tree) {
    const policy = tree.of("l7policy").find((p) => p.redirect_pool_id === record.id);
    if (policy) throw new Fault(409, `Pool ${record.id} is in use by L7 policy ${policy.id}`);
  },

  sideEffects(action, record, tree) {
    // Created with listener_id: the pool becomes the listener's default pool.
    if (action === "create" && record.create_listener_id) {
      return [
        { kind: "listener", id: record.create_listener_id, set: { default_pool_id: record.id, provisioning_status: PENDING_UPDATE } },
      ];
    }
    // Deleting the pool clears the default_pool_id of the listeners using it (SQLAlchemy nulls the
    // foreign key of Pool._default_listeners when the pool row goes).
    if (action === "delete") {
      return tree
        .of("listener")
        .filter((l) => l.default_pool_id === record.id)
        .map((l) => ({ kind: "listener", id: l.id, set: { default_pool_id: null, provisioning_status: PENDING_UPDATE } }));
    }
    return [];
  },
};
