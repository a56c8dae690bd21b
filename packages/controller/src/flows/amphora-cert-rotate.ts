// Rotate an amphora's server certificate (Octavia: cert_rotate_amphora_flow), started by housekeeping
// for each amphora whose certificate expires within cert_expiry_buffer. It takes no LB lock (as
// Octavia's): the amphora is claimed through cert_busy instead, and every write checks the claim.
import type { FlowSpec } from "./builder";

export const amphoraCertRotate: FlowSpec = {
  comment: "Ottava: rotate an amphora agent's server certificate",
  steps: [
    { name: "MarkAmphoraCertBusy", task: "markAmphoraCertBusy", revert: "markAmphoraCertNotBusy" },
    { name: "AmphoraCertUpload", task: "uploadAmphoraCert", resultPath: "$.cert" },
    { name: "UpdateAmphoraCertExpiration", task: "updateAmphoraCertExpiration" },
    { name: "MarkAmphoraCertNotBusy", task: "markAmphoraCertNotBusy" },
  ],
  onFailure: "amphoraCertRotateFailed",
  // Well under the age at which housekeeping takes an unreleased claim for abandoned (CERT_ROTATION_STALE).
  timeoutSeconds: 900,
};
