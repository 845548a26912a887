// Issue 54 item 1: every webhook validates with the official validator as a tutorial app checks it,
// GET and POST, with parameters holding `:`, `@`, `+`, spaces and non-ASCII. The app (testkit/twiml/
// server.ts, a real HTTP server on loopback) gives `twilio.validateRequest` the URL as Express has it
// (as received) and as Flask/werkzeug presents `request.url` (testkit/twiml/werkzeug-url.ts). First
// the TwiML fetch and the recording / conference callbacks' sender on their own, through the real
// egress HTTP client (every sender builds its request with core/twilio signedWebhook); then a real
// call whose GET document and GET conference callbacks carry such values.
import { expect } from 'chai';
import twilio from 'twilio';
import pino from 'pino';
import { EgressPolicy, egressSettingsFromEnv } from '../../core/net';
import { signedWebhook, twilioQueryComponent } from '../../core/twilio/signature';
import { callSid } from '../../core/twilio/sids';
import { twilioAuthToken } from '../../core/twilio/auth-token';
import { PolicyHttp } from '../../media-app/kit/http';
import { fetchTwiml } from '../../media-app/twiml/fetch';
import { sendSigned } from '../../media-app/twiml/recording-callbacks';
import { TwimlServer } from '../../testkit/twiml/server';
import { werkzeugRequestUrl } from '../../testkit/twiml/werkzeug-url';
import { useTwilioRestStack } from '../../testkit/twiml/stack';
import { placeCall, type PlacedCall, type Stack } from '../../testkit/streams/support';
import type { TwilioClient } from '../../testkit/twilio';
import type { Fixture } from '../../testkit/api';
import { testDb } from '../../testkit/db';
import { until } from '../../testkit/media-app/harness';

const token = twilioAuthToken('webhook-signatures-secret', '2f1c0d3e-4b5a-4c6d-8e7f-0123456789ab', 0);

/** Values as a tutorial app meets them: client and SIP parties, E.164, a caller's name, a speech result. */
const AWKWARD = {
  From: 'client:alice',
  To: 'sip:bob@example.com:5060',
  Caller: '+15551234567',
  CallerName: 'Jürgen Müller-Łukasiewicz 日本',
  SpeechResult: 'pay 100% of €5 & more = 1+1; #2 / ok? "yes" <now> ~ ! $ ( ) * ,',
};
/**
 * An apostrophe is sent as written, as Twilio sends it; werkzeug's URL then validates as it is, but not
 * with non-ASCII in the same request (docs/twilio.md "Webhook signatures" lists what Flask cannot check).
 */
const APOSTROPHE = { From: 'sip:o.brien@example.com', SpeechResult: "I'm fine, it's 5 o'clock: call +1 555 0100 @ home" };

