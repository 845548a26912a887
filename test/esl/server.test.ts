// The inbound event socket (esl/server.ts) driven by a raw TCP client on loopback: authentication,
// the refusals, subscriptions and filters, api and bgapi, bad input, goodbye.
import { expect } from 'chai';
import { once } from 'node:events';
import os from 'node:os';
import { ESL_VERSION, EslServer } from '../../esl/server';
import { MAX_HEADER_BYTES } from '../../esl/wire';
import { PASSWORD, plainHeaders, RawClient, startServer } from '../../testkit/esl/client';

describe('esl server: authentication and refusals', () => {
  let server: EslServer;
  let port: number;
  afterEach(async () => server?.close());

  it('asks for auth; a wrong password is answered -ERR invalid, then the goodbye, then the socket closes', async () => {
    ({ server, port } = await startServer());
    const rejected = once(server, 'rejected');
    const c = await RawClient.connect(port);
    expect((await c.next()).raw).to.equal('Content-Type: auth/request\n\n');
    expect((await c.command('auth wrong')).raw).to.equal('Content-Type: command/reply\nReply-Text: -ERR invalid\n\n');
    const bye = await c.next();
    expect(bye.headers['Content-Type']).to.equal('text/disconnect-notice');
    expect(bye.body).to.equal('Disconnected, goodbye.\nSee you at ClueCon! http://www.cluecon.com/\n');
    await c.closed;
    const [address, reason] = (await rejected) as [string, string];
    expect(address).to.match(/127\.0\.0\.1$/);
    expect(reason)
      .to.equal('wrong password')
      .and.not.include('wrong ' + PASSWORD);
  });

  it('a listen that fails (the port taken) leaves the server able to listen on another port', async () => {
    ({ server, port } = await startServer());
    const other = new EslServer({
      password: PASSWORD,
      profile: { name: 'drachtio_mrf', address: '127.0.0.1:5080' },
      heartbeatMs: 0,
      conferenceFiles: { recordings: os.tmpdir(), sounds: os.tmpdir() },
    });
    try {
      const err = await other.listen(port).then(
        () => null,
        (e: NodeJS.ErrnoException) => e,
      );
      expect(err?.code).to.equal('EADDRINUSE');
      const at = await other.listen(0);
      const c = await RawClient.connect(at.port);
      expect((await c.next()).raw).to.equal('Content-Type: auth/request\n\n');
      c.socket.destroy();
    } finally {
      await other.close();
    }
  });

  it('a command before auth gets -ERR command not found and the connection stays; then auth is accepted', async () => {
    ({ server, port } = await startServer());
    const c = await RawClient.connect(port);
    await c.next();
    expect((await c.command('api status')).headers['Reply-Text']).to.equal('-ERR command not found');
    expect((await c.command(`auth ${PASSWORD}`)).headers['Reply-Text']).to.equal('+OK accepted');
    expect((await c.command('api version')).body).to.equal(`FreeSWITCH Version ${ESL_VERSION}\n`);
    c.socket.end();
  });

  it('after max refused attempts within the window an address is rudely rejected, until the window has passed', async () => {
    let now = 1_000_000;
    ({ server, port } = await startServer({ authLimit: { max: 2, windowMs: 60_000 }, now: () => now }));
    for (let i = 0; i < 2; i++) {
      const c = await RawClient.connect(port);
      await c.next();
      await c.command('auth nope');
      await c.closed;
    }
    const refused = await RawClient.connect(port);
    const rude = await refused.next();
    expect(rude.raw).to.equal('Content-Type: text/rude-rejection\nContent-Length: 24\n\nAccess Denied, go away.\n');
    expect((await refused.next()).headers['Content-Type']).to.equal('text/disconnect-notice');
    await refused.closed;
    // the right password does not help while blocked: the connection is refused before auth
    now += 60_001;
    const again = await RawClient.authed(port, PASSWORD);
    expect((await again.command('api hostname')).body).to.equal(os.hostname());
    again.socket.end();
  });

  it('connections opened together get no more guesses than the limit: a blocked address is refused at auth too', async () => {
    ({ server, port } = await startServer({ authLimit: { max: 2, windowMs: 60_000 } }));
    // three connections accepted before any refusal; two wrong passwords block the address
    const conns = await Promise.all([0, 1, 2].map(() => RawClient.connect(port)));
    for (const c of conns) await c.next();
    for (const c of conns.slice(0, 2)) {
      expect((await c.command('auth nope')).headers['Reply-Text']).to.equal('-ERR invalid');
      await c.closed;
    }
    // the third, opened before the block, does not get a third guess, even with the right password
    expect((await conns[2]!.command(`auth ${PASSWORD}`)).headers['Reply-Text']).to.equal('-ERR invalid');
    await conns[2]!.closed;
  });

  it('a connection that does not authenticate in time is closed with the goodbye', async () => {
    ({ server, port } = await startServer({ authTimeoutMs: 50 }));
    const gone = once(server, 'disconnected');
    const c = await RawClient.connect(port);
    await c.next();
    expect((await c.next()).headers['Content-Type']).to.equal('text/disconnect-notice');
    await c.closed;
    await gone;
    expect(server.connections.size).to.equal(0);
  });

  it('exit: +OK bye, the goodbye, the socket closes', async () => {
    ({ server, port } = await startServer());
    const c = await RawClient.authed(port, PASSWORD);
    expect((await c.command('exit')).headers['Reply-Text']).to.equal('+OK bye');
    expect((await c.next()).headers['Content-Type']).to.equal('text/disconnect-notice');
    await c.closed;
  });
});

