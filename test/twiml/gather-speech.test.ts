// <Gather input="speech"> and "dtmf speech": compiled to speech_gather (refusals checked pure), and on
// real calls: sipp calls in and plays espeak-ng speech (pcap made here) while the nested <Say> plays;
// the platform's recogniser (pocketsphinx with the hints as its phrase list) hears it, the prompt is
// cut (barge-in) and the action URL gets SpeechResult and Confidence, signed (twilio.validateRequest).
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml } from '../../core/twiml/compile';
import { validateActions } from '../../core/flow';
import { callSid } from '../../core/twilio/sids';
import { until } from '../../testkit/media-app/harness';
import { useSpeechPcap } from '../../testkit/ai/audio';
import { boundedOnce } from '../../testkit/bounded';
import { espeakLevels } from '../../testkit/speech/support';
import { placeCall, type Stack } from '../../testkit/streams/support';
import type { TwimlServer } from '../../testkit/twiml/server';
import { endedFlowOfCall } from '../../testkit/call-ends';
import { useTwimlStack } from '../../testkit/twiml/stack';
import { DOC, refusal } from '../../testkit/twiml/compile-checks';
import type { Fixture } from '../../testkit/api';

const { VoiceResponse } = twilio.twiml;
const HINTS = 'what are your opening hours, stop please, thank you goodbye';
/** A prompt of some 12 s (espeak-ng), so that a cut one is told from a whole one. */
const LONG_PROMPT = 'Thank you for calling the shop. Please tell us in a few words what you are calling about today, for example your order, our opening hours, or anything else we can help you with.';

describe('TwiML <Gather> with speech: compiling', () => {
  it('input="dtmf speech": one speech_gather with the prompts, recogniser settings and keys; SpeechResult, Confidence, Digits to the action', () => {
    const r = new VoiceResponse();
    const g = r.gather({ input: ['dtmf', 'speech'], action: '/said', hints: HINTS, speechTimeout: '2', timeout: 7, numDigits: 3, finishOnKey: '*', language: 'en-GB', bargeIn: false });
    g.say({ voice: 'woman', loop: 2 }, 'Say something');
    g.play('/beep.wav');
    g.pause({ length: 2 });
    const actions = compileTwiml(r.toString(), { documentUrl: DOC, method: 'POST' });
    const sg = actions.find((a) => a.type === 'speech_gather')!;
    expect(sg.option).to.deep.equal({
      prompts: [
        { talk: { text: 'Say something', language: 'en-US', provider: 'provider_b' } },
        { talk: { text: 'Say something', language: 'en-US', provider: 'provider_b' } },
        { play: { stream_urls: ['https://app.example.com/beep.wav'] } },
        { pause: 2000 },
      ],
      barge_in: false,
      language: 'en-GB',
      provider: 'pocketsphinx',
      phrases: ['what are your opening hours', 'stop please', 'thank you goodbye'],
      timeout: 7000,
      speech_timeout: 2000,
      max_speech: 60_000,
      dtmf: true,
      digits_length: 3,
      digits_key: '*',
    });
    const sets = actions.filter((a) => a.type === 'variable_set').map((a) => a.option.key);
    expect(sets).to.include.members(['twiml.param.Digits', 'twiml.param.SpeechResult', 'twiml.param.Confidence', 'twiml.gathered']);
    expect(actions.map((a) => a.type)).to.not.include('digits_receive');
  });

  it('input="speech": auto speechTimeout, no Digits, speechModel deepgram* takes other languages', () => {
    const r = new VoiceResponse();
    r.gather({ input: ['speech'], speechTimeout: 'auto', language: 'de-DE', speechModel: 'deepgram_nova-2', maxSpeechTime: 20 });
    const actions = compileTwiml(r.toString(), { documentUrl: DOC, method: 'POST' });
    const sg = actions.find((a) => a.type === 'speech_gather')!;
    expect(sg.option).to.include({ provider: 'deepgram', language: 'de-DE', speech_timeout: 0, max_speech: 20_000, dtmf: false });
    expect(actions.filter((a) => a.type === 'variable_set').map((a) => a.option.key)).to.not.include('twiml.param.Digits');
  });

  it('bad speech attributes are 12200 naming the attribute; nothing compiles', () => {
    const cases: [string, RegExp][] = [
      ['<Gather input="speech" language="fr-FR"/>', /language fr-FR is not supported/],
      ['<Gather input="speech" language="not a tag"/>', /language must be/],
      ['<Gather input="speech" speechTimeout="soon"/>', /speechTimeout must be an integer/],
      ['<Gather input="speech" maxSpeechTime="61"/>', /maxSpeechTime must be an integer from 1 to 60/],
      ['<Gather input="speech" bargeIn="maybe"/>', /bargeIn must be true or false/],
      ['<Gather input="speech" hints="$OOV_CLASS_DIGIT_SEQUENCE"/>', /hint classes/],
      ['<Gather partialResultCallback="/p"/>', /partialResultCallback needs speech in input/],
      ['<Gather input="speech"><Play digits="12"/></Gather>', /<Play digits> is not supported inside a speech <Gather>/],
      ['<Gather input="speech"><Say loop="0">x</Say><Say loop="95">y</Say></Gather>', /at most 100 nested verbs/],
      ['<Gather input="speech"><Dial>+15551230000</Dial></Gather>', /cannot contain <Dial>/],
      ['<Gather input="speech dtmf video"/>', /input must be/],
      ['<Gather input=""/>', /input must be/],
      ['<Gather speechTimeout="-1"/>', /speechTimeout must be an integer/],
    ];
    for (const [doc, words] of cases) {
      const e = refusal(`<Response>${doc}<Say>after</Say></Response>`);
      expect(e.code, doc).to.equal(12200);
      expect(e.message, doc).to.match(words);
    }
  });
});

