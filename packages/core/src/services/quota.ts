// Quota accounting (octavia/db/repositories.py check_quota_met and the Decrement*Quota tasks), once
// for every resource: a change is charged when the API accepts it, in the transaction that takes the
// LB's lock (the objects it creates, checked against the project's limits under keystone); objects
// are given back when the flow that deletes them ends, in the write that releases the lock.
import { DELETED, PENDING_DELETE } from "../constants";
import { quotaMet } from "../faults";
import { QuotaExceeded, type ChildWrite, type QuotaCharge, type QuotaDelta, type TreeItem } from "../ports";
import type { QuotaValues } from "../resources/quota";
import { QUOTA_FIELD, QUOTA_RESOURCE } from "../resources/kinds";

/** The project's limits when quotas are enforced (keystone), undefined when they are not (noauth). */
export type QuotaLimits = (project: string) => Promise<QuotaValues | undefined>;

export function addTo(delta: QuotaDelta, kind: string, n: number): QuotaDelta {
  const field = QUOTA_FIELD[kind];
  if (field) delta[field] = (delta[field] ?? 0) + n;
  return delta;
}

/** What a change's new objects (its puts) add to the usage. */
export function createdBy(writes: readonly ChildWrite[], delta: QuotaDelta = {}): QuotaDelta {
  for (const w of writes) if ("put" in w) addTo(delta, w.kind, 1);
  return delta;
}

/** Charges `delta` against the project's limits (when enforced). */
export async function charge(
  limits: QuotaLimits | undefined,
  project: string,
  delta: QuotaDelta,
  check?: QuotaDelta,
): Promise<QuotaCharge> {
  const needed = Object.values(check ?? delta).some((n) => (n ?? 0) > 0);
  return { project, delta, check, limits: needed ? await limits?.(project) : undefined };
}

/** QuotaExceeded as Octavia's 403; anything else unchanged. */
export function quotaFault(e: unknown): unknown {
  return e instanceof QuotaExceeded ? quotaMet(QUOTA_RESOURCE[e.fields[0]!] ?? String(e.fields[0])) : e;
}

/**
 * What a flow's end gives back: the objects it deletes now (PENDING_DELETE, or everything under an
 * LB being deleted) and those it already marked DELETED in an earlier attempt (deleted_by = owner).
 */
export function releasedAtEnd(items: readonly TreeItem[], owner: string, deletingLb: boolean): QuotaDelta {
  const delta: QuotaDelta = {};
  for (const { kind, record } of items) {
    const s = record.provisioning_status;
    const goes = s === DELETED ? record.deleted_by === owner : deletingLb || s === PENDING_DELETE;
    if (goes) addTo(delta, kind, -1);
  }
  if (deletingLb) addTo(delta, "loadbalancer", -1);
  return delta;
}