describe('twilio: webhook signatures (GET and POST, as Express and Flask see them)', function () {
  this.timeout(120_000);

  describe('each signed sender, through the egress HTTP client', () => {
    let app: TwimlServer;
    const egress = new EgressPolicy(egressSettingsFromEnv({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));
    const http = new PolicyHttp(egress);
    before(async () => {
      app = await TwimlServer.start(token);
      app.on('/hook', '<Response/>');
    });
    after(() => app.close());

    const last = () => app.requests[app.requests.length - 1]!;
    const expectValid = (params: Record<string, string>, method: string) => {
      const r = last();
      expect(r.method).to.equal(method);
      expect(r.params, r.target).to.deep.equal(params);
      expect(r.signed, `as Express: ${r.target}`).to.equal(true);
      expect(r.signedAsFlask, `as Flask: ${werkzeugRequestUrl(app.base, r.target)}`).to.equal(true);
    };

    it('encodes a GET query as Twilio: `:` `@` `/` `?` and sub-delimiters kept, a space as +, the rest UTF-8 escaped', () => {
      expect(twilioQueryComponent('client:alice')).to.equal('client:alice');
      expect(twilioQueryComponent('sip:bob@example.com')).to.equal('sip:bob@example.com');
      expect(twilioQueryComponent('+1 555')).to.equal('%2B1+555');
      expect(twilioQueryComponent("a&b=c#d%e'f")).to.equal("a%26b%3Dc%23d%25e'f");
      expect(twilioQueryComponent('Zoë')).to.equal('Zo%C3%AB');
      const w = signedWebhook(token, 'GET', 'https://app.example.com/voice?x=1', { From: 'client:alice' });
      expect(w.url).to.equal('https://app.example.com/voice?x=1&From=client:alice');
      expect(w.body).to.equal(undefined);
      expect(twilio.validateRequest(token, w.signature, w.url, {})).to.equal(true);
    });

    for (const method of ['GET', 'POST'] as const) {
      it(`the TwiML fetch (${method})`, async () => {
        for (const params of [AWKWARD, APOSTROPHE]) {
          const ac = new AbortController();
          await fetchTwiml(http, { url: app.url('/hook?app=tutorial'), method, params, authToken: token, timeoutMs: 5000, maxBytes: 65536, signal: ac.signal });
          expectValid(method === 'GET' ? { app: 'tutorial', ...params } : params, method);
        }
      });

      it(`the recording and conference callbacks (${method})`, async () => {
        const job = { http, timeoutMs: 5000, retryMs: 10, twiml: { logger: pino({ level: 'silent' }) }, callId: 'c' };
        for (const params of [AWKWARD, APOSTROPHE]) {
          const got = await sendSigned(job, token, app.url('/hook'), method, { ...params, RecordingUrl: 'https://voice.example.com/2010-04-01/Accounts/AC1/Recordings/RE1' }, 'test');
          expect(got.ok).to.equal(true);
          expectValid({ ...params, RecordingUrl: 'https://voice.example.com/2010-04-01/Accounts/AC1/Recordings/RE1' }, method);
        }
      });
    }
  });

  describe('a real call: GET document, GET conference callbacks', () => {
    let stack: Stack;
    let app: TwimlServer;
    let f: Fixture;
    let client: TwilioClient;
    let placed: PlacedCall[];
    useTwilioRestStack((s) => ({ stack, app, f, client, placed } = s));

    it('every request of the call validates, as Express and as Flask see it', async () => {
      const room = 'Raum für alle: 1+1 @home';
      const doc = new twilio.twiml.VoiceResponse();
      doc.dial().conference({ statusCallback: '/conf', statusCallbackMethod: 'GET', statusCallbackEvent: ['start', 'join', 'leave', 'end'] }, room);
      app.on('/voice', doc.toString());
      app.on('/conf', '<Response/>');
      const call = await placeCall(stack, f.customer.id, [{ type: 'answer' }, { type: 'twiml', option: { url: app.url('/voice?greeting=Gr%C3%BC%C3%9Fe+aus+K%C3%B6ln'), method: 'GET' } }], {
        talk: false,
      });
      placed.push(call);
      const db = await testDb();
      await until(async () => ((await db('conferencecalls').where({ reference_id: call.callId, status: 'joined' }).first()) as unknown) ?? null, 20_000, 'joined');
      await client.calls(callSid(call.callId)).update({ status: 'completed' });
      await until(() => app.requests.filter((r) => r.path === '/conf').length >= 4 || null, 20_000, 'four conference callbacks');
      const voice = app.requests.find((r) => r.path === '/voice')!;
      expect(voice.method).to.equal('GET');
      expect(voice.params).to.include({ greeting: 'Grüße aus Köln', From: '+15551230000', CallSid: callSid(call.callId) });
      const conf = app.requests.filter((r) => r.path === '/conf');
      expect(conf.map((r) => r.params.StatusCallbackEvent).sort()).to.deep.equal(['conference-end', 'conference-start', 'participant-join', 'participant-leave']);
      for (const r of [voice, ...conf]) {
        expect(r.params.FriendlyName ?? room, r.target).to.equal(room);
        expect([r.signed, r.signedAsFlask], `${r.method} ${r.target}`).to.deep.equal([true, true]);
      }
    });
  });
});
