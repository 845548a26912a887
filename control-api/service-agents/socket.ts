/**
 * WebSocket /v1.0/service_agents/ws (also /service-agents/ws): the agent's own event feed. Only
 * agent login tokens connect. Topics, subscribed like on /v1.0/ws:
 *   agent_id:<self>[:<resource>[:<id>]]          every event that concerns the agent
 *   customer_id:<cid>:<resource>:<id>             one resource within the agent's reach
 *                                                 (call, conversation, webchat_session, chat, agent=self)
 * Anything else closes the socket with 1008 and the reason. Whatever the topics, an event is
 * delivered only to the agents it concerns (audience.ts), so an unassigned conversation stops
 * reaching its former owner at once. A conversation topic also carries its messages' events.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket, type RawData } from 'ws';
import type { Redis } from 'ioredis';
import type { AppContext } from '../context';
import { EventSubscriber, eventStreamKey, type PlatformEvent } from '../../core/events/bus';
import { topicOf, topicResourceOf } from '../../core/events/catalogue';
import { permissionDenied } from '../../core/errors';
import { callsRepo } from '../../core/repos/calls';
import { conversationsRepo } from '../../core/repos/conversations';
import { webchatRepo } from '../../core/webchat/repo';
import { applySubscriptionFrame, parseSubscriptionFrame, type Topic } from '../ws/topics';
import { createSocketGuard, refuseUpgrade, upgradeRequestId, type Admission } from '../ws/guard';
import { guardSocket } from '../../core/net/socket-guard';
import { audienceOf, topicIdsOf } from './audience';
import { canSeeCall, type AgentScope } from './scope';
import { isChatAgentParticipant } from '../../core/chats/repo';

export const AGENT_WS_PATHS = ['/v1.0/service_agents/ws', '/v1.0/service-agents/ws'];

export interface AgentSocketOptions {
  stream?: string;
  maxTopics?: number;
  maxBufferedBytes?: number;
  /** Period of the revocation backstop pass (default 3000 ms). */
  recheckMs?: number;
}

interface AgentConnection {
  socket: WebSocket;
  scope: AgentScope;
  topics: Map<string, Topic>;
}

/** Why the agent may not subscribe to a topic, or null. */
async function refusal(ctx: AppContext, s: AgentScope, t: Topic): Promise<string | null> {
  if (t.scope === 'agent_id') return t.scopeId === s.agentId ? null : 'agent_id topics are for the agent itself';
  if (t.scopeId !== s.customerId.toLowerCase()) return 'topic of another customer';
  if (t.parts !== 4 || t.resourceId === null) return 'an agent subscribes to customer topics of one resource only (four parts, no *)';
  const id = t.resourceId;
  const no = `not within this agent's reach: ${t.resource}:${id}`;
  switch (t.resource) {
    case 'agent':
      return id === s.agentId ? null : no;
    case 'call': {
      const c = await callsRepo(ctx.db).getOwned(s.customerId, id);
      return c && canSeeCall(s, c) ? null : no;
    }
    case 'conversation': {
      const c = await conversationsRepo(ctx.db).getOwned(s.customerId, id);
      return c && c.owner_id === s.agentId ? null : no;
    }
    case 'webchat_session': {
      const w = await webchatRepo(ctx.db).getSession(s.customerId, id);
      const c = w ? await conversationsRepo(ctx.db).getOwned(s.customerId, w.conversation_id) : null;
      return c && c.owner_id === s.agentId ? null : no;
    }
    case 'chat': {
      return (await isChatAgentParticipant(ctx.db, id, s.agentId)) ? null : no;
    }
    default:
      return `resource ${t.resource} is not available on the agent socket`;
  }
}

function topicMatches(t: Topic, e: PlatformEvent): boolean {
  if (t.resource !== null && t.resource !== topicResourceOf(e.event_type)) return false;
  return t.resourceId === null || topicIdsOf(e).includes(t.resourceId);
}