describe('esl server: bad input never ends the process', () => {
  let server: EslServer;
  let port: number;
  afterEach(async () => server?.close());

  it('an endless header block is answered -ERR command parse error. and closed; the server goes on', async () => {
    ({ server, port } = await startServer());
    const c = await RawClient.authed(port, PASSWORD);
    c.send('x'.repeat(MAX_HEADER_BYTES + 10));
    expect((await c.next()).headers['Reply-Text']).to.equal('-ERR command parse error.');
    expect((await c.next()).headers['Content-Type']).to.equal('text/disconnect-notice');
    await c.closed;
    const d = await RawClient.authed(port, PASSWORD);
    expect((await d.command('api status')).body).to.match(/^UP /);
    d.socket.end();
  });

  it('a client that stops reading its events is dropped once its unread bytes pass the bound', async () => {
    ({ server, port } = await startServer({ maxUnreadBytes: 64 * 1024 }));
    const c = await RawClient.authed(port, PASSWORD);
    expect((await c.command('event plain HEARTBEAT')).headers['Reply-Text']).to.equal('+OK event listener enabled plain');
    c.socket.pause();
    let dropped = '';
    server.once('rejected', (_address, reason) => (dropped = reason));
    // bounded: 50,000 heartbeats are far more than the kernel's socket buffers and the bound together
    for (let i = 0; i < 50_000 && !dropped; i++) server.heartbeat();
    expect(dropped).to.equal('stopped reading its events');
    await once(server, 'disconnected');
    expect(server.connections.size).to.equal(0);
    c.socket.destroy();
    const d = await RawClient.authed(port, PASSWORD);
    expect((await d.command('api hostname')).body).to.equal(os.hostname());
    d.socket.end();
  });

  it('a bad Content-Length, unknown commands and a reset mid-frame', async () => {
    ({ server, port } = await startServer());
    const c = await RawClient.authed(port, PASSWORD);
    expect((await c.command('frobnicate now')).headers['Reply-Text']).to.equal('-ERR command not found');
    expect((await c.command('connect')).headers['Reply-Text']).to.equal('-ERR command not found');
    expect((await c.command('linger 10')).headers['Reply-Text']).to.equal('-ERR not controlling a session');
    expect((await c.command('myevents 5a3e plain')).headers['Reply-Text']).to.equal('-ERR invalid uuid');
    expect((await c.command('sendmsg 5a3e\nContent-Length: x')).headers['Reply-Text']).to.equal('-ERR command parse error.');
    await c.closed;
    const d = await RawClient.authed(port, PASSWORD);
    d.send('api sta');
    d.socket.resetAndDestroy();
    const e = await RawClient.authed(port, PASSWORD);
    expect((await e.command('api status')).body).to.match(/^UP /);
    e.socket.end();
  });
});

