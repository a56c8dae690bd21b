// A pool's session persistence (octavia/api/v2/types/pool.py SessionPersistencePOST/PUT,
// validate.check_session_persistence and PoolsController's UDP/SCTP rules).
import * as z from "zod";
import { LVS_PROTOCOLS, SESSION_PERSISTENCE_TYPES } from "../constants";
import { validation } from "../faults";
import { body, integer, ipAddress, str } from "../validation";
import { wsmeEnum } from "../compat/wsme";

const COOKIE_NAME_PATTERN = String.raw`^[^\s,;\\]+$`;
const cookieName = () =>
  str(255).regex(new RegExp(COOKIE_NAME_PATTERN), { error: `Value should match the pattern ${COOKIE_NAME_PATTERN}` });
export const SessionPersistencePost = body({
  // Mandatory; a null type is refused later, as "Invalid session_persistence provided.".
  type: wsmeEnum(SESSION_PERSISTENCE_TYPES).nullable(),
  cookie_name: cookieName().nullish(),
  persistence_timeout: integer().nullish(),
  persistence_granularity: ipAddress().nullish(),
});
export const SessionPersistencePut = SessionPersistencePost.extend({ type: wsmeEnum(SESSION_PERSISTENCE_TYPES).nullish() });
/** A session persistence as given (its type may be missing from a PUT). */
export type SessionPersistenceBody = Omit<z.output<typeof SessionPersistencePut>, "type"> & { type?: string | null };

export interface SessionPersistence {
  type: string;
  cookie_name: string | null;
  persistence_timeout: number | null;
  persistence_granularity: string | null;
}

/** PoolsController._validate_pool_request_for_udp_sctp. */
function checkUdpSctpSessionPersistence(sp: SessionPersistenceBody | null | undefined): void {
  if (!sp) return;
  if (sp.type === "SOURCE_IP" && sp.cookie_name) {
    throw validation(
      "session_persistence SOURCE_IP type for UDP and SCTP protocols only accepts: type, persistence_timeout, persistence_granularity.",
    );
  }
  if (sp.cookie_name) throw validation("Cookie names are not supported for UDP/SCTP pools.");
  if (sp.type === "HTTP_COOKIE" || sp.type === "APP_COOKIE") {
    throw validation(`Session persistence of type ${sp.type} is not supported for UDP/SCTP protocol pools.`);
  }
}

/** The session persistence rules of a pool of `protocol`; `udpOnly` is the message for UDP fields elsewhere (it differs between POST and PUT). */
export function checkSessionPersistence(protocol: string, sp: SessionPersistenceBody | null | undefined, udpOnly: string): void {
  if (LVS_PROTOCOLS.includes(protocol)) checkUdpSctpSessionPersistence(sp);
  else if (sp && (sp.persistence_timeout || sp.persistence_granularity)) throw validation(udpOnly);
  if (sp) checkSessionPersistenceFields(sp);
}

const BAD_COOKIE_NAME = /[\x00-\x20\x22\x28-\x29\x2c\x2f\x3a-\x40\x5b-\x5d\x7b\x7d\x7f]+/;

/** validate.check_session_persistence (a missing type is its KeyError). */
function checkSessionPersistenceFields(sp: SessionPersistenceBody): void {
  if (!sp.type) throw validation("Invalid session_persistence provided.");
  if (sp.cookie_name) {
    if (sp.type !== "APP_COOKIE") {
      throw validation('Field "cookie_name" can only be specified with session persistence of type "APP_COOKIE".');
    }
    if (BAD_COOKIE_NAME.test(sp.cookie_name) || !/[\x00-\xff]/.test(sp.cookie_name)) throw validation('Supplied "cookie_name" is invalid.');
  }
  if (sp.type === "APP_COOKIE" && !sp.cookie_name) {
    throw validation('Field "cookie_name" must be specified when using the "APP_COOKIE" session persistence type.');
  }
}

export const storedSessionPersistence = (sp: SessionPersistenceBody | null | undefined): SessionPersistence | null =>
  sp
    ? {
        type: sp.type!,
        cookie_name: sp.cookie_name ?? null,
        persistence_timeout: sp.persistence_timeout ?? null,
        persistence_granularity: sp.persistence_granularity ?? null,
      }
    : null;
