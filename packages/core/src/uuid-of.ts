// Ids derived from text, for what must come out the same each time it is made (no-op and local drivers' objects, planned amphorae).
import { createHash } from "node:crypto";

/** A UUID derived from text (a SHA-256 of it, shaped as a version-5 UUID): the same text answers the same id. */
export function uuidOf(text: string): string {
  const h = createHash("sha256").update(text).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
