// @ottava/aws/certs: the Secrets Manager certificate manager (OTTAVA_CERT_MANAGER=secretsmanager) and its
// PKCS#12 reader, a chunk of its own that only a process whose settings pick it loads.
import type { Config, Logger } from "@ottava/core";
import { secretsManagerClient } from "../secretsmanager-client";
import { SecretsManagerCertManager } from "./secretsmanager";

export * from "./pkcs12";
export * from "./secretsmanager";

/** The manager for the settings (OTTAVA_SECRETSMANAGER_ENDPOINT, else the Region's endpoint; OTTAVA_STAGE). */
export const secretsManagerCertManager = (config: Pick<Config, "secretsmanagerEndpoint" | "stage">, log?: Logger) =>
  new SecretsManagerCertManager({ secrets: secretsManagerClient(config), stage: config.stage, log });
