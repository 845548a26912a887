// external_media_start with encapsulation twilio (Twilio Media Streams) end to end: a sipp call into a
// flow whose stream dials a real `ws` server (the customer's app). <Connect> (wait): connected/start/
// media with Twilio's fields, the server's audio heard by the caller, marks echoed once played, clear
// silences fast, RFC 4733 digits become dtmf events, malformed messages are ignored, and the flow goes
// on when the server closes. <Start>: inbound, outbound and both tracks side by side, stop by name.
// Status callbacks are checked with twilio.validateRequest. Bad options and refused URLs.
import { expect } from 'chai';
import WebSocket from 'ws';
import { mulawBase64ToPcm, pcmToMulawBase64 } from '../../core/streams/twilio';
import { accountSid, callSid } from '../../core/twilio/sids';
import { testDb } from '../../testkit/db';
import type { Fixture } from '../../testkit/api';
import { freePort } from '../../testkit/ports';
import { sleep, until } from '../../testkit/media-app/harness';
import { level, pcmBuffer, placeCall, refusalOf, tone, type Stack } from '../../testkit/streams/support';
import { useTwilioStreamStack, recordTwilio, twilioApp, type CallbackSink, type TwilioConn, type TwilioMsg } from '../../testkit/streams/twilio';
import { hungUpCall } from '../../testkit/call-ends';

/** `frames` × 20 ms of a 500 Hz tone as one base64 µ-law payload. */
function tonePayload(frames: number): string {
  return pcmToMulawBase64(Buffer.concat(Array.from({ length: frames }, (_, n) => pcmBuffer(tone(n, 500)))));
}

function media(c: TwilioConn, track?: string): { track: string; chunk: string; timestamp: string; payload: string; seq: number; at: number }[] {
  return c
    .of('media')
    .map((m: TwilioMsg) => ({ ...(m.media as { track: string; chunk: string; timestamp: string; payload: string }), seq: Number(m.sequenceNumber), at: m.at }))
    .filter((m) => !track || m.track === track);
}

const loud = (payload: string) => level(mulawBase64ToPcm(payload)) > 1000;

async function activeflowOf(callId: string): Promise<{ end_reason: string | null; error: string | null } | null> {
  const db = await testDb();
  const c = await db('calls').where({ id: callId }).first();
  const a = await db('activeflows').where({ id: c!.activeflow_id }).first();
  return a && a.end_reason ? a : null;
}

/**
 * The caller hears only silence from within 100 ms of `clearAt` on: the first packet (after the first
 * `before` packets) from which on it hears silence arrived less than 100 ms after the clear.
 */
function silentSoonAfter(p: { levels: number[]; arrivals: number[] }, before: number, clearAt: number, what: string): void {
  let j = p.levels.length;
  while (j > before && p.levels[j - 1]! <= 300 && p.arrivals[j - 1]! > clearAt) j--;
  expect(j).to.be.lessThan(p.levels.length);
  const silenceMs = p.arrivals[j]! - clearAt;
  console.log(`      ${what}: ${silenceMs.toFixed(1)} ms`);
  expect(silenceMs).to.be.lessThan(100);
}

/** The first two messages: connected, then the start of an inbound µ-law stream of the call with `customParameters`; answers the start. */
function expectOpening(conn: TwilioConn, customerId: string, callId: string, customParameters: Record<string, string>): TwilioConn['msgs'][number] {
  expect(conn.msgs[0]).to.include({ event: 'connected', protocol: 'Call', version: '1.0.0' });
  const start = conn.msgs[1]!;
  expect(start.streamSid).to.match(/^MZ[0-9a-f]{32}$/);
  expect(start.start).to.deep.equal({
    streamSid: start.streamSid,
    accountSid: accountSid(customerId),
    callSid: callSid(callId),
    tracks: ['inbound'],
    customParameters,
    mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
  });
  return start;
}

/** The media messages, each inbound and numbered in order from 1. */
function expectInboundChunks(conn: TwilioConn): ReturnType<typeof media> {
  const ms = media(conn);
  ms.forEach((m, i) => {
    expect(m.track).to.equal('inbound');
    expect(m.chunk).to.equal(String(i + 1));
  });
  return ms;
}

/**
 * 1 s of tone in one media message, then the mark "one": the mark comes back once the second has played
 * (0.9 to 1.6 s after it went), and the caller heard about 50 voiced frames. Answers the echoed mark and
 * when the tone went out.
 */
