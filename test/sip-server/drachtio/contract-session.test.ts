// Contract tests for the session-level drachtio messages: authenticate, route, remove_route, ping,
// framing errors. A raw TCP client speaks the protocol the way drachtio-srf does.
import { expect } from 'chai';
import { DrachtioServer } from '../../../sip-server/drachtio/server';
import { freePort } from '../../../testkit/ports';
import { RawClient } from './raw-client';

describe('drachtio contract: session messages', () => {
  let server: DrachtioServer;
  let port: number;
  const clients: RawClient[] = [];

  async function client(): Promise<RawClient> {
    const c = await RawClient.connect(port);
    clients.push(c);
    return c;
  }

  beforeEach(async () => {
    server = new DrachtioServer({ secret: 'cymru', authTimeoutMs: 500 });
    port = await freePort();
    await server.listen(port);
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server.close();
  });

  it('authenticate with the right secret: OK|<hostports>|<version>|<local hostports>', async () => {
    const c = await client();
    const r = await c.request('authenticate|cymru|tag1,tag2');
    expect(r.tokens[1]).to.equal('response');
    expect(r.tokens[3]).to.equal('OK');
    expect(r.tokens).to.have.length(7);
    expect(r.tokens[5]).to.match(/^v\d+\.\d+\.\d+/);
    expect(r.tokens[0]).to.match(/^[0-9a-f-]{36}$/);
    const conn = [...server.connections][0];
    expect([...conn.tags]).to.deep.equal(['tag1', 'tag2']);
  });

  it('authenticate with a wrong secret: NO|incorrect secret, then the connection is closed', async () => {
    const c = await client();
    const r = await c.request('authenticate|wrong|');
    expect(r.tokens.slice(3)).to.deep.equal(['NO', 'incorrect secret']);
    await c.waitClosed();
  });

  it('anything before authenticate is refused and the connection closed', async () => {
    const c = await client();
    const r = await c.request('route|invite');
    expect(r.tokens[3]).to.equal('NO');
    await c.waitClosed();
    expect(server.registry.wants('invite')).to.equal(false);
  });

  it('a connection that never authenticates is closed after the timeout', async () => {
    const c = await client();
    await c.waitClosed(2000);
  });

  it('route and remove_route answer OK and change the route table', async () => {
    const c = await client();
    await c.request('authenticate|cymru|');
    expect((await c.request('route|invite')).tokens[3]).to.equal('OK');
    expect((await c.request('route|OPTIONS')).tokens[3]).to.equal('OK');
    expect(server.registry.wants('INVITE')).to.equal(true);
    expect(server.registry.wants('options')).to.equal(true);
    expect((await c.request('remove_route|invite')).tokens[3]).to.equal('OK');
    expect(server.registry.wants('invite')).to.equal(false);
    expect(server.registry.wants('options')).to.equal(true);
  });

  it('route with a malformed verb is refused', async () => {
    const c = await client();
    await c.request('authenticate|cymru|');
    const r = await c.request('route|in vite');
    expect(r.tokens.slice(3)).to.deep.equal(['NO', 'Route request includes unsupported verb']);
  });

  it('ping answers OK|pong', async () => {
    const c = await client();
    await c.request('authenticate|cymru|');
    const r = await c.request('ping');
    expect(r.tokens.slice(3)).to.deep.equal(['OK', 'pong']);
  });

  it('an unknown message type gets NO|Unknown message type', async () => {
    const c = await client();
    await c.request('authenticate|cymru|');
    const r = await c.request('frobnicate|x');
    expect(r.tokens.slice(3)).to.deep.equal(['NO', 'Unknown message type']);
  });

  it('several messages in one TCP write are all answered, in order', async () => {
    const c = await client();
    const frames = ['a1|authenticate|cymru|', 'a2|route|invite', 'a3|ping'].map((p) => `${Buffer.byteLength(p)}#${p}`).join('');
    c.socket.write(frames);
    const r3 = await c.responseTo('a3');
    expect(r3.tokens[4]).to.equal('pong');
    const order = c.received.map((m) => m.tokens[2]);
    expect(order).to.deep.equal(['a1', 'a2', 'a3']);
  });

  it('a frame split across writes (inside the length and inside a UTF-8 char) is reassembled', async () => {
    const c = await client();
    await c.request('authenticate|cymru|');
    const payload = 'p\u00e9|ping';
    const frame = Buffer.from(`${Buffer.byteLength(payload)}#${payload}`);
    c.socket.write(frame.subarray(0, 1));
    await new Promise((r) => setTimeout(r, 20));
    c.socket.write(frame.subarray(1, 5));
    await new Promise((r) => setTimeout(r, 20));
    c.socket.write(frame.subarray(5));
    const r = await c.responseTo('p\u00e9');
    expect(r.tokens[4]).to.equal('pong');
  });

  it('a malformed length specifier closes the connection and the server keeps serving others', async () => {
    const bad = await client();
    bad.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await bad.waitClosed();
    const good = await client();
    expect((await good.request('authenticate|cymru|')).tokens[3]).to.equal('OK');
  });

  it('routes of a disconnected application are dropped', async () => {
    const c = await client();
    await c.request('authenticate|cymru|');
    await c.request('route|invite');
    expect(server.registry.wants('invite')).to.equal(true);
    c.close();
    await new Promise((r) => setTimeout(r, 50));
    expect(server.registry.wants('invite')).to.equal(false);
  });

  it('new requests are shared round-robin among the applications routed for a method', async () => {
    const a = await client();
    const b = await client();
    await a.request('authenticate|cymru|');
    await b.request('authenticate|cymru|');
    await a.request('route|invite');
    await b.request('route|invite');
    const picks = [0, 1, 2, 3].map(() => server.registry.select('INVITE'));
    expect(picks[0]).to.not.equal(picks[1]);
    expect(picks[0]).to.equal(picks[2]);
    expect(picks[1]).to.equal(picks[3]);
  });
});
