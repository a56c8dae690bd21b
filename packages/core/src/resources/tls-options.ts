// The TLS options listeners and pools share, checked as Octavia's common/validate.py does
// (check_cipher_prohibit_list, check_tls_version_list, check_alpn_protocols); no
// [api_settings] minimum_tls_version is configured.
import { SUPPORTED_ALPN_PROTOCOLS, TLS_ALL_VERSIONS, TLS_CIPHER_PROHIBIT_LIST } from "../constants";
import { validation } from "../faults";
import { pyStr } from "../compat/repr";

/** validate.check_cipher_prohibit_list. The empty default list still holds "" (Python's ''.split(':')), refusing empty entries. */
export function checkCiphers(ciphers: string): void {
  if (!/^[A-Za-z0-9\-+!:@=_.]+$/.test(ciphers)) {
    throw validation("Invalid characters in cipher string. Only alphanumeric, -, +, !, :, @, =, _, and . are allowed.");
  }
  const prohibited = TLS_CIPHER_PROHIBIT_LIST.split(":");
  const rejected = ciphers.split(":").filter((c) => prohibited.includes(c));
  if (rejected.length > 0) throw validation(`The following ciphers have been prohibited by an administrator: ${rejected.join(", ")}`);
}

/** validate.check_tls_version_list (a null list is the default's: nothing to check). */
export function checkTlsVersions(versions: readonly (string | null)[] | null | undefined): void {
  if (versions == null) return;
  if (versions.length === 0)
    throw validation("Empty TLS version list. Either specify at least one TLS version or remove this parameter to use the default.");
  const invalid = versions.filter((v) => v === null || !TLS_ALL_VERSIONS.includes(v));
  if (invalid.length > 0) throw validation(`Invalid TLS versions: ${invalid.map(pyStr).join(", ")}`);
}

/** validate.check_alpn_protocols (a null list is the default's: nothing to check). */
export function checkAlpnProtocols(protocols: readonly string[] | null | undefined): void {
  if (protocols == null) return;
  if (protocols.length === 0) {
    throw validation("Empty ALPN protocol list. Either specify at least one ALPN protocol or remove this parameter to use the default.");
  }
  const invalid = protocols.filter((p) => !SUPPORTED_ALPN_PROTOCOLS.includes(p));
  if (invalid.length > 0) throw validation(`Invalid ALPN protocol: ${invalid.join(", ")}`);
}
