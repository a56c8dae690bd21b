// Over 400 lines because it is one port of CPython's re/_parser.py, kept whole to be read beside it.
// Python's re.compile, for its errors only. Octavia checks a REGEX rule's value with Python's
// re.compile and answers its error text: a port of the checks of CPython 3.11's re._parser (and the
// compiler's look-behind width check), building just enough of the parse tree to know widths.
import { pyRepr } from "./repr";

const MAXREPEAT = 4294967295;
const DIGITS = "0123456789";
const OCTDIGITS = DIGITS.slice(0, 8);
const HEXDIGITS = `${DIGITS}abcdefABCDEF`;
const ASCIILETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const WHITESPACE = " \t\n\r\v\f";
const SPECIAL_CHARS = ".\\[{()*+?^$|";
const FLAGS: Record<string, number> = { i: 2, L: 4, m: 8, s: 16, x: 64, a: 256, t: 1, u: 32 };
const TYPE_FLAGS = 4 | 32 | 256;
const GLOBAL_FLAGS = 1 | 128;
const VERBOSE = 64;
const CLASS_CATEGORIES = new Set(["\\d", "\\D", "\\s", "\\S", "\\w", "\\W"]);
const AT_CATEGORIES = new Set(["\\A", "\\b", "\\B", "\\Z"]);

type Width = [number, number];
type Item =
  | { op: "unit" }
  | { op: "at" }
  | { op: "repeat"; min: number; max: number; item: Item[] }
  | { op: "sub"; group: number | null; flags: boolean; p: Item[] }
  | { op: "atomic"; p: Item[] }
  | { op: "branch"; items: Item[][] }
  | { op: "assert"; dir: number; p: Item[] }
  | { op: "groupref"; group: number }
  | { op: "exists"; yes: Item[]; no: Item[] | null };

class ReError extends Error {}

class Source {
  readonly chars: string[];
  index = 0;
  next: string | null = null;
  /** The next token's length in code points (an escape is two). */
  private nextLen = 0;
  constructor(pattern: string) {
    this.chars = Array.from(pattern);
    this.advance();
  }
  private advance() {
    let index = this.index;
    let char = this.chars[index];
    if (char === undefined) {
      this.next = null;
      this.nextLen = 0;
      return;
    }
    if (char === "\\") {
      index += 1;
      const c = this.chars[index];
      if (c === undefined) throw new ReError(`bad escape (end of pattern) at position ${this.chars.length - 1}`);
      char += c;
    }
    this.nextLen = index + 1 - this.index;
    this.index = index + 1;
    this.next = char;
  }
  match(c: string) {
    if (c === this.next) {
      this.advance();
      return true;
    }
    return false;
  }
  get() {
    const c = this.next;
    this.advance();
    return c;
  }
  getwhile(n: number, set: string) {
    let result = "";
    for (let i = 0; i < n; i++) {
      const c = this.next;
      if (c === null || !set.includes(c) || c.length !== 1) break;
      result += c;
      this.advance();
    }
    return result;
  }
  getuntil(terminator: string, name: string) {
    let result = "";
    for (;;) {
      const c = this.next;
      this.advance();
      if (c === null) {
        if (!result) throw this.error(`missing ${name}`);
        throw this.error(`missing ${terminator}, unterminated name`, Array.from(result).length);
      }
      if (c === terminator) {
        if (!result) throw this.error(`missing ${name}`, 1);
        break;
      }
      result += c;
    }
    return result;
  }
  tell() {
    return this.index - this.nextLen;
  }
  seek(index: number) {
    this.index = index;
    this.advance();
  }
  error(msg: string, offset = 0) {
    return new ReError(`${msg} at position ${this.tell() - offset}`);
  }
  checkgroupname(name: string, offset: number) {
    if (!isIdentifier(name)) throw this.error(`bad character in group name ${pyRepr(name)}`, Array.from(name).length + offset);
  }
}

class State {
  flags = 0;
  groupdict = new Map<string, number>();
  groupwidths: (Width | null)[] = [null];
  lookbehindgroups: number | null = null;
  grouprefpos = new Map<number, number>();
  get groups() {
    return this.groupwidths.length;
  }
  opengroup(name: string | null, source: Source) {
    const gid = this.groups;
    this.groupwidths.push(null);
    if (name !== null) {
      const ogid = this.groupdict.get(name);
      if (ogid !== undefined) {
        throw source.error(`redefinition of group name ${pyRepr(name)} as group ${gid}; was group ${ogid}`, Array.from(name).length + 1);
      }
      this.groupdict.set(name, gid);
    }
    return gid;
  }
  checkgroup(gid: number) {
    return gid < this.groups && this.groupwidths[gid] != null;
  }
  checklookbehindgroup(gid: number, source: Source) {
    if (this.lookbehindgroups !== null) {
      if (!this.checkgroup(gid)) throw source.error("cannot refer to an open group");
      if (gid >= this.lookbehindgroups) throw source.error("cannot refer to group defined in the same lookbehind subpattern");
    }
  }
}

