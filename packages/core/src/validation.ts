// Request-body validation: zod schemas whose messages are wsme's, as Octavia's API answers them.
import * as z from "zod";
import { MAX_BODY_DEPTH, MAX_INT32, MIN_INT32 } from "./constants";
import { Fault, invalidInput } from "./faults";
import { ENUM_FALSE, ENUM_TRUE, issue, pythonInt } from "./compat/wsme";

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** wsme StringType(max_length, min_length). */
export const str = (max?: number, min?: number) => {
  let s = z.string({ error: "Value should be string" });
  if (min !== undefined) s = s.min(min, { error: `Value should have a minimum character requirement of ${min}` });
  if (max !== undefined) s = s.max(max, { error: `Value should have a maximum character requirement of ${max}` });
  return s;
};

/** wsme UuidType: any UUID spelling, answered in its canonical dashed form. */
export const uuid = () =>
  z
    .string({ error: "Value should be UUID format" })
    .regex(UUID_RE, { error: "Value should be UUID format" })
    .transform((v) => canonicalUuid(v));

export const canonicalUuid = (v: string) => {
  const h = v.replace(/-/g, "").toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

export const isUuid = (v: string) => UUID_RE.test(v);

/** wsme bool: JSON booleans, integers and the unambiguous strings. */
export const bool = () =>
  z.unknown().transform((v, ctx) => {
    if (typeof v === "boolean") return v;
    if (typeof v === "number" && Number.isInteger(v)) return v !== 0;
    if (typeof v === "string" && ENUM_TRUE.includes(v.toLowerCase())) return true;
    if (typeof v === "string" && ENUM_FALSE.includes(v.toLowerCase())) return false;
    return issue(ctx, `Value not an unambiguous boolean: ${String(v)}`);
  });

/** Octavia's IPAddressType: IPv4 or IPv6. */
export const ipAddress = () =>
  z.string({ error: "Value should be IPv4 or IPv6 format" }).refine((v) => z.ipv4().safeParse(v).success || z.ipv6().safeParse(v).success, {
    error: "Value should be IPv4 or IPv6 format",
  });

/** wsme ArrayType(StringType(max_length)), as used for tags. */
export const tags = () => z.array(str(255), { error: "Value should be a list" }).transform((t) => [...new Set(t)]);

export { body } from "./compat/wsme";

/**
 * Parses a request body wrapped in its root key (`{"loadbalancer": {...}}`), answering the first
 * problem the way Octavia (wsme) words it. `argument` is the controller's argument name
 * (`load_balancer`), which wsme puts in front of the attribute path in its messages.
 */
export function parseRoot<T extends z.ZodTypeAny>(argument: string, root: string, schema: T, raw: unknown): z.output<T> {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new Fault(400, `Invalid input for field/attribute ${argument}. Value: '${JSON.stringify(raw)}'. Value should be an object`);
  }
  const unknown = Object.keys(raw).filter((k) => k !== root);
  if (unknown.length > 0) throw unknownAttributes(argument, unknown);
  const inner = (raw as Record<string, unknown>)[root];
  if (inner === undefined) throw new Fault(400, `Missing argument: "${root}"`);
  const result = schema.safeParse(inner);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.map(String);
  if (issue.code === "unrecognized_keys") {
    throw unknownAttributes([argument, root, ...path.filter((p) => !/^\d+$/.test(p))].join("."), issue.keys);
  }
  const field = [...path].reverse().find((p) => !/^\d+$/.test(p)) ?? root;
  const value = path.reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], inner);
  if (value === undefined) throw invalidInput(field, null, "Mandatory field missing.");
  throw invalidInput(field, value, issue.message);
}

/** A body that is not JSON, answered as Octavia does. */
export const notJson = () => new Fault(400, "Request is not in valid JSON format");

/** A body over the size limit: 413, in oslo.middleware's sizelimit words. */
export const bodyTooLarge = (limit: number) => new Fault(413, `Request is too large: the body may hold at most ${limit} bytes.`);

/**
 * Refuses JSON text that nests deeper than MAX_BODY_DEPTH, before it is parsed: nothing that reads a
 * body (the parser, validation, a fault message quoting it) then recurses deeper than that. One pass,
 * no recursion; strings are skipped (their brackets are text).
 */
export function checkBodyDepth(text: string): void {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22) {
      // A string: to its closing quote, stepping over escapes.
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > MAX_BODY_DEPTH) throw new Fault(400, `Request body nests deeper than ${MAX_BODY_DEPTH} levels`);
    } else if (ch === 0x7d || ch === 0x5d) depth--;
  }
}

function unknownAttributes(argument: string, attrs: readonly string[]): Fault {
  const what = attrs.length > 1 ? "Unknown attributes" : "Unknown attribute";
  return new Fault(400, `${what} for argument ${argument}: ${attrs.join(", ")}`);
}

/**
 * wsme IntegerType(minimum, maximum): Python's int() of the JSON value, then the range; without a
 * bound of its own, the range Octavia's Integer column holds (32-bit), which its database would refuse
 * beyond (Ottava answers 400, not the 500 of a database error).
 */
export const integer = (min = MIN_INT32, max = MAX_INT32) =>
  z.unknown().transform((v, ctx) => {
    const n = pythonInt(v);
    const problem =
      typeof n === "string"
        ? n
        : n < min
          ? `Value should be greater or equal to ${min}`
          : n > max
            ? `Value should be lower or equal to ${max}`
            : undefined;
    if (problem === undefined) return n as number;
    return issue(ctx, problem);
  });
