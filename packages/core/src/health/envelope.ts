// The amphora heartbeat envelope (octavia/amphorae/backends/health_daemon/status_message.py): the
// message as JSON, zlib-compressed, followed by its HMAC-SHA256 keyed with [health_manager]
// heartbeat_key — as 64 hex characters (hexdigest, today's agents) or as 32 raw bytes (digest, older
// agents). unwrap_envelope tries the hex digest first, then the binary one, as Octavia's does.
import { createHmac, timingSafeEqual } from "node:crypto";
import { deflateSync, inflateSync } from "node:zlib";

const HASH_LEN = 32;
const HEX_HASH_LEN = 64;
/** Decompressed messages larger than this are refused (a heartbeat is a few KiB; UDP carries 64 KiB). */
export const MAX_HEARTBEAT_JSON = 1 << 20;

export type RejectReason = "hmac" | "decode" | "malformed";

/** A packet that is not a heartbeat signed with the key, or not one Ottava can read. Dropped. */
export class HeartbeatRejected extends Error {
  constructor(
    readonly reason: RejectReason,
    message: string,
  ) {
    super(message);
    this.name = "HeartbeatRejected";
  }
}

/** get_hmac: the hex digest as ASCII bytes, or the raw digest. */
export function heartbeatHmac(payload: Buffer, key: string, hex = true): Buffer {
  const h = createHmac("sha256", Buffer.from(key, "utf8")).update(payload);
  return hex ? Buffer.from(h.digest("hex"), "utf8") : h.digest();
}

/** wrap_envelope: what an amphora agent sends (zlib level 9, as encode_obj). */
export function wrapEnvelope(obj: unknown, key: string, hex = true): Buffer {
  const payload = deflateSync(Buffer.from(JSON.stringify(obj), "utf8"), { level: 9 });
  return Buffer.concat([payload, heartbeatHmac(payload, key, hex)]);
}

/** get_payload: verifies one digest form, then decodes. */
function getPayload(envelope: Buffer, key: string, hex: boolean): unknown {
  const len = hex ? HEX_HASH_LEN : HASH_LEN;
  // Python's envelope[:-len] / envelope[-len:] on a short envelope: an empty payload, the whole envelope as digest.
  const cut = Math.max(0, envelope.length - len);
  const payload = envelope.subarray(0, cut);
  const expected = envelope.subarray(cut);
  const calculated = heartbeatHmac(payload, key, hex);
  if (expected.length !== calculated.length || !timingSafeEqual(expected, calculated)) {
    throw new HeartbeatRejected("hmac", `calculated hmac(hex=${hex ? "True" : "False"}) not equal to msg hmac, dropping packet`);
  }
  let text: string;
  try {
    text = inflateSync(payload, { maxOutputLength: MAX_HEARTBEAT_JSON }).toString("utf8");
  } catch (e) {
    throw new HeartbeatRejected("decode", `heartbeat payload does not decompress: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new HeartbeatRejected("decode", `heartbeat payload is not JSON: ${(e as Error).message}`);
  }
}

/**
 * unwrap_envelope: the message, if the envelope's digest (hex, else binary) is the key's HMAC of its
 * payload; HeartbeatRejected otherwise. The key must not be empty.
 */
export function unwrapEnvelope(envelope: Buffer, key: string): unknown {
  if (!key) throw new HeartbeatRejected("hmac", "no heartbeat key is configured");
  try {
    return getPayload(envelope, key, true);
  } catch (hexError) {
    try {
      return getPayload(envelope, key, false);
    } catch (binaryError) {
      // A hex digest that matched but did not decode says more than the binary digest's mismatch.
      throw (hexError as HeartbeatRejected).reason === "decode" ? hexError : binaryError;
    }
  }
}

// ---- the message (health_daemon.build_stats_message) ------------------------------------------------

/** A listener's counters as the agent reports them: deltas from version 3 on, absolutes before. */
export interface HeartbeatListenerStats {
  /** bytes out */
  tx: number;
  /** bytes in */
  rx: number;
  /** current connections (always absolute) */
  conns: number;
  /** connections since the last report (version 3) or in all */
  totconns: number;
  /** request errors */
  ereq: number;
}

export interface HeartbeatPool {
  status: string;
  /** member id → HAProxy's status ("UP", "DOWN 1/2", "DRAIN", "MAINT", "no check", ...) */
  members: Record<string, string>;
}

export interface HeartbeatListener {
  status: string;
  stats: HeartbeatListenerStats;
  /** Version 1 and older: the listener's pools (keys "<pool id>" or "<pool id>:<listener id>"). */
  pools?: Record<string, HeartbeatPool>;
}

/** A verified heartbeat: the amphora's id, its sequence number and its view of its listeners and pools. */
export interface HeartbeatMessage {
  id: string;
  /** Increments with each message; restarts at 0 when the agent restarts. Absent in old agents' messages. */
  seq: number | undefined;
  /** The message format: absent before versioning, 1, 2, 3 (stats as deltas). */
  ver: number | undefined;
  listeners: Record<string, HeartbeatListener>;
  /** Version 2 on: keys "<pool id>:<listener id>" (or "<pool id>"). */
  pools: Record<string, HeartbeatPool>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);

function readPools(raw: unknown): Record<string, HeartbeatPool> {
  const pools: Record<string, HeartbeatPool> = {};
  if (!isObject(raw)) return pools;
  for (const [id, p] of Object.entries(raw)) {
    if (!isObject(p)) continue;
    const members: Record<string, string> = {};
    if (isObject(p.members)) for (const [m, s] of Object.entries(p.members)) members[m] = typeof s === "string" ? s : String(s);
    pools[id] = { status: typeof p.status === "string" ? p.status : String(p.status), members };
  }
  return pools;
}

/**
 * Reads a decoded heartbeat; HeartbeatRejected("malformed") unless it has an amphora id and a
 * listeners object (what Octavia's update_health cannot do without). Counters that are not
 * non-negative numbers read as 0.
 */
export function readHeartbeat(obj: unknown): HeartbeatMessage {
  if (!isObject(obj)) throw new HeartbeatRejected("malformed", "heartbeat is not a JSON object");
  if (typeof obj.id !== "string" || obj.id === "") throw new HeartbeatRejected("malformed", "heartbeat has no amphora id");
  if (!isObject(obj.listeners)) throw new HeartbeatRejected("malformed", "heartbeat has no listeners object");
  const ver = obj.ver === undefined ? undefined : typeof obj.ver === "number" ? obj.ver : Number.NaN;
  if (ver !== undefined && !Number.isFinite(ver)) throw new HeartbeatRejected("malformed", "heartbeat version is not a number");
  if ((ver ?? 0) >= 2 && !isObject(obj.pools)) throw new HeartbeatRejected("malformed", "heartbeat has no pools object");
  const listeners: Record<string, HeartbeatListener> = {};
  for (const [id, l] of Object.entries(obj.listeners)) {
    if (!isObject(l)) continue;
    const s = isObject(l.stats) ? l.stats : {};
    listeners[id] = {
      status: typeof l.status === "string" ? l.status : String(l.status),
      stats: { tx: num(s.tx), rx: num(s.rx), conns: num(s.conns), totconns: num(s.totconns), ereq: num(s.ereq) },
      ...(l.pools !== undefined ? { pools: readPools(l.pools) } : {}),
    };
  }
  return {
    id: obj.id,
    seq: typeof obj.seq === "number" && Number.isFinite(obj.seq) ? obj.seq : undefined,
    ver,
    listeners,
    pools: readPools(obj.pools),
  };
}
