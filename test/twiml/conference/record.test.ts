// Issue 36: <Conference record="record-from-start" trim recordingStatusCallback*>. The compiler's
// mapping and refusals; sipp callers (real SIP on loopback, a media-app node, real Postgres and Redis)
// in a room made by twilio.twiml.VoiceResponse documents: the room is recorded from its start (the
// callers' RTP peers talk a 700 Hz tone, heard in the WAV), the recording status callbacks reach the
// test's web app signed (twilio.validateRequest), and the official `twilio` REST client lists,
// fetches and updates the recording under Recordings.json and Conferences/{CF}/Recordings.
import { restRefusal } from '../../../testkit/twilio';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml } from '../../../core/twiml/compile';
import { accountSid, toSid } from '../../../core/twilio/sids';
import { testDb } from '../../../testkit/db';
import { recordedSeconds } from '../../../testkit/recordings';
import { sleep, until } from '../../../testkit/media-app/harness';
import { newestRoom, participantsIn } from '../../../testkit/conference/rooms';
import { useTwilioRestStack, type TwilioRestStack } from '../../../testkit/twiml/stack';
import { refused, shape } from '../../../testkit/twiml/compile-checks';
import { toneShare } from '../../edge/audio';

const { VoiceResponse } = twilio.twiml;

describe('TwiML <Conference record>: compiler', () => {
  it('record-from-start maps to conference_join record (callback resolved, method default POST, events default completed)', () => {
    const r = new VoiceResponse();
    r.dial().conference({ record: 'record-from-start' }, 'a');
    r.dial().conference({ record: 'record-from-start', trim: 'do-not-trim', recordingStatusCallback: '/rec' }, 'b');
    r.dial().conference(
      {
        record: 'record-from-start',
        recordingStatusCallback: 'https://cb.example.com/r',
        recordingStatusCallbackMethod: 'GET',
        recordingStatusCallbackEvent: ['in-progress', 'completed', 'absent', 'completed'],
      },
      'c',
    );
    r.dial().conference({ record: 'do-not-record', trim: 'trim-silence' }, 'd');
    // a callback with no recording: nothing to call back about, as for <Dial record>
    r.dial().conference({ recordingStatusCallback: '/rec' }, 'e');
    expect(shape(compileTwiml(r.toString(), { documentUrl: 'https://app.example.com/voice' }))).to.deep.equal([
      { type: 'conference_join', option: { name: 'a', record: {} } },
      { type: 'conference_join', option: { name: 'b', record: { status_callback: { url: 'https://app.example.com/rec', method: 'POST', events: ['completed'] } } } },
      { type: 'conference_join', option: { name: 'c', record: { status_callback: { url: 'https://cb.example.com/r', method: 'GET', events: ['in-progress', 'completed', 'absent'] } } } },
      { type: 'conference_join', option: { name: 'd' } },
      { type: 'conference_join', option: { name: 'e' } },
    ]);
  });

  it('bad input: 12200 for another record value, trim value, event, method, a non-http callback, method/event without a callback', () => {
    refused('<Response><Dial><Conference record="record-from-answer">r</Conference></Dial></Response>', /record must be one of do-not-record, record-from-start/);
    refused('<Response><Dial><Conference record="true">r</Conference></Dial></Response>', /record must be one of/);
    refused('<Response><Dial><Conference record="record-from-start" trim="yes">r</Conference></Dial></Response>', /trim must be one of/);
    refused('<Response><Dial><Conference record="record-from-start" recordingStatusCallback="/r" recordingStatusCallbackEvent="done">r</Conference></Dial></Response>', /recordingStatusCallbackEvent/);
    refused('<Response><Dial><Conference record="record-from-start" recordingStatusCallback="/r" recordingStatusCallbackEvent="">r</Conference></Dial></Response>', /recordingStatusCallbackEvent/);
    refused(
      '<Response><Dial><Conference record="record-from-start" recordingStatusCallback="/r" recordingStatusCallbackMethod="PUT">r</Conference></Dial></Response>',
      /recordingStatusCallbackMethod/,
    );
    refused('<Response><Dial><Conference record="record-from-start" recordingStatusCallback="ftp://x/y">r</Conference></Dial></Response>', /recordingStatusCallback/);
    refused('<Response><Dial><Conference record="record-from-start" recordingStatusCallbackMethod="GET">r</Conference></Dial></Response>', /need recordingStatusCallback/);
  });
});

