// An amphora's VRRP promotion report (Ottava's, not Octavia's): keepalived's notify_master on an amphora
// whose network ignores gratuitous ARP (vpc) runs the image's ottava-vrrp-master, which sends this message
// to the health managers in the heartbeats' envelope (HMAC-SHA256 with the heartbeat key). The receiver
// starts the amphora-vip-promote flow, which moves the VIP to the amphora (the network driver's takeVip).
// docs/data-plane.md says why and what it risks.
import { AMPHORA_ALLOCATED, DELETED, PENDING_DELETE, TOPOLOGY_ACTIVE_STANDBY } from "../constants";
import type { Amphora } from "../resources/amphora";
import type { LoadBalancer } from "../resources/loadbalancer";
import { HeartbeatRejected } from "./envelope";

/** The message's `type` (a heartbeat has none): packages/aws/image/ottava-vrrp-master's MESSAGE_TYPE. */
export const PROMOTION_MESSAGE_TYPE = "ottava.vrrp_master";
/** The flow a promotion starts. */
export const AMPHORA_VIP_PROMOTE_FLOW = "amphora-vip-promote";
/**
 * A promotion whose `ts` is further than this from the receiver's clock (either way: the amphorae's and
 * the health managers' clocks may differ by a little) is refused as stale: a replay of a recorded message
 * is refused once this has passed, and within it the receiver refuses the same (amphora, ts) again.
 */
export const PROMOTION_WINDOW_MS = 30_000;

/** A verified promotion report: the amphora keepalived made MASTER, and when (ms since the epoch, its clock). */
export interface PromotionMessage {
  id: string;
  ts: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Is this decoded message a promotion report (and not a heartbeat)? */
export const isPromotionMessage = (obj: unknown): boolean => isObject(obj) && obj.type === PROMOTION_MESSAGE_TYPE;

/** Reads a decoded promotion report; HeartbeatRejected("malformed") without an amphora id or a timestamp. */
export function readPromotion(obj: unknown): PromotionMessage {
  if (!isObject(obj) || obj.type !== PROMOTION_MESSAGE_TYPE) throw new HeartbeatRejected("malformed", "not a promotion report");
  if (typeof obj.id !== "string" || obj.id === "") throw new HeartbeatRejected("malformed", "promotion report has no amphora id");
  if (typeof obj.ts !== "number" || !Number.isSafeInteger(obj.ts) || obj.ts <= 0)
    throw new HeartbeatRejected("malformed", "promotion report has no timestamp (ms since the epoch)");
  return { id: obj.id, ts: obj.ts };
}

/** The execution a promotion starts: one per (amphora, ts), so the report's copies and replays collapse into it. */
export const promotionExecutionName = (m: PromotionMessage) => `${AMPHORA_VIP_PROMOTE_FLOW}-${m.id}-${m.ts}`;

/** An IPv4 address as a dual-stack socket reports it (::ffff:a.b.c.d), plain. */
const plainAddress = (a: string) => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(a) ? a.slice(7) : a);

/**
 * Why the receiver refuses a verified promotion report of `amphora` (undefined: it starts the flow). The
 * amphora must be ALLOCATED, its datagram must come from its management address (lb_network_ip: on EC2 an
 * instance cannot send from an address that is not its own, and the health managers' UDP load balancer
 * keeps the source address), and its load balancer must be ACTIVE_STANDBY and not being deleted.
 */
export function promotionRefusal(
  amphora: Pick<Amphora, "status" | "lb_network_ip"> | undefined,
  lb: Pick<LoadBalancer, "topology" | "provisioning_status"> | undefined,
  from: string,
): string | undefined {
  if (!amphora) return "unknown amphora";
  if (amphora.status !== AMPHORA_ALLOCATED) return `amphora is ${amphora.status}, not ${AMPHORA_ALLOCATED}`;
  if (!amphora.lb_network_ip || plainAddress(from) !== plainAddress(amphora.lb_network_ip))
    return "not sent from the amphora's management address";
  if (!lb || lb.provisioning_status === DELETED || lb.provisioning_status === PENDING_DELETE) return "load balancer is gone";
  if (lb.topology !== TOPOLOGY_ACTIVE_STANDBY) return `load balancer is ${lb.topology}, not ${TOPOLOGY_ACTIVE_STANDBY}`;
  return undefined;
}