export async function attachAgentSocket(server: http.Server, ctx: AppContext, opts: AgentSocketOptions = {}) {
  const maxTopics = opts.maxTopics ?? 100;
  const maxBuffered = opts.maxBufferedBytes ?? 1024 * 1024;
  const guard = await createSocketGuard(ctx, { recheckMs: opts.recheckMs });
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const byCustomer = new Map<string, Set<AgentConnection>>();

  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!AGENT_WS_PATHS.includes(url.pathname)) return; // another handler's path
    guardSocket(socket); // before admission: a reset while it runs ends this socket only
    const requestId = upgradeRequestId(req);
    guard.admit(req, url).then(
      (a) => {
        const auth = a.auth;
        if (auth.kind !== 'agent' && auth.kind !== 'delegate') return refuseUpgrade(socket, permissionDenied('the agent socket needs an agent login token'), requestId);
        if (socket.destroyed) return;
        const scope = { customerId: auth.customerId.toLowerCase(), agentId: auth.agentId.toLowerCase() };
        wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, scope, a));
      },
      (e: unknown) => refuseUpgrade(socket, e, requestId),
    );
  };
  server.on('upgrade', onUpgrade);

  function onConnection(socket: WebSocket, scope: AgentScope, admission: Admission): void {
    const c: AgentConnection = { socket, scope, topics: new Map() };
    const drop = join(byCustomer, c);
    const untrack = guard.track({
      ...admission,
      close: (code, reason) => {
        drop();
        socket.close(code, reason);
      },
    });
    socket.on('close', () => {
      drop();
      untrack();
    });
    socket.on('error', () => socket.terminate());
    // Subscriptions are checked against the database; a chain keeps them in the order sent.
    let chain = Promise.resolve();
    socket.on('message', (raw: RawData, isBinary: boolean) => {
      chain = chain
        .then(() => onMessage(ctx, maxTopics, c, raw, isBinary))
        .catch((err: unknown) => {
          ctx.logger.warn({ err: String(err) }, 'agent socket message failed');
          socket.close(1011, 'internal error');
        });
    });
  }

  const reader: Redis = ctx.redis.duplicate();
  const sub = new EventSubscriber(reader, { stream: opts.stream ?? eventStreamKey(ctx.config.redisKeyPrefix), blockMs: 500 });
  // Audience lookups are async: one chain keeps delivery in stream order.
  let pending = Promise.resolve();
  sub.on('event', (e: PlatformEvent) => {
    pending = pending.then(() => dispatch(ctx, byCustomer, maxBuffered, e)).catch((err: unknown) => ctx.logger.warn({ err: String(err) }, 'agent socket dispatch failed'));
  });
  sub.on('error', (err: unknown) => ctx.logger.warn({ err: String(err) }, 'agent socket event reader error'));
  await sub.start();

  const ping = setInterval(() => {
    for (const set of byCustomer.values()) for (const c of set) c.socket.ping();
  }, 30_000);
  ping.unref();

  return {
    async close() {
      server.off('upgrade', onUpgrade);
      clearInterval(ping);
      const stopped = sub.stop(); // ends once its blocking read returns: at once when the reader disconnects below
      await guard.close();
      for (const set of byCustomer.values()) for (const c of set) c.socket.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
      reader.disconnect();
      await stopped;
    },
  };
}

/** A subscribe or unsubscribe frame; each topic is checked against the database before it is kept. */
async function onMessage(ctx: AppContext, maxTopics: number, c: AgentConnection, raw: RawData, isBinary: boolean): Promise<void> {
  const frame = parseSubscriptionFrame(raw, isBinary);
  // more topics than a socket may hold close it before any is checked: a frame's checks run together
  if (frame.type === 'subscribe' && new Set([...c.topics.keys(), ...frame.topics.map((t) => t.raw)]).size > maxTopics) {
    return c.socket.close(1008, `at most ${maxTopics} topics`);
  }
  const refused = frame.type === 'subscribe' ? await Promise.all(frame.topics.map((t) => refusal(ctx, c.scope, t))) : [];
  applySubscriptionFrame(c, frame, (_, i) => refused[i] ?? null, maxTopics);
}

/** Sends the event to the connections of its customer that are in its audience and subscribed to it. */
async function dispatch(ctx: AppContext, byCustomer: Map<string, Set<AgentConnection>>, maxBuffered: number, e: PlatformEvent): Promise<void> {
  const set = byCustomer.get(e.customer_id.toLowerCase());
  if (!set || set.size === 0) return;
  const audience = await audienceOf(ctx.db, e);
  if (audience.size === 0) return;
  let frame: string | null = null;
  for (const c of set) {
    if (!audience.has(c.scope.agentId)) continue;
    if (![...c.topics.values()].some((t) => topicMatches(t, e))) continue;
    if (c.socket.bufferedAmount > maxBuffered) {
      c.socket.terminate();
      continue;
    }
    frame ??= JSON.stringify({ event_type: e.event_type, timestamp: e.timestamp, topic: topicOf(e), data: e.data });
    c.socket.send(frame);
  }
}

/** Adds the connection to its customer's set; returns what removes it. */
function join(byCustomer: Map<string, Set<AgentConnection>>, c: AgentConnection): () => void {
  const customerId = c.scope.customerId;
  let set = byCustomer.get(customerId);
  if (!set) byCustomer.set(customerId, (set = new Set()));
  set.add(c);
  return () => {
    const s = byCustomer.get(customerId);
    s?.delete(c);
    if (s && s.size === 0) byCustomer.delete(customerId);
  };
}
