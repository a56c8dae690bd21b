// Octavia's validate.url(url, require_scheme=True), as its URLType runs it: no control characters or
// spaces, then the rfc3986 library (python3-rfc3986 1.5) requiring an http or https scheme and a
// host, with a valid host and path. The expressions are rfc3986's (misc.py, abnf_regexp.py).

const INVALID_URL_CHARS = /[\x00-\x20\x7f-\x9f]/;
const URI = /^(?:([a-zA-Z][a-zA-Z0-9+.-]*):)?(?:\/\/([^\\/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?/s;
const H16 = "[0-9A-Fa-f]{1,4}";
const LS32 = `(${H16}:${H16}|([0-9]{1,3}\\.){3}[0-9]{1,3})`;
const IPV6 = [
  `((${H16}:){6}${LS32})`,
  `(::(${H16}:){5}${LS32})`,
  `((${H16})?::(${H16}:){4}${LS32})`,
  `(((${H16}:)?${H16})?::(${H16}:){3}${LS32})`,
  `(((${H16}:){0,2}${H16})?::(${H16}:){2}${LS32})`,
  `(((${H16}:){0,3}${H16})?::${H16}:${LS32})`,
  `(((${H16}:){0,4}${H16})?::${LS32})`,
  `(((${H16}:){0,5}${H16})?::${H16})`,
  `(((${H16}:){0,6}${H16})?::)`,
].join("|");
const ZONE = "(?:[A-Za-z0-9._~\\-]|%[A-Fa-f0-9]{2})+";
const IPVFUTURE = "v[0-9A-Fa-f]+\\.[A-Za-z0-9._~\\-!$&'()\\*+,;=:]+";
const REG_NAME = "(?:%[0-9A-Fa-f]{2}|[!$&'()\\*+,;=A-Za-z0-9._~\\-])*";
const IPV4 = "([0-9]{1,3}\\.){3}[0-9]{1,3}";
const HOST = `((${REG_NAME})|${IPV4}|\\[((${IPV6})(?:(?:%25|%)${ZONE})?|${IPVFUTURE})\\])`;
const SUBAUTHORITY = new RegExp(`^(?:(?:[A-Za-z0-9._~\\-!$&'()\\*+,;=:]|%[A-Fa-f0-9]{2})+@)?(?<host>${HOST}):?([0-9]{1,5})?$`);
const HOST_MATCHER = new RegExp(`^${HOST}$`);
const IPV4_MATCHER = new RegExp(`^${IPV4}$`);
const IPV6_MATCHER = new RegExp(`^\\[(${IPV6})(?:(?:%25|%)${ZONE})?\\]$`);
const IPV6_NO_RFC4007_MATCHER = new RegExp(`^\\[(${IPV6})(?:%25${ZONE})?\\]$`);
const PCHAR = "([A-Za-z0-9._~\\-!$&'()\\*+,;=:@]|%[A-Fa-f0-9]{2})";
const PATH = new RegExp(
  `^((/${PCHAR}*)*|/(${PCHAR}+(/${PCHAR}*)*)?|([A-Za-z0-9._~\\-!$&'()\\*+,;=@]|%[A-Fa-f0-9]{2})+(/${PCHAR}*)*|${PCHAR}+(/${PCHAR}*)*|^$)$`,
);
/** rfc3986's reserved and "unreserved" characters: what encode_component leaves as they are. */
const NON_PCT_ENCODED = new Set("!#$&'()*+,-./0123456789:;=?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]_abcdefghijklmnopqrstuvwxyz~");

const validIpv4 = (host: string) => host.split(".").every((b) => Number(b) <= 255);

function hostIsValid(host: string): boolean {
  if (!HOST_MATCHER.test(host)) return false;
  if (IPV4_MATCHER.test(host)) return validIpv4(host);
  if (IPV6_MATCHER.test(host)) return IPV6_NO_RFC4007_MATCHER.test(host);
  return true;
}

/** rfc3986 encode_component: percent-encodes (as UTF-8) what is not a URI character. */
function encodeComponent(component: string): string {
  const percents = component.split("%").length - 1;
  const isPercentEncoded = (component.match(/%[A-Fa-f0-9]{2}/g) ?? []).length === percents;
  let out = "";
  for (const byte of Buffer.from(component, "utf8")) {
    const ch = String.fromCharCode(byte);
    if ((isPercentEncoded && ch === "%") || (byte < 128 && NON_PCT_ENCODED.has(ch))) out += ch;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Whether validate.url passes `value` (else Octavia's URLType answers "Value must be a valid URL string"). */
export function isValidUrl(value: string): boolean {
  if (INVALID_URL_CHARS.test(value)) return false;
  const [, scheme, authority, path] = URI.exec(value)!;
  if (scheme === undefined || !authority) return false;
  const host = SUBAUTHORITY.exec(authority)?.groups?.host;
  if (host === undefined || !hostIsValid(host)) return false;
  return PATH.test(encodeComponent(path ?? "")) && (scheme === "http" || scheme === "https");
}