for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`TwiML <Conference record> with sipp callers (${backend} media backend)`, function () {
    this.timeout(180_000);
    let s: TwilioRestStack;
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'conf-rec-'));

    useTwilioRestStack((x) => (s = x), undefined, { mediaServer: backend });
    after(() => fs.rmSync(tmp, { recursive: true, force: true }));

    const caller = (p: string, talk = true) => s.caller(p, { talk });
    const roomNamed = (name: string) => newestRoom(s.f.customer.id, name);
    const joined = (conferenceId: string, n: number) => participantsIn(conferenceId, n);
    const callbacks = (p: string, n: number) => s.app.atLeast(p, n, 30_000);

    /** The recording's media over the Twilio REST path with the account's credentials. */
    async function media(recordingSid: string, ext: 'wav' | 'mp3'): Promise<{ status: number; type: string; body: Buffer }> {
      const res = await fetch(`${s.api.baseUrl}/2010-04-01/Accounts/${s.sid}/Recordings/${recordingSid}.${ext}`, {
        headers: { authorization: `Basic ${Buffer.from(`${s.sid}:${s.token}`).toString('base64')}` },
      });
      return { status: res.status, type: res.headers.get('content-type') ?? '', body: Buffer.from(await res.arrayBuffer()) };
    }

    it('the room is recorded from its start: signed in-progress and completed callbacks, listed and fetched by the twilio s.client, the tone in the WAV', async () => {
      const first = new VoiceResponse();
      first
        .dial()
        .conference(
          { record: 'record-from-start', trim: 'do-not-trim', recordingStatusCallback: '/rec-events', recordingStatusCallbackEvent: ['in-progress', 'completed', 'absent'] },
          'recorded room',
        );
      s.app.on('/first', first.toString());
      s.app.on('/rec-events', '<Response/>');
      const second = new VoiceResponse();
      // a later participant's record settings do not make a second recording
      second.dial().conference({ record: 'record-from-start', recordingStatusCallback: '/other-rec' }, 'recorded room');
      s.app.on('/second', second.toString());
      s.app.on('/other-rec', '<Response/>');
      const a = await caller('/first');
      const room = await roomNamed('recorded room');
      await joined(room.id, 1);
      const b = await caller('/second', false);
      await joined(room.id, 2);
      const [progress] = await callbacks('/rec-events', 1);
      expect(progress!.signed, 'in-progress signed').to.equal(true);
      expect(progress!.method).to.equal('POST');
      expect(progress!.params).to.include({
        AccountSid: s.sid,
        ConferenceSid: toSid('CF', room.id),
        RecordingStatus: 'in-progress',
        RecordingDuration: '-1',
        RecordingChannels: '1',
        RecordingSource: 'DialConference',
      });
      expect(progress!.params.CallSid, 'a conference recording names no call').to.equal(undefined);
      const recordingSid = progress!.params.RecordingSid!;
      expect(recordingSid).to.match(/^RE[0-9a-f]{32}$/);

      // while it runs: listed under the conference, in-progress; pause is refused (20001, naming why)
      const live = await s.client.conferences(toSid('CF', room.id)).recordings.list();
      expect(live.map((r) => [r.sid, r.status, r.conferenceSid, r.source])).to.deep.equal([[recordingSid, 'in-progress', toSid('CF', room.id), 'DialConference']]);
      const paused = await restRefusal(s.client.conferences(toSid('CF', room.id)).recordings(recordingSid).update({ status: 'paused' }));
      expect(paused.code).to.equal(20001);
      expect(paused.message).to.match(/paused.*cannot pause/);
      const bad = await restRefusal(
        s.client
          .conferences(toSid('CF', room.id))
          .recordings(recordingSid)
          .update({ status: 'bogus' as 'paused' }),
      );
      expect(bad.code).to.equal(20001);
      expect(bad.message).to.match(/Status must be/);
      const unknown = await restRefusal(s.client.conferences(toSid('CF', room.id)).recordings(toSid('RE', '00000000-0000-4000-8000-000000000001')).fetch());
      expect(unknown.status).to.equal(404);

      // three seconds of the room in its file (the measured media)
      await recordedSeconds(await testDb(), s.stack.platform.config.dataDir, room.id, 3);
      await s.hangup(a);
      await s.hangup(b);
      const got = await callbacks('/rec-events', 2);
      await sleep(1000); // an absence: no third callback
      expect(s.app.requests.filter((r) => r.path === '/rec-events').map((r) => r.params.RecordingStatus)).to.deep.equal(['in-progress', 'completed']);
      expect(s.app.requests.filter((r) => r.path === '/other-rec').length, "a later participant's callback is not used").to.equal(0);
      const done = got[1]!;
      expect(done.signed, 'completed signed').to.equal(true);
      expect(done.params).to.include({
        AccountSid: s.sid,
        ConferenceSid: toSid('CF', room.id),
        RecordingSid: recordingSid,
        RecordingStatus: 'completed',
        RecordingSource: 'DialConference',
        ErrorCode: '0',
      });
      expect(Number(done.params.RecordingDuration)).to.be.within(2, 30);
      expect(Date.parse(done.params.RecordingStartTime!)).to.be.greaterThan(Date.now() - 120_000);
      expect(done.params.RecordingUrl).to.equal(`${s.stack.platform.config.publicUrl.replace(/\/$/, '')}/2010-04-01/Accounts/${accountSid(s.f.customer.id)}/Recordings/${recordingSid}`);

      // the official client: the account's list, the conference's list and fetch
      const all = await s.client.recordings.list();
      const mine = all.find((r) => r.sid === recordingSid);
      expect(mine, 'in Recordings.json').to.not.equal(undefined);
      expect(mine!.conferenceSid).to.equal(toSid('CF', room.id));
      expect(mine!.callSid).to.equal(null);
      expect(mine!.source).to.equal('DialConference');
      expect(mine!.status).to.equal('completed');
      const byConference = await s.client.recordings.list({ conferenceSid: toSid('CF', room.id) } as { conferenceSid: string });
      expect(byConference.map((r) => r.sid)).to.deep.equal([recordingSid]);
      const listed = await s.client.conferences(toSid('CF', room.id)).recordings.list();
      expect(listed.map((r) => r.sid)).to.deep.equal([recordingSid]);
      const fetched = await s.client.conferences(toSid('CF', room.id)).recordings(recordingSid).fetch();
      expect(fetched.conferenceSid).to.equal(toSid('CF', room.id));
      expect(fetched.status).to.equal('completed');
      expect(fetched.source).to.equal('DialConference');
      expect(Number(fetched.duration)).to.equal(Number(done.params.RecordingDuration));
      // an ended recording cannot be paused or resumed
      const ended = await restRefusal(s.client.conferences(toSid('CF', room.id)).recordings(recordingSid).update({ status: 'in-progress' }));
      expect(ended.code).to.equal(20001);

      // the media: a WAV with the talking caller's 700 Hz tone, and the same as MP3
      const wav = await media(recordingSid, 'wav');
      expect(wav.status).to.equal(200);
      expect(wav.type).to.equal('audio/x-wav');
      const file = path.join(tmp, 'room.wav');
      fs.writeFileSync(file, wav.body);
      expect(toneShare(file, 700), 'the 700 Hz tone in the recording').to.be.greaterThan(0.5);
      const mp3 = await media(recordingSid, 'mp3');
      expect(mp3.status).to.equal(200);
      expect(mp3.type).to.equal('audio/mpeg');
      expect(mp3.body.length).to.be.greaterThan(1000);
      // delete under the conference: gone from both lists
      await s.client.conferences(toSid('CF', room.id)).recordings(recordingSid).remove();
      expect((await restRefusal(s.client.conferences(toSid('CF', room.id)).recordings(recordingSid).fetch())).status).to.equal(404);
      expect((await s.client.recordings.list()).map((r) => r.sid)).to.not.include(recordingSid);
      for (const c of [a, b]) expect((await c.sipp).code).to.equal(0);
    });

    it('Status=stopped ends the recording (completed callback, GET when asked), the room goes on; no recording without record', async () => {
      const doc = new VoiceResponse();
      doc.dial().conference({ record: 'record-from-start', recordingStatusCallback: '/stop-events', recordingStatusCallbackMethod: 'GET' }, 'stopped room');
      s.app.on('/stop', doc.toString());
      s.app.on('/stop-events', '<Response/>');
      const a = await caller('/stop');
      const room = await roomNamed('stopped room');
      await joined(room.id, 1);
      const rec = await until(async () => (await s.client.conferences(toSid('CF', room.id)).recordings.list())[0] ?? null, 20_000, 'a recording');
      await recordedSeconds(await testDb(), s.stack.platform.config.dataDir, room.id, 1);
      // Twilio.CURRENT names the active recording
      expect((await s.client.conferences(toSid('CF', room.id)).recordings('Twilio.CURRENT').fetch()).sid).to.equal(rec.sid);
      const stopped = await s.client.conferences(toSid('CF', room.id)).recordings(rec.sid).update({ status: 'stopped' });
      expect(stopped.sid).to.equal(rec.sid);
      const [done] = await callbacks('/stop-events', 1);
      expect(done!.method).to.equal('GET');
      expect(done!.signed).to.equal(true);
      expect(done!.params).to.include({ RecordingSid: rec.sid, RecordingStatus: 'completed', ConferenceSid: toSid('CF', room.id) });
      expect((await restRefusal(s.client.conferences(toSid('CF', room.id)).recordings('Twilio.CURRENT').fetch())).status, 'no active recording').to.equal(404);
      const db = await testDb();
      expect(((await db('conferences').where({ id: room.id }).first()) as { status: string }).status, 'the room goes on').to.equal('progressing');
      // one recording per room: a later participant asking for one after the stop makes none
      const late = await caller('/stop', false);
      await joined(room.id, 2);
      await sleep(1000); // an absence: no second recording
      expect((await s.client.conferences(toSid('CF', room.id)).recordings.list()).map((r) => r.sid)).to.deep.equal([rec.sid]);
      const missing = await restRefusal(s.client.conferences(toSid('CF', '00000000-0000-4000-8000-000000000002')).recordings.list());
      expect([missing.status, missing.code]).to.deep.equal([404, 20404]);

      const plain = new VoiceResponse();
      plain.dial().conference('plain room');
      s.app.on('/plain', plain.toString());
      const b = await caller('/plain');
      const other = await roomNamed('plain room');
      await joined(other.id, 1);
      await sleep(1000); // an absence: no recording
      expect(await s.client.conferences(toSid('CF', other.id)).recordings.list(), 'no record: no recording').to.deep.equal([]);
      for (const c of [a, late, b]) await s.hangup(c);
      for (const c of [a, late, b]) expect((await c.sipp).code).to.equal(0);
    });
  });
