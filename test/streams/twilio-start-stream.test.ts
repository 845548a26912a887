// Twilio <Start><Stream> (external_media_start encapsulation twilio, not waiting) on both media backends:
// a unidirectional stream started mid-call while the flow goes on. On fsmrf each track is a fork of the
// leg through the switch's mod_audio_fork to the node's fork server (media-app/media-server/tap.ts's
// MediaFork; inbound mod_audio_fork's mono, outbound the right channel of its stereo). A sipp call whose
// RTP peer sends a tone; the flow starts three streams (both tracks, outbound only with a status
// callback, inbound only) to a real `ws` server on loopback, then speaks (`talk`: the outbound track),
// stops one by name, and hangs up. The messages as Twilio's docs describe them: `connected`, `start`
// (streamSid, accountSid, callSid, tracks, customParameters, mediaFormat), `media` (track, chunk from 1,
// timestamp in ms, base64 µ-law payload) with sequenceNumber from 1 in order, then `stop` last.
import { expect } from 'chai';
import { mulawBase64ToPcm } from '../../core/streams/twilio';
import { accountSid, callSid } from '../../core/twilio/sids';
import { testDb } from '../../testkit/db';
import type { Fixture } from '../../testkit/api';
import { until } from '../../testkit/media-app/harness';
import { level, placeCall, type Stack } from '../../testkit/streams/support';
import { useTwilioStreamStack, twilioApp, type CallbackSink, type TwilioConn, type TwilioMsg } from '../../testkit/streams/twilio';

interface Media {
  track: string;
  chunk: string;
  timestamp: string;
  payload: string;
}

const mediaOf = (c: TwilioConn, track?: string): Media[] =>
  c
    .of('media')
    .map((m: TwilioMsg) => m.media as Media)
    .filter((m) => !track || m.track === track);

const loud = (payload: string) => level(mulawBase64ToPcm(payload)) > 1000;

const SPEECH = 'The stream goes on while the flow speaks. This sentence is long enough to be heard on the outbound track for a few seconds.';

for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`media streams: Twilio <Start><Stream> mid-call on the ${backend} media backend`, function () {
    this.timeout(180_000);
    let stack: Stack;
    let owner: Fixture;
    let sink: CallbackSink;

    useTwilioStreamStack((s) => ({ stack, owner, sink } = s), { mediaServer: backend });

    it('three streams (both, outbound, inbound) while the flow speaks; stop by name; the hangup stops the rest; Twilio messages in order', async () => {
      const app = await twilioApp('/start');
      const call = await placeCall(stack, owner.customer.id, [
        { type: 'answer' },
        { type: 'external_media_start', option: { url: `${app.url}?t=both`, encapsulation: 'twilio', twilio_track: 'both_tracks', name: 'both', twilio_parameters: { leg: 'a' } } },
        {
          type: 'external_media_start',
          option: { url: `${app.url}?t=out`, encapsulation: 'twilio', twilio_track: 'outbound_track', name: 'out', status_callback: sink.url, status_callback_method: 'POST' },
        },
        { type: 'external_media_start', option: { url: `${app.url}?t=in`, encapsulation: 'twilio' } },
        // the flow goes on while the streams run: the caller hears speech (the outbound track)
        { type: 'talk', option: { text: SPEECH } },
        { type: 'external_media_stop', option: { name: 'out' } },
        { type: 'sleep', option: { duration: 1000 } },
        { type: 'hangup' },
      ]);
      try {
        await until(() => (app.conns.length === 3 ? true : null), 10_000, 'three streams');
        const by = (t: string) => app.conns.find((c) => c.path.endsWith(`t=${t}`))!;
        const [both, out, inb] = [by('both'), by('out'), by('in')];
        expect(await Promise.all([both.closed, out.closed, inb.closed])).to.deep.equal([1000, 1000, 1000]);
        const res = await call.sipp;
        expect(res.code, res.errors + res.messages).to.equal(0);

        for (const [c, tracks, params] of [
          [both, ['inbound', 'outbound'], { leg: 'a' }],
          [out, ['outbound'], {}],
          [inb, ['inbound'], {}],
        ] as const) {
          expect(c.garbage).to.equal(0);
          expect(c.msgs[0]).to.include({ event: 'connected', protocol: 'Call', version: '1.0.0' });
          const start = c.msgs[1]!;
          expect(start.event).to.equal('start');
          expect(start.streamSid).to.match(/^MZ[0-9a-f]{32}$/);
          expect(start.start).to.deep.equal({
            streamSid: start.streamSid,
            accountSid: accountSid(owner.customer.id),
            callSid: callSid(call.callId),
            tracks: [...tracks],
            customParameters: params,
            mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
          });
          // every message after `connected` numbered from 1 in order, each with the stream's SID
          const numbered = c.msgs.slice(1);
          expect(numbered.map((m) => Number(m.sequenceNumber))).to.deep.equal(numbered.map((_, i) => i + 1));
          expect(numbered.every((m) => m.streamSid === start.streamSid)).to.equal(true);
          expect([...new Set(mediaOf(c).map((m) => m.track))].sort()).to.deep.equal([...tracks]);
          for (const t of tracks) {
            const ms = mediaOf(c, t);
            ms.forEach((m, i) => expect(m.chunk, `${t} chunk`).to.equal(String(i + 1)));
            // timestamps: ms since the stream started, never going back
            const stamps = ms.map((m) => Number(m.timestamp));
            expect(stamps.every((x, i) => Number.isInteger(x) && x >= 0 && (i === 0 || x >= stamps[i - 1]!))).to.equal(true);
            expect(
              ms.every((m) => Buffer.from(m.payload, 'base64').length === 160),
              `${t}: 20 ms of µ-law each`,
            ).to.equal(true);
            // inbound: the caller's tone; outbound: the flow's speech
            expect(ms.filter((m) => loud(m.payload)).length, `${t} loud frames`).to.be.greaterThan(50);
          }
          const last = c.msgs[c.msgs.length - 1]!;
          expect(last.event).to.equal('stop');
          expect(last.stop).to.deep.equal({ accountSid: accountSid(owner.customer.id), callSid: callSid(call.callId) });
        }
        // 'out' was stopped by name, a second (the sleep) before the hangup stopped the others
        expect(both.msgs[both.msgs.length - 1]!.at - out.msgs[out.msgs.length - 1]!.at).to.be.greaterThan(700);
        expect(new Set([both, out, inb].map((c) => c.streamSid())).size).to.equal(3);

        const cbs = await until(
          () => {
            const got = sink.got.filter((c) => c.params.StreamSid === out.streamSid());
            return got.length >= 2 ? got : null;
          },
          5000,
          'callbacks',
        );
        expect(cbs.map((c) => [c.method, c.params.StreamEvent, c.params.StreamName, c.valid])).to.deep.equal([
          ['POST', 'stream-started', 'out', true],
          ['POST', 'stream-stopped', 'out', true],
        ]);
        // the flow did not wait for the streams: it ran every action after them
        const db = await testDb();
        const row = await db('calls').where({ id: call.callId }).first();
        const af = await until(
          async () => {
            const a = await db('activeflows').where({ id: row!.activeflow_id }).first();
            return a?.status === 'ended' ? a : null;
          },
          10_000,
          'activeflow ended',
        );
        expect(af.executed_actions.map((a: { type: string }) => a.type)).to.deep.equal([
          'answer',
          'external_media_start',
          'external_media_start',
          'external_media_start',
          'talk',
          'external_media_stop',
          'sleep',
          'hangup',
        ]);
      } finally {
        call.peer.close();
        await app.close();
      }
    });
  });
