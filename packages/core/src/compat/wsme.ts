// wsme's reading of a JSON body (wsme/rest/json.py fromjson, wsme/types.py validate_value), as
// Octavia's API types (octavia/api/v2/types, api/common/types.py) declare their attributes: the
// words and messages of its conversions and types.
import * as z from "zod";
import { Fault } from "../faults";
import { intFromText, pyRepr, pyStr, pythonType } from "./repr";

/** wsme's unambiguous booleans (rest/json.py ENUM_TRUE, ENUM_FALSE; oslo strutils' TRUE_STRINGS are the same words). */
export const ENUM_TRUE: readonly string[] = ["true", "t", "yes", "y", "on", "1"];
export const ENUM_FALSE: readonly string[] = ["false", "f", "no", "n", "off", "0"];

/** A wsme-typed JSON object: unknown attributes are refused as wsme refuses them. */
export const body = <S extends z.ZodRawShape>(shape: S) => z.strictObject(shape);

/** A zod issue with wsme's message: what a transform answers for a value it refuses. */
export const issue = (ctx: z.RefinementCtx, message: string) => {
  ctx.addIssue({ code: "custom", message });
  return z.NEVER;
};

/** int(v) as wsme's IntegerType conversion answers it (Python's int()): the number, or Python's error message. */
export function pythonInt(v: unknown): number | string {
  if (v === undefined || v === null) return "Mandatory field missing.";
  if (typeof v === "boolean") return v ? 1 : 0;
  // JSON's 1e400 is a float infinity to Python (and to JavaScript).
  if (typeof v === "number") return Number.isFinite(v) ? Math.trunc(v) : "cannot convert float infinity to integer";
  if (typeof v === "string") return intFromText(v) ?? `invalid literal for int() with base 10: ${pyRepr(v)}`;
  return `int() argument must be a string, a bytes-like object or a real number, not '${pythonType(v)}'`;
}

// wsme reads a body's attributes in their declaration order, each first converted from JSON
// (fromjson) and then validated: a conversion that fails (int("x"), an ambiguous boolean, a list
// that is not one) fails the whole argument, quoting the whole body in Python's words; a validation
// that fails names the attribute. Unknown attributes are refused before anything else.

/**
 * A wsme attribute's conversion from JSON: the message of the ValueError it raises, or null when
 * wsme stops at a validation error before any conversion fails (undefined: all converted). A
 * TypeError escapes wsme as a 500: thrown.
 */
export type WsmeConversion = (value: unknown) => string | null | undefined;

/** fromjson for int attributes (IntegerType, Enum(int)). Octavia lets the TypeError of a list or dict escape as a 500; Ottava answers 400. */
export const intConversion: WsmeConversion = (v) => {
  const n = pythonInt(v);
  return typeof n === "number" ? undefined : n;
};

/** fromjson for bool attributes: integers, booleans and the (lower case) unambiguous strings. */
export const boolConversion: WsmeConversion = (v) =>
  typeof v === "boolean" || Number.isInteger(v) || ENUM_TRUE.includes(v as string) || ENUM_FALSE.includes(v as string)
    ? undefined
    : `Value not an unambiguous boolean: ${pyStr(v)}`;

/** fromjson for list attributes, then for their items. */
export const listConversion =
  (item?: WsmeConversion): WsmeConversion =>
  (v) => {
    if (!Array.isArray(v)) return `Value not a valid list: ${pyStr(v)}`;
    for (const x of v) {
      const result = x === null ? undefined : item?.(x);
      if (result !== undefined) return result;
    }
    return undefined;
  };

/** Walks `v`'s attributes in `shape`'s order as wsme does: the first conversion error, null at a validation error first. */
function conversionError(shape: z.ZodRawShape, conversions: Record<string, WsmeConversion>, v: unknown): string | null | undefined {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return null;
  const fields = v as Record<string, unknown>;
  if (Object.keys(fields).some((k) => !Object.hasOwn(shape, k))) return null;
  for (const [key, schema] of Object.entries(shape)) {
    const value = fields[key];
    const result = value === undefined || value === null ? undefined : conversions[key]?.(value);
    if (result !== undefined) return result;
    if (!z.safeParse(schema, value).success) return null;
  }
  return undefined;
}

