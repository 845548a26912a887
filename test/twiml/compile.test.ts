import { expect } from 'chai';
import twilio from 'twilio';
import type { Action } from '../../core/flow';
import { compileTwiml, TWIML_VARS, TwimlError } from '../../core/twiml/compile';

const { VoiceResponse } = twilio.twiml;
const DOC = 'https://app.example.com/voice/start';

function compile(r: InstanceType<typeof VoiceResponse> | string, documentUrl: string | undefined = DOC): Action[] {
  return compileTwiml(typeof r === 'string' ? r : r.toString(), { documentUrl, method: 'POST' });
}
const shape = (as: Action[]) => as.map((a) => ({ type: a.type, option: a.option }));

function refused(doc: InstanceType<typeof VoiceResponse> | string, code: number, words: RegExp): void {
  let err: unknown;
  try {
    compile(doc);
  } catch (e) {
    err = e;
  }
  expect(err, 'refused').to.be.instanceOf(TwimlError);
  expect((err as TwimlError).code).to.equal(code);
  expect((err as TwimlError).message).to.match(words);
}

describe('TwiML compiler (core/twiml)', () => {
  it('Say: text, voice → provider, language, loop via goto, SSML subset escaped', () => {
    const r = new VoiceResponse();
    r.say({ voice: 'woman', language: 'en-GB', loop: 3 }, 'Hello <there> & welcome');
    const s = r.say({ voice: 'man' }, 'Wait');
    s.break({ time: '1s' });
    s.prosody({ rate: 'slow' }, 'then go');
    r.say({ voice: 'Polly.Joanna' }, 'plain');
    const a = compile(r);
    expect(shape(a)).to.deep.equal([
      { type: 'talk', option: { text: 'Hello <there> & welcome', language: 'en-GB', provider: 'provider_b' } },
      { type: 'goto', option: { target_id: a[0]!.id, loop_count: 2 } },
      { type: 'talk', option: { text: '<speak>Wait<break time="1s"/><prosody rate="slow">then go</prosody></speak>', language: 'en-US', provider: 'provider_c' } },
      { type: 'talk', option: { text: 'plain', language: 'en-US' } },
    ]);
  });

  it('Say refusals: unknown voice, unknown SSML tag, unknown attribute, empty text', () => {
    refused('<Response><Say voice="robot">x</Say></Response>', 12200, /voice "robot"/);
    refused('<Response><Say>a<audio src="x"/></Say></Response>', 12200, /SSML <audio>/);
    refused('<Response><Say colour="red">x</Say></Response>', 12200, /no attribute "colour"/);
    refused('<Response><Say> </Say></Response>', 12200, /needs text/);
    refused('<Response><Say loop="-1">x</Say></Response>', 12200, /loop must be an integer/);
  });

  it('Play: URL (relative resolved against the document), loop 0 = repeat, digits with w', () => {
    const r = new VoiceResponse();
    r.play({ loop: 0 }, '/audio/hello.wav');
    r.play({ digits: '12w#' });
    const a = compile(r);
    expect(shape(a)).to.deep.equal([
      { type: 'play', option: { stream_urls: ['https://app.example.com/audio/hello.wav'] } },
      { type: 'goto', option: { target_id: a[0]!.id, loop_count: 999 } },
      { type: 'digits_send', option: { digits: '12' } },
      { type: 'sleep', option: { duration: 500 } },
      { type: 'digits_send', option: { digits: '#' } },
    ]);
    refused('<Response><Play>file:///etc/passwd</Play></Response>', 12200, /http or https/);
    refused('<Response><Play digits="12x"/></Response>', 12200, /DTMF/);
  });

  it('Pause: length in seconds, default 1', () => {
    const r = new VoiceResponse();
    r.pause({ length: 3 });
    r.pause();
    expect(shape(compile(r))).to.deep.equal([
      { type: 'sleep', option: { duration: 3000 } },
      { type: 'sleep', option: { duration: 1000 } },
    ]);
  });

  it('Gather: nested prompts, digits_receive, action with Digits only when digits came, else the next verb', () => {
    const r = new VoiceResponse();
    const g = r.gather({ action: '/menu', method: 'GET', numDigits: 2, timeout: 7, finishOnKey: '*', hints: 'x', speechTimeout: 'auto' });
    g.say('Press two digits');
    g.play('https://cdn.example.com/b.wav');
    g.pause({ length: 1 });
    r.say('No input');
    const a = compile(r);
    expect(shape(a).slice(0, 6)).to.deep.equal([
      { type: 'variable_set', option: { key: TWIML_VARS.finishOnKey, value: '*' } },
      { type: 'talk', option: { text: 'Press two digits', language: 'en-US', digits_handle: 'next' } },
      { type: 'play', option: { stream_urls: ['https://cdn.example.com/b.wav'] } },
      { type: 'sleep', option: { duration: 1000 } },
      { type: 'digits_receive', option: { duration: 7000, length: 2, key: '*' } },
      { type: 'condition_variable', option: { condition: '>', variable: 'svc.call.digits', value_type: 'length', value_length: 0, false_target_id: a[8]!.id } },
    ]);
    expect(shape(a).slice(6)).to.deep.equal([
      { type: 'variable_set', option: { key: 'twiml.param.Digits', value: '${svc.call.digits}' } },
      { type: 'twiml', option: { url: 'https://app.example.com/menu', method: 'GET' } },
      { type: 'variable_set', option: { key: 'twiml.verb', value: 'Gather' } },
      { type: 'talk', option: { text: 'No input', language: 'en-US' } },
    ]);
  });

  it('Gather: no action posts to the document; actionOnEmptyResult fetches even with none; inline TwiML with no action goes on', () => {
    const r = new VoiceResponse();
    r.gather({ actionOnEmptyResult: true });
    const a = compile(r);
    expect(a.map((x) => x.type)).to.deep.equal(['variable_set', 'digits_receive', 'variable_set', 'twiml', 'variable_set']);
    expect(a[3]!.option).to.deep.equal({ url: DOC, method: 'POST' });
    expect(compileTwiml('<Response><Gather/></Response>').map((x) => x.type)).to.deep.equal(['variable_set', 'digits_receive']);
  });

  it('Gather refusals: bad input, nested Dial, bad finishOnKey, text (speech: gather-speech.test.ts)', () => {
    refused('<Response><Gather input="dtmf video"/></Response>', 12200, /input must be/);
    refused('<Response><Gather><Dial>+1555</Dial></Gather></Response>', 12200, /cannot contain <Dial>/);
    refused('<Response><Gather finishOnKey="ab"/></Response>', 12200, /finishOnKey/);
    refused('<Response><Gather>press</Gather></Response>', 12200, /not text/);
  });

  it('Record: recording_start with beep, silence, key, max length; then the action once it ends', () => {
    const r = new VoiceResponse();
    r.record({ action: 'https://app.example.com/vm', maxLength: 20, timeout: 3, finishOnKey: '#', playBeep: true, trim: 'trim-silence' });
    r.record({ playBeep: false });
    const a = compile(r);
    expect(shape(a)).to.deep.equal([
      { type: 'recording_start', option: { format: 'wav', end_of_silence: 3, end_of_key: '#', duration: 20, beep_start: true } },
      { type: 'variable_set', option: { key: TWIML_VARS.waitRecording, value: '${svc.recording.id}' } },
      { type: 'twiml', option: { url: 'https://app.example.com/vm', method: 'POST' } },
      { type: 'recording_start', option: { format: 'wav', end_of_silence: 5, end_of_key: 'any', duration: 3600, beep_start: false } },
      { type: 'variable_set', option: { key: TWIML_VARS.waitRecording, value: '${svc.recording.id}' } },
      { type: 'twiml', option: { url: DOC, method: 'POST' } },
    ]);
    // transcribe and recordingStatusCallback: recording-callbacks.test.ts
    refused('<Response><Record maxLength="0"/></Response>', 12200, /maxLength/);
  });

  it('Dial: numbers, sip, client together ring at once; callerId; timeout, timeLimit; answer unless answerOnBridge; action', () => {
    const r = new VoiceResponse();
    const d = r.dial({ callerId: '+15550001111', action: '/after', timeout: 20, timeLimit: 90, answerOnBridge: true });
    d.number('+15550002222');
    d.sip('sip:alice@example.com');
    d.client('desk-1');
    r.dial('+15550003333');
    expect(shape(compile(r))).to.deep.equal([
      {
        type: 'connect',
        option: {
          destinations: [
            { type: 'tel', target: '+15550002222' },
            { type: 'sip', target: 'sip:alice@example.com' },
            { type: 'extension', target: 'desk-1' },
          ],
          source: { type: 'tel', target: '+15550001111' },
          ring_timeout: 20_000,
          duration_limit: 90_000,
        },
      },
      { type: 'variable_set', option: { key: 'twiml.param.DialCallStatus', value: '${svc.connect.status}' } },
      { type: 'variable_set', option: { key: 'twiml.param.DialCallDuration', value: '${svc.connect.duration}' } },
      { type: 'variable_set', option: { key: 'twiml.param.DialCallSid', value: '${svc.connect.call_sid}' } },
      { type: 'variable_set', option: { key: 'twiml.param.DialSipCallId', value: '${svc.connect.sip_call_id}' } },
      { type: 'variable_set', option: { key: 'twiml.param.DialSipResponseCode', value: '${svc.connect.sip_status}' } },
      { type: 'twiml', option: { url: 'https://app.example.com/after', method: 'POST' } },
      // Twilio's defaults: 30 s of ringing, 4 h of talk; the caller answered before the dial
      { type: 'answer', option: {} },
      { type: 'connect', option: { destinations: [{ type: 'tel', target: '+15550003333' }], ring_timeout: 30_000, duration_limit: 14_400_000 } },
    ]);
    // Twilio's timeout is any positive integer (issue 54): 2 s rings 2 s; anything else is its warning
    // 13212 and the Dial goes on (default 30 s; above 600: 600 s), never a 12200
    const ring = (attr: string) => {
      const warnings: [number, string][] = [];
      const as = compileTwiml(`<Response><Dial timeout="${attr}">+1555</Dial></Response>`, { documentUrl: DOC, warn: (code, message) => warnings.push([code, message]) });
      return { ms: as.find((a) => a.type === 'connect')!.option.ring_timeout, warnings: warnings.map(([code]) => code) };
    };
    expect(ring('2')).to.deep.equal({ ms: 2000, warnings: [] });
    expect(ring('1')).to.deep.equal({ ms: 1000, warnings: [] });
    expect(ring('600')).to.deep.equal({ ms: 600_000, warnings: [] });
    expect(ring('0')).to.deep.equal({ ms: 30_000, warnings: [13212] });
    expect(ring('-3')).to.deep.equal({ ms: 30_000, warnings: [13212] });
    expect(ring('2.5')).to.deep.equal({ ms: 30_000, warnings: [13212] });
    expect(ring('601')).to.deep.equal({ ms: 600_000, warnings: [13212] });
    // timeLimit likewise: any positive integer of seconds (here at most 24 h); anything else is Twilio's warning
    // 13216 and the Dial goes on with the default 4 h (above 24 h: 24 h), never a 12200
    const limit = (attr: string) => {
      const warnings: number[] = [];
      const as = compileTwiml(`<Response><Dial timeLimit="${attr}">+1555</Dial></Response>`, { documentUrl: DOC, warn: (code) => warnings.push(code) });
      return { ms: as.find((a) => a.type === 'connect')!.option.duration_limit, warnings };
    };
    expect(limit('1')).to.deep.equal({ ms: 1000, warnings: [] });
    expect(limit('86400')).to.deep.equal({ ms: 86_400_000, warnings: [] });
    expect(limit('0')).to.deep.equal({ ms: 14_400_000, warnings: [13216] });
    expect(limit('-5')).to.deep.equal({ ms: 14_400_000, warnings: [13216] });
    expect(limit('1.5')).to.deep.equal({ ms: 14_400_000, warnings: [13216] });
    expect(limit('86401')).to.deep.equal({ ms: 86_400_000, warnings: [13216] });
  });

  it('Dial Conference / Queue by id or SID; Enqueue; refusals of unsupported attributes', () => {
    const conf = '8c6a1f40-1111-4a2b-9c3d-0123456789ab';
    const r = new VoiceResponse();
    r.dial().conference({ beep: 'true', startConferenceOnEnter: true }, conf);
    r.dial().queue('QU' + conf.replace(/-/g, ''));
    r.enqueue(conf);
    expect(shape(compile(r))).to.deep.equal([
      { type: 'conference_join', option: { conference_id: conf, beep: 'true' } },
      { type: 'queue_dequeue', option: { queue_id: conf, timeout: 30_000 } },
      { type: 'queue_join', option: { queue_id: conf } },
    ]);
    // startConferenceOnEnter="false" waits for the room to start (conference/wait.test.ts), with an id as with a name
    expect(shape(compile(`<Response><Dial><Conference startConferenceOnEnter="false">${conf}</Conference></Dial></Response>`))).to.deep.equal([
      { type: 'conference_join', option: { conference_id: conf, start_on_enter: false, wait_method: 'POST' } },
    ]);
    expect(shape(compile('<Response><Dial hangupOnStar="true">+1555</Dial></Response>'))[1]!.option).to.include({ hangup_on_star: true });
    refused('<Response><Dial record="record-from-ringing">+1555</Dial></Response>', 12200, /record/);
    const rec = new VoiceResponse();
    rec.dial({ record: 'record-from-answer-dual', action: '/after' }, '+15550004444');
    expect(shape(compile(rec)).slice(1)).to.deep.equal([
      { type: 'connect', option: { destinations: [{ type: 'tel', target: '+15550004444' }], ring_timeout: 30_000, duration_limit: 14_400_000, record: true } },
      { type: 'variable_set', option: { key: 'twiml.param.DialCallStatus', value: '${svc.connect.status}' } },
      { type: 'variable_set', option: { key: 'twiml.param.DialCallDuration', value: '${svc.connect.duration}' } },
      { type: 'variable_set', option: { key: 'twiml.param.DialCallSid', value: '${svc.connect.call_sid}' } },
      { type: 'variable_set', option: { key: TWIML_VARS.waitRecording, value: '${svc.connect.recording_id}' } },
      { type: 'twiml', option: { url: 'https://app.example.com/after', method: 'POST' } },
    ]);
    refused('<Response><Dial><Number>not-a-number</Number></Dial></Response>', 12200, /phone number/);
    refused('<Response><Dial><Sip>http://x</Sip></Dial></Response>', 12200, /sip: URI/);
    refused('<Response><Dial/></Response>', 12200, /needs a number/);
  });

  it('Hangup, Reject (busy → busy, rejected → failed), Redirect', () => {
    const r = new VoiceResponse();
    r.redirect({ method: 'GET' }, 'next');
    r.reject({ reason: 'busy' });
    r.reject();
    r.hangup();
    expect(shape(compile(r))).to.deep.equal([
      { type: 'twiml', option: { url: 'https://app.example.com/voice/next', method: 'GET' } },
      { type: 'hangup', option: { reason: 'busy' } },
      { type: 'hangup', option: { reason: 'failed' } },
      { type: 'hangup', option: {} },
    ]);
    refused('<Response><Reject reason="angry"/></Response>', 12200, /reason must be/);
    refused('<Response><Redirect/></Response>', 12200, /needs a URL/);
  });

  it('Connect/Start/Stop Stream → external_media_start/stop with encapsulation twilio', () => {
    const r = new VoiceResponse();
    const st = r.start().stream({ url: 'wss://ai.example.com/fork', name: 'fork', track: 'both_tracks', statusCallback: '/stream-status', statusCallbackMethod: 'GET' });
    st.parameter({ name: 'agent', value: 'sales' });
    r.stop().stream({ name: 'fork' });
    r.connect().stream({ url: 'wss://ai.example.com/media' });
    expect(shape(compile(r))).to.deep.equal([
      {
        type: 'external_media_start',
        option: {
          encapsulation: 'twilio',
          url: 'wss://ai.example.com/fork',
          name: 'fork',
          twilio_track: 'both_tracks',
          status_callback: 'https://app.example.com/stream-status',
          status_callback_method: 'GET',
          twilio_parameters: { agent: 'sales' },
        },
      },
      { type: 'external_media_stop', option: {} },
      { type: 'external_media_start', option: { encapsulation: 'twilio', url: 'wss://ai.example.com/media', wait: true } },
    ]);
    refused('<Response><Connect><VirtualAgent connectorName="x"/></Connect></Response>', 12200, /exactly one <Stream>/);
    refused('<Response><Start><Stream url="https://x"/></Start></Response>', 12200, /ws:\/\/ or wss:\/\//);
  });

  it('unknown or unsupported verbs, text outside verbs: 12200', () => {
    refused('<Response><Dance/></Response>', 12200, /<Dance> is not a TwiML verb/);
    refused('<Response><Pay/></Response>', 12200, /<Pay> is not supported/);
    refused('<Response><Leave/></Response>', 12200, /<Leave> is not supported/);
    refused('<Response>hello</Response>', 12200, /text outside a verb/);
    refused('<Response foo="1"/>', 12200, /no attribute "foo"/);
  });

  it('XML that does not parse, a wrong root, DOCTYPE and entities: 12100, nothing expanded', () => {
    refused('<Response><Say>x</Response>', 12100, /does not parse/);
    refused('not xml at all', 12100, /./);
    refused('<Speak>x</Speak>', 12100, /root element/);
    refused('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa">]><Response><Say>&a;</Say></Response>', 12100, /DOCTYPE/);
    refused('<!DOCTYPE r SYSTEM "file:///etc/passwd"><Response/>', 12100, /DOCTYPE/);
    refused(`<Response><Say>${'x'.repeat(70_000)}</Say></Response>`, 12100, /larger than/);
    expect(compile('<Response><Say>a &lt;b&gt; &amp; &#65;</Say></Response>')[0]!.option.text).to.equal('a <b> & A');
  });

  it('an empty Response compiles to no actions', () => {
    expect(compile(new VoiceResponse())).to.deep.equal([]);
  });
});
