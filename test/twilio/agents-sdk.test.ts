// Issue 36, "How it is tested", second point: an agent framework speaking Twilio's wire, unchanged.
// OpenAI's own Agents SDK (@openai/agents with @openai/agents-extensions' TwilioRealtimeTransportLayer)
// runs the customer's agent (testkit/twilio-agent/agent-server.ts) against the loopback Realtime API
// stand-in. A sipp caller dials a number whose VoiceUrl (set with the official `twilio` client) answers
// `<Connect><Stream>` built with twilio.twiml.VoiceResponse; it hears the greeting, talks five turns
// (its µ-law reaching the stand-in, each answer reaching the caller), barges in (the SDK's `clear`
// silences the caller within 100 ms), and the agent's tool hangs up with
// `client.calls(callSid).update({ status: 'completed' })`: the caller's BYE within 500 ms. Every mark
// the SDK sends comes back.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { expect } from 'chai';
import twilio from 'twilio';
import { numbersRepo } from '../../core/repos/numbers';
import { callSid, toSid } from '../../core/twilio/sids';
import { startRealtimeServer, type RealtimeServer } from '../../testkit/ai/realtime-server';
import { mulawBase64ToPcm } from '../../core/streams/twilio';
import { level } from '../../testkit/streams/support';
import { voicedRuns } from '../../testkit/speech/support';
import { sleep, until } from '../../testkit/media-app/harness';
import { startAgentServer, type AgentServer } from '../../testkit/twilio-agent/agent-server';
import { byeReceivedAt, callNumber } from '../../testkit/twilio-agent/caller';
import { useTwilioRestStack, type TwilioRestStack } from '../../testkit/twiml/stack';

const KEY = 'sk-agents-sdk-test';
const TURNS = ['What are your opening hours?', 'And on Sunday?', 'Do you deliver?', 'How much is it?', 'Can I pay by card?'];
/** the agent's answers: tones the caller can tell apart from silence */
const GREETING_MS = 1500;
const ANSWER_MS = 800;
const LONG_MS = 8000;

