// recordingStatusCallback (<Record>, <Dial record>) and <Record transcribe transcribeCallback>:
// compiled to twiml_recording (refusals checked pure), and on real calls: sipp calls in and speaks
// (espeak-ng pcap) while <Record> records; the TwiML app on loopback receives the in-progress and
// completed recording callbacks and the transcription, each signed (twilio.validateRequest).
import net from 'node:net';
import { expect } from 'chai';
import twilio, { RestException } from 'twilio';
import { twilioClient } from '../../testkit/twilio';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { compileTwiml } from '../../core/twiml/compile';
import { accountSid, callSid } from '../../core/twilio/sids';
import { testDb } from '../../testkit/db';
import { answeringUas, sipp, sleep, until } from '../../testkit/media-app/harness';
import { sipPortPair, udpBound } from '../../testkit/ports';
import { useSpeechPcap } from '../../testkit/ai/audio';
import { parseWav } from '../../media-engine';
import { pocketsphinxText, speechInRecording } from '../../testkit/speech/recorded';
import { placeCall, type Stack } from '../../testkit/streams/support';
import type { TwimlServer } from '../../testkit/twiml/server';
import { useTwimlStack } from '../../testkit/twiml/stack';
import { DOC, refusal } from '../../testkit/twiml/compile-checks';
import type { Fixture } from '../../testkit/api';

const { VoiceResponse } = twilio.twiml;

const compile = (doc: string) => compileTwiml(doc, { documentUrl: DOC, method: 'POST' });

/** A loopback port nothing listens on (bound, then closed). */
async function deadPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('TwiML recording callbacks: compiling', () => {
  it('Record: twiml_recording after recording_start with the callback, method, events and transcription', () => {
    const r = new VoiceResponse();
    r.record({
      recordingStatusCallback: '/rs',
      recordingStatusCallbackMethod: 'GET',
      recordingStatusCallbackEvent: ['in-progress', 'completed', 'absent'],
      transcribeCallback: '/tr',
      action: '/after',
    });
    const actions = compile(r.toString());
    expect(actions.map((a) => a.type)).to.deep.equal(['recording_start', 'twiml_recording', 'variable_set', 'twiml']);
    expect(actions[1]!.option).to.deep.equal({
      recording_variable: 'svc.recording.id',
      source: 'RecordVerb',
      status_callback: 'https://app.example.com/rs',
      status_callback_method: 'GET',
      status_callback_events: ['in-progress', 'completed', 'absent'],
      transcribe: true,
      transcribe_callback: 'https://app.example.com/tr',
    });
    // transcribe alone: stored, no callback; nothing asked: no twiml_recording
    expect(compile('<Response><Record transcribe="true"/></Response>')[1]!.option).to.deep.equal({ recording_variable: 'svc.recording.id', source: 'RecordVerb', transcribe: true });
    expect(compile('<Response><Record transcribe="false"/></Response>').map((a) => a.type)).to.not.include('twiml_recording');
  });

  it('Dial record: twiml_recording after the connect (completed by default); none without a recording', () => {
    const r = new VoiceResponse();
    r.dial({ record: 'record-from-answer', recordingStatusCallback: 'https://cb.example.com/dial' }, '+15550004444');
    const actions = compile(r.toString());
    expect(actions.map((a) => a.type)).to.deep.equal(['answer', 'connect', 'twiml_recording']);
    expect(actions[2]!.option).to.deep.equal({
      recording_variable: 'svc.connect.recording_id',
      source: 'DialVerb',
      status_callback: 'https://cb.example.com/dial',
      status_callback_method: 'POST',
      status_callback_events: ['completed'],
    });
    expect(compile('<Response><Dial recordingStatusCallback="/x">+15550004444</Dial></Response>').map((a) => a.type)).to.deep.equal(['answer', 'connect']);
  });

  it('bad values are 12200 naming the attribute; nothing compiles', () => {
    const cases: [string, RegExp][] = [
      ['<Record recordingStatusCallback="/rs" recordingStatusCallbackEvent="started"/>', /recordingStatusCallbackEvent must be/],
      ['<Record recordingStatusCallback="/rs" recordingStatusCallbackEvent=""/>', /recordingStatusCallbackEvent must be/],
      ['<Record recordingStatusCallback="/rs" recordingStatusCallbackMethod="PUT"/>', /recordingStatusCallbackMethod must be one of GET, POST/],
      ['<Record recordingStatusCallbackEvent="completed"/>', /need recordingStatusCallback/],
      ['<Record recordingStatusCallback="ftp://x/y"/>', /recordingStatusCallback must be an http or https URL/],
      ['<Record transcribe="yes"/>', /transcribe must be true or false/],
      ['<Record transcribeCallback="mailto:a@b"/>', /transcribeCallback must be an http or https URL/],
      ['<Dial record="true" recordingStatusCallback="/d" recordingStatusCallbackEvent="in-progress completed">+15550004444</Dial>', /in-progress is not supported/],
      ['<Dial transcribe="true">+15550004444</Dial>', /has no attribute "transcribe"/],
    ];
    for (const [doc, words] of cases) {
      const e = refusal(`<Response>${doc}<Say>after</Say></Response>`);
      expect(e.code, doc).to.equal(12200);
      expect(e.message, doc).to.match(words);
    }
  });
});

