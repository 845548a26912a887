// <Gather input="speech" partialResultCallback>: compiled to speech_gather's partial_callback
// (refusals checked pure), and on real calls: sipp plays espeak-ng speech, the Deepgram stand-in
// (testkit/speech/deepgram-server.ts: an interim guess, then a final segment per utterance) hears it,
// and each segment is posted to the callback as it comes (UnstableSpeechResult, StableSpeechResult,
// Stability, SequenceNumber, signed: twilio.validateRequest) before the action gets SpeechResult.
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml } from '../../core/twiml/compile';
import { callSid } from '../../core/twilio/sids';
import { useSpeechPcap } from '../../testkit/ai/audio';
import { freePort } from '../../testkit/ports';
import { FakeDeepgram } from '../../testkit/speech/deepgram-server';
import { placeCall, type Stack } from '../../testkit/streams/support';
import type { TwimlServer } from '../../testkit/twiml/server';
import { useTwimlStack } from '../../testkit/twiml/stack';
import { DOC, refusal, optionsRefused } from '../../testkit/twiml/compile-checks';
import type { Fixture } from '../../testkit/api';

const { VoiceResponse } = twilio.twiml;
const KEY = 'dg-partial-test-key';

describe('TwiML <Gather partialResultCallback>: compiling', () => {
  it('speech: partial_callback resolved against the document, method default POST; GET kept', () => {
    const r = new VoiceResponse();
    r.gather({ input: ['speech'], partialResultCallback: '/partial' });
    const sg = compileTwiml(r.toString(), { documentUrl: DOC, method: 'POST' }).find((a) => a.type === 'speech_gather')!;
    expect(sg.option).to.include({ partial_callback: 'https://app.example.com/partial', partial_callback_method: 'POST' });
    const g = new VoiceResponse();
    g.gather({ input: ['dtmf', 'speech'], partialResultCallback: 'https://cb.example.com/p?x=1', partialResultCallbackMethod: 'GET' });
    const sg2 = compileTwiml(g.toString(), { documentUrl: DOC, method: 'POST' }).find((a) => a.type === 'speech_gather')!;
    expect(sg2.option).to.include({ partial_callback: 'https://cb.example.com/p?x=1', partial_callback_method: 'GET' });
    const none = new VoiceResponse();
    none.gather({ input: ['speech'] });
    expect(compileTwiml(none.toString(), { documentUrl: DOC }).find((a) => a.type === 'speech_gather')!.option).to.not.have.property('partial_callback');
  });

  it('bad partialResultCallback attributes are 12200; bad options are refused with the field named', () => {
    const cases: [string, RegExp][] = [
      ['<Gather input="speech" partialResultCallback="ftp://x/p"/>', /partialResultCallback must be an http or https URL/],
      ['<Gather input="speech" partialResultCallback="http://[bad"/>', /partialResultCallback is not a URL/],
      ['<Gather input="speech" partialResultCallback="/p" partialResultCallbackMethod="PUT"/>', /partialResultCallbackMethod must be one of GET, POST/],
      ['<Gather partialResultCallback="/p"/>', /partialResultCallback needs speech in input/],
      ['<Gather partialResultCallbackMethod="DELETE"/>', /partialResultCallbackMethod must be one of GET, POST/],
    ];
    for (const [doc, words] of cases) {
      const e = refusal(`<Response>${doc}</Response>`);
      expect(e.code, doc).to.equal(12200);
      expect(e.message, doc).to.match(words);
    }
    const bad: [unknown, string, RegExp][] = [
      [{ type: 'speech_gather', option: { partial_callback: 'file:///etc/passwd' } }, 'partial_callback', /http or https/],
      [{ type: 'speech_gather', option: { partial_callback: 'https://x', partial_callback_method: 'PUT' } }, 'partial_callback_method', /./],
    ];
    optionsRefused(bad);
  });
});