describe('speech_gather and twiml_recording options (flow validation)', () => {
  it('refuses bad options with the field named; accepts the compiled shapes', () => {
    const bad: [unknown, string, RegExp][] = [
      [{ type: 'speech_gather', option: { prompts: [{ talk: { text: 'hi', provider: 'elevenlabs' } }] } }, 'prompts[0].talk.provider', /not a voice talk can speak with/],
      [{ type: 'speech_gather', option: { prompts: [{ play: { stream_urls: ['file:///etc/passwd'] } }] } }, 'prompts[0].play.stream_urls[0]', /./],
      [{ type: 'speech_gather', option: { digits_key: 'ab' } }, 'digits_key', /one key/],
      [{ type: 'speech_gather', option: { timeout: -1 } }, 'timeout', />= 0/],
      [{ type: 'speech_gather', option: { phrases: [''] } }, 'phrases[0]', /must not be empty/],
      [{ type: 'twiml_recording', option: { source: 'RecordVerb' } }, 'option', /status_callback or transcribe/],
      [{ type: 'twiml_recording', option: { source: 'RecordVerb', status_callback: 'ftp://x' } }, 'status_callback', /http or https/],
      [{ type: 'twiml_recording', option: { source: 'RecordVerb', status_callback: 'https://x', status_callback_events: ['started'] } }, 'status_callback_events[0]', /./],
      [{ type: 'twiml_recording', option: { source: 'RecordVerb', status_callback: 'https://x', transcribe_callback: 'https://y' } }, 'transcribe_callback', /needs transcribe/],
    ];
    for (const [action, field, words] of bad) {
      const v = validateActions([action]);
      expect(v.ok, field).to.equal(false);
      if (v.ok) continue;
      expect(v.problems[0]!.field, field).to.equal(`actions[0].option${field === 'option' ? '' : `.${field}`}`);
      expect(v.problems[0]!.message, field).to.match(words);
    }
    const doc = '<Response><Gather input="dtmf speech" hints="yes, no"><Say>Hi</Say></Gather><Record transcribe="true" recordingStatusCallback="/r"/></Response>';
    expect(validateActions(compileTwiml(doc, { documentUrl: DOC, method: 'POST' })).ok).to.equal(true);
  });
});

