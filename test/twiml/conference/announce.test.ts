// Issue 36: REST AnnounceUrl and <Conference statusCallbackEvent="announcement">. Two sipp callers
// (real SIP on loopback, a media-app node, real Postgres and Redis) sit silent in a room; the official
// twilio client updates the Conference with an AnnounceUrl (a TwiML <Say>, spoken by the node's TTS):
// both callers hear speech and announcement-end follows; a Participant update with an AnnounceUrl is
// heard by that caller only. The document fetches are signed (twilio.validateRequest) with the room's
// parameters. Bad values: not http(s) → 20001; a private address → the egress policy refuses it →
// announcement-fail with the reason; a document with another verb → announcement-fail (12200). On both
// media backends: on fsmrf (issue 55) each member hears the <Say> through the switch's room (a file
// media-app synthesised, `conference <room> play <path> <id> nomux`), its own prompt waiting behind the
// conference application.
// A <Play> is heard on both: on fsmrf media-app fetches it through its egress policy into the directory
// it shares with the switch and the room plays that file to each member (`conference <room> play <path>
// <member>`), the file removed once played; a URL the egress policy refuses fails as on the engine. A
// <Say> in a language of its own is heard on both.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import twilio from 'twilio';
import { wavFile } from '../../../core/audio/wav';
import { callSid, toSid, accountSid } from '../../../core/twilio/sids';
import { testDb } from '../../../testkit/db';
import { sleep, until } from '../../../testkit/media-app/harness';
import { useTwilioRestStack, type TwilioRestStack } from '../../../testkit/twiml/stack';

const { VoiceResponse } = twilio.twiml;

/** 1.5 s of 440 Hz at 8 kHz, loud: what a <Play> announcement plays. */
const TONE = wavFile(
  Int16Array.from({ length: 12_000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000))),
  8000,
);

/** The reason an egress-refused <Play> failed with, by backend: the same on both. */
const refusedPlay = new Map<string, string>();

