// What DynamoDB metering (metering.ts) computes its units from: an item's size and the capacity units
// of a read, a write and the index writes, by AWS's documented rules, and an UpdateExpression applied
// to an item image (the item an UpdateItem leaves, which DynamoDB does not send back).
//
// Computed units follow AWS's documented rules (developer guide: "DynamoDB item sizes and formats",
// "read/write capacity units", "Capacity management for transactions", "global secondary index
// write capacity"):
// - item size: UTF-8 bytes of every attribute name plus its value: strings their UTF-8 bytes,
//   numbers 1 byte per two significant digits + 1, binary its raw bytes, null and Boolean 1, sets the
//   sum of their elements, lists and maps 3 bytes + their elements (a map element with its name) + 1
//   byte per element;
// - reads per 4 KB (GetItem per item; a Query the sum of the items it read, once), halved when
//   eventually consistent (index Queries always are), at least one unit even when nothing is found;
// - writes per 1 KB of the larger of the item before and after (a delete: the item deleted; a
//   failed conditional write: the item as it is, at least 1);
// - transactions twice that, per item (TransactWriteItems' ConditionCheck as a write of the checked item);
// - each global secondary index the write changes: 1 write of the index entry (with projection ALL,
//   the item) when it enters, leaves or changes, 2 when its index key changes (index writes are
//   counted once, transactional or not).
import { INDEXES } from "@ottava/db";

/** An attribute value in DynamoDB's wire format ({ S: "..." }, { N: "1" }, { M: {...} }, ...). */
type AttributeValue = Record<string, unknown>;
/** An item in the wire format. */
export type WireItem = Record<string, AttributeValue>;

// ---- sizes and units ------------------------------------------------------------------------

const utf8 = (s: string) => Buffer.byteLength(s, "utf8");

function numberSize(n: string): number {
  const digits = n
    .replace(/^[-+]/, "")
    .replace(/[eE].*$/, "")
    .replace(".", "")
    .replace(/^0+/, "")
    .replace(/0+$/, "");
  return Math.ceil(digits.length / 2) + 1;
}

function valueSize(v: AttributeValue): number {
  if ("S" in v) return utf8(String(v.S));
  if ("N" in v) return numberSize(String(v.N));
  if ("B" in v) return Buffer.from(String(v.B), "base64").length;
  if ("BOOL" in v || "NULL" in v) return 1;
  if ("SS" in v) return (v.SS as string[]).reduce((n, s) => n + utf8(s), 0);
  if ("NS" in v) return (v.NS as string[]).reduce((n, s) => n + numberSize(s), 0);
  if ("BS" in v) return (v.BS as string[]).reduce((n, s) => n + Buffer.from(s, "base64").length, 0);
  if ("L" in v) return 3 + (v.L as AttributeValue[]).reduce((n, e) => n + valueSize(e) + 1, 0);
  if ("M" in v) return 3 + Object.entries(v.M as WireItem).reduce((n, [k, e]) => n + utf8(k) + valueSize(e) + 1, 0);
  return 0;
}

/** An item's size by AWS's rules: every attribute's name and value. */
export function itemSize(item: WireItem): number {
  let n = 0;
  for (const [name, v] of Object.entries(item)) n += utf8(name) + valueSize(v);
  return n;
}

/** Read units of `bytes` read at once: per 4 KB, at least one, halved when eventually consistent. */
export const readUnits = (bytes: number, consistent: boolean) => Math.max(1, Math.ceil(bytes / 4096)) * (consistent ? 1 : 0.5);
/** Write units of an item of `bytes`: per 1 KB, at least one. */
export const writeUnits = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

/** Index writes of a change from `before` to `after` (either absent): every index has projection ALL. */
export function indexWrites(before: WireItem | undefined, after: WireItem | undefined): number {
  let units = 0;
  for (const { pk, sk } of Object.values(INDEXES)) {
    const was = before && before[pk] && before[sk] ? JSON.stringify([before[pk], before[sk]]) : undefined;
    const is = after && after[pk] && after[sk] ? JSON.stringify([after[pk], after[sk]]) : undefined;
    if (was === undefined && is === undefined) continue;
    if (was === undefined) units += writeUnits(itemSize(after!));
    else if (is === undefined) units += writeUnits(itemSize(before!));
    else if (was !== is) units += writeUnits(itemSize(before!)) + writeUnits(itemSize(after!));
    else if (JSON.stringify(before) !== JSON.stringify(after)) units += writeUnits(itemSize(after!));
  }
  return units;
}

/** ConsumedCapacity (one or a list): its read and write units where DynamoDB split them, else its total as the operation's kind. */
export function reportedUnits(cc: unknown, readOp: boolean): { read: number; write: number } {
  const list = (Array.isArray(cc) ? cc : cc ? [cc] : []) as {
    CapacityUnits?: number;
    ReadCapacityUnits?: number;
    WriteCapacityUnits?: number;
  }[];
  let read = 0;
  let write = 0;
  for (const c of list) {
    if (c.ReadCapacityUnits !== undefined || c.WriteCapacityUnits !== undefined) {
      read += c.ReadCapacityUnits ?? 0;
      write += c.WriteCapacityUnits ?? 0;
    } else if (readOp) read += c.CapacityUnits ?? 0;
    else write += c.CapacityUnits ?? 0;
  }
  return { read, write };
}

