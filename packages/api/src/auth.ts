// The identity and policy setup from the settings: the rules in force (Octavia's defaults, the
// oslo_policy switches and the operator's policy file) and, under keystone, the token validator.
import { readFileSync } from "node:fs";
import { PolicyEnforcer, type Config, type Logger } from "@ottava/core";
import { KeystoneAuth } from "./keystone";
import { parsePolicyFile } from "./policy-file";
import type { AuthSetup } from "./middleware/context";

export async function createAuth(config: Config, log: Logger): Promise<AuthSetup> {
  let overrides: Record<string, string> = {};
  if (config.policyFile) {
    // A policy file that cannot be read or parsed stops the service rather than running with other rules.
    overrides = await parsePolicyFile(readFileSync(config.policyFile, "utf8"));
    log.info("policy file loaded", { file: config.policyFile, rules: Object.keys(overrides).length });
  }
  const policy = new PolicyEnforcer({ overrides, enforceNewDefaults: config.enforceNewDefaults, enforceScope: config.enforceScope });
  const keystone =
    config.authStrategy === "keystone"
      ? new KeystoneAuth({ settings: config.keystone!, cacheTime: config.tokenCacheTime, cacheSize: config.tokenCacheSize, log })
      : undefined;
  return { policy, keystone };
}
