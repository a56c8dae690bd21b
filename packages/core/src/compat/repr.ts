// Python's builtins on the JSON values Octavia was given (json.loads, then repr(), str(), bool(), type(),
// int(), str.strip()): one implementation for every message that quotes a value and every Python reading.

/**
 * A JSON value as Python's repr() writes it: how Octavia's messages quote values that went through
 * Python, e.g. jsonschema's "'BAD' is not one of ['ACTIVE_STANDBY', 'SINGLE']".
 */
export function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "number") return pyNumber(v);
  if (typeof v === "string") return pyString(v);
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(", ")}]`;
  if (typeof v === "object") {
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${pyString(k)}: ${pyRepr(x)}`)
      .join(", ")}}`;
  }
  return String(v);
}

/** Python's str() (`%s`) of a JSON value: a string as it is, anything else as repr() writes it. */
export const pyStr = (v: unknown): string => (typeof v === "string" ? v : pyRepr(v));

/** Python's truth value (bool()) of a JSON value: None, False, 0, "", [] and {} are false. */
export function pyTruthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === "") return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === "object") return Object.keys(v).length > 0;
  return true;
}

/** Python's type(v).__name__ of a JSON value (a number as repr() writes it: integral below 1e16 is an int). */
export const pythonType = (v: unknown): string =>
  v === null || v === undefined
    ? "NoneType"
    : Array.isArray(v)
      ? "list"
      : typeof v === "object"
        ? "dict"
        : typeof v === "boolean"
          ? "bool"
          : typeof v === "string"
            ? "str"
            : Number.isInteger(v) && Math.abs(v as number) < 1e16
              ? "int"
              : "float";

/** repr() of a str. */
function pyString(s: string): string {
  // Python prefers single quotes, and uses double quotes only to avoid escaping a single one.
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = q;
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === q) out += `\\${q}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch !== " " && /[\p{C}\p{Z}]/u.test(ch)) {
      // Not printable for Python's str.isprintable(): escaped by code point.
      const hex = code.toString(16);
      out += code <= 0xff ? `\\x${hex.padStart(2, "0")}` : code <= 0xffff ? `\\u${hex.padStart(4, "0")}` : `\\U${hex.padStart(8, "0")}`;
    } else out += ch;
  }
  return out + q;
}

/** repr() of a JSON number: JSON cannot tell 1 from 1.0 apart here, so integers are written as Python ints. */
function pyNumber(n: number): string {
  return Number.isInteger(n) && Math.abs(n) < 1e16 ? String(n) : pyFloat(n);
}

/** repr() (and str()) of a float: 1.0, 1e-05, 1e+16, inf (JSON's 1e400 is a float infinity to Python). */
export function pyFloat(n: number): string {
  if (Number.isNaN(n)) return "nan";
  if (!Number.isFinite(n)) return n > 0 ? "inf" : "-inf";
  const [mantissa, exp] = n.toExponential().split("e") as [string, string];
  const e = Number(exp);
  if (e < -4 || e >= 16) return `${mantissa}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  const fixed = Object.is(n, -0) ? "-0" : String(n);
  return fixed.includes(".") ? fixed : `${fixed}.0`;
}

/** The characters str.isspace() holds beyond ASCII's " \t\n\v\f\r" (JavaScript's \s and trim() differ on a few). */
const UNICODE_SPACE = "\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const PY_STRIP = new RegExp(`^[\\t-\\r\\x1c-\\x20${UNICODE_SPACE}]+|[\\t-\\r\\x1c-\\x20${UNICODE_SPACE}]+$`, "g");
/** int() skips ASCII's whitespace without \x1c-\x1f (which isspace() holds), and the rest. */
const INT_TEXT = new RegExp(`^[\\t-\\r ${UNICODE_SPACE}]*([+-]?[0-9]+(?:_[0-9]+)*)[\\t-\\r ${UNICODE_SPACE}]*$`);

/** Python's str.strip(). */
export const pyStrip = (s: string): string => s.replace(PY_STRIP, "");

/**
 * int(text) of a str, as Python reads it: surrounding whitespace, a sign and underscores between
 * digits allowed; undefined where Python raises "invalid literal for int() with base 10". Only ASCII
 * digits are read (Python also takes other scripts' decimal digits).
 */
export function intFromText(text: string): number | undefined {
  const digits = INT_TEXT.exec(text)?.[1];
  // + 0: int("-0") is 0.
  return digits === undefined ? undefined : Number(digits.replaceAll("_", "")) + 0;
}