for (const backend of ['embedded', 'fsmrf'] as const)
  describe(`Conference and Participant AnnounceUrl with announcement callbacks (${backend} media backend)`, function () {
    this.timeout(180_000);
    let s: TwilioRestStack;

    useTwilioRestStack((x) => (s = x), undefined, { mediaServer: backend });

    const say = (text: string) => {
      const r = new VoiceResponse();
      r.say(text);
      return r.toString();
    };

    it('the room hears a Conference announcement, one participant a Participant one; end and fail callbacks, signed', async () => {
      const doc = new VoiceResponse();
      doc.dial().conference({ statusCallback: '/ae', statusCallbackEvent: ['announcement'] }, 'announce room');
      s.app.on('/a', doc.toString());
      s.app.on('/ae', '<Response/>');
      s.app.on('/all', say('Welcome to the conference room, everybody.'));
      s.app.on('/one', say('This is for you only.'));
      s.app.on('/dial', '<Response><Dial>+15550001111</Dial></Response>');
      const a = await s.caller('/a', { talk: false });
      const b = await s.caller('/a', { talk: false });
      const db = await testDb();
      const room = await until(async () => ((await db('conferences').where({ customer_id: s.f.customer.id, name: 'announce room' }).first()) as { id: string } | undefined) ?? null, 20_000, 'room');
      const cf = toSid('CF', room.id);
      await until(async () => ((await db('conferencecalls').where({ conference_id: room.id, status: 'joined' })).length === 2 ? true : null), 20_000, 'two joined');
      await sleep(500);
      const events = () => s.app.requests.filter((r) => r.path === '/ae');
      const nextEvent = (n: number) => until(() => events()[n - 1] ?? null, 30_000, `announcement callback ${n}`);

      // the whole room
      const [va, vb] = [a.peer.levels.length, b.peer.levels.length];
      await s.client.conferences(cf).update({ announceUrl: s.app.url('/all') });
      const end1 = await nextEvent(1);
      expect(end1.params).to.include({ StatusCallbackEvent: 'announcement-end', AnnounceUrl: s.app.url('/all'), ConferenceSid: cf, FriendlyName: 'announce room' });
      expect(end1.params.CallSid).to.equal(undefined);
      expect(a.peer.voiced(va), 'caller A heard the announcement').to.be.greaterThan(25);
      expect(b.peer.voiced(vb), 'caller B heard the announcement').to.be.greaterThan(25);
      const fetchAll = s.app.requests.find((r) => r.path === '/all')!;
      expect(fetchAll.signed, 'the document fetch is signed').to.equal(true);
      expect(fetchAll.params).to.include({ ConferenceSid: cf, FriendlyName: 'announce room', AccountSid: accountSid(s.f.customer.id) });

      // one participant
      const [wa, wb] = [a.peer.levels.length, b.peer.levels.length];
      await s.client
        .conferences(cf)
        .participants(callSid(a.callId))
        .update({ announceUrl: s.app.url('/one'), announceMethod: 'GET' });
      const end2 = await nextEvent(2);
      expect(end2.params).to.include({ StatusCallbackEvent: 'announcement-end', AnnounceUrl: s.app.url('/one'), CallSid: callSid(a.callId) });
      expect(a.peer.voiced(wa), 'caller A heard its announcement').to.be.greaterThan(15);
      expect(b.peer.voiced(wb), 'caller B did not').to.be.lessThan(3);
      const fetchOne = s.app.requests.find((r) => r.path === '/one')!;
      expect([fetchOne.method, fetchOne.signed, fetchOne.params.CallSid]).to.deep.equal(['GET', true, callSid(a.callId)]);

      // bad values: refused by the API (nothing sent), refused by the egress policy, a verb not allowed
      const refusal = await s.client
        .conferences(cf)
        .update({ announceUrl: 'ftp://example.com/a.wav' })
        .then(
          () => null,
          (e: { status?: number; code?: number }) => e,
        );
      expect([refusal?.status, refusal?.code]).to.deep.equal([400, 20001]);
      await s.client.conferences(cf).update({ announceUrl: 'http://10.255.255.1/private' });
      const fail1 = await nextEvent(3);
      expect(fail1.params).to.include({ StatusCallbackEvent: 'announcement-fail', AnnounceUrl: 'http://10.255.255.1/private' });
      expect(fail1.params.ReasonAnnouncementFailed).to.match(/11200.*(egress|refused|not allowed|private)/i);
      await s.client
        .conferences(cf)
        .participants(callSid(b.callId))
        .update({ announceUrl: s.app.url('/dial') });
      const fail2 = await nextEvent(4);
      expect(fail2.params).to.include({ StatusCallbackEvent: 'announcement-fail', CallSid: callSid(b.callId) });
      expect(fail2.params.ReasonAnnouncementFailed).to.match(/12200.*Dial/);
      await sleep(500);
      expect(events().length, 'nothing for the refused request').to.equal(4);
      expect(events().map((r) => Number(r.params.SequenceNumber))).to.deep.equal([1, 2, 3, 4]);
      for (const r of events()) expect(r.signed, `${r.params.StatusCallbackEvent} signed`).to.equal(true);
      await s.stack.platform.app.calls.get(a.callId)?.hangup('normal');
      await s.stack.platform.app.calls.get(b.callId)?.hangup('normal');
    });

    it('a <Play> announcement is heard by the room and a <Say> in a language of its own by one participant; a refused URL fails as on the engine', async () => {
      const doc = new VoiceResponse();
      doc.dial().conference({ statusCallback: '/pe', statusCallbackEvent: ['announcement'] }, 'play room');
      s.app.on('/p', doc.toString());
      s.app.on('/pe', '<Response/>');
      s.app.on('/tone.wav', { status: 200, body: TONE, contentType: 'audio/wav' });
      s.app.on('/play', `<Response><Play>${s.app.url('/tone.wav')}</Play></Response>`);
      s.app.on('/french', '<Response><Say language="fr-FR">Bonjour à tous, bienvenue dans la conférence.</Say></Response>');
      s.app.on('/private', '<Response><Play>http://10.255.255.1/private.wav</Play></Response>');
      const a = await s.caller('/p', { talk: false });
      const b = await s.caller('/p', { talk: false });
      const db = await testDb();
      const room = await until(async () => ((await db('conferences').where({ customer_id: s.f.customer.id, name: 'play room' }).first()) as { id: string } | undefined) ?? null, 20_000, 'room');
      const cf = toSid('CF', room.id);
      await until(async () => ((await db('conferencecalls').where({ conference_id: room.id, status: 'joined' })).length === 2 ? true : null), 20_000, 'two joined');
      const events = () => s.app.requests.filter((r) => r.path === '/pe');
      const nextEvent = (n: number) => until(() => events()[n - 1] ?? null, 30_000, `announcement callback ${n}`);
      const prompts = path.join(s.stack.platform.config.dataDir, 'switch-prompts');
      const left = () => (fs.existsSync(prompts) ? fs.readdirSync(prompts) : []);

      const [va, vb] = [a.peer.levels.length, b.peer.levels.length];
      await s.client.conferences(cf).update({ announceUrl: s.app.url('/play') });
      const end1 = await nextEvent(1);
      expect(end1.params, end1.params.ReasonAnnouncementFailed).to.include({ StatusCallbackEvent: 'announcement-end', AnnounceUrl: s.app.url('/play') });
      // 1.5 s of tone: 75 packets each
      expect(a.peer.voiced(va), 'caller A heard the tone').to.be.greaterThan(50);
      expect(b.peer.voiced(vb), 'caller B heard the tone').to.be.greaterThan(50);
      const fetched = s.app.requests.filter((r) => r.path === '/tone.wav').length;
      if (backend === 'embedded') expect(fetched, 'the audio was fetched').to.be.greaterThan(0);
      else {
        // once, by media-app for both members (the switch was given its file, never the URL)
        expect(fetched, 'the audio was fetched once').to.equal(1);
        expect(fs.existsSync(prompts), 'the directory shared with the switch').to.equal(true);
      }
      expect(left(), 'no prompt file left in the directory shared with the switch').to.deep.equal([]);

      const [wa, wb] = [a.peer.levels.length, b.peer.levels.length];
      await s.client
        .conferences(cf)
        .participants(callSid(b.callId))
        .update({ announceUrl: s.app.url('/french') });
      const end2 = await nextEvent(2);
      expect(end2.params, end2.params.ReasonAnnouncementFailed).to.include({ StatusCallbackEvent: 'announcement-end', CallSid: callSid(b.callId) });
      expect(b.peer.voiced(wb), 'caller B heard the French announcement').to.be.greaterThan(25);
      expect(a.peer.voiced(wa), 'caller A did not').to.be.lessThan(3);

      await s.client.conferences(cf).update({ announceUrl: s.app.url('/private') });
      const fail = await nextEvent(3);
      expect(fail.params.StatusCallbackEvent).to.equal('announcement-fail');
      const reason = fail.params.ReasonAnnouncementFailed!;
      refusedPlay.set(backend, reason);
      if (backend === 'fsmrf' && refusedPlay.has('embedded')) expect(reason, 'the same reason as on the engine').to.equal(refusedPlay.get('embedded'));
      expect(reason)
        .to.match(/10\.255\.255\.1/)
        .and.match(/refused|not allowed/i);
      expect(left()).to.deep.equal([]);
      await s.stack.platform.app.calls.get(a.callId)?.hangup('normal');
      await s.stack.platform.app.calls.get(b.callId)?.hangup('normal');
    });
  });