// On both media backends: the embedded engine and fsmrf (drachtio-fsmrf against our switch, esl/).
for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML recording callbacks on real calls (${backend} media backend)`, function () {
    this.timeout(120_000);
    let stack: Stack;
    let app: TwimlServer;
    let f: Fixture;

    useTwimlStack((s) => ({ stack, app, f } = s), undefined, { mediaServer: backend });
    const hours = useSpeechPcap('twiml-rec-', 'What are your opening hours?', { trailMs: 500 });
    const http = () => stack.base.replace(/^ws:/, 'http:');
    const token = () => twilioAuthToken(stack.api.ctx.config.jwtSecret, f.customer.id, 0);
    /** The recording's samples as a tutorial downloads them: its Recording resource + `.wav`, with the account's credentials. */
    const recordingSamples = async (url: string): Promise<Int16Array> => {
      const res = await fetch(`${http()}${new URL(url).pathname}.wav`, { headers: { authorization: `Basic ${Buffer.from(`${accountSid(f.customer.id)}:${token()}`).toString('base64')}` } });
      expect(res.status, 'the recording downloads').to.equal(200);
      const wav = parseWav(Buffer.from(await res.arrayBuffer()));
      expect(wav.info.format).to.include({ sampleRate: 8000, channels: 1 });
      return wav.samples;
    };

    it('Record: in-progress then completed recording callbacks and the transcription, all signed; the action runs meanwhile', async () => {
      const doc = new VoiceResponse();
      doc.record({
        action: '/rec-after',
        maxLength: 5,
        timeout: 30,
        finishOnKey: '',
        playBeep: false,
        recordingStatusCallback: '/rec-status',
        recordingStatusCallbackEvent: ['in-progress', 'completed'],
        transcribeCallback: '/rec-text',
      });
      app.on('/rec', doc.toString());
      const after = new VoiceResponse();
      after.hangup();
      app.on('/rec-after', after.toString());
      app.on('/rec-status', '<Response/>');
      app.on('/rec-text', '<Response/>');
      const steps = () => `<pause milliseconds="500"/>\n<nop><action><exec play_pcap_audio="${hours.file}"/></action></nop>`;
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/rec') } }], { talk: false, steps });
      await app.next('/rec');
      const started = await app.next('/rec-status');
      expect(started.signed, 'in-progress signed').to.equal(true);
      expect(started.params).to.include({
        RecordingStatus: 'in-progress',
        RecordingSource: 'RecordVerb',
        RecordingChannels: '1',
        CallSid: callSid(call.callId),
        AccountSid: accountSid(f.customer.id),
      });
      expect(started.params.RecordingSid).to.match(/^RE[0-9a-f]{32}$/);
      expect(started.params.RecordingStartTime).to.match(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
      const done = await app.next('/rec-status', 30_000);
      expect(done.signed, 'completed signed').to.equal(true);
      expect(done.params).to.include({ RecordingStatus: 'completed', RecordingSid: started.params.RecordingSid });
      expect(Number(done.params.RecordingDuration)).to.be.within(4, 6);
      expect(done.params.RecordingUrl).to.match(/\/2010-04-01\/Accounts\/AC[0-9a-f]{32}\/Recordings\/RE[0-9a-f]{32}$/);
      const text = await app.next('/rec-text', 60_000);
      expect(text.signed, 'transcription signed').to.equal(true);
      expect(text.params).to.include({ TranscriptionStatus: 'completed', RecordingSid: started.params.RecordingSid, CallSid: callSid(call.callId), AccountSid: accountSid(f.customer.id) });
      expect(text.params.TranscriptionSid).to.match(/^TR[0-9a-f]{32}$/);
      // the text is the recording's: pocketsphinx says the same of the recording's samples, and they hold
      // the caller's speech sample for sample. (Its free-form words on espeak-ng's voice are mostly wrong,
      // docs/speech.md, and vary with where the speech starts: "opening hours" came out as "opening a
      // little", "open the island" and "own you know you".)
      const recorded = await recordingSamples(done.params.RecordingUrl);
      const found = speechInRecording(recorded, hours.speech);
      expect(found.offset, "the caller's speech in the recording").to.be.within(0, recorded.length);
      expect(found.equal, 'samples of the speech recorded as sent').to.equal(found.total);
      const heard = await pocketsphinxText(recorded);
      expect(heard, 'pocketsphinx on the recording').to.not.equal('');
      expect(text.params.TranscriptionText).to.equal(heard);
      expect(text.params.TranscriptionUrl).to.match(/\/v1\.0\/transcribes\/[0-9a-f-]{36}$/);
      // the Transcribe is a row of the recording, with the same text
      const db = await testDb();
      const tid = `${text.params.TranscriptionSid.slice(2, 10)}-${text.params.TranscriptionSid.slice(10, 14)}-${text.params.TranscriptionSid.slice(14, 18)}-${text.params.TranscriptionSid.slice(18, 22)}-${text.params.TranscriptionSid.slice(22)}`;
      const row = await db('transcribes').where({ id: tid }).first();
      expect(row).to.include({ reference_type: 'recording', customer_id: f.customer.id });
      // and Twilio's Transcriptions resource shows it to the official client: list, fetch, the recording's list, delete
      const client = twilioClient(http(), accountSid(f.customer.id), token());
      const listed = await client.transcriptions.list();
      expect(listed.map((x) => x.sid)).to.include(text.params.TranscriptionSid);
      const one = await client.transcriptions(text.params.TranscriptionSid).fetch();
      expect(one).to.include({ sid: text.params.TranscriptionSid, status: 'completed', transcriptionText: text.params.TranscriptionText, accountSid: accountSid(f.customer.id) });
      expect(one.recordingSid).to.equal(started.params.RecordingSid);
      const ofRecording = await client.recordings(started.params.RecordingSid).transcriptions.list();
      expect(ofRecording.map((x) => x.sid)).to.deep.equal([text.params.TranscriptionSid]);
      expect(await client.transcriptions(text.params.TranscriptionSid).remove()).to.equal(true);
      for (const sid of [text.params.TranscriptionSid, 'TRnot-a-sid', started.params.RecordingSid]) {
        const e = await client
          .transcriptions(sid)
          .fetch()
          .then(
            () => null,
            (err: RestException) => err,
          );
        expect(e?.status, sid).to.equal(404);
        expect(e?.code, sid).to.equal(20404);
      }
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      expect(app.requests.filter((x) => x.path === '/rec-after')).to.have.length(1);
      call.peer.close();
    });

    it('an unreachable recordingStatusCallback does not hold up the call; Dial record sends completed with DialVerb', async () => {
      const dead = `http://127.0.0.1:${await deadPort()}/gone`;
      const doc = new VoiceResponse();
      doc.record({ action: '/dead-after', maxLength: 2, finishOnKey: '', playBeep: false, recordingStatusCallback: dead });
      app.on('/dead', doc.toString());
      const bye = new VoiceResponse();
      bye.say('Goodbye');
      bye.hangup();
      app.on('/dead-after', bye.toString());
      const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/dead') } }]);
      await app.next('/dead');
      const after = await app.next('/dead-after', 20_000);
      expect(after.signed).to.equal(true);
      const r = await call.sipp;
      expect(r.code, r.errors + r.messages).to.equal(0);
      call.peer.close();

      const calleePort = await sipPortPair();
      const callee = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(calleePort), '-m', '1'], { killAfterMs: 40_000 });
      await udpBound(calleePort); // the callee has bound its port: the INVITE waits in its socket
      const dial = new VoiceResponse();
      dial.dial({ record: 'record-from-answer', recordingStatusCallback: '/dial-rec', timeout: 20 }).sip(`sip:callee@127.0.0.1:${calleePort}`);
      app.on('/dial', dial.toString());
      app.on('/dial-rec', '<Response/>');
      const call2 = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/dial') } }]);
      await app.next('/dial');
      const db = await testDb();
      const leg = await until(async () => (await db('calls').where({ customer_id: f.customer.id, direction: 'outgoing', status: 'progressing' }).first()) ?? null, 20_000, 'callee answered');
      await sleep(2000);
      await stack.platform.app.calls.get(leg.id)!.hangup('normal');
      const cb = await app.next('/dial-rec', 30_000);
      expect(cb.signed).to.equal(true);
      expect(cb.params).to.include({ RecordingStatus: 'completed', RecordingSource: 'DialVerb', CallSid: callSid(call2.callId) });
      expect(Number(cb.params.RecordingDuration)).to.be.at.least(1);
      const r2 = await call2.sipp;
      expect(r2.code, r2.errors + r2.messages).to.equal(0);
      const rc = await callee.done;
      expect(rc.code, rc.errors + rc.messages).to.equal(0);
      call2.peer.close();
    });
  });