describe('twilio: an agent built on the OpenAI Agents SDK (TwilioRealtimeTransportLayer) on the platform', function () {
  this.timeout(180_000);
  let s: TwilioRestStack;
  let realtime: RealtimeServer;
  let agent: AgentServer;
  useTwilioRestStack((x) => (s = x));

  // each attempt its own stand-in and agent (a retry of the test must not read the first attempt's call and events)
  beforeEach(async () => {
    realtime = await startRealtimeServer(KEY, {
      greeting: { say: 'Hello, thanks for calling the shop.', ms: GREETING_MS, hz: 440 },
      turn: (n) => {
        if (n < TURNS.length) return { heard: TURNS[n]!, reply: { say: `Answer ${n + 1}.`, ms: ANSWER_MS, hz: 440 } };
        if (n === TURNS.length) return { heard: 'Tell me everything about your prices.', reply: { say: 'Our prices are…', ms: LONG_MS, hz: 440 } };
        return { heard: 'Stop, thanks, goodbye.', reply: { call: 'hang_up', arguments: { reason: 'the caller said goodbye' } } };
      },
      afterCall: () => null,
    });
    agent = await startAgentServer({
      realtimeUrl: `${realtime.url.replace(/^https:/, 'wss:')}/realtime?model=gpt-realtime`,
      apiKey: KEY,
      ca: realtime.cert.cert,
      twilio: s.client,
      // a turn ends on 1 s of silence (the API's default 500 ms): the caller's RTP comes from a timer in
      // this process, beside the platform, and a stall of half a second under load split one turn in two
      silenceMs: 1000,
    });
  });
  afterEach(async () => {
    await agent?.close();
    await realtime?.close();
  });

  it('greeting, five turns, barge-in clears, marks echoed, and the tool hangs up with a BYE within 500 ms', async () => {
    const number = `+8996${String(process.pid % 1000).padStart(3, '0')}${String(Date.now()).slice(-5)}`;
    const row = await numbersRepo(s.stack.api.ctx.db).create({ customer_id: s.f.customer.id, number, type: 'virtual' });
    const doc = new twilio.twiml.VoiceResponse();
    doc.connect().stream({ url: agent.url });
    s.app.on('/voice', doc.toString());
    await s.client.incomingPhoneNumbers(toSid('PN', row.id)).update({ voiceUrl: s.app.url('/voice'), voiceMethod: 'POST' });

    const call = await callNumber(s.stack, number);
    const { peer } = call;
    // this process's own stalls (the caller's RTP timer and the SDK run here), for the reports below
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    try {
      const a = await until(() => agent.calls[0], 15_000, 'the platform opened the Media Stream to the agent');
      /** a wait that failed, with what each side saw (one failed on a loaded clean-clone CI) */
      const withState = (e: Error): never => {
        const seen = {
          speechStarted: realtime.speechStartedAt.length,
          vad: realtime.vadAt,
          received: realtime.received.slice(-8).map((r) => r.type),
          sent: a.sent.slice(-8).map((m) => m.event),
          streamed: a.conn.of('media').length,
          ended: call.live.isEnded,
        };
        throw new Error(`${e.message}: ${JSON.stringify(seen)}`);
      };
      /**
       * all the agent's audio played: the answer complete (the SDK's `done:` mark for it sent: the stand-in
       * streams at four times real time, but a loaded machine's timers can let the playback catch up with it
       * midway, every mark so far back while the response still runs) and every mark the SDK sent come back
       */
      const played = (what: string) =>
        until(
          () => {
            const marks = a.sent.filter((m) => m.event === 'mark');
            const last = (marks.at(-1)?.mark as { name?: string } | undefined)?.name ?? '';
            return last.startsWith('done:') && marks.length === a.conn.of('mark').length;
          },
          15_000,
          what,
        );
      /** media frames the platform streamed since the `from`-th with the caller's tone in them */
      const loudSince = (from: number) =>
        a.conn
          .of('media')
          .slice(from)
          .filter((m) => level(mulawBase64ToPcm((m.media as { payload: string }).payload)) > 1000).length;
      /** the runs of streamed frames with the caller's tone: `start ms+length ms` in the stream's time */
      const loudRuns = () =>
        voicedRuns(
          a.conn.of('media').map((m) => level(mulawBase64ToPcm((m.media as { payload: string }).payload))),
          1000,
          1,
        ).map(([from, n]) => `${from * 20}+${n * 20}`);
      /** the caller talks until 500 ms of its tone have been streamed (in-process timers skip ticks under load), then is quiet */
      const talk = async (what: string) => {
        const from = a.conn.of('media').length;
        peer.amplitude = 8000;
        await until(() => loudSince(from) >= 25, 10_000, what).catch(withState);
        peer.amplitude = 0;
      };
      const start = await until(() => a.conn.of('start')[0], 10_000, 'start');
      expect((start.start as { callSid: string }).callSid).to.equal(callSid(call.live.id));
      expect((start.start as { mediaFormat: unknown }).mediaFormat).to.deep.equal({ encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 });

      // the SDK asked the stand-in for µ-law both ways
      const update = await until(() => realtime.received.find((r) => r.type === 'session.update'), 10_000, 'session.update');
      const audio = (update.event.session as { audio?: { input?: { format?: unknown }; output?: { format?: unknown } } }).audio;
      expect([audio?.input?.format, audio?.output?.format], 'µ-law in and out').to.deep.equal([{ type: 'audio/pcmu' }, { type: 'audio/pcmu' }]);
      expect((audio?.input as { turn_detection?: { silence_duration_ms?: number } }).turn_detection?.silence_duration_ms, 'the turn silence asked').to.equal(1000);

      // the greeting reaches the caller; its marks come back as it plays (the last once all 1.5 s has played),
      // though the SDK sent it all at once
      await until(() => peer.voiced() >= (GREETING_MS / 20) * 0.8, 15_000, 'the greeting heard by the caller');
      await played('the greeting');
      const firstAudio = a.sent.find((m) => m.event === 'media')!.at;
      const greetingMarks = a.conn.of('mark');
      expect(a.sent.filter((m) => m.event === 'mark').at(-1)!.at - firstAudio, 'the SDK sent the greeting faster than real time').to.be.below(GREETING_MS / 2);
      expect(greetingMarks.at(-1)!.at - firstAudio, 'the last mark echoed once the greeting had played').to.be.within(GREETING_MS - 100, GREETING_MS + 600);

      // five turns: the caller talks 600 ms; its tone reaches the stand-in as µ-law; the answer reaches the caller
      for (let n = 0; n < TURNS.length; n++) {
        await played(`the agent's audio before turn ${n + 1}`);
        const heardBefore = peer.levels.length;
        const voicedBefore = realtime.voicedMs;
        const mediaBefore = a.conn.of('media').length;
        const startedBefore = realtime.speechStartedAt.length;
        await talk(`turn ${n + 1} streamed`);
        await until(() => realtime.speechStartedAt.length > startedBefore, 5000, `turn ${n + 1} heard by the stand-in`);
        await until(() => peer.voiced(heardBefore) >= (ANSWER_MS / 20) * 0.8, 10_000, `answer ${n + 1} heard by the caller`);
        // what the platform streamed of the tone reached the stand-in as µ-law, frame for frame
        const loudIn = loudSince(mediaBefore);
        expect(realtime.voicedMs - voicedBefore, `turn ${n + 1}: the streamed tone at the stand-in`).to.equal(loudIn * 20);
      }
      // what led to a clear (seen only on a loaded machine): the SDK's messages and the stand-in's speech
      // starts; the longest wait between two media messages at the agent and this process's longest stall
      // (the SDK pads 1 s of silence into a turn when no media comes for 750 ms)
      const cleared = a.sent.findIndex((m) => m.event === 'clear');
      const arrivals = a.conn.of('media').map((m) => m.at);
      expect(
        a.sent.filter((m) => m.event === 'clear'),
        `no clear while nothing plays: ${JSON.stringify({
          speechStarted: realtime.speechStartedAt.length,
          mediaGapMs: Math.round(Math.max(0, ...arrivals.slice(1).map((t, i) => t - arrivals[i]!))),
          stallMs: Math.round(loop.max / 1e6),
          vad: realtime.vadAt,
          loud: loudRuns(),
          before: a.sent.slice(Math.max(0, cleared - 4), cleared).map((m) => m.event),
          received: realtime.received
            .map((r) => r.type)
            .filter((t) => t !== 'session.update')
            .slice(-12),
        })}`,
      ).to.have.length(0);
      // the platform's media timestamps are media time, 20 ms a chunk as on Twilio: the SDK pads any gap
      // between them with silence, so a timestamp off the audio would put silence into the model's input
      const stamps = a.conn.of('media').map((m) => Number((m.media as { timestamp: string }).timestamp));
      const steps = stamps.slice(1).map((t, i) => t - stamps[i]!);
      expect(
        steps.filter((d) => d !== 20),
        'timestamp steps other than 20 ms',
      ).to.deep.equal([]);
      expect([...realtime.appendSizes.keys()], 'the SDK appended the 160-byte chunks as they came, no padding').to.deep.equal([160]);

      // barge-in: a long answer plays, the caller talks over it, the SDK clears, the caller hears silence within 100 ms
      await played('the last answer');
      const longFrom = peer.levels.length;
      await talk('the question before the long answer');
      await until(() => peer.voiced(longFrom) >= 50, 10_000, 'the long answer playing').catch(withState);
      const bargeFrom = peer.levels.length;
      const talking = talk('the barge-in');
      const clear = await until(() => a.sent.find((m) => m.event === 'clear'), 10_000, 'the SDK sends clear on speech_started');
      await talking;
      await sleep(300);
      // the first packet after the clear from which on the caller hears only silence
      let j = peer.levels.length;
      while (j > bargeFrom && peer.levels[j - 1]! <= 300 && peer.arrivals[j - 1]! > clear.at) j--;
      expect(j, 'the caller hears silence after the clear').to.be.lessThan(peer.levels.length);
      const silenceMs = peer.arrivals[j]! - clear.at;
      console.log(`      clear → silence: ${silenceMs.toFixed(1)} ms`);
      expect(silenceMs).to.be.lessThan(100);
      expect(
        realtime.received.some((r) => r.type === 'conversation.item.truncate'),
        'the SDK truncates what was not heard',
      ).to.equal(true);

      // the caller's goodbye: the tool hangs up through the official client; the caller's BYE within 500 ms
      await until(() => a.hangUpAskedAt, 15_000, 'the tool ran');
      const r = await call.sipp;
      expect(r.code, r.errors).to.equal(0);
      const byeAt = byeReceivedAt(r.messages);
      expect(byeAt, 'a BYE in the trace').to.be.a('number');
      console.log(`      Calls/{sid} Status=completed → BYE: ${byeAt! - a.hangUpAskedAt!} ms`);
      expect(byeAt! - a.hangUpAskedAt!).to.be.lessThan(500);
      expect(a.errors, 'no errors in the session').to.deep.equal([]);

      // every mark the SDK sent came back, in order, with the stream's sid
      await until(() => a.conn.of('stop').length > 0, 5000, 'stop: the stream ended with the call');
      expect(a.hangUpAnsweredAt, 'the platform answered the tool').to.be.a('number');
      const sentMarks = a.sent.filter((m) => m.event === 'mark').map((m) => (m.mark as { name: string }).name);
      const echoed = a.conn.of('mark');
      expect(sentMarks.length).to.be.greaterThan(10);
      expect(echoed.map((m) => (m.mark as { name: string }).name)).to.deep.equal(sentMarks);
      for (const m of echoed) expect(m.streamSid).to.equal(start.streamSid);
    } finally {
      loop.disable();
      peer.close();
    }
  });
});