function width(p: Item[], state: State): Width {
  let lo = 0;
  let hi = 0;
  for (const item of p) {
    let w: Width = [0, 0];
    switch (item.op) {
      case "unit":
        w = [1, 1];
        break;
      case "branch": {
        let i = MAXREPEAT - 1;
        let j = 0;
        for (const b of item.items) {
          const [l, h] = width(b, state);
          i = Math.min(i, l);
          j = Math.max(j, h);
        }
        w = [i, j];
        break;
      }
      case "atomic":
      case "sub":
        w = width(item.p, state);
        break;
      case "repeat": {
        const [i, j] = width(item.item, state);
        w = [i * item.min, j * item.max];
        break;
      }
      case "groupref":
        w = state.groupwidths[item.group] ?? [0, 0];
        break;
      case "exists": {
        const [i, j] = width(item.yes, state);
        if (item.no) {
          const [l, h] = width(item.no, state);
          w = [Math.min(i, l), Math.max(j, h)];
        } else w = [0, j];
        break;
      }
    }
    lo += w[0];
    hi += w[1];
  }
  return [Math.min(lo, MAXREPEAT - 1), Math.min(hi, MAXREPEAT)];
}

/** What an escape in a character class stands for: a literal (with its code point) or a category. */
type ClassCode = { literal: boolean; value: number };
const ESCAPE_VALUES: Record<string, number> = { "\\a": 7, "\\b": 8, "\\f": 12, "\\n": 10, "\\r": 13, "\\t": 9, "\\v": 11, "\\\\": 92 };

function classEscape(source: Source, escape: string): ClassCode {
  if (Object.hasOwn(ESCAPE_VALUES, escape)) return { literal: true, value: ESCAPE_VALUES[escape]! };
  if (CLASS_CATEGORIES.has(escape)) return { literal: false, value: NaN };
  return { literal: true, value: codeEscape(source, escape, true) };
}

function escapeCode(source: Source, escape: string, state: State): Item {
  if (AT_CATEGORIES.has(escape)) return { op: "at" };
  if (CLASS_CATEGORIES.has(escape) || Object.hasOwn(ESCAPE_VALUES, escape)) return { op: "unit" };
  const c = escape[1]!;
  if (c !== "0" && DIGITS.includes(c)) {
    // octal escape *or* decimal group reference
    let esc = escape;
    if (source.next !== null && DIGITS.includes(source.next)) {
      esc += source.get();
      if (OCTDIGITS.includes(esc[1]!) && OCTDIGITS.includes(esc[2]!) && source.next !== null && OCTDIGITS.includes(source.next)) {
        esc += source.get();
        if (parseInt(esc.slice(1), 8) > 0o377) throw source.error(`octal escape value ${esc} outside of range 0-0o377`, esc.length);
        return { op: "unit" };
      }
    }
    const group = parseInt(esc.slice(1), 10);
    if (group < state.groups) {
      if (!state.checkgroup(group)) throw source.error("cannot refer to an open group", esc.length);
      state.checklookbehindgroup(group, source);
      return { op: "groupref", group };
    }
    throw source.error(`invalid group reference ${group}`, esc.length - 1);
  }
  codeEscape(source, escape, false);
  return { op: "unit" };
}

/** The escapes _escape and _class_escape share (\x, \u, \U, \N, octal, plain characters): the code point. */
function codeEscape(source: Source, escape: string, inClass: boolean): number {
  const c = Array.from(escape)[1]!;
  const hex = (n: number) => {
    const esc = escape + source.getwhile(n, HEXDIGITS);
    if (esc.length !== n + 2) throw source.error(`incomplete escape ${esc}`, esc.length);
    return esc;
  };
  if (c === "x") return parseInt(hex(2).slice(2), 16);
  if (c === "u") return parseInt(hex(4).slice(2), 16);
  if (c === "U") {
    const esc = hex(8);
    const value = parseInt(esc.slice(2), 16);
    if (value > 0x10ffff) throw source.error(`bad escape ${esc}`, esc.length);
    return value;
  }
  if (c === "N") {
    if (!source.match("{")) throw source.error("missing {");
    const charname = source.getuntil("}", "character name");
    if (!knownCharacterName(charname)) {
      throw source.error(`undefined character name ${pyRepr(charname)}`, Array.from(charname).length + 4);
    }
    return NaN;
  }
  if (inClass ? OCTDIGITS.includes(c) : c === "0") {
    const esc = escape + source.getwhile(2, OCTDIGITS);
    const value = parseInt(esc.slice(1), 8);
    if (inClass && value > 0o377) throw source.error(`octal escape value ${esc} outside of range 0-0o377`, esc.length);
    return value;
  }
  if (!DIGITS.includes(c) && !ASCIILETTERS.includes(c)) return c.codePointAt(0)!;
  throw source.error(`bad escape ${escape}`, Array.from(escape).length);
}

