// Test scaffolding: `haproxy -c` as the amphora agent's upload_haproxy_config runs it, with Debian's HAProxy.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** What the amphora agent writes to haproxy-default-user-group.conf. */
export const HAPROXY_USER_GROUP_CFG = "global\n    group nogroup\n";

export interface HaproxyCheck {
  /** haproxy's exit status (-1 when it did not run). */
  code: number;
  /** Its stdout and stderr. */
  output: string;
  /**
   * The agent takes it: no error, or exit 2 "will not start (no listener)", which a configuration
   * without any frontend (an LB or all its listeners admin-down) gets.
   */
  valid: boolean;
}

/**
 * `haproxy -c -L <peer> -f <configFile> -f <user-group cfg>`, run in `cwd` (where relative paths in the
 * configuration resolve; by default the configuration's directory). The user-group file is `cwd`/user-group.cfg,
 * written when it is not there yet.
 */
export function haproxyCheck(configFile: string, peer: string, cwd = dirname(configFile)): Promise<HaproxyCheck> {
  const userGroup = join(cwd, "user-group.cfg");
  try {
    writeFileSync(userGroup, HAPROXY_USER_GROUP_CFG, { flag: "wx" }); // once: other checks may be reading it
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
  return new Promise((resolve) => {
    execFile("/usr/sbin/haproxy", ["-c", "-L", peer, "-f", configFile, "-f", userGroup], { cwd }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      const output = `${stdout}${stderr}`;
      const valid = code === 0 || (code === 2 && output.includes("Configuration file has no error but will not start (no listener)"));
      resolve({ code, output, valid });
    });
  });
}