// On both media backends: the embedded engine, and fsmrf (drachtio-fsmrf against our switch, esl/), where
// the recogniser and the VAD are fed by audio forks of the leg (mod_audio_fork: media-app/media-server/README.md).
for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Gather partialResultCallback> on real calls (sipp speaks, the Deepgram stand-in recognises; ${backend} media backend)`, function () {
    this.timeout(120_000);
    let stack: Stack;
    let app: TwimlServer;
    let f: Fixture;
    let dg: FakeDeepgram;

    before(async () => {
      dg = await new FakeDeepgram(KEY).listen();
      // the recogniser runs in the media-engine, which reads these from the environment
      process.env.DEEPGRAM_API_KEY = KEY;
      process.env.DEEPGRAM_URL = dg.url;
      // the recogniser goes through the egress policy, and the stand-in is on loopback
      process.env.EGRESS_ALLOW_CIDRS = '127.0.0.0/8';
    });
    const hours = useSpeechPcap('twiml-partial-', 'What are your opening hours?');
    useTwimlStack(
      (s) => ({ stack, app, f } = s),
      () => ({ DEEPGRAM_API_KEY: KEY, DEEPGRAM_URL: dg.url }),
      { mediaServer: backend },
    );
    after(async () => {
      await dg?.close();
      delete process.env.DEEPGRAM_API_KEY;
      delete process.env.DEEPGRAM_URL;
      delete process.env.EGRESS_ALLOW_CIDRS;
    });

    const steps = () => `<pause milliseconds="1500"/>\n<nop><action><exec play_pcap_audio="${hours.file}"/></action></nop>`;

    it('each segment is posted as it comes (an interim guess first), in sequence, signed; the action gets SpeechResult', async () => {
      const doc = new VoiceResponse();
      doc.gather({ input: ['speech'], action: '/heard', speechModel: 'deepgram_nova-2', partialResultCallback: '/partial', speechTimeout: 'auto', timeout: 10 });
      app.on('/ask-partial', doc.toString());
      app.on('/partial', { status: 204, body: '' });
      const done = new VoiceResponse();
      done.hangup();
      app.on('/heard', done.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/ask-partial') } }], { talk: false, steps, killAfterMs: 90_000 });
      await app.next('/ask-partial');
      const p1 = await app.next('/partial', 30_000);
      const cb = await app.next('/heard', 30_000);
      expect(p1.signed, 'X-Twilio-Signature').to.equal(true);
      expect(p1.method).to.equal('POST');
      expect(p1.params.SequenceNumber).to.equal('1');
      expect(p1.params.UnstableSpeechResult).to.equal('utterance 1 so far');
      expect(p1.params.StableSpeechResult).to.equal('');
      expect(p1.params.Stability).to.equal('0.91');
      expect(p1.params.CallSid).to.equal(callSid(call.callId));
      expect(p1.params.LanguageCode).to.equal('en-US');
      const partials = app.requests.filter((r) => r.path === '/partial');
      expect(partials.map((r) => r.params.SequenceNumber)).to.deep.equal(partials.map((_, i) => String(i + 1)));
      expect(partials.every((r) => r.signed)).to.equal(true);
      // a finished segment, when one came while listening, moves to StableSpeechResult
      for (const x of partials.filter((r) => r.params.UnstableSpeechResult === '')) expect(x.params.StableSpeechResult).to.match(/^utterance 1\b/);
      expect(cb.params.SpeechResult).to.match(/^utterance 1\b/);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
    });

    it('GET, and an unreachable partialResultCallback: the Gather goes on and its action still gets SpeechResult', async () => {
      const dead = `http://127.0.0.1:${await freePort()}/nobody`;
      const doc = new VoiceResponse();
      doc.gather({ input: ['speech'], action: '/heard-anyway', speechModel: 'deepgram_nova-2', partialResultCallback: dead, partialResultCallbackMethod: 'GET', timeout: 10 });
      app.on('/ask-dead', doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on('/heard-anyway', done.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/ask-dead') } }], { talk: false, steps, killAfterMs: 90_000 });
      await app.next('/ask-dead');
      const cb = await app.next('/heard-anyway', 30_000);
      expect(cb.signed).to.equal(true);
      expect(cb.params.SpeechResult).to.match(/^utterance 1\b/);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
    });
  });