/**
 * \N{...}: Python looks the name up in the Unicode database, which Node does not carry. Unicode
 * names are words of letters and digits joined by spaces or hyphens, and none is shorter than 4.
 */
function knownCharacterName(name: string): boolean {
  return /^[A-Z][A-Z0-9]*(?:[ -][A-Z0-9]+)*$/i.test(name) && name.length >= 4;
}

function parseSub(source: Source, state: State, verbose: boolean, nested: number): Item[] {
  const items: Item[][] = [];
  for (;;) {
    items.push(parse(source, state, verbose, nested + 1, nested === 0 && items.length === 0));
    if (!source.match("|")) break;
    if (!nested) verbose = (state.flags & VERBOSE) !== 0;
  }
  if (items.length === 1) return items[0]!;
  return [{ op: "branch", items }];
}

function parse(source: Source, state: State, verbose: boolean, nested: number, first = false): Item[] {
  const sub: Item[] = [];
  for (;;) {
    const thisChar = source.next;
    if (thisChar === null || thisChar === "|" || thisChar === ")") break;
    source.get();
    if (verbose) {
      if (WHITESPACE.includes(thisChar) && thisChar.length === 1) continue;
      if (thisChar === "#") {
        for (;;) {
          const c = source.get();
          if (c === null || c === "\n") break;
        }
        continue;
      }
    }
    if (thisChar[0] === "\\") {
      sub.push(escapeCode(source, thisChar, state));
    } else if (!SPECIAL_CHARS.includes(thisChar)) {
      sub.push({ op: "unit" });
    } else if (thisChar === "[") {
      const here = source.tell() - 1;
      let count = 0;
      source.match("^");
      for (;;) {
        const t = source.get();
        if (t === null) throw source.error("unterminated character set", source.tell() - here);
        if (t === "]" && count > 0) break;
        const code1: ClassCode = t[0] === "\\" ? classEscape(source, t) : { literal: true, value: t.codePointAt(0)! };
        if (source.match("-")) {
          const that = source.get();
          if (that === null) throw source.error("unterminated character set", source.tell() - here);
          if (that === "]") {
            count += 2;
            break;
          }
          const code2: ClassCode = that[0] === "\\" ? classEscape(source, that) : { literal: true, value: that.codePointAt(0)! };
          const range = `bad character range ${t}-${that}`;
          const offset = Array.from(t).length + 1 + Array.from(that).length;
          if (!code1.literal || !code2.literal || code2.value < code1.value) throw source.error(range, offset);
        }
        count++;
      }
      sub.push({ op: "unit" });
    } else if ("*+?{".includes(thisChar)) {
      const here = source.tell();
      let min = 0;
      let max = MAXREPEAT;
      if (thisChar === "?") max = 1;
      else if (thisChar === "+") min = 1;
      else if (thisChar === "{") {
        if (source.next === "}") {
          sub.push({ op: "unit" });
          continue;
        }
        let lo = "";
        let hi = "";
        while (source.next !== null && DIGITS.includes(source.next)) lo += source.get();
        if (source.match(",")) {
          while (source.next !== null && DIGITS.includes(source.next)) hi += source.get();
        } else hi = lo;
        if (!source.match("}")) {
          sub.push({ op: "unit" });
          source.seek(here);
          continue;
        }
        if (lo) {
          min = Number(lo);
          if (min >= MAXREPEAT) throw new ReError("the repetition number is too large");
        }
        if (hi) {
          max = Number(hi);
          if (max >= MAXREPEAT) throw new ReError("the repetition number is too large");
          if (max < min) throw source.error("min repeat greater than max repeat", source.tell() - here);
        }
      }
      const last = sub[sub.length - 1];
      if (!last || last.op === "at") throw source.error("nothing to repeat", source.tell() - here + thisChar.length);
      if (last.op === "repeat") throw source.error("multiple repeat", source.tell() - here + thisChar.length);
      const item = last.op === "sub" && last.group === null && !last.flags ? last.p : [last];
      if (!source.match("?")) source.match("+");
      sub[sub.length - 1] = { op: "repeat", min, max, item };
    } else if (thisChar === ".") {
      sub.push({ op: "unit" });
    } else if (thisChar === "(") {
      const start = source.tell() - 1;
      let capture = true;
      let atomic = false;
      let name: string | null = null;
      let scopedFlags = false;
      let subVerbose = verbose;
      if (source.match("?")) {
        const char = source.get();
        if (char === null) throw source.error("unexpected end of pattern");
        if (char === "P") {
          if (source.match("<")) {
            name = source.getuntil(">", "group name");
            source.checkgroupname(name, 1);
          } else if (source.match("=")) {
            const ref = source.getuntil(")", "group name");
            source.checkgroupname(ref, 1);
            const gid = state.groupdict.get(ref);
            if (gid === undefined) throw source.error(`unknown group name ${pyRepr(ref)}`, Array.from(ref).length + 1);
            if (!state.checkgroup(gid)) throw source.error("cannot refer to an open group", Array.from(ref).length + 1);
            state.checklookbehindgroup(gid, source);
            sub.push({ op: "groupref", group: gid });
            continue;
          } else {
            const c = source.get();
            if (c === null) throw source.error("unexpected end of pattern");
            throw source.error(`unknown extension ?P${c}`, cpLen(c) + 2);
          }
        } else if (char === ":") {
          capture = false;
        } else if (char === "#") {
          for (;;) {
            if (source.next === null) throw source.error("missing ), unterminated comment", source.tell() - start);
            if (source.get() === ")") break;
          }
          continue;
        } else if ("=!<".includes(char) && char.length === 1) {
          let dir = 1;
          let saved: number | null = null;
          if (char === "<") {
            const c = source.get();
            if (c === null) throw source.error("unexpected end of pattern");
            if (!"=!".includes(c) || c.length !== 1) throw source.error(`unknown extension ?<${c}`, cpLen(c) + 2);
            dir = -1;
            saved = state.lookbehindgroups;
            if (saved === null) state.lookbehindgroups = state.groups;
          }
          const p = parseSub(source, state, verbose, nested + 1);
          if (dir < 0 && saved === null) state.lookbehindgroups = null;
          if (!source.match(")")) throw source.error("missing ), unterminated subpattern", source.tell() - start);
          sub.push({ op: "assert", dir, p });
          continue;
        } else if (char === "(") {
          const condname = source.getuntil(")", "group name");
          let condgroup: number;
          const len = Array.from(condname).length;
          if (isIdentifier(condname)) {
            const g = state.groupdict.get(condname);
            if (g === undefined) throw source.error(`unknown group name ${pyRepr(condname)}`, len + 1);
            condgroup = g;
          } else {
            // int(condname), as Python reads it
            const m = /^\s*([+-]?)(\d+(?:_\d+)*)\s*$/.exec(condname);
            condgroup = m ? parseInt(m[2]!.replace(/_/g, ""), 10) : NaN;
            if (!m || (m[1] === "-" && condgroup > 0)) throw source.error(`bad character in group name ${pyRepr(condname)}`, len + 1);
            if (!condgroup) throw source.error("bad group number", len + 1);
            if (condgroup >= 1073741823) throw source.error(`invalid group reference ${condgroup}`, len + 1);
            if (!state.grouprefpos.has(condgroup)) state.grouprefpos.set(condgroup, source.tell() - len - 1);
          }
          state.checklookbehindgroup(condgroup, source);
          const yes = parse(source, state, verbose, nested + 1);
          let no: Item[] | null = null;
          if (source.match("|")) {
            no = parse(source, state, verbose, nested + 1);
            if (source.next === "|") throw source.error("conditional backref with more than two branches");
          }
          if (!source.match(")")) throw source.error("missing ), unterminated subpattern", source.tell() - start);
          sub.push({ op: "exists", yes, no });
          continue;
        } else if (char === ">") {
          capture = false;
          atomic = true;
        } else if (Object.hasOwn(FLAGS, char) || char === "-") {
          const flags = parseFlags(source, state, char);
          if (flags === null) {
            if (!first || sub.length > 0) throw source.error("global flags not at the start of the expression", source.tell() - start);
            verbose = (state.flags & VERBOSE) !== 0;
            continue;
          }
          const [add, del] = flags;
          scopedFlags = add !== 0 || del !== 0;
          subVerbose = (verbose || (add & VERBOSE) !== 0) && (del & VERBOSE) === 0;
          capture = false;
        } else {
          throw source.error(`unknown extension ?${char}`, cpLen(char) + 1);
        }
      }
      const group = capture ? state.opengroup(name, source) : null;
      const p = parseSub(source, state, subVerbose, nested + 1);
      if (!source.match(")")) throw source.error("missing ), unterminated subpattern", source.tell() - start);
      if (group !== null) state.groupwidths[group] = width(p, state);
      sub.push(atomic ? { op: "atomic", p } : { op: "sub", group, flags: scopedFlags, p });
    } else if (thisChar === "^" || thisChar === "$") {
      sub.push({ op: "at" });
    }
  }
  // Non-capturing groups without flags are unpacked into their parent.
  for (let i = sub.length - 1; i >= 0; i--) {
    const it = sub[i]!;
    if (it.op === "sub" && it.group === null && !it.flags) sub.splice(i, 1, ...it.p);
  }
  return sub;
}