// On both media backends: the embedded engine, and fsmrf (drachtio-fsmrf against our switch, esl/), where
// the recogniser and the VAD are fed by audio forks of the leg (mod_audio_fork: media-app/media-server/README.md).
for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Gather> with speech on real calls (sipp plays spoken words, pocketsphinx hears them; ${backend} media backend)`, function () {
    this.timeout(120_000);
    let stack: Stack;
    let app: TwimlServer;
    let f: Fixture;

    useTwimlStack((s) => ({ stack, app, f } = s), undefined, { mediaServer: backend });
    const hours = useSpeechPcap('twiml-speech-', 'What are your opening hours?');

    it('speech over the prompt cuts it (barge-in) and the action gets SpeechResult and Confidence, signed', async () => {
      const doc = new VoiceResponse();
      doc.gather({ input: ['speech'], action: '/said', hints: HINTS, speechTimeout: 'auto', timeout: 10 }).say(LONG_PROMPT);
      doc.say('We did not hear you');
      app.on('/ask', doc.toString());
      const after = new VoiceResponse();
      after.say('We are open from nine to five');
      after.hangup();
      app.on('/said', after.toString());

      const steps = () => `<pause milliseconds="3500"/>\n<nop><action><exec play_pcap_audio="${hours.file}"/></action></nop>`;
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/ask') } }], { talk: false, steps, killAfterMs: 90_000 });
      const first = await app.next('/ask');
      expect(first.signed).to.equal(true);
      const cb = await app.next('/said', 40_000);
      expect(cb.signed, 'X-Twilio-Signature').to.equal(true);
      expect(cb.method).to.equal('POST');
      expect(cb.params.SpeechResult).to.equal('what are your opening hours');
      const confidence = Number(cb.params.Confidence);
      expect(confidence).to.be.within(0, 1);
      expect(cb.params.CallSid).to.equal(callSid(call.callId));
      expect(cb.params).to.not.have.property('Digits');
      // the whole prompt is ~10 s of speech; the caller spoke ~3.5 s in, so at most about a third of it played
      const whole = espeakLevels(LONG_PROMPT).filter((l) => l > 300).length;
      const promptPackets = call.peer.voiced();
      expect(promptPackets, 'the prompt was heard').to.be.greaterThan(50);
      expect(promptPackets, `prompt packets heard before the answer (the whole prompt: ${whole})`).to.be.lessThan(whole * 0.6);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      const af = await endedFlowOfCall(call.callId);
      expect(af.error).to.equal('');
      const types = (af.executed_actions as { type: string }[]).map((a) => a.type);
      expect(types).to.include('speech_gather');
      call.peer.close();
    });

    it('dtmf speech: a key first wins (Digits, no SpeechResult); no input at all runs the next verb and never calls the action', async () => {
      const doc = new VoiceResponse();
      doc.gather({ input: ['dtmf', 'speech'], action: '/keyed', hints: HINTS, numDigits: 1, timeout: 10 }).say(LONG_PROMPT);
      app.on('/keys', doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on('/keyed', done.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/keys') } }], { talk: false });
      await app.next('/keys');
      await until(() => call.peer.voiced() > 10, 15_000, 'the prompt heard');
      await call.peer.digit('4', call.live.endpoint!.local.port);
      const cb = await app.next('/keyed');
      expect(cb.signed).to.equal(true);
      expect(cb.params.Digits).to.equal('4');
      expect(cb.params).to.not.have.property('SpeechResult');
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();

      const quiet = new VoiceResponse();
      quiet.gather({ input: ['speech'], action: '/never-said', hints: HINTS, timeout: 2 });
      quiet.say('Nothing heard. Goodbye');
      app.on('/quiet', quiet.toString());
      const call2 = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/quiet') } }], { talk: false });
      await app.next('/quiet');
      const r2 = await call2.sipp;
      expect(r2.code, r2.errors + r2.messages).to.equal(0);
      expect(call2.peer.voiced(), 'the next Say spoke').to.be.greaterThan(10);
      expect(app.requests.some((x) => x.path === '/never-said')).to.equal(false);
      const af = await endedFlowOfCall(call2.callId);
      expect(af.error).to.equal('');
      call2.peer.close();
    });
    it('bargeIn="false": the prompt plays out whole and the words said after it are heard', async () => {
      const prompt = 'Please say what you need after this message.';
      const doc = new VoiceResponse();
      doc.gather({ input: ['speech'], action: '/said-late', hints: HINTS, bargeIn: false, timeout: 10 }).say(prompt);
      app.on('/late', doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on('/said-late', done.toString());
      // the prompt is ~2.5 s; the caller speaks 5 s after the answer, once it has played out
      const steps = () => `<pause milliseconds="5000"/>\n<nop><action><exec play_pcap_audio="${hours.file}"/></action></nop>`;
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/late') } }], { talk: false, steps, killAfterMs: 90_000 });
      await app.next('/late');
      const cb = await app.next('/said-late', 40_000);
      expect(cb.signed).to.equal(true);
      expect(cb.params.SpeechResult).to.equal('what are your opening hours');
      const whole = espeakLevels(prompt).filter((l) => l > 300).length;
      expect(call.peer.voiced(), `the whole prompt (${whole} voiced packets) was heard`).to.be.greaterThan(whole * 0.8);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
    });

    it('dtmf speech: speech first wins; a key pressed while the caller speaks is ignored', async () => {
      const doc = new VoiceResponse();
      doc.gather({ input: ['dtmf', 'speech'], action: '/spoke', hints: HINTS, numDigits: 1, timeout: 10 }).say(LONG_PROMPT);
      app.on('/speak-key', doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on('/spoke', done.toString());
      const steps = () => `<pause milliseconds="2500"/>\n<nop><action><exec play_pcap_audio="${hours.file}"/></action></nop>`;
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/speak-key') } }], { talk: false, steps, killAfterMs: 90_000 });
      await app.next('/speak-key');
      // the key once the platform has heard the words start (its VAD tap's 'speech' start), while they go on
      const [started] = await boundedOnce(call.live.endpoint!, 'speech', 15_000, 'the platform hears the caller start speaking');
      expect(started).to.include({ state: 'start' });
      await call.peer.digit('5', call.live.endpoint!.local.port);
      const cb = await app.next('/spoke', 40_000);
      expect(cb.signed).to.equal(true);
      expect(cb.params.SpeechResult).to.equal('what are your opening hours');
      expect(cb.params).to.not.have.property('Digits');
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
    });
  });