describe('esl server: api and bgapi', () => {
  let server: EslServer;
  let port: number;
  afterEach(async () => server?.close());

  it('sofia status lists the drachtio_mrf profile with its SIP address, in sofia columns', async () => {
    ({ server, port } = await startServer({ profile: { name: 'drachtio_mrf', address: '127.0.0.7:5090' } }));
    const c = await RawClient.authed(port, PASSWORD);
    const r = await c.command('api sofia status');
    expect(r.headers['Content-Type']).to.equal('api/response');
    expect(Number(r.headers['Content-Length'])).to.equal(Buffer.byteLength(r.body));
    const eq = '='.repeat(97);
    expect(r.body).to.equal(
      '                     Name\t   Type\t                                      Data\tState\n' +
        `${eq}\n` +
        '             drachtio_mrf\tprofile\t              sip:mod_sofia@127.0.0.7:5090\tRUNNING (0)\n' +
        `${eq}\n` +
        '1 profile 0 aliases\n',
    );
    // the line fsmrf looks for (lib/mediaserver.js)
    expect(/^\s*drachtio_mrf\s.*sip:mod_sofia@((?:[0-9]{1,3}\.){3}[0-9]{1,3}:\d+)/m.exec(r.body)?.[1]).to.equal('127.0.0.7:5090');
    expect((await c.command('api sofia profile drachtio_mrf restart')).body).to.match(/^-ERR /);
    c.socket.end();
  });

  it('status, and an API command no module registered', async () => {
    ({ server, port } = await startServer({ maxSessions: 42 }));
    const c = await RawClient.authed(port, PASSWORD);
    const status = (await c.command('api status')).body.split('\n');
    expect(status[0]).to.match(/^UP 0 years, 0 days, 0 hours, \d+ minutes?, \d+ seconds?, \d+ milliseconds?, \d+ microseconds?$/);
    expect(status[1]).to.equal(`FreeSWITCH (Version ${ESL_VERSION}) is ready`);
    expect(status[2]).to.equal('0 session(s) since startup');
    expect(status[5]).to.equal('42 session(s) max');
    for (const cmd of ['originate sofia/x &park', 'show channels', 'reloadxml']) {
      const name = cmd.split(' ')[0];
      expect((await c.command(`api ${cmd}`)).body).to.equal(`-ERR ${name} Command not found!\n`);
    }
    c.socket.end();
  });

  it('bgapi: +OK Job-UUID (the client may name it), then BACKGROUND_JOB with the output as body', async () => {
    ({ server, port } = await startServer());
    const c = await RawClient.authed(port, PASSWORD);
    expect((await c.command('event plain BACKGROUND_JOB')).headers['Reply-Text']).to.equal('+OK event listener enabled plain');
    const reply = await c.command('bgapi version\nJob-UUID: 0c6f5b1e-job');
    expect(reply.raw).to.equal('Content-Type: command/reply\nReply-Text: +OK Job-UUID: 0c6f5b1e-job\nJob-UUID: 0c6f5b1e-job\n\n');
    const ev = await c.next();
    expect(ev.headers['Content-Type']).to.equal('text/event-plain');
    const h = plainHeaders(ev.body);
    expect(h).to.include({ 'Event-Name': 'BACKGROUND_JOB', 'Job-UUID': '0c6f5b1e-job', 'Job-Command': 'version', 'Core-UUID': server.identity.coreUuid });
    expect(ev.body.endsWith(`\n\nFreeSWITCH Version ${ESL_VERSION}\n`)).to.equal(true);
    const own = await c.command('bgapi uuid_kill 1');
    expect(own.headers['Reply-Text']).to.match(/^\+OK Job-UUID: [0-9a-f-]{36}$/);
    expect((await c.next()).body).to.include('\n\n-ERR No such channel!\n');
    c.socket.end();
  });
});

