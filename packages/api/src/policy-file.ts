// The operator's policy file (OTTAVA_POLICY_FILE, oslo.policy's policy_file): read only by the API,
// which is the only function whose bundle carries the YAML parser, and loads it only for a file that
// is not JSON.
import { parseCheck } from "@ottava/core";

/**
 * Reads an oslo.policy file, JSON or YAML: a mapping of rule names to check strings. Rejects
 * anything else, and a check string that does not parse.
 */
export async function parsePolicyFile(text: string): Promise<Record<string, string>> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    const { parse: parseYaml } = await import("yaml");
    try {
      data = parseYaml(text);
    } catch (e) {
      throw new Error(`policy file is neither JSON nor YAML: ${(e as Error).message}`);
    }
  }
  if (data === null || data === undefined) return {}; // an empty file
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new Error("policy file must be a mapping of rule names to check strings");
  }
  const rules: [string, string][] = [];
  for (const [name, value] of Object.entries(data)) {
    if (typeof value !== "string") {
      const what = value === null ? "null" : Array.isArray(value) ? "a list" : typeof value;
      throw new Error(`policy file: rule "${name}" must be a check string, not ${what}`);
    }
    parseCheck(value, name);
    rules.push([name, value]);
  }
  return Object.fromEntries(rules);
}