function parseFlags(source: Source, state: State, first: string): [number, number] | null {
  let char: string | null = first;
  let add = 0;
  let del = 0;
  if (char !== "-") {
    for (;;) {
      const flag = FLAGS[char]!;
      if (char === "L") throw source.error("bad inline flags: cannot use 'L' flag with a str pattern");
      add |= flag;
      if (flag & TYPE_FLAGS && (add & TYPE_FLAGS) !== flag) throw source.error("bad inline flags: flags 'a', 'u' and 'L' are incompatible");
      char = source.get();
      if (char === null) throw source.error("missing -, : or )");
      if (")-:".includes(char) && char.length === 1) break;
      if (!Object.hasOwn(FLAGS, char)) throw source.error(isAlpha(char) ? "unknown flag" : "missing -, : or )", cpLen(char));
    }
  }
  if (char === ")") {
    state.flags |= add;
    return null;
  }
  if (add & GLOBAL_FLAGS) throw source.error("bad inline flags: cannot turn on global flag", 1);
  if (char === "-") {
    char = source.get();
    if (char === null) throw source.error("missing flag");
    if (!Object.hasOwn(FLAGS, char)) throw source.error(isAlpha(char) ? "unknown flag" : "missing flag", cpLen(char));
    for (;;) {
      const flag = FLAGS[char]!;
      if (flag & TYPE_FLAGS) throw source.error("bad inline flags: cannot turn off flags 'a', 'u' and 'L'");
      del |= flag;
      char = source.get();
      if (char === null) throw source.error("missing :");
      if (char === ":") break;
      if (!Object.hasOwn(FLAGS, char)) throw source.error(isAlpha(char) ? "unknown flag" : "missing :", cpLen(char));
    }
  }
  if (del & GLOBAL_FLAGS) throw source.error("bad inline flags: cannot turn off global flag", 1);
  if (add & del) throw source.error("bad inline flags: flag turned on and off", 1);
  return [add, del];
}

