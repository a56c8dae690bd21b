// Housekeeping (octavia/controller/housekeeping/house_keeping.py): DatabaseCleanup purges load
// balancers and amphorae DELETED longer ago than their expiry age, whatever DynamoDB's TTL (a lazy
// backstop) has done yet; CertRotation rotates the server certificates of amphorae whose certificate
// expires within cert_expiry_buffer, one amphora-cert-rotate flow each. Neither takes an LB's lock.
//
// Both are safe to run twice at once (two schedules overlapping, two processes): a purge deletes
// only what is still DELETED and old enough, with conditional writes; a rotation first claims the
// amphora (cert_busy, with the claimer's name) with a conditional write, so one flow rotates it.
import { randomUUID } from "node:crypto";
import { AMPHORA_ALLOCATED } from "../constants";
import type { Logger } from "../log";
import type { WorkflowEngine } from "../ports";
import type { Amphora } from "../resources/amphora";

/** A DELETED load balancer or amphora, as the housekeeping index keeps it. */
export interface DeletedRef {
  id: string;
  /** The amphora's load balancer (the LB's own id for a load balancer). */
  lbId: string;
  /** When it went DELETED (ISO 8601). */
  deletedAt: string;
}

/** The amphora writes of a certificate rotation: outside the LB's lock, each conditioned on the rotation's claim. */
export interface AmphoraCertStore {
  /**
   * Claims the amphora for the rotation `owner` (cert_busy = true, cert_rotation = owner, cert_busy_since
   * = now): only if it is ALLOCATED and not claimed by another rotation (claiming again as the same owner
   * succeeds); with `staleBefore` (ISO), a claim made before it counts as abandoned; with `expiringBefore`
   * (ISO), only if the certificate still expires before it. False if not claimed.
   */
  claimCertRotation(
    lbId: string,
    id: string,
    owner: string,
    now: string,
    opts?: { staleBefore?: string; expiringBefore?: string },
  ): Promise<boolean>;
  /** Records the new certificate's expiry, only while `owner` holds the claim and the amphora is not DELETED. */
  recordCertExpiration(lbId: string, id: string, owner: string, expiration: string): Promise<boolean>;
  /** Clears cert_busy, only if `owner` holds the claim; false if it did not. */
  releaseCertRotation(lbId: string, id: string, owner: string): Promise<boolean>;
}

/** What housekeeping reads and deletes. Nothing is found by a Scan. */
export interface HousekeepingStore extends AmphoraCertStore {
  /** Load balancers that went DELETED strictly before `before` (ISO). */
  deletedLoadBalancers(before: string): AsyncIterable<DeletedRef>;
  /** Amphorae that went DELETED strictly before `before` (ISO). */
  deletedAmphorae(before: string): AsyncIterable<DeletedRef>;
  /**
   * Deletes a load balancer's whole partition (tree, flow trail, change sets) and the id pointers of
   * its objects, only if the LB is DELETED and went DELETED strictly before `before`; false if not.
   */
  purgeLoadBalancer(lbId: string, before: string): Promise<boolean>;
  /**
   * Deletes a DELETED amphora and its id pointer, only if it went DELETED strictly before `before` and
   * has not been heard (a zombie's heartbeat) since `before`; false if not.
   */
  purgeAmphora(lbId: string, id: string, before: string): Promise<boolean>;
  /** Amphorae (not DELETED) whose certificate expires strictly before `before` (ISO), in any status. */
  certsExpiringBefore(before: string): AsyncIterable<Amphora>;
}

export interface HousekeepingSettings {
  /** [house_keeping] load_balancer_expiry_age, seconds. */
  loadBalancerExpiryAge: number;
  /** [house_keeping] amphora_expiry_age, seconds. */
  amphoraExpiryAge: number;
  /** [house_keeping] cert_expiry_buffer, seconds. */
  certExpiryBuffer: number;
}

export interface HousekeepingDeps {
  housekeeping: HousekeepingStore;
  engine: WorkflowEngine;
  log: Logger;
}

export const CERT_ROTATE_FLOW = "amphora-cert-rotate";
/** A rotation claim older than this is abandoned (its flow would have timed out long before). */
export const CERT_ROTATION_STALE = 2 * 3600;

