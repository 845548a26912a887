/**
 * The workspace test rig: control-api on a free loopback port with the agent-workspace attachment
 * (agent socket + webchat boot resolver) over a private event stream that the routes publish to.
 */
import http from 'node:http';
import { expect } from 'chai';
import { buildTestApp, createAgent, createFixture, type Fixture, type TestApp } from '../../testkit/api';
import { freePort } from '../../testkit/ports';
import { EventPublisher } from '../../core/events/bus';
import { newId } from '../../core/ids';
import { Permission } from '../../core/permissions';
import { configureMessaging } from '../../control-api/messaging/deps';
import { workspaceAttachment } from '../../control-api/service-agents/attachment';
import { conversationsRepo, type ConversationRow } from '../../core/repos/conversations';

export interface Rig {
  t: TestApp;
  port: number;
  stream: string;
  publisher: EventPublisher;
  wsUrl(query: string): string;
  close(): Promise<void>;
}

export async function startRig(): Promise<Rig> {
  const t = await buildTestApp({ env: { RATE_LIMIT_SCALE: '0' } });
  const stream = `test-workspace-${newId()}`;
  const publisher = new EventPublisher(t.ctx.redis, stream);
  configureMessaging(t.ctx, { events: publisher, provider: null });
  const server = http.createServer(t.app);
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const att = await workspaceAttachment({ stream }).start(server, t.ctx);
  return {
    t,
    port,
    stream,
    publisher,
    wsUrl: (q) => `ws://127.0.0.1:${port}/v1.0/service_agents/ws?${q}`,
    async close() {
      await att.close();
      await t.ctx.redis.del(stream);
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await t.close();
    },
  };
}

export interface Team {
  f: Fixture;
  a: { id: string; token: string };
  b: { id: string; token: string };
}

/** A customer with an admin (f) and two plain agents a and b. */
export async function team(rig: Rig): Promise<Team> {
  const f = await createFixture(rig.t.ctx);
  const a = await createAgent(rig.t.ctx, f.customer.id, Permission.CustomerAgent);
  const b = await createAgent(rig.t.ctx, f.customer.id, Permission.CustomerAgent);
  return { f, a: { id: a.agent.id, token: a.token }, b: { id: b.agent.id, token: b.token } };
}

let n = 0;
/** An SMS conversation owned by agentId (or unowned). */
export async function conversationFor(rig: Rig, customerId: string, agentId: string | null): Promise<ConversationRow> {
  const repo = conversationsRepo(rig.t.ctx.db);
  const { row } = await repo.ensureThread(customerId, 'message', { type: 'tel', target: '+15550000001' }, { type: 'tel', target: `+1555${String(Date.now() % 1e6).padStart(6, '0')}${++n}` });
  if (!agentId) return row;
  return (await repo.update(row.id, { owner_type: 'agent', owner_id: agentId }))!;
}

/** The spec's error envelope with this status and reason. */
export function expectError(res: { status: number; body: { error?: { reason?: string; status?: string; request_id?: string } } }, http: number, reason: string): void {
  expect(res.status, JSON.stringify(res.body)).to.equal(http);
  expect(res.body.error?.reason).to.equal(reason);
  expect(res.body.error?.request_id).to.be.a('string');
}

/** An Authorization header with a bearer token. */
export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Mocha hooks: the rig and its team for the suite, the rig closed after it; `set` receives both. */
export function useRig(set: (rig: Rig, tm: Team) => void): void {
  let rig: Rig | undefined;
  before(async () => {
    rig = await startRig();
    set(rig, await team(rig));
  });
  after(async () => rig?.close());
}