/** The compiler's check: a look-behind must match a fixed width. */
function checkLookbehinds(p: Item[], state: State): void {
  for (const item of p) {
    switch (item.op) {
      case "assert":
        if (item.dir < 0) {
          const [lo, hi] = width(item.p, state);
          if (lo !== hi) throw new ReError("look-behind requires fixed-width pattern");
        }
        checkLookbehinds(item.p, state);
        break;
      case "repeat":
        checkLookbehinds(item.item, state);
        break;
      case "sub":
      case "atomic":
        checkLookbehinds(item.p, state);
        break;
      case "branch":
        item.items.forEach((b) => checkLookbehinds(b, state));
        break;
      case "exists":
        checkLookbehinds(item.yes, state);
        if (item.no) checkLookbehinds(item.no, state);
        break;
    }
  }
}

/** Why Python's re.compile(pattern) fails (its message), or undefined when it compiles. */
export function pythonRegexError(pattern: string): string | undefined {
  try {
    const source = new Source(pattern);
    const state = new State();
    const p = parseSub(source, state, false, 0);
    if ((state.flags & 256) !== 0 && (state.flags & 32) !== 0) return "ASCII and UNICODE flags are incompatible";
    if (source.next !== null) throw source.error("unbalanced parenthesis");
    for (const [g, pos] of state.grouprefpos) {
      if (g >= state.groups) throw new ReError(`invalid group reference ${g} at position ${pos}`);
    }
    checkLookbehinds(p, state);
    return undefined;
  } catch (e) {
    if (e instanceof ReError) return e.message;
    throw e;
  }
}

const cpLen = (s: string) => Array.from(s).length;
const isAlpha = (c: string) => /^\p{L}$/u.test(c);
const isIdentifier = (s: string) => /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*$/u.test(s);
