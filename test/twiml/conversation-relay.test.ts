// <Connect><ConversationRelay>: compiled to conversation_relay (refusals checked pure), and on real
// calls: a ConversationRelay app (testkit/twiml/relay-app.ts, written from Twilio's docs) gets a
// signed upgrade and `setup`; a sipp caller speaks (espeak-ng pcap) over the welcome greeting, which
// is cut (`interrupt`), pocketsphinx hears the words (`prompt`), the app's text tokens are spoken to
// the caller, and its `end` runs the Connect action with SessionId, SessionStatus and HandoffData.
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml } from '../../core/twiml/compile';
import { validateActions } from '../../core/flow';
import { callSid } from '../../core/twilio/sids';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { useSpeechPcap } from '../../testkit/ai/audio';
import { until } from '../../testkit/media-app/harness';
import { freePort } from '../../testkit/ports';
import { espeakLevels } from '../../testkit/speech/support';
import { placeCall, type Stack } from '../../testkit/streams/support';
import { RelayApp } from '../../testkit/twiml/relay-app';
import { startElevenLabs } from '../../testkit/vendors/elevenlabs';
import { FakeDeepgram } from '../../testkit/speech/deepgram-server';
import type { StandIn } from '../../testkit/vendors/marker';
import type { TwimlServer } from '../../testkit/twiml/server';
import { useTwimlStack } from '../../testkit/twiml/stack';
import { DOC, refusal, optionsRefused } from '../../testkit/twiml/compile-checks';
import type { Fixture } from '../../testkit/api';
import { RELAY_LINE_MAX_CHARS, relayLinesRepo } from '../../core/repos/relay-lines';
import { RELAY_SAY_QUEUE_MAX_CHARS } from '../../media-app/twiml/relay';

const { VoiceResponse } = twilio.twiml;
const HINTS = 'what are your opening hours, stop please, thank you goodbye';
const GREETING = 'Welcome to the shop. I am the virtual assistant and I can tell you about your orders, our opening hours, our prices, and anything else you would like to know today.';
const DG_KEY = 'dg-relay-test-key';
const REPLY = 'We are open from nine in the morning to five in the evening.';

