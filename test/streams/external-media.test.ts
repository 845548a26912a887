// external_media_start / external_media_stop end to end: the call's flow makes the node connect out
// to a WebSocket server of ours, which gets the call's audio in the chosen encapsulation and talks
// back into the call; external_media_stop closes it while the call goes on. Bad options fail the flow.
import { expect } from 'chai';
import { WebSocketServer, type WebSocket } from 'ws';
import { AS_AUDIO, AS_UUID, bytesToUuid } from '../../core/streams/framing';
import { externalMediaProblem } from '../../core/streams/external-media-options';
import { testDb } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import type { Fixture } from '../../testkit/api';
import { sleep, until } from '../../testkit/media-app/harness';
import { useStreamStack, level, pcmBuffer, placeCall, tone, type Stack } from '../../testkit/streams/support';
import { hungUpCall } from '../../testkit/call-ends';

interface Seen {
  ws: WebSocket;
  path: string;
  msgs: { at: number; m: Buffer }[];
  closed: Promise<number>;
}

async function customerServer(): Promise<{ url: string; conns: Seen[]; close(): Promise<void> }> {
  const port = await freePort();
  const wss = new WebSocketServer({ host: '127.0.0.1', port });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const conns: Seen[] = [];
  wss.on('connection', (ws, req) => {
    const s: Seen = { ws, path: req.url ?? '', msgs: [], closed: new Promise((r) => ws.once('close', (code) => r(code))) };
    ws.on('message', (m: Buffer) => s.msgs.push({ at: Date.now(), m }));
    conns.push(s);
  });
  return {
    url: `ws://127.0.0.1:${port}/bot`,
    conns,
    close: () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  };
}

describe('media streams: external_media_start / external_media_stop', function () {
  this.timeout(120_000);
  let stack: Stack;
  let owner: Fixture;

  useStreamStack((s) => ({ stack, owner } = s));

  it("connects out, streams the call (audiosocket) with the caller in it, plays the server's audio into the call, and stops", async () => {
    const server = await customerServer();
    const call = await placeCall(stack, owner.customer.id, [
      { type: 'answer' },
      { type: 'external_media_start', option: { url: server.url, encapsulation: 'audiosocket' } },
      { type: 'sleep', option: { duration: 5000 } },
      { type: 'external_media_stop' },
      { type: 'sleep', option: { duration: 1500 } },
      { type: 'hangup' },
    ]);
    try {
      const conn = await until(() => server.conns[0], 10_000, 'the node connected');
      expect(conn.path).to.equal('/bot');
      await until(() => conn.msgs.length > 60, 10_000, 'chunks');
      expect(conn.msgs[0]!.m[0]).to.equal(AS_UUID);
      expect(bytesToUuid(conn.msgs[0]!.m.subarray(3))).to.equal(call.callId);
      const audio = conn.msgs.slice(1).map((x) => x.m);
      for (const m of audio) {
        expect(m[0]).to.equal(AS_AUDIO);
        expect(m.length).to.equal(323);
      }
      const span = conn.msgs[conn.msgs.length - 1]!.at - conn.msgs[1]!.at;
      // ~50 chunks a second (tolerant: a shared machine delays some)
      expect(audio.length / (span / 1000)).to.be.within(35, 70);
      const loud = audio.filter((m) => level(m.subarray(3)) > 1000).length;
      expect(loud).to.be.greaterThan(audio.length * 0.4);

      // the server talks back: 1 s of tone, heard on the caller's RTP
      const heardBefore = call.peer.levels.length;
      for (let n = 0; n < 50; n++) {
        conn.ws.send(Buffer.concat([Buffer.from([AS_AUDIO, 1, 64]), pcmBuffer(tone(n, 500))]));
        await sleep(20);
      }
      await sleep(500);
      expect(call.peer.voiced(heardBefore)).to.be.greaterThan(30);

      // external_media_stop: the node says hangup (0x00) and closes; the call goes on
      const code = await conn.closed;
      expect(code).to.equal(1000);
      const last = conn.msgs[conn.msgs.length - 1]!.m;
      expect([...last]).to.deep.equal([0, 0, 0]);
      const row = await (await testDb())('calls').where({ id: call.callId }).first();
      expect(row!.status).to.equal('progressing');
      await call.sipp;
    } finally {
      call.peer.close();
      await server.close();
    }
  });

  it('rtp: the server gets 332-byte RTP packets; the stream closes when the call hangs up', async () => {
    const server = await customerServer();
    const call = await placeCall(stack, owner.customer.id, [
      { type: 'answer' },
      { type: 'external_media_start', option: { url: server.url, encapsulation: 'rtp' } },
      { type: 'sleep', option: { duration: 2000 } },
      { type: 'hangup' },
    ]);
    try {
      const conn = await until(() => server.conns[0], 10_000, 'the node connected');
      const code = await conn.closed;
      expect(code).to.equal(1000);
      expect(conn.msgs.length).to.be.greaterThan(40);
      for (const { m } of conn.msgs) {
        expect(m.length).to.equal(332);
        expect(m[1]! & 0x7f).to.equal(96);
      }
      await call.sipp;
    } finally {
      call.peer.close();
      await server.close();
    }
  });

  it('a server that cannot be reached is noted and the flow goes on; bad options end the flow with an error', async () => {
    const deadPort = await freePort();
    const call = await placeCall(
      stack,
      owner.customer.id,
      [{ type: 'answer' }, { type: 'external_media_start', option: { url: `ws://127.0.0.1:${deadPort}/x`, encapsulation: 'sln' } }, { type: 'sleep', option: { duration: 500 } }, { type: 'hangup' }],
      { talk: false },
    );
    const r = await call.sipp;
    call.peer.close();
    expect(r.code, r.errors).to.equal(0);
    const row = await hungUpCall(call.callId);
    // the hangup action ran: the flow went past the unreachable server
    expect(row.hangup_by).to.equal('local');

    // an http:// url is a flow author's mistake: the activeflow ends with an error naming it
    const bad = await placeCall(
      stack,
      owner.customer.id,
      [{ type: 'answer' }, { type: 'external_media_start', option: { url: 'http://example.test/x', encapsulation: 'rtp' } }, { type: 'sleep', option: { duration: 10_000 } }],
      { talk: false, live: false },
    );
    bad.peer.close();
    const af = await until(
      async () => {
        const c = await (await testDb())('calls').where({ id: bad.callId }).first();
        const a = await (await testDb())('activeflows').where({ id: c!.activeflow_id }).first();
        return a && a.end_reason ? a : null;
      },
      10_000,
      'activeflow ended',
    );
    expect(af.end_reason).to.equal('error');
    expect(af.error).to.match(/external_media_start: url must be ws:\/\/ or wss:\/\//);
    await bad.sipp;

    expect(externalMediaProblem('http://example.test/x', 'rtp')).to.match(/ws:\/\/ or wss:\/\//);
    expect(externalMediaProblem('', 'rtp')).to.match(/url is required/);
    expect(externalMediaProblem('ws://x', 'mp3')).to.match(/unknown encapsulation/);
    expect(externalMediaProblem('wss://x/y', 'audiosocket')).to.equal(null);
  });
});
