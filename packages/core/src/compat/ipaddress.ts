// Python's ipaddress (3.11), as Octavia validates and normalizes addresses and networks with it
// (types.CidrType, validate.ip_not_reserved, the amphora templates): one port for the API and the
// data plane.
import { pyRepr } from "./repr";

/** An IPv4 address as ipaddress.IPv4Address parses it (four decimal octets, no leading zeros), or undefined. */
export function parseIpv4(text: string): number | undefined {
  const octets = text.split(".");
  if (octets.length !== 4) return undefined;
  let value = 0;
  for (const o of octets) {
    if (!/^[0-9]{1,3}$/.test(o) || (o.length > 1 && o[0] === "0")) return undefined;
    const n = Number(o);
    if (n > 255) return undefined;
    value = value * 256 + n;
  }
  return value;
}

/** An IPv6 address (no scope) as ipaddress.IPv6Address._ip_int_from_string parses it, or undefined. */
function parseIpv6Int(text: string): bigint | undefined {
  if (!text) return undefined;
  const parts = text.split(":");
  if (parts.length < 3) return undefined;
  if (parts[parts.length - 1]!.includes(".")) {
    const v4 = parseIpv4(parts.pop()!);
    if (v4 === undefined) return undefined;
    parts.push(((v4 >>> 16) & 0xffff).toString(16), (v4 & 0xffff).toString(16));
  }
  if (parts.length > 9) return undefined;
  let skip: number | undefined;
  for (let i = 1; i < parts.length - 1; i++) {
    if (parts[i] === "") {
      if (skip !== undefined) return undefined;
      skip = i;
    }
  }
  let hi: number;
  let lo: number;
  let skipped: number;
  if (skip !== undefined) {
    hi = skip;
    lo = parts.length - skip - 1;
    if (parts[0] === "" && --hi) return undefined;
    if (parts[parts.length - 1] === "" && --lo) return undefined;
    skipped = 8 - (hi + lo);
    if (skipped < 1) return undefined;
  } else {
    if (parts.length !== 8 || parts[0] === "" || parts[7] === "") return undefined;
    hi = 8;
    lo = 0;
    skipped = 0;
  }
  const hextet = (h: string) => (/^[0-9a-fA-F]{1,4}$/.test(h) ? BigInt(parseInt(h, 16)) : undefined);
  let value = 0n;
  for (let i = 0; i < hi; i++) {
    const h = hextet(parts[i]!);
    if (h === undefined) return undefined;
    value = (value << 16n) | h;
  }
  value <<= 16n * BigInt(skipped);
  for (let i = parts.length - lo; i < parts.length; i++) {
    const h = hextet(parts[i]!);
    if (h === undefined) return undefined;
    value = (value << 16n) | h;
  }
  return value;
}

/** An IPv6 address with its optional %scope, as IPv6Address takes it. */
export function parseIpv6(text: string): { value: bigint; scope: string | undefined } | undefined {
  if (text.includes("/")) return undefined;
  const at = text.indexOf("%");
  const scope = at < 0 ? undefined : text.slice(at + 1);
  if (scope !== undefined && (scope === "" || scope.includes("%"))) return undefined;
  const value = parseIpv6Int(at < 0 ? text : text.slice(0, at));
  return value === undefined ? undefined : { value, scope };
}

/** str(IPv6Address): lower-case hextets, the first longest run of two or more zero hextets as "::". */
export function formatIpv6(value: bigint, scope?: string): string {
  const hextets = Array.from({ length: 8 }, (_, i) => ((value >> BigInt(16 * (7 - i))) & 0xffffn).toString(16));
  let bestStart = -1;
  let bestLen = 0;
  let start = -1;
  let len = 0;
  hextets.forEach((h, i) => {
    if (h === "0") {
      len++;
      if (start === -1) start = i;
      if (len > bestLen) {
        bestLen = len;
        bestStart = start;
      }
    } else {
      len = 0;
      start = -1;
    }
  });
  let parts: string[] = hextets;
  if (bestLen > 1) {
    const end = bestStart + bestLen;
    parts = [...hextets.slice(0, bestStart), "", ...hextets.slice(end)];
    if (end === 8) parts.push("");
    if (bestStart === 0) parts.unshift("");
  }
  return parts.join(":") + (scope ? `%${scope}` : "");
}

