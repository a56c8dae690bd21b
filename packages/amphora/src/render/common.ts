// What the data plane's renderers share to write what Octavia's Jinja templates write (octavia/common/jinja): Python's str(), truthiness, strip, replace and os.path.join.

/** Python's truthiness of a JSON value: None, False, 0, "", [] and {} are false. */
export function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === "") return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === "object") return Object.keys(v).length > 0;
  return true;
}

/** Python's repr() of a float (for the values Octavia keeps as floats, e.g. an HTTP version: 1.0, 1.1). */
export function pyFloat(v: number): string {
  return Number.isInteger(v) && Math.abs(v) < 1e16 ? v.toFixed(1) : String(v);
}

/** Python's str() of a scalar, as `{{ value }}` and `"%s" % value` write it: None, True, False. */
export function pyStr(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  return String(v);
}

/** Python's str.strip(): the characters str.isspace() holds (JavaScript's trim() differs on a few). */
const PY_SPACE = "[\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const PY_STRIP = new RegExp(`^${PY_SPACE}+|${PY_SPACE}+$`, "g");
export function pyStrip(s: string): string {
  return s.replace(PY_STRIP, "");
}

/** Python's str.replace: every occurrence, left to right, of a literal string. */
export function pyReplace(s: string, old: string, replacement: string): string {
  return s.split(old).join(replacement);
}

/** posixpath.join: a component starting with "/" starts the path again. */
export function osPathJoin(first: string, ...rest: string[]): string {
  let path = first;
  for (const part of rest) {
    if (part.startsWith("/")) path = part;
    else if (path === "" || path.endsWith("/")) path += part;
    else path += `/${part}`;
  }
  return path;
}