// ---- UpdateExpression, applied to an item image -----------------------------------------------

type Token = { kind: "name" | "value" | "word" | "punct"; text: string };

function tokenize(expr: string): Token[] | undefined {
  const out: Token[] = [];
  const re = /\s*(?:(#[A-Za-z0-9_]+)|(:[A-Za-z0-9_]+)|([A-Za-z_][A-Za-z0-9_]*)|(\[\d+\]|[=+\-,().]))/y;
  let i = 0;
  while (i < expr.length) {
    if (/^\s*$/.test(expr.slice(i))) break;
    re.lastIndex = i;
    const m = re.exec(expr);
    if (!m) return undefined;
    out.push(
      m[1]
        ? { kind: "name", text: m[1] }
        : m[2]
          ? { kind: "value", text: m[2] }
          : m[3]
            ? { kind: "word", text: m[3] }
            : { kind: "punct", text: m[4]! },
    );
    i = re.lastIndex;
  }
  return out;
}

const CLAUSES = new Set(["SET", "REMOVE", "ADD", "DELETE"]);

/**
 * The item after an UpdateExpression (top-level attributes; SET with `+`/`-`, if_not_exists and
 * list_append; REMOVE; ADD and DELETE), every operand read from the item as it was. Undefined for
 * what it does not know (nested paths).
 */
export function applyUpdate(before: WireItem, input: Record<string, unknown>): WireItem | undefined {
  const tokens = tokenize(String(input.UpdateExpression ?? ""));
  if (!tokens) return undefined;
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as WireItem;
  const after: WireItem = { ...before };
  let i = 0;
  const peek = () => tokens[i];
  const take = () => tokens[i++];
  const isPunct = (t: Token | undefined, p: string) => t?.kind === "punct" && t.text === p;
  const path = (): string | undefined => {
    const t = take();
    if (!t || (t.kind !== "name" && t.kind !== "word")) return undefined;
    if (isPunct(peek(), ".") || peek()?.text.startsWith("[")) return undefined; // a nested path
    return t.kind === "name" ? names[t.text] : t.text;
  };
  const operand = (): AttributeValue | null | undefined => {
    const t = peek();
    if (t?.kind === "value") {
      i++;
      return values[t.text];
    }
    if (t?.kind === "word" && isPunct(tokens[i + 1], "(")) {
      const fn = t.text;
      i += 2;
      if (fn === "if_not_exists") {
        const p = path();
        if (p === undefined || !isPunct(take(), ",")) return undefined;
        const fallback = operand();
        if (!isPunct(take(), ")")) return undefined;
        return before[p] ?? fallback;
      }
      if (fn === "list_append") {
        const a = operand();
        if (!isPunct(take(), ",")) return undefined;
        const b = operand();
        if (!isPunct(take(), ")") || !a || !b) return undefined;
        return { L: [...((a.L as AttributeValue[]) ?? []), ...((b.L as AttributeValue[]) ?? [])] };
      }
      return undefined;
    }
    const p = path();
    return p === undefined ? undefined : (before[p] ?? null);
  };
  const num = (v: AttributeValue | null | undefined) => Number((v as { N?: string } | null | undefined)?.N ?? 0);
  while (i < tokens.length) {
    const clause = take()!;
    if (clause.kind !== "word" || !CLAUSES.has(clause.text.toUpperCase())) return undefined;
    const kind = clause.text.toUpperCase();
    for (;;) {
      const p = path();
      if (p === undefined) return undefined;
      if (kind === "SET") {
        if (!isPunct(take(), "=")) return undefined;
        let v = operand();
        if (v === undefined) return undefined;
        if (isPunct(peek(), "+") || isPunct(peek(), "-")) {
          const sign = take()!.text === "+" ? 1 : -1;
          const w = operand();
          if (w === undefined) return undefined;
          v = { N: String(num(v) + sign * num(w)) };
        }
        if (v === null) return undefined;
        after[p] = v;
      } else if (kind === "REMOVE") {
        delete after[p];
      } else {
        const v = operand();
        if (!v) return undefined;
        const cur = after[p];
        const set = ["SS", "NS", "BS"].find((s) => s in v);
        if (kind === "ADD" && "N" in v) after[p] = { N: String(num(cur) + num(v)) };
        else if (set && kind === "ADD") after[p] = { [set]: [...new Set([...((cur?.[set] as string[]) ?? []), ...(v[set] as string[])])] };
        else if (set && kind === "DELETE") {
          const left = ((cur?.[set] as string[]) ?? []).filter((e) => !(v[set] as string[]).includes(e));
          if (left.length) after[p] = { [set]: left };
          else delete after[p];
        } else return undefined;
      }
      if (!isPunct(peek(), ",")) break;
      i++;
    }
  }
  return after;
}