/** ipaddress.ip_address(text).version: 4 or 6; throws as Python does on anything else (None included). */
export function ipVersion(text: string | null | undefined): 4 | 6 {
  if (typeof text === "string") {
    if (parseIpv4(text) !== undefined) return 4;
    if (parseIpv6(text) !== undefined) return 6;
  }
  throw new Error(`${pyRepr(text ?? null)} does not appear to be an IPv4 or IPv6 address`);
}

/** ipaddress.ip_address(text).exploded: every IPv6 hextet in four digits; undefined where Python raises (a scoped address included). */
export function explodedAddress(text: string): string | undefined {
  if (parseIpv4(text) !== undefined) return text;
  const v6 = parseIpv6(text);
  if (v6 === undefined || v6.scope !== undefined) return undefined;
  return v6.value
    .toString(16)
    .padStart(32, "0")
    .replace(/(.{4})(?!$)/g, "$1:");
}

/**
 * ipaddress.ip_network(text, strict).with_prefixlen: the network as Python writes it, "10.0.0.0/24",
 * "2001:db8::/64". An IPv4 mask may be a prefix length, a netmask or a host mask; no prefix is /32 or
 * /128. Throws Python's ValueError text when the text is no network or, if `strict`, has host bits
 * set; without `strict` they are cleared (and an IPv6 scope with them, as Python drops it).
 */
export function ipNetwork(text: string, strict = true): string {
  const parts = text.split("/");
  const bad = () => new Error(`${pyRepr(text)} does not appear to be an IPv4 or IPv6 network`);
  if (parts.length > 2) throw bad();
  const [address, mask] = parts as [string, string | undefined];
  const prefixFrom = (digits: string, max: number) => (/^[0-9]+$/.test(digits) && Number(digits) <= max ? Number(digits) : undefined);
  const v4 = parseIpv4(address);
  if (v4 !== undefined) {
    let prefix = mask === undefined ? 32 : prefixFrom(mask, 32);
    if (prefix === undefined) {
      const m = parseIpv4(mask!);
      prefix = m === undefined ? undefined : (prefixFromMask(m) ?? prefixFromMask(~m >>> 0));
    }
    if (prefix !== undefined) {
      const netmask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
      const network = (v4 & netmask) >>> 0;
      if (network !== v4 && strict) throw new Error(`${address}/${prefix} has host bits set`);
      return `${formatIpv4(network)}/${prefix}`;
    }
  }
  const v6 = parseIpv6(address);
  if (v6 === undefined) throw bad();
  const prefix = mask === undefined ? 128 : prefixFrom(mask, 128);
  if (prefix === undefined) throw bad();
  const hostBits = (1n << BigInt(128 - prefix)) - 1n;
  if ((v6.value & hostBits) === 0n) return `${formatIpv6(v6.value, v6.scope)}/${prefix}`;
  if (strict) throw new Error(`${formatIpv6(v6.value, v6.scope)}/${prefix} has host bits set`);
  return `${formatIpv6(v6.value & ~hostBits)}/${prefix}`;
}

const formatIpv4 = (n: number) => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join(".");

/** IPv4Network._prefix_from_ip_int: the prefix length of a contiguous netmask, else undefined. */
function prefixFromMask(mask: number): number | undefined {
  let trailingZeros = 0;
  while (trailingZeros < 32 && ((mask >>> trailingZeros) & 1) === 0) trailingZeros++;
  const prefix = 32 - trailingZeros;
  const leadingOnes = trailingZeros === 32 ? 0 : mask >>> trailingZeros;
  const allOnes = prefix === 32 ? 0xffffffff : 2 ** prefix - 1;
  return leadingOnes === allOnes ? prefix : undefined;
}