async function secondThenMark(conn: TwilioConn, peer: { levels: number[]; voiced(from?: number): number }): Promise<{ one: TwilioMsg & { at: number }; sentAt: number }> {
  const heard = peer.levels.length;
  const sentAt = performance.now();
  conn.send({ event: 'media', media: { payload: tonePayload(50) } });
  conn.send({ event: 'mark', mark: { name: 'one' } });
  const one = await until(() => conn.of('mark').find((m) => (m.mark as { name: string }).name === 'one'), 5000, 'mark one');
  expect(one.at - sentAt).to.be.within(900, 1600);
  await sleep(200);
  expect(peer.voiced(heard)).to.be.within(40, 60);
  return { one, sentAt };
}

// <Connect> runs on both media backends: on fsmrf the call's audio comes through the switch's
// mod_audio_fork to the node's fork server (media-server/fsmrf/fork-tap.ts), the server's audio goes back
// on the same fork. The other cases run on the embedded engine (<Start>'s needs echo, refused on fsmrf).
for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`media streams: Twilio Media Streams (external_media_start encapsulation twilio) on the ${backend} media backend`, function () {
    this.timeout(180_000);
    let stack: Stack;
    let owner: Fixture;
    let sink: CallbackSink;

    useTwilioStreamStack((s) => ({ stack, owner, sink } = s), { mediaServer: backend });

    it('<Connect>: Twilio messages out, audio in played and marked, clear silences within 100 ms, dtmf, and the flow goes on when the server closes', async () => {
      const app = await twilioApp('/agent');
      const call = await placeCall(stack, owner.customer.id, [
        { type: 'answer' },
        {
          type: 'external_media_start',
          option: { url: app.url, encapsulation: 'twilio', wait: true, name: 'agent', twilio_parameters: { greeting: 'hi', 'a&b': '<c "d">' }, status_callback: sink.url },
        },
        { type: 'hangup' },
      ]);
      try {
        const conn = await until(() => app.conns[0], 10_000, 'the node connected');
        expect(conn.path).to.equal('/agent');
        await until(() => media(conn).length > 60, 10_000, 'media');
        const start = expectOpening(conn, owner.customer.id, call.callId, { greeting: 'hi', 'a&b': '<c "d">' });
        expect(start.event).to.equal('start');
        expect(start.sequenceNumber).to.equal('1');
        const ms = expectInboundChunks(conn);
        ms.forEach((m, i) => {
          expect(m.seq).to.equal(i + 2);
          expect(Buffer.from(m.payload, 'base64').length).to.equal(160);
          if (i) expect(Number(m.timestamp)).to.be.at.least(Number(ms[i - 1]!.timestamp));
        });
        // the caller's tone, 20 ms a chunk at about real time
        expect(ms.filter((m) => loud(m.payload)).length).to.be.greaterThan(ms.length * 0.5);
        const span = Number(ms[ms.length - 1]!.timestamp) - Number(ms[0]!.timestamp);
        expect(span / (ms.length - 1)).to.be.within(15, 25);

        // malformed messages are ignored: the stream stays up
        conn.ws.send('not json');
        conn.ws.send(Buffer.from([1, 2, 3]));
        conn.send({ event: 'dance' });
        conn.send({ event: 'media', streamSid: 'MZ00000000000000000000000000000000', media: { payload: tonePayload(50) } });
        conn.send({ event: 'media', media: { payload: '!!not base64!!' } });
        conn.send({ event: 'mark', mark: {} });

        // 1 s of audio in one message, then a mark: heard by the caller, the mark echoed once it has played
        const { one } = await secondThenMark(conn, call.peer);
        expect(one.streamSid).to.equal(start.streamSid);
        expect(conn.garbage).to.equal(0);

        // 10 s queued, a mark behind it, then clear: the mark comes back at once and the caller hears silence within 100 ms
        conn.send({ event: 'media', media: { payload: tonePayload(500) } });
        conn.send({ event: 'mark', mark: { name: 'two' } });
        await sleep(1000);
        const before = call.peer.levels.length;
        expect(call.peer.voiced(before - 20)).to.be.greaterThan(15);
        const clearAt = performance.now();
        conn.send({ event: 'clear' });
        const two = await until(() => conn.of('mark').find((m) => (m.mark as { name: string }).name === 'two'), 2000, 'mark two echoed on clear');
        expect(two.at - clearAt).to.be.lessThan(100);
        await sleep(500);
        silentSoonAfter(call.peer, before, clearAt, 'clear → silence');
        expect(call.peer.voiced(call.peer.levels.length - 15)).to.equal(0);

        // the caller's RFC 4733 digits
        await call.peer.digit('5', call.live.endpoint!.local.port);
        await sleep(100);
        await call.peer.digit('#', call.live.endpoint!.local.port);
        await until(() => conn.of('dtmf').length >= 2, 5000, 'dtmf events');
        expect(conn.of('dtmf').map((m) => m.dtmf)).to.deep.equal([
          { track: 'inbound_track', digit: '5' },
          { track: 'inbound_track', digit: '#' },
        ]);
        expect(conn.of('dtmf')[0]!.streamSid).to.equal(start.streamSid);

        // wait: the flow is still in the action (the call is up) until the server closes, then goes on (hangup)
        const row = await (await testDb())('calls').where({ id: call.callId }).first();
        expect(row!.status).to.equal('progressing');
        const closedAt = Date.now();
        conn.ws.close(1000, 'bye');
        const r = await call.sipp;
        expect(r.code, r.errors).to.equal(0);
        const ended = await hungUpCall(call.callId);
        expect(ended.hangup_by).to.equal('local');
        expect(new Date(ended.tm_hangup ?? 0).getTime()).to.be.at.least(closedAt - 1000);

        const cbs = await until(
          () => (sink.got.filter((c) => c.params.StreamSid === start.streamSid).length >= 2 ? sink.got.filter((c) => c.params.StreamSid === start.streamSid) : null),
          5000,
          'callbacks',
        );
        expect(cbs.map((c) => c.params.StreamEvent)).to.deep.equal(['stream-started', 'stream-stopped']);
        for (const c of cbs) {
          expect(c.valid, 'X-Twilio-Signature checked by twilio.validateRequest').to.equal(true);
          expect(c.method).to.equal('POST');
          expect(c.params).to.include({ AccountSid: accountSid(owner.customer.id), CallSid: callSid(call.callId), StreamName: 'agent' });
          expect(new Date(c.params.Timestamp!).getTime()).to.be.greaterThan(0);
        }
      } finally {
        call.peer.close();
        await app.close();
      }
    });

    if (backend === 'embedded')
      it('<Start>: inbound, outbound and both tracks forked side by side; stop by name sends stop; the hangup stops the rest', async () => {
        const app = await twilioApp('/fork');
        const call = await placeCall(stack, owner.customer.id, [
          { type: 'answer' },
          { type: 'external_media_start', option: { url: `${app.url}?t=both`, encapsulation: 'twilio', twilio_track: 'both_tracks', name: 'both' } },
          {
            type: 'external_media_start',
            option: { url: `${app.url}?t=out`, encapsulation: 'twilio', twilio_track: 'outbound_track', name: 'out', status_callback: sink.url, status_callback_method: 'GET' },
          },
          { type: 'external_media_start', option: { url: `${app.url}?t=in`, encapsulation: 'twilio' } },
          // the caller hears itself: the outbound track carries the tone too
          { type: 'echo', option: { duration: 3000 } },
          { type: 'external_media_stop', option: { name: 'out' } },
          { type: 'sleep', option: { duration: 1000 } },
          { type: 'hangup' },
        ]);
        try {
          await until(() => app.conns.length === 3, 10_000, 'three streams');
          const by = (t: string) => app.conns.find((c) => c.path.endsWith(`t=${t}`))!;
          const [both, out, inb] = [by('both'), by('out'), by('in')];
          const codes = await Promise.all([both.closed, out.closed, inb.closed]);
          expect(codes).to.deep.equal([1000, 1000, 1000]);
          await call.sipp;

          const tracks = (c: TwilioConn) => (c.of('start')[0]!.start as { tracks: string[] }).tracks;
          expect(tracks(both)).to.deep.equal(['inbound', 'outbound']);
          expect(tracks(out)).to.deep.equal(['outbound']);
          expect(tracks(inb)).to.deep.equal(['inbound']);
          expect(new Set([both, out, inb].map((c) => c.streamSid())).size).to.equal(3);

          for (const [c, want] of [
            [both, ['inbound', 'outbound']],
            [out, ['outbound']],
            [inb, ['inbound']],
          ] as const) {
            expect([...new Set(media(c).map((m) => m.track))].sort()).to.deep.equal([...want]);
            for (const t of want) {
              const ms = media(c, t);
              ms.forEach((m, i) => expect(m.chunk).to.equal(String(i + 1)));
              expect(ms.filter((m) => loud(m.payload)).length, `${t} loud`).to.be.greaterThan(50);
            }
            // stop is the last message, with the call's SIDs
            const last = c.msgs[c.msgs.length - 1]!;
            expect(last.event).to.equal('stop');
            expect(last.stop).to.deep.equal({ accountSid: accountSid(owner.customer.id), callSid: callSid(call.callId) });
            expect(c.of('dtmf')).to.have.length(0);
          }
          // 'out' was stopped by name a second before the hangup stopped the others
          expect(both.msgs[both.msgs.length - 1]!.at - out.msgs[out.msgs.length - 1]!.at).to.be.greaterThan(700);

          const cbs = await until(
            () => (sink.got.filter((c) => c.params.StreamSid === out.streamSid()).length >= 2 ? sink.got.filter((c) => c.params.StreamSid === out.streamSid()) : null),
            5000,
            'callbacks',
          );
          expect(cbs.map((c) => [c.method, c.params.StreamEvent, c.params.StreamName, c.valid])).to.deep.equal([
            ['GET', 'stream-started', 'out', true],
            ['GET', 'stream-stopped', 'out', true],
          ]);
          // no name: StreamName is the StreamSid
          expect(sink.got.some((c) => c.params.StreamSid === inb.streamSid())).to.equal(false);
        } finally {
          call.peer.close();
          await app.close();
        }
      });

    if (backend === 'embedded')
      it('refused and unreachable URLs are noted with a stream-error callback and the flow goes on; bad options end the flow', async () => {
        const dead = await freePort();
        for (const url of ['ws://10.1.2.3/agent', `ws://127.0.0.1:${dead}/agent`]) {
          const before = sink.got.length;
          const call = await placeCall(
            stack,
            owner.customer.id,
            [{ type: 'answer' }, { type: 'external_media_start', option: { url, encapsulation: 'twilio', wait: true, status_callback: sink.url } }, { type: 'hangup' }],
            { talk: false, live: false },
          );
          const r = await call.sipp;
          call.peer.close();
          expect(r.code, r.errors).to.equal(0);
          const row = await hungUpCall(call.callId);
          expect(row.hangup_by).to.equal('local');
          const cb = await until(() => sink.got.slice(before).find((c) => c.params.StreamEvent === 'stream-error'), 5000, 'stream-error');
          expect(cb.valid).to.equal(true);
          expect(cb.params.CallSid).to.equal(callSid(call.callId));
          expect(cb.params.StreamError).to.match(url.includes('10.1.2.3') ? /refused/ : /could not be connected to/);
        }

        const cases: [Record<string, unknown>, RegExp][] = [
          [{ url: 'http://example.test/x', encapsulation: 'twilio' }, /external_media_start: url must be ws:\/\/ or wss:\/\//],
          [{ url: 'ws://127.0.0.1:9/x', encapsulation: 'twilio', status_callback: 'ftp://example.test/cb' }, /status_callback must be http:\/\/ or https:\/\//],
          [{ url: 'ws://127.0.0.1:9/x', encapsulation: 'rtp', wait: true, name: 'x' }, /name, wait apply to encapsulation twilio only/],
          [{ url: 'ws://127.0.0.1:9/x', encapsulation: 'mp3' }, /unknown encapsulation "mp3": use one of rtp, sln, audiosocket, twilio/],
        ];
        for (const [option, want] of cases) {
          const bad = await placeCall(stack, owner.customer.id, [{ type: 'answer' }, { type: 'external_media_start', option }, { type: 'sleep', option: { duration: 10_000 } }], {
            talk: false,
            live: false,
          });
          bad.peer.close();
          const af = await until(() => activeflowOf(bad.callId), 10_000, 'activeflow ended');
          expect(af.end_reason).to.equal('error');
          expect(af.error).to.match(want);
          await bad.sipp;
        }
      });

    if (backend === 'embedded')
      it('POST /flows refuses bad Twilio stream options with INVALID_ARGUMENT naming the field, and keeps nothing', async () => {
        const http = stack.base.replace(/^ws:/, 'http:');
        const post = async (actions: unknown[]) => {
          const res = await fetch(`${http}/v1.0/flows`, {
            method: 'POST',
            headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'twilio options', actions }),
          });
          return { status: res.status, body: (await res.json()) as { id?: string; error?: { status: string; message: string; details?: { field: string }[] } } };
        };
        const start = (extra: Record<string, unknown>) => [{ type: 'external_media_start', option: { url: 'wss://example.test/agent', encapsulation: 'twilio', ...extra } }];
        const cases: [unknown[], string][] = [
          [start({ twilio_track: 'sideways' }), 'actions[0].option.twilio_track'],
          [start({ wait: 'yes' }), 'actions[0].option.wait'],
          [start({ status_callback_method: 'PUT' }), 'actions[0].option.status_callback_method'],
          [start({ twilio_parameters: { a: 1 } }), 'actions[0].option.twilio_parameters.a'],
          [start({ name: '' }), 'actions[0].option.name'],
          // a status callback to a private address is refused by the egress policy when the flow is written
          [start({ status_callback: 'http://10.1.2.3/cb' }), 'actions[0].option.status_callback'],
          [[{ type: 'external_media_stop', option: { name: '' } }], 'actions[0].option.name'],
        ];
        const db = await testDb();
        const before = (await db('flows').where({ customer_id: owner.customer.id }).count<{ count: string }[]>('* as count'))[0]!.count;
        for (const [actions, field] of cases) {
          const r = await post(actions);
          expect(r.status, field).to.equal(400);
          expect(r.body.error?.status, field).to.equal('INVALID_ARGUMENT');
          expect(
            r.body.error?.details?.map((d) => d.field),
            JSON.stringify(r.body.error),
          ).to.include(field);
        }
        expect((await db('flows').where({ customer_id: owner.customer.id }).count<{ count: string }[]>('* as count'))[0]!.count).to.equal(before);

        // the same options, well formed, are accepted as written
        const good = start({ name: 'agent', twilio_track: 'both_tracks', twilio_parameters: { a: '1' }, status_callback: 'https://example.test/cb', status_callback_method: 'GET', wait: false });
        const ok = await post([...good, { type: 'external_media_stop', option: { name: 'agent' } }]);
        expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
        const row = (await db('flows').where({ id: ok.body.id }).first()) as { actions: { option: Record<string, unknown> }[] } | undefined;
        expect(row, 'the stored flow').to.not.equal(undefined);
        const stored = row!.actions;
        expect(stored[0].option).to.include({ name: 'agent', twilio_track: 'both_tracks', status_callback_method: 'GET', wait: false });
        expect(stored[1].option).to.deep.equal({ name: 'agent' });
      });

    if (backend === 'embedded')
      it('GET /calls/{id}/media_stream?encapsulation=twilio: the same messages with the client connecting to us', async () => {
        const call = await placeCall(stack, owner.customer.id, [{ type: 'answer' }, { type: 'sleep', option: { duration: 9000 } }, { type: 'hangup' }]);
        try {
          // twilio is for calls; a conference is refused before anything else is looked up
          const conf = await refusalOf(`${stack.base}/v1.0/conferences/${call.callId}/media_stream?encapsulation=twilio&token=${owner.token}`);
          expect(conf.status).to.equal(400);
          expect(conf.body.error?.message).to.equal('unknown encapsulation "twilio": use one of rtp, sln, audiosocket');
          const missing = await refusalOf(`${stack.base}/v1.0/calls/${call.callId}/media_stream?token=${owner.token}`);
          expect(missing.body.error?.message).to.match(/one of rtp, sln, audiosocket, twilio$/);

          // recording from before the upgrade is answered: connected and start follow the 101 at once
          const client = new WebSocket(`${stack.base}/v1.0/calls/${call.callId}/media_stream?encapsulation=twilio&token=${owner.token}`);
          const conn = recordTwilio(client);
          await new Promise((r, j) => client.once('open', r).once('error', j));
          await until(() => media(conn).length > 40, 10_000, 'media');
          expectOpening(conn, owner.customer.id, call.callId, {});
          const ms = expectInboundChunks(conn);
          expect(ms.filter((m) => loud(m.payload)).length).to.be.greaterThan(ms.length * 0.5);

          conn.ws.send('not json');
          conn.send({ event: 'dance' });
          const { one, sentAt } = await secondThenMark(conn, call.peer);
          // inbound only: the client does not get its own audio back
          const during = media(conn).filter((m) => m.at > sentAt + 100 && m.at < one.at);
          expect(during.length).to.be.greaterThan(20);

          conn.send({ event: 'media', media: { payload: tonePayload(250) } });
          await sleep(800);
          const before = call.peer.levels.length;
          const clearAt = performance.now();
          conn.send({ event: 'clear' });
          await sleep(500);
          silentSoonAfter(call.peer, before, clearAt, 'clear → silence (through control-api)');

          await call.peer.digit('7', call.live.endpoint!.local.port);
          await until(() => conn.of('dtmf').length >= 1, 5000, 'dtmf');
          expect(conn.of('dtmf')[0]!.dtmf).to.deep.equal({ track: 'inbound_track', digit: '7' });

          // the call ends: stop, then 1000
          expect(await conn.closed).to.equal(1000);
          const last = conn.msgs[conn.msgs.length - 1]!;
          expect(last.event).to.equal('stop');
          expect(last.stop).to.deep.equal({ accountSid: accountSid(owner.customer.id), callSid: callSid(call.callId) });
          await call.sipp;
        } finally {
          call.peer.close();
        }
      });
  });
