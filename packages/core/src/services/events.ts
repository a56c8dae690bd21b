// Octavia's event notifications (controller/worker/v2/tasks/notification_tasks.py) and Ottava's own in
// their pattern: the event types, the stable message id, and the payload: octavia-lib's
// LoadBalancer.to_dict() (not recursive: no listeners, pools, additional_vips or vip_sg_ids, so never
// any TLS data; no statuses), keyed loadbalancer_id. Pure: the tasks read what it needs and send it
// through the Notifier port.
import type { EventNotification } from "../ports";
import type { LoadBalancer } from "../resources/loadbalancer";
import { uuidOf } from "../uuid-of";

/** Octavia's three ([controller_worker] event_notifications) and Ottava's: the resize spec's and the cross-pool update's end. */
export const EVENT_TYPES = {
  create: "octavia.loadbalancer.create.end",
  update: "octavia.loadbalancer.update.end",
  delete: "octavia.loadbalancer.delete.end",
  resizeStart: "octavia.loadbalancer.resize.start",
  resizeEnd: "octavia.loadbalancer.resize.end",
  resizeCancel: "octavia.loadbalancer.resize.cancel",
  resizeError: "octavia.loadbalancer.resize.error",
  crossPoolUpdate: "octavia.member.cross_pool_update.end",
} as const;

/** EventBridge's Source of every event (Octavia's publisher is the controller's host; on AWS the service's name). */
export const EVENT_SOURCE = "ottava";

/**
 * The payload of a load balancer (octavia-lib's LoadBalancer.to_dict() as the amphora driver builds it):
 * `flavor` is the flavor's metadata (its profile's flavor_data, {} without a flavor), `availability_zone`
 * the zone's name.
 */
export function loadBalancerPayload(lb: LoadBalancer, flavor: Record<string, unknown>): Record<string, unknown> {
  return {
    admin_state_up: lb.admin_state_up,
    description: lb.description,
    flavor,
    loadbalancer_id: lb.id,
    name: lb.name,
    project_id: lb.project_id,
    vip_address: lb.vip_address,
    vip_network_id: lb.vip_network_id,
    vip_port_id: lb.vip_port_id,
    vip_subnet_id: lb.vip_subnet_id,
    vip_qos_policy_id: lb.vip_qos_policy_id,
    availability_zone: lb.availability_zone,
  };
}

/** An event of an execution: its message id is the execution's and the type's, the same every time it is sent. */
export function eventOf(
  eventType: string,
  execution: string,
  project: string,
  requestId: string | null,
  payload: Record<string, unknown>,
): EventNotification {
  return { eventType, messageId: uuidOf(`${execution}/${eventType}`), project, requestId, execution, payload };
}

/** EventBridge's detail of an event: Octavia's message (message_id, event_type, payload) with its context. */
export function eventDetail(e: EventNotification): Record<string, unknown> {
  return {
    message_id: e.messageId,
    event_type: e.eventType,
    project_id: e.project,
    request_id: e.requestId,
    execution_id: e.execution,
    payload: e.payload,
  };
}