describe('TwiML <Connect><ConversationRelay>: compiling', () => {
  it('one conversation_relay with the mapped attributes, languages and parameters; the action gets the session parameters', () => {
    const r = new VoiceResponse();
    const cr = r.connect({ action: '/relay-done', method: 'GET' }).conversationRelay({
      url: 'wss://ai.example.com/relay',
      welcomeGreeting: 'Hi',
      welcomeGreetingInterruptible: 'none',
      language: 'en-GB',
      ttsProvider: 'espeak-ng',
      voice: 'en-gb',
      transcriptionProvider: 'Deepgram',
      interruptible: 'speech',
      dtmfDetection: true,
      hints: 'yes, no',
      debug: 'debugging',
    });
    cr.language({ code: 'de-DE', ttsProvider: 'espeak-ng', voice: 'de' });
    cr.parameter({ name: 'agent', value: 'sales' });
    const actions = compileTwiml(r.toString(), { documentUrl: DOC, method: 'POST' });
    expect(actions[0]!.type).to.equal('conversation_relay');
    expect(actions[0]!.option).to.deep.equal({
      url: 'wss://ai.example.com/relay',
      welcome_greeting: 'Hi',
      welcome_greeting_interruptible: 'none',
      language: 'en-GB',
      tts_provider: 'espeak-ng',
      voice: 'en-gb',
      stt_provider: 'deepgram',
      interruptible: 'speech',
      dtmf_detection: true,
      phrases: ['yes', 'no'],
      parameters: { agent: 'sales' },
      languages: [{ code: 'de-DE', tts_provider: 'espeak-ng', voice: 'de' }],
    });
    const keys = actions.filter((a) => a.type === 'variable_set').map((a) => a.option.key);
    expect(keys).to.deep.equal(['SessionId', 'SessionStatus', 'SessionDuration', 'HandoffData', 'ErrorCode', 'ErrorMessage'].map((k) => `twiml.param.${k}`));
    expect(actions.at(-1)!.option).to.deep.equal({ url: 'https://app.example.com/relay-done', method: 'GET' });
    expect(validateActions(actions).ok).to.equal(true);

    const plain = new VoiceResponse();
    plain.connect().conversationRelay({ url: 'ws://127.0.0.1:9/x', interruptible: 'false' });
    plain.say('after');
    const a2 = compileTwiml(plain.toString(), { documentUrl: DOC });
    expect(a2.map((a) => a.type)).to.deep.equal(['conversation_relay', 'talk']);
    expect(a2[0]!.option).to.deep.equal({ url: 'ws://127.0.0.1:9/x', language: 'en-US', interruptible: 'none' });
    const cloud = new VoiceResponse();
    cloud.connect().conversationRelay({ url: 'wss://x', ttsProvider: 'ElevenLabs', voice: 'UgBBYS2sOqTuMpoF3BR0' });
    expect(compileTwiml(cloud.toString(), { documentUrl: DOC })[0]!.option).to.include({ tts_provider: 'elevenlabs', voice: 'UgBBYS2sOqTuMpoF3BR0' });
    // Twilio's names for the other two: Amazon is our aws (Polly), Google our google
    const twilioNames = (provider: string) =>
      compileTwiml(`<Response><Connect><ConversationRelay url="wss://x" ttsProvider="${provider}" voice="Joanna"/></Connect></Response>`, { documentUrl: DOC })[0]!.option;
    expect(twilioNames('Amazon')).to.include({ tts_provider: 'aws', voice: 'Joanna' });
    expect(twilioNames('Google')).to.include({ tts_provider: 'google', voice: 'Joanna' });
  });

  it('bad ConversationRelay documents are 12200 naming what is wrong; bad options are refused with the field named', () => {
    const cases: [string, RegExp][] = [
      ['<Connect><ConversationRelay/></Connect>', /url must be a ws:\/\/ or wss:\/\/ URL/],
      ['<Connect><ConversationRelay url="https://x/relay"/></Connect>', /url must be a ws:\/\/ or wss:\/\/ URL/],
      ['<Connect><ConversationRelay url="wss://x" ttsProvider="Hume"/></Connect>', /ttsProvider "Hume" is not supported here/],
      ['<Connect><ConversationRelay url="wss://x" ttsProvider="ElevenLabs" voice="a b"/></Connect>', /voice must be a voice name/],
      ['<Connect><ConversationRelay url="wss://x" voice="Polly.Joanna"/></Connect>', /voice needs a ttsProvider/],
      ['<Connect><ConversationRelay url="wss://x" transcriptionProvider="Google"/></Connect>', /transcriptionProvider "Google" is not supported/],
      ['<Connect><ConversationRelay url="wss://x" language="fr-FR"/></Connect>', /needs transcriptionProvider="Deepgram"/],
      ['<Connect><ConversationRelay url="wss://x" language="not a tag"/></Connect>', /language must be a language tag/],
      ['<Connect><ConversationRelay url="wss://x" interruptible="sometimes"/></Connect>', /interruptible must be one of any, speech, dtmf, none/],
      ['<Connect><ConversationRelay url="wss://x" dtmfDetection="yes"/></Connect>', /dtmfDetection must be true or false/],
      ['<Connect><ConversationRelay url="wss://x" partialPrompts="true"/></Connect>', /has no attribute "partialPrompts"/],
      ['<Connect><ConversationRelay url="wss://x"><Say>hi</Say></ConversationRelay></Connect>', /cannot contain <Say>/],
      ['<Connect><ConversationRelay url="wss://x"><Language/></ConversationRelay></Connect>', /<Language> needs a code/],
      ['<Connect><ConversationRelay url="wss://x"><Parameter value="v"/></ConversationRelay></Connect>', /<Parameter> needs a name/],
      ['<Connect><ConversationRelay url="wss://x">text</ConversationRelay></Connect>', /not text/],
      ['<Connect action="ftp://x"><ConversationRelay url="wss://x"/></Connect>', /action must be an http or https URL/],
      ['<Connect><ConversationRelay url="wss://x"/><Stream url="wss://y"/></Connect>', /exactly one <Stream>/],
    ];
    for (const [doc, words] of cases) {
      const e = refusal(`<Response>${doc}</Response>`);
      expect(e.code, doc).to.equal(12200);
      expect(e.message, doc).to.match(words);
    }
    const bad: [unknown, string, RegExp][] = [
      [{ type: 'conversation_relay', option: { url: 'http://x' } }, 'url', /ws:\/\/ or wss:\/\//],
      [{ type: 'conversation_relay', option: { url: 'wss://x', tts_provider: 'hume' } }, 'tts_provider', /./],
      [{ type: 'conversation_relay', option: { url: 'wss://x', interruptible: 'maybe' } }, 'interruptible', /./],
      [{ type: 'conversation_relay', option: { url: 'wss://x', languages: [{ code: 'x y' }] } }, 'languages[0].code', /language tag/],
    ];
    optionsRefused(bad);
  });
});

// On both media backends: the embedded engine, and fsmrf (drachtio-fsmrf against our switch, esl/), where
// the recogniser and the VAD are fed by audio forks of the leg (mod_audio_fork: media-app/media-server/README.md).
for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Connect><ConversationRelay> on real calls (a ConversationRelay app, a sipp caller; ${backend} media backend)`, function () {
    this.timeout(120_000);
    let stack: Stack;
    let app: TwimlServer;
    let f: Fixture;
    let relay: RelayApp;
    let elevenlabs: StandIn;

    let dg: FakeDeepgram;

    before(async () => {
      elevenlabs = await startElevenLabs();
      dg = await new FakeDeepgram(DG_KEY).listen();
      // the recogniser runs in the media-engine, which reads these from the environment
      process.env.DEEPGRAM_API_KEY = DG_KEY;
      process.env.DEEPGRAM_URL = dg.url;
      // the recogniser goes through the egress policy, and the stand-in is on loopback
      process.env.EGRESS_ALLOW_CIDRS = '127.0.0.0/8';
    });
    useTwimlStack(
      (s) => ({ stack, app, f } = s),
      () => ({ ELEVENLABS_BASE_URL: elevenlabs.url, ELEVENLABS_API_KEY: 'el-test-key', DEEPGRAM_API_KEY: DG_KEY, DEEPGRAM_URL: dg.url }),
      { mediaServer: backend },
    );
    before(async () => {
      relay = await RelayApp.start(twilioAuthToken(stack.platform.config.jwtSecret, f.customer.id, 0));
    });
    const hours = useSpeechPcap('twiml-relay-', 'What are your opening hours?');
    after(async () => {
      await relay?.close();
      await elevenlabs?.close();
      await dg?.close();
      delete process.env.DEEPGRAM_API_KEY;
      delete process.env.DEEPGRAM_URL;
      delete process.env.EGRESS_ALLOW_CIDRS;
    });

    it('setup, the greeting cut by speech (interrupt), prompt, the text spoken, end → the action gets HandoffData', async () => {
      const doc = new VoiceResponse();
      const cr = doc.connect({ action: '/relay-done' }).conversationRelay({ url: relay.url('/relay'), welcomeGreeting: GREETING, hints: HINTS });
      cr.parameter({ name: 'agent', value: 'sales' });
      app.on('/relay-start', doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on('/relay-done', done.toString());
      let voicedAtPrompt = -1;
      let call: Awaited<ReturnType<typeof placeCall>> | null = null;
      relay.onMessage = (s, m) => {
        if (m.type !== 'prompt') return;
        voicedAtPrompt = call?.peer.voiced() ?? -1;
        // an app as in Twilio's docs: the answer streamed as tokens, then the session handed back
        s.send({ type: 'text', token: 'We are open from nine ', last: false });
        s.send({ type: 'text', token: 'in the morning to five in the evening.', last: true });
        setTimeout(() => s.send({ type: 'end', handoffData: JSON.stringify({ reason: 'answered', topic: m.voicePrompt }) }), 6000);
      };
      const steps = () => `<pause milliseconds="3500"/>\n<nop><action><exec play_pcap_audio="${hours.file}"/></action></nop>`;
      call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/relay-start') } }], { talk: false, steps, killAfterMs: 90_000 });
      await app.next('/relay-start');
      const setup = await relay.message('/relay', 'setup');
      const session = relay.sessions.find((s) => s.path === '/relay')!;
      expect(session.signed, 'X-Twilio-Signature on the upgrade').to.equal(true);
      expect(setup).to.include({ callSid: callSid(call.callId), from: '+15551230000', direction: 'inbound', callStatus: 'IN-PROGRESS' });
      expect(setup.sessionId).to.match(/^VX[0-9a-f]{32}$/);
      expect(setup.customParameters).to.deep.equal({ agent: 'sales' });
      const interrupt = await relay.message('/relay', 'interrupt', 30_000);
      const prompt = await relay.message('/relay', 'prompt', 30_000);
      expect(prompt).to.include({ voicePrompt: 'what are your opening hours', lang: 'en-US', last: true });
      expect(interrupt.utteranceUntilInterrupt).to.equal(GREETING);
      expect(interrupt.durationUntilInterruptMs).to.be.a('number').within(1500, 8000);
      expect(interrupt.at).to.be.at.most(prompt.at);
      const cb = await app.next('/relay-done', 40_000);
      expect(cb.signed).to.equal(true);
      expect(cb.params.SessionId).to.equal(setup.sessionId);
      expect(cb.params.SessionStatus).to.equal('ended');
      expect(JSON.parse(cb.params.HandoffData!)).to.deep.equal({ reason: 'answered', topic: 'what are your opening hours' });
      expect(Number(cb.params.SessionDuration)).to.be.within(5, 40);
      expect(cb.params).to.not.have.property('ErrorCode');
      // the greeting was cut: far fewer voiced packets than it has; the reply was heard after the prompt
      const whole = espeakLevels(GREETING).filter((l) => l > 300).length;
      expect(voicedAtPrompt, `greeting packets heard (whole: ${whole})`).to.be.within(20, whole * 0.6);
      const reply = espeakLevels(REPLY).filter((l) => l > 300).length;
      expect(call.peer.voiced() - voicedAtPrompt, `reply packets heard (whole: ${reply})`).to.be.greaterThan(reply * 0.7);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
    });

    it('dtmf messages, a bad app message answered with error 64107 (the session goes on), the app closing the socket: completed', async () => {
      const doc = new VoiceResponse();
      doc.connect({ action: '/relay2-done' }).conversationRelay({ url: relay.url('/relay2'), dtmfDetection: true });
      app.on('/relay2-start', doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on('/relay2-done', done.toString());
      relay.onMessage = (s, m) => {
        if (m.type === 'setup' && s.path === '/relay2') {
          s.sendRaw('{"type":"bogus"}');
          s.sendRaw('not json');
          s.send({ type: 'text', token: 5 });
          s.send({ type: 'text', token: 'Press a key.', last: true });
        }
        if (m.type === 'dtmf' && s.path === '/relay2') s.ws.close(1000);
      };
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/relay2-start') } }], { talk: false });
      await app.next('/relay2-start');
      await relay.message('/relay2', 'setup');
      const session = relay.sessions.find((s) => s.path === '/relay2')!;
      await until(() => session.messages.filter((m) => m.type === 'error').length >= 3, 10_000, 'three error messages');
      const errors = session.messages.filter((m) => m.type === 'error').map((m) => String(m.description));
      expect(errors[0]).to.match(/64107.*unknown message type "bogus"/);
      expect(errors[1]).to.match(/64107.*not JSON/);
      expect(errors[2]).to.match(/64107.*token must be a string/);
      await until(() => call.peer.voiced() > 10, 15_000, 'the valid text spoken');
      await call.peer.digit('7', call.live.endpoint!.local.port);
      const dtmf = await relay.message('/relay2', 'dtmf');
      expect(dtmf.digit).to.equal('7');
      const cb = await app.next('/relay2-done', 20_000);
      expect(cb.params.SessionStatus).to.equal('completed');
      expect(cb.params).to.not.have.property('HandoffData');
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
    });

    it('a runaway app streaming far more than a reply holds: the reply is kept to RELAY_LINE_MAX_CHARS, the rest counted lost', async () => {
      const doc = new VoiceResponse();
      doc.connect({ action: '/relay4-done' }).conversationRelay({ url: relay.url('/relay4') });
      app.on('/relay4-start', doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on('/relay4-done', done.toString());
      // 250 tokens of 4,000 characters, no sentence end, no `last`: a million characters of one reply
      const token = 'blah '.repeat(800);
      const sent = 250 * token.length;
      relay.onMessage = (s, m) => {
        if (m.type !== 'setup' || s.path !== '/relay4') return;
        for (let i = 0; i < 250; i++) s.send({ type: 'text', token, last: false });
      };
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/relay4-start') } }], { talk: false });
      await app.next('/relay4-start');
      // the reply full, what it kept is spoken at once (no sentence end, no `last` will come)
      await until(() => call.peer.voiced() > 10, 20_000, 'the kept text spoken');
      relay.sessions.find((x) => x.path === '/relay4')!.send({ type: 'end', handoffData: 'flooded' });
      const cb = await app.next('/relay4-done', 30_000);
      expect(cb.params.SessionStatus).to.equal('ended');
      const db = stack.api.ctx.db;
      const repo = relayLinesRepo(db);
      // the reply is written as the session ends (the sink's own order), then its loss
      const loss = await until(() => repo.lossOf(f.customer.id, call.callId), 10_000, 'the lost characters counted');
      const lines = await repo.ofCall(f.customer.id, call.callId);
      // the first RELAY_LINE_MAX_CHARS characters (the first token, its trailing space trimmed)
      expect(token.length).to.equal(RELAY_LINE_MAX_CHARS);
      expect(lines.map((l) => l.text)).to.deep.equal([token.trim()]);
      expect(loss).to.deep.equal({ replies: 0, chars: sent - RELAY_LINE_MAX_CHARS });
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
    });

    it('an app flooding 1000 whole replies: the say queue is kept to RELAY_SAY_QUEUE_MAX_CHARS, the replies dropped counted lost', async () => {
      const doc = new VoiceResponse();
      doc.connect({ action: '/relay-flood-done' }).conversationRelay({ url: relay.url('/relay-flood') });
      app.on('/relay-flood-start', doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on('/relay-flood-done', done.toString());
      // 1000 whole replies of 100 characters, sent at once: far faster than they can be spoken
      const replyOf = (i: number) => `Reply ${String(i).padStart(4, '0')} ${'la '.repeat(28)}ends.`;
      relay.onMessage = (s, m) => {
        if (m.type !== 'setup' || s.path !== '/relay-flood') return;
        for (let i = 0; i < 1000; i++) s.send({ type: 'text', token: replyOf(i), last: true });
      };
      expect(replyOf(999).length).to.equal(100);
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/relay-flood-start') } }], { talk: false });
      await app.next('/relay-flood-start');
      const session = await until(() => relay.sessions.find((x) => x.path === '/relay-flood'), 10_000, 'the session');
      // the app is told its replies were dropped
      await until(() => session.messages.some((m) => m.type === 'error' && /queue is full/.test(String(m.description))), 20_000, 'a queue-full error');
      await until(() => call.peer.voiced() > 10, 20_000, 'the first reply spoken');
      session.send({ type: 'end', handoffData: 'flooded' });
      const cb = await app.next('/relay-flood-done', 30_000);
      expect(cb.params.SessionStatus).to.equal('ended');
      const repo = relayLinesRepo(stack.api.ctx.db);
      // every reply is either a line (queued to be spoken) or counted lost
      const tally = async () => {
        const loss = await repo.lossOf(f.customer.id, call.callId);
        const lines = await repo.ofCall(f.customer.id, call.callId);
        return loss && lines.length + loss.replies === 1000 ? { loss, lines } : null;
      };
      const { loss, lines } = await until(tally, 15_000, 'all 1000 replies written or counted lost');
      // the queue held RELAY_SAY_QUEUE_MAX_CHARS of text, plus the one playing
      expect(lines.length).to.be.within(2, RELAY_SAY_QUEUE_MAX_CHARS / 100 + 1);
      expect(lines.map((l) => l.text)).to.deep.equal(lines.map((_, i) => replyOf(i)));
      expect(loss).to.deep.equal({ replies: 1000 - lines.length, chars: (1000 - lines.length) * 100 });
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
    });

    it('an app URL nothing listens on: the action gets SessionStatus=failed with ErrorCode 11200', async () => {
      const dead = `ws://127.0.0.1:${await freePort()}/relay`;
      const doc = new VoiceResponse();
      doc.connect({ action: '/relay3-done' }).conversationRelay({ url: dead });
      app.on('/relay3-start', doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on('/relay3-done', done.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/relay3-start') } }], { talk: false, live: false });
      await app.next('/relay3-start');
      const cb = await app.next('/relay3-done', 20_000);
      expect(cb.signed).to.equal(true);
      expect(cb.params.SessionStatus).to.equal('failed');
      expect(cb.params.ErrorCode).to.equal('11200');
      expect(cb.params.ErrorMessage).to.match(/could not be connected/);
      expect(cb.params.SessionId).to.match(/^VX[0-9a-f]{32}$/);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
    });

    it('ttsProvider="ElevenLabs": the greeting is synthesised by the configured vendor (its stand-in) and heard', async () => {
      const greeting = 'Hello, this is the cloud voice speaking.';
      const doc = new VoiceResponse();
      doc.connect({ action: '/relay4-done' }).conversationRelay({ url: relay.url('/relay4'), welcomeGreeting: greeting, ttsProvider: 'ElevenLabs', voice: 'relay-voice-1' });
      app.on('/relay4-start', doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on('/relay4-done', done.toString());
      relay.onMessage = (s, m) => {
        if (m.type === 'setup' && s.path === '/relay4') setTimeout(() => s.send({ type: 'end', handoffData: 'cloud' }), 4000);
      };
      const before = elevenlabs.requests.length;
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/relay4-start') } }], { talk: false });
      await app.next('/relay4-start');
      const cb = await app.next('/relay4-done', 30_000);
      expect(cb.params.SessionStatus).to.equal('ended');
      expect(cb.params.HandoffData).to.equal('cloud');
      const asked = elevenlabs.requests.slice(before);
      expect(asked.map((r) => r.url.split('?')[0])).to.deep.equal(['/v1/text-to-speech/relay-voice-1/stream']);
      expect((asked[0]!.body as { text: string }).text).to.equal(greeting);
      expect(call.peer.voiced(), 'the vendor audio heard').to.be.greaterThan(40);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
    });

    it('transcriptionProvider="Deepgram": the caller\'s words come from the Deepgram stand-in as the prompt', async () => {
      const doc = new VoiceResponse();
      doc.connect({ action: '/relay5-done' }).conversationRelay({ url: relay.url('/relay5'), transcriptionProvider: 'Deepgram', language: 'de-DE' });
      app.on('/relay5-start', doc.toString());
      const done = new VoiceResponse();
      done.hangup();
      app.on('/relay5-done', done.toString());
      relay.onMessage = (s, m) => {
        if (m.type === 'prompt' && s.path === '/relay5') s.send({ type: 'end', handoffData: String(m.voicePrompt) });
      };
      const steps = () => `<pause milliseconds="1500"/>\n<nop><action><exec play_pcap_audio="${hours.file}"/></action></nop>`;
      const sessions = dg.sessions.length;
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/relay5-start') } }], { talk: false, steps, killAfterMs: 90_000 });
      await app.next('/relay5-start');
      const prompt = await relay.message('/relay5', 'prompt', 30_000);
      expect(prompt.voicePrompt).to.match(/^utterance 1\b/);
      expect(prompt.lang).to.equal('de-DE');
      expect(dg.sessions.length).to.be.greaterThan(sessions);
      expect(dg.sessions[sessions]!.query.get('language')).to.equal('de-DE');
      const cb = await app.next('/relay5-done', 30_000);
      expect(cb.params.SessionStatus).to.equal('ended');
      expect(cb.params.HandoffData).to.equal(prompt.voicePrompt);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();
    });
  });
