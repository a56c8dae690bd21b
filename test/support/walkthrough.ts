// The commands of docs/deploying.md's "Your first load balancer on AWS", read from the page itself, so that
// test/ec2-bed.e2e.test.ts runs what an operator copies: every line of the section's ```sh blocks (a
// trailing backslash joins the next line), split into words as a shell would for these simple commands
// (single and double quotes, $NAME and ${NAME} from the values the test gives; no other expansion).
import { readFileSync } from "node:fs";

const PAGE = new URL("../../docs/deploying.md", import.meta.url);
export const WALKTHROUGH = "Your first load balancer on AWS";

/** The section's command lines, in order (comments and blank lines left out). */
export function walkthroughLines(page = readFileSync(PAGE, "utf8")): string[] {
  const start = page.indexOf(`\n## ${WALKTHROUGH}\n`);
  if (start < 0) throw new Error(`docs/deploying.md has no section "## ${WALKTHROUGH}"`);
  const end = page.indexOf("\n## ", start + 1);
  const section = page.slice(start, end < 0 ? undefined : end);
  const lines: string[] = [];
  for (const [, block] of section.matchAll(/\n```sh\n([\s\S]*?)\n```/g)) {
    for (const line of block!.replace(/\\\n\s*/g, "").split("\n")) {
      const command = stripComment(line).trim();
      if (command !== "") lines.push(command);
    }
  }
  return lines;
}

/** The line without a `#` comment (a `#` that starts a word, outside quotes). */
function stripComment(line: string): string {
  let quote = "";
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}

/** A command line's words, with $NAME and ${NAME} replaced from `vars` (outside single quotes); an unknown name throws. */
export function words(line: string, vars: Record<string, string>): string[] {
  const out: string[] = [];
  let word: string | undefined;
  let quote = "";
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (!quote && /\s/.test(c)) {
      if (word !== undefined) out.push(word);
      word = undefined;
      continue;
    }
    word ??= "";
    if (quote === "'" ? c === "'" : !quote ? c === "'" || c === '"' : c === '"') {
      quote = quote ? "" : c;
      continue;
    }
    const name = quote !== "'" && c === "$" ? /^(?:\{(\w+)\}|(\w+))/.exec(line.slice(i + 1)) : null;
    if (name) {
      const key = name[1] ?? name[2]!;
      if (!(key in vars)) throw new Error(`the walkthrough's \`${line}\` uses $${key}, which the test does not give`);
      word += vars[key];
      i += name[0].length;
      continue;
    }
    word += c;
  }
  if (quote) throw new Error(`unbalanced quote in the walkthrough's \`${line}\``);
  if (word !== undefined) out.push(word);
  return out;
}

/** The section's lines that start with `prefix` (e.g. "openstack loadbalancer"), in order. */
export const walkthroughCommands = (prefix: string, lines = walkthroughLines()) =>
  lines.filter((l) => l === prefix || l.startsWith(`${prefix} `));