describe('esl server: events, formats and filters', () => {
  let server: EslServer;
  let port: number;
  afterEach(async () => server?.close());

  it('HEARTBEAT in plain and in json, with the counts fsmrf reads', async () => {
    ({ server, port } = await startServer({ maxSessions: 77 }));
    const c = await RawClient.authed(port, PASSWORD);
    expect((await c.command('event plain heartbeat')).headers['Reply-Text']).to.equal('+OK event listener enabled plain');
    server.heartbeat();
    const plain = await c.next();
    expect(plain.headers['Content-Type']).to.equal('text/event-plain');
    const h = plainHeaders(plain.body);
    expect(h).to.include({ 'Event-Name': 'HEARTBEAT', 'Max-Sessions': '77', 'Session-Count': '0', 'FreeSWITCH-Version': ESL_VERSION, 'FreeSWITCH-Hostname': os.hostname() });
    expect(plain.body).to.match(/\nUp-Time: 0%20years,%200%20days,%20/);
    expect(Number(h['Idle-CPU'])).to.be.within(0, 100);
    expect((await c.command('event json HEARTBEAT')).headers['Reply-Text']).to.equal('+OK event listener enabled json');
    server.heartbeat();
    const json = await c.next();
    expect(json.headers['Content-Type']).to.equal('text/event-json');
    const o = JSON.parse(json.body) as Record<string, string>;
    expect(o).to.include({ 'Event-Name': 'HEARTBEAT', 'Max-Sessions': '77', 'Core-UUID': server.identity.coreUuid });
    expect(Number(o['Event-Sequence'])).to.equal(Number(h['Event-Sequence']) + 1);
    c.socket.end();
  });

  it('no events before a subscription, none of another name, none after noevents', async () => {
    ({ server, port } = await startServer());
    const c = await RawClient.authed(port, PASSWORD);
    server.heartbeat();
    // replies and events share the socket in order: had the event been sent, it would come first
    expect((await c.command('api hostname')).headers['Content-Type']).to.equal('api/response');
    expect((await c.command('event plain CHANNEL_ANSWER DTMF')).headers['Reply-Text']).to.equal('+OK event listener enabled plain');
    server.heartbeat();
    expect((await c.command('api hostname')).headers['Content-Type']).to.equal('api/response');
    expect((await c.command('event plain nonsense')).headers['Reply-Text']).to.equal('-ERR no keywords supplied');
    expect((await c.command('event xml ALL')).headers['Reply-Text']).to.match(/^-ERR xml/);
    expect((await c.command('noevents')).headers['Reply-Text']).to.equal('+OK no longer listening for events');
    expect((await c.command('noevents')).headers['Reply-Text']).to.equal('-ERR not listening for events');
    c.socket.end();
  });

  it('filters: held back unless a filter lets it in; delete all lets everything through again', async () => {
    ({ server, port } = await startServer());
    const c = await RawClient.authed(port, PASSWORD);
    await c.command('event plain ALL');
    expect((await c.command('filter Unique-ID 7b1d')).headers['Reply-Text']).to.equal('+OK filter added. [Unique-ID]=[7b1d]');
    server.heartbeat();
    expect((await c.command('api hostname')).headers['Content-Type']).to.equal('api/response');
    expect((await c.command('filter Event-Name heartbeat')).headers['Reply-Text']).to.equal('+OK filter added. [Event-Name]=[heartbeat]');
    server.heartbeat();
    expect(plainHeaders((await c.next()).body)['Event-Name']).to.equal('HEARTBEAT');
    expect((await c.command('filter delete Event-Name heartbeat')).headers['Reply-Text']).to.equal('+OK filter deleted. [Event-Name][heartbeat]');
    server.heartbeat();
    expect((await c.command('api hostname')).headers['Content-Type']).to.equal('api/response');
    expect((await c.command('filter delete all')).headers['Reply-Text']).to.equal('+OK filter deleted. [all][]');
    expect((await c.command('filter Unique-ID')).headers['Reply-Text']).to.equal('-ERR invalid syntax');
    server.heartbeat();
    expect(plainHeaders((await c.next()).body)['Event-Name']).to.equal('HEARTBEAT');
    c.socket.end();
  });

  it('the heartbeat timer fires on its own, and close() says goodbye to every connection', async () => {
    ({ server, port } = await startServer({ heartbeatMs: 40 }));
    const c = await RawClient.authed(port, PASSWORD);
    await c.command('event json HEARTBEAT');
    expect(JSON.parse((await c.next()).body)).to.include({ 'Event-Name': 'HEARTBEAT' });
    await server.close();
    let f = await c.next();
    while (f.headers['Content-Type'] === 'text/event-json') f = await c.next();
    expect(f.headers['Content-Type']).to.equal('text/disconnect-notice');
    expect(f.body).to.equal('The system is being shut down.\n');
    await c.closed;
  });
});
