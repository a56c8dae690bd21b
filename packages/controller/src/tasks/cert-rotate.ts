// Amphora certificate rotation tasks (Octavia's cert_rotate_amphora_flow: GenerateServerPEMTask,
// AmphoraCertUpload, UpdateAmphoraDBCertExpiration, UpdateAmphoraCertBusyToFalse). No LB lock: every
// write is conditioned on the rotation's claim of the amphora (cert_busy, cert_rotation = the
// execution's name, taken by housekeeping before it started the flow). The new key is made, and handed
// to the driver, inside one task: only the certificate's expiry enters the flow's state.
import { DELETED, type Amphora } from "@ottava/core";
import { certsOf, type TaskContext, type TaskHandler } from "./context";

interface RotateInput {
  lbId: string;
  amphoraId: string;
  /** The execution's name: the holder of the amphora's cert_busy. */
  rotation: string;
  cert?: { cert_expiration: string };
  error?: unknown;
}

const rotateInput = (input: Record<string, unknown>) => input as unknown as RotateInput;

async function release(ctx: TaskContext, r: RotateInput): Promise<boolean> {
  return ctx.amphoraCerts.releaseCertRotation(r.lbId, r.amphoraId, r.rotation);
}

/** Marks the amphora cert_busy for this rotation (the claim housekeeping took, renewed). */
export const markAmphoraCertBusy: TaskHandler = async (input, ctx) => {
  const r = rotateInput(input);
  if (!(await ctx.amphoraCerts.claimCertRotation(r.lbId, r.amphoraId, r.rotation, new Date().toISOString()))) {
    throw new Error(`amphora ${r.amphoraId} is not ALLOCATED, or another rotation holds its certificate`);
  }
  return null;
};

/** Revert of markAmphoraCertBusy, and the flow's last step: cert_busy back to false, if this rotation holds it. */
export const markAmphoraCertNotBusy: TaskHandler = async (input, ctx) => {
  const r = rotateInput(input);
  if (!(await release(ctx, r)))
    ctx.log.warn("amphora certificate not released: this rotation does not hold it", { amphoraId: r.amphoraId });
  return null;
};

/** Issues a new certificate and key for the amphora and uploads them to its agent; answers only the expiry. */
export const uploadAmphoraCert: TaskHandler = async (input, ctx) => {
  const r = rotateInput(input);
  const a = (await ctx.store.getAmphora(r.amphoraId)) as (Amphora & { cert_rotation?: string }) | undefined;
  if (!a || a.status === DELETED) throw new Error(`amphora ${r.amphoraId} is gone`);
  if (a.cert_rotation !== r.rotation) throw new Error(`amphora ${r.amphoraId}: another rotation holds its certificate`);
  const cert = await certsOf(ctx).generateServerPem(a.id, ctx.config.certValidityTime);
  await ctx.drivers.amphora.uploadCert(a, cert.pem);
  ctx.log.info("amphora certificate uploaded", { amphoraId: a.id, certExpiration: cert.expiration });
  return { cert_expiration: cert.expiration };
};

/** Records the uploaded certificate's expiry (UpdateAmphoraDBCertExpiration). */
export const updateAmphoraCertExpiration: TaskHandler = async (input, ctx) => {
  const r = rotateInput(input);
  const expiration = r.cert?.cert_expiration;
  if (typeof expiration !== "string") throw new Error("no certificate expiry in the flow's state");
  if (!(await ctx.amphoraCerts.recordCertExpiration(r.lbId, r.amphoraId, r.rotation, expiration))) {
    throw new Error(`amphora ${r.amphoraId} is gone, or another rotation holds its certificate`);
  }
  return null;
};

/** The rotation's failure handler: cert_busy back to false; cert_expiration stays the old certificate's. */
export const amphoraCertRotateFailed: TaskHandler = async (input, ctx) => {
  const r = rotateInput(input);
  await release(ctx, r);
  ctx.log.error("amphora certificate rotation failed", { amphoraId: r.amphoraId, lbId: r.lbId, execution: r.rotation, error: r.error });
  return null;
};