/**
 * A wsme-typed JSON object (strict), read in wsme's order. `conversions` are the attributes'
 * fromjson checks; with an `argument` (and its body's `root`) their failures are answered as wsme
 * answers them; without, they are an enclosing object's to check (see `objectConversion`).
 */
export function wsmeObject<S extends z.ZodRawShape>(
  shape: S,
  conversions: Partial<Record<keyof S, WsmeConversion>>,
  argument?: { name: string; root: string },
) {
  return z
    .unknown()
    .transform((v, ctx) => {
      if (typeof v !== "object" || v === null || Array.isArray(v)) return v;
      const unknown = Object.keys(v).filter((k) => !Object.hasOwn(shape, k));
      if (unknown.length > 0) {
        ctx.addIssue({ code: "unrecognized_keys", keys: unknown, input: v as Record<string, unknown> });
        return z.NEVER;
      }
      const error = argument ? conversionError(shape, conversions as Record<string, WsmeConversion>, v) : undefined;
      if (typeof error === "string") {
        throw new Fault(400, `Invalid input for field/attribute ${argument!.name}. Value: '${pyRepr({ [argument!.root]: v })}'. ${error}`);
      }
      return v;
    })
    .pipe(body(shape));
}

/** fromjson for an attribute that is itself a wsme object (a list's items): anything but a dict (Octavia's 500) is a 400. */
export const objectConversion =
  (shape: z.ZodRawShape, conversions: Record<string, WsmeConversion>): WsmeConversion =>
  (v) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return `'${pythonType(v)}' object has no attribute 'keys'`;
    return conversionError(shape, conversions, v);
  };

/** wsme Enum(str, ...): any other value is refused with the choices (a list or dict cannot even be looked up); null passes. */
export const wsmeChoice = <T extends string>(values: readonly T[]) =>
  z.unknown().transform((v, ctx) => {
    if (v === null || (values as readonly unknown[]).includes(v)) return v as T | null;
    return issue(ctx, typeof v === "object" ? `unhashable type: '${pythonType(v)}'` : `Value should be one of: ${values.join(", ")}`);
  });

/** wsme Enum: any JSON value, refused unless it is one of `values` (null included, as wsme validates None). */
export const wsmeEnum = <T extends string>(values: readonly T[]) =>
  z.unknown().refine((v): v is T => (values as readonly unknown[]).includes(v), {
    error: `Value should be one of: ${values.join(", ")}`,
  }) as unknown as z.ZodType<T, unknown>;

/**
 * wsme ArrayType: `check` answers each item's problem; as in wsme, a bad item is reported with the
 * whole list as the attribute's value.
 */
export const wsmeList = <T>(check: (item: unknown) => string | undefined) =>
  z.unknown().transform((v, ctx) => {
    if (!Array.isArray(v)) return issue(ctx, `Value not a valid list: ${pyStr(v)}`);
    for (const item of v) {
      const problem = check(item);
      if (problem !== undefined) return issue(ctx, problem);
    }
    return v as T[];
  });

/** wsme StringType(max_length) as a list or dict item, where null passes as wsme lets it. */
export const stringItem = (max: number) => (v: unknown) =>
  v === null
    ? undefined
    : typeof v !== "string"
      ? "Value should be string"
      : v.length > max
        ? `Value should have a maximum character requirement of ${max}`
        : undefined;

/** wsme DictType(str, StringType(max_length=255)), as Octavia's insert_headers. */
export const wsmeStringDict = () =>
  z.unknown().transform((v, ctx) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return issue(ctx, `Value not a valid dict: ${pyStr(v)}`);
    for (const value of Object.values(v)) {
      const problem = stringItem(255)(value);
      if (problem !== undefined) return issue(ctx, problem);
    }
    return v as Record<string, string | null>;
  });
