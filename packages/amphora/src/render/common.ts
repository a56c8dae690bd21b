// What the data plane's renderers share to write what Octavia's Jinja templates write (octavia/common/jinja): Python's str(), truthiness, strip, replace and os.path.join.
// Python's builtins on values (str(), bool(), float repr, strip) are core's compat/repr.ts, re-exported here for the templates.
export { pyFloat, pyStr, pyStrip, pyTruthy as truthy } from "@ottava/core";

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
