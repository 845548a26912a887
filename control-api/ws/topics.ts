/**
 * WebSocket topics: `<scope>:<scope_id>[:<resource>[:<resource_id>|*]]`, scope customer_id or
 * agent_id. Parsing, who may subscribe to what, and whether an event matches a topic.
 */
import type { AuthContext } from '../context';
import type { PlatformEvent } from '../../core/events/bus';
import { topicResourceOf } from '../../core/events/catalogue';
import { hasLevel } from '../../core/permissions';
import { isUuid } from '../../core/ids';
import { rawText } from '../../core/net/ws-text';
import type { RawData, WebSocket } from 'ws';

export interface Topic {
  raw: string;
  scope: 'customer_id' | 'agent_id';
  scopeId: string;
  resource: string | null;
  /** null = every resource of the type (`*` or a three-part topic). */
  resourceId: string | null;
  parts: 2 | 3 | 4;
}

const RESOURCE_RE = /^[a-z][a-z_]{0,40}$/;

/** Parses a topic string; null when malformed. */
export function parseTopic(raw: unknown): Topic | null {
  if (typeof raw !== 'string' || raw.length > 200) return null;
  const p = raw.split(':');
  if (p.length < 2 || p.length > 4) return null;
  const [scope, scopeId, resource, resourceId] = p as [string, string, string?, string?];
  if ((scope !== 'customer_id' && scope !== 'agent_id') || !isUuid(scopeId)) return null;
  if (resource !== undefined && !RESOURCE_RE.test(resource)) return null;
  if (resourceId !== undefined && resourceId !== '*' && !isUuid(resourceId)) return null;
  return {
    raw,
    scope,
    scopeId: scopeId.toLowerCase(),
    resource: resource ?? null,
    resourceId: resourceId === undefined || resourceId === '*' ? null : resourceId.toLowerCase(),
    parts: p.length as 2 | 3 | 4,
  };
}

/** A client's frame on an event socket: subscribe (each topic parsed) or unsubscribe, or why the socket closes (1008). */
export type SubscriptionFrame = { type: 'subscribe'; topics: Topic[] } | { type: 'unsubscribe'; topics: string[] } | { type: 'refused'; reason: string };

/** Reads a subscribe or unsubscribe frame; who may see each topic is the socket's own question. */
export function parseSubscriptionFrame(raw: RawData, isBinary: boolean): SubscriptionFrame {
  let msg: { type?: unknown; topics?: unknown };
  try {
    msg = isBinary ? {} : (JSON.parse(rawText(raw)) as typeof msg);
  } catch {
    return { type: 'refused', reason: 'message is not JSON' };
  }
  if ((msg.type !== 'subscribe' && msg.type !== 'unsubscribe') || !Array.isArray(msg.topics)) {
    return { type: 'refused', reason: 'expected {"type":"subscribe"|"unsubscribe","topics":[...]}' };
  }
  if (msg.type === 'unsubscribe') return { type: 'unsubscribe', topics: msg.topics.filter((t): t is string => typeof t === 'string') };
  const topics: Topic[] = [];
  for (const rawTopic of msg.topics) {
    const t = parseTopic(rawTopic);
    if (!t) return { type: 'refused', reason: `invalid topic ${String(rawTopic).slice(0, 60)}` };
    topics.push(t);
  }
  return { type: 'subscribe', topics };
}

/** A socket's side of a subscription: the socket and the topics it holds. */
export interface Subscriber {
  socket: WebSocket;
  topics: Map<string, Topic>;
}

/**
 * Applies a frame to the topics a socket holds; a refused frame, a topic `why` refuses (its reason, by the
 * topic's index in the frame) or more than `maxTopics` topics close the socket with 1008. Synchronous, so
 * frames apply in the order they came (a socket with asynchronous checks awaits them before).
 */
export function applySubscriptionFrame(c: Subscriber, frame: SubscriptionFrame, why: (t: Topic, index: number) => string | null, maxTopics: number): void {
  if (frame.type === 'refused') return c.socket.close(1008, frame.reason);
  if (frame.type === 'unsubscribe') {
    for (const t of frame.topics) c.topics.delete(t);
    return;
  }
  for (const [i, t] of frame.topics.entries()) {
    const reason = why(t, i);
    if (reason) return c.socket.close(1008, reason.slice(0, 120));
    c.topics.set(t.raw, t);
  }
  if (c.topics.size > maxTopics) c.socket.close(1008, `at most ${maxTopics} topics`);
}

/** Why a caller may not subscribe to a topic, or null when it may. */
export function refusal(t: Topic, auth: AuthContext): string | null {
  if (auth.kind === 'direct') {
    if (t.scope !== 'customer_id' || t.parts !== 4 || t.resourceId === null) return 'a direct token may subscribe only to four-part topics of its resource';
    if (t.scopeId !== auth.customerId.toLowerCase() || t.resourceId !== auth.allowedResourceId.toLowerCase()) {
      return 'a direct token may subscribe only to its own resource';
    }
    return null;
  }
  if (t.scope === 'agent_id') {
    if (auth.kind !== 'agent' || auth.agentId.toLowerCase() !== t.scopeId) return 'agent_id topics are for the agent itself';
    return null;
  }
  if (t.scopeId !== auth.customerId.toLowerCase()) return 'topic of another customer';
  if (!hasLevel(auth.permission, 'manager')) return 'customer-wide topics need admin or manager permission';
  return null;
}

/** The agent an event concerns: the agent resource itself or the owner of the resource. */
function agentOf(e: PlatformEvent): string | null {
  if (topicResourceOf(e.event_type) === 'agent') return e.resource_id.toLowerCase();
  const owner = e.data.owner_id;
  const type = e.data.owner_type;
  return typeof owner === 'string' && (type === undefined || type === 'agent') ? owner.toLowerCase() : null;
}

export function matches(t: Topic, e: PlatformEvent): boolean {
  if (t.scope === 'customer_id') {
    if (t.scopeId !== e.customer_id.toLowerCase()) return false;
  } else if (agentOf(e) !== t.scopeId) {
    return false;
  }
  if (t.resource !== null && t.resource !== topicResourceOf(e.event_type)) return false;
  return t.resourceId === null || t.resourceId === e.resource_id.toLowerCase();
}