const secondsBefore = (now: Date, seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();

/** The purge's cut-off: what went DELETED strictly before it is older than `age` seconds at `now`. */
export const expiryCutoff = (now: Date, age: number) => secondsBefore(now, age);

/** Certificates expiring strictly before this are rotated (Octavia: cert_expiration < now + cert_expiry_buffer). */
export const rotationDeadline = (now: Date, buffer: number) => secondsBefore(now, -buffer);

/** Does this amphora's certificate need rotating at `now`? (get_cert_expiring_amphora, less the claim.) */
export function needsRotation(a: Amphora, now: Date, buffer: number): boolean {
  return a.status === AMPHORA_ALLOCATED && !a.cert_busy && a.cert_expiration !== null && a.cert_expiration < rotationDeadline(now, buffer);
}

export interface PurgeResult {
  loadBalancers: number;
  amphorae: number;
}

/** DatabaseCleanup: delete_old_amphorae and cleanup_load_balancers, at `now`. */
export async function purgeDeleted(deps: HousekeepingDeps, settings: HousekeepingSettings, now: Date): Promise<PurgeResult> {
  const result: PurgeResult = { loadBalancers: 0, amphorae: 0 };
  const amphoraCutoff = expiryCutoff(now, settings.amphoraExpiryAge);
  for await (const a of deps.housekeeping.deletedAmphorae(amphoraCutoff)) {
    if (await deps.housekeeping.purgeAmphora(a.lbId, a.id, amphoraCutoff)) {
      result.amphorae++;
      deps.log.info("purged the record of an amphora", { amphoraId: a.id, lbId: a.lbId, deletedAt: a.deletedAt });
    }
  }
  const lbCutoff = expiryCutoff(now, settings.loadBalancerExpiryAge);
  for await (const lb of deps.housekeeping.deletedLoadBalancers(lbCutoff)) {
    if (await deps.housekeeping.purgeLoadBalancer(lb.id, lbCutoff)) {
      result.loadBalancers++;
      deps.log.info("purged a load balancer", { lbId: lb.id, deletedAt: lb.deletedAt });
    }
  }
  return result;
}

export interface RotateResult {
  /** Amphorae whose rotation flow was started. */
  started: string[];
  /** Amphorae expiring but busy (claimed by a running rotation) or not ALLOCATED. */
  skipped: number;
}

/** CertRotation.rotate at `now`: claims each amphora whose certificate needs rotating and starts its flow. */
export async function rotateExpiringCerts(deps: HousekeepingDeps, settings: HousekeepingSettings, now: Date): Promise<RotateResult> {
  const result: RotateResult = { started: [], skipped: 0 };
  const staleBefore = secondsBefore(now, CERT_ROTATION_STALE);
  const deadline = rotationDeadline(now, settings.certExpiryBuffer);
  for await (const a of deps.housekeeping.certsExpiringBefore(deadline)) {
    const abandoned = a.cert_busy && String((a as Amphora & { cert_busy_since?: unknown }).cert_busy_since ?? "") < staleBefore;
    if (!(needsRotation(a, now, settings.certExpiryBuffer) || (a.status === AMPHORA_ALLOCATED && abandoned))) {
      result.skipped++;
      continue;
    }
    const owner = `${CERT_ROTATE_FLOW}-${a.id}-${randomUUID().slice(0, 8)}`;
    if (
      !(await deps.housekeeping.claimCertRotation(a.loadbalancer_id, a.id, owner, now.toISOString(), {
        staleBefore,
        expiringBefore: deadline,
      }))
    ) {
      result.skipped++;
      continue;
    }
    try {
      await deps.engine.start(CERT_ROTATE_FLOW, owner, { lbId: a.loadbalancer_id, amphoraId: a.id, rotation: owner });
    } catch (e) {
      await deps.housekeeping.releaseCertRotation(a.loadbalancer_id, a.id, owner);
      deps.log.error("amphora certificate rotation could not start", { amphoraId: a.id, lbId: a.loadbalancer_id, error: String(e) });
      continue;
    }
    result.started.push(a.id);
    deps.log.info("amphora certificate rotation started", {
      amphoraId: a.id,
      lbId: a.loadbalancer_id,
      certExpiration: a.cert_expiration,
      execution: owner,
    });
  }
  if (result.started.length) deps.log.info("rotating amphora certificates", { count: result.started.length });
  return result;
}
