// Issue 54: a TwiML document the platform refuses, as Twilio handles it. `<Dial timeout="2">` (Twilio takes
// any positive integer) rings 2 s and calls its action; a bad timeout is Twilio's warning 13212 and the Dial
// still runs; a document that cannot run (12200, 12300, 11200 ...) is the application error: the caller hears it,
// the call ends `completed`, its StatusCallback fires, and the error is recorded as Twilio's debugger does:
// the Monitor API's Alerts (read with the official `twilio` client, paged as it pages) and the 2010 API's
// Notifications (plain HTTP: list, fetch, delete), credential-like values masked, and POSTed to the
// account's Debugger webhook, signed. Real sipp calls.
import { expect } from 'chai';
import request from 'supertest';
import twilio from 'twilio';
import { answeringUas, sipp, until } from '../../testkit/media-app/harness';
import { sipPortPair, udpBound } from '../../testkit/ports';
import { placeCall, type PlacedCall, type Stack } from '../../testkit/streams/support';
import type { TwimlServer } from '../../testkit/twiml/server';
import { useTwilioRestStack } from '../../testkit/twiml/stack';
import { restRefusal, type ServedApp, type TwilioClient } from '../../testkit/twilio';
import type { Fixture } from '../../testkit/api';
import { endedFlowOfCall } from '../../testkit/call-ends';
import { startTwilioCallbacks, type CallbackService } from '../../control-api/twilio/callbacks';
import { createFixture } from '../../testkit/api';
import { accountSid, callSid } from '../../core/twilio/sids';
import { twilioAuthToken } from '../../core/twilio/auth-token';

const { VoiceResponse } = twilio.twiml;

describe('Twilio application errors on real calls: the caller told, StatusCallback, Alerts and Notifications', function () {
  this.timeout(90_000);
  let stack: Stack;
  let app: TwimlServer;
  let f: Fixture;
  let client: TwilioClient;
  let placed: PlacedCall[];
  let api: ServedApp;
  let sid: string;
  let token: string;
  let callbacks: CallbackService | undefined;

  useTwilioRestStack((s) => ({ stack, app, f, client, placed, api, sid, token } = s));
  before(async () => {
    callbacks = await startTwilioCallbacks(stack.api.ctx, { group: `alerts-${process.pid}`, baseDelayMs: 100 });
    // the SDK's own field for where monitor.twilio.com requests go
    client.monitor.baseUrl = api.baseUrl;
  });
  after(async () => {
    await callbacks?.close();
  });

  async function callee(o: Parameters<typeof answeringUas>[0] = {}) {
    const port = await sipPortPair();
    const run = sipp(answeringUas(o), ['-i', '127.0.0.1', '-p', String(port), '-m', '1'], { killAfterMs: 40_000 });
    await udpBound(port); // the UAS has bound its port: an INVITE sent from now on waits in its socket
    return { port, run };
  }

  it('<Dial timeout="2"> is Twilio-valid: the callee rings ~2 s, then the action gets DialCallStatus=no-answer', async () => {
    const ringer = await callee({ cancel: true });
    const doc = new VoiceResponse();
    doc.dial({ action: '/t2-done', timeout: 2 }).sip(`sip:ringer@127.0.0.1:${ringer.port}`);
    app.on('/t2', doc.toString());
    const done = new VoiceResponse();
    done.hangup();
    app.on('/t2-done', done.toString());
    const call = await placeCall(stack, f.customer.id, [{ type: 'answer' }, { type: 'twiml', option: { url: app.url('/t2') } }]);
    placed.push(call);
    await app.next('/t2');
    const t0 = Date.now();
    const cb = await app.next('/t2-done');
    expect(cb.params.DialCallStatus).to.equal('no-answer');
    expect((Date.now() - t0) / 1000, 'seconds from the document to the action').to.be.within(1, 6);
    const rc = await ringer.run.done;
    expect(rc.code, rc.errors + rc.messages).to.equal(0);
    const af = await endedFlowOfCall(call.callId);
    expect(af.error).to.equal('');
  });

  it('<Dial timeout="soon">: Twilio’s warning 13212, the Dial still runs (busy callee → the action), a warning alert', async () => {
    const busy = await callee({ final: 486 });
    app.on('/bad-timeout', `<Response><Dial timeout="soon" action="/bt-done"><Sip>sip:busy@127.0.0.1:${busy.port}</Sip></Dial></Response>`);
    app.on('/bt-done', '<Response><Hangup/></Response>');
    const call = await placeCall(stack, f.customer.id, [{ type: 'answer' }, { type: 'twiml', option: { url: app.url('/bad-timeout') } }]);
    placed.push(call);
    const cb = await app.next('/bt-done');
    expect(cb.params.DialCallStatus).to.equal('busy');
    const warnings = await until(
      async () => {
        const list = await client.monitor.v1.alerts.list({ logLevel: 'warning' });
        return list.filter((a) => a.resourceSid === callSid(call.callId)).length ? list.filter((a) => a.resourceSid === callSid(call.callId)) : null;
      },
      10_000,
      'the warning alert',
    );
    expect(warnings.map((a) => [a.errorCode, a.logLevel])).to.deep.equal([['13212', 'warning']]);
    expect(warnings[0]!.requestUrl).to.equal(app.url('/bad-timeout'));
    expect((await busy.run.done).code).to.equal(0);
  });

  it('an inbound call whose document breaks the schema: the error is heard, the activeflow ends 12200, an Alert with the request (masked)', async () => {
    app.on('/schema', '<Response><Say>Hello</Say><Dial><Number>not-a-number</Number></Dial></Response>');
    const secret = '0123456789abcdef0123456789abcdef';
    const url = app.url(`/schema?auth_token=${secret}&lang=en`);
    const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url } }]);
    placed.push(call);
    const r = await call.sipp;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(call.peer.voiced(), 'the application error is spoken').to.be.greaterThan(10);
    const af = await endedFlowOfCall(call.callId);
    expect(af.error).to.match(/^twiml error 12200: /);

    const alerts = await client.monitor.v1.alerts.list({ logLevel: 'error' });
    const mine = alerts.filter((a) => a.resourceSid === callSid(call.callId));
    expect(mine.map((a) => a.errorCode)).to.deep.equal(['12200']);
    const a = mine[0]!;
    expect(a.sid).to.match(/^NO[0-9a-f]{32}$/);
    expect(a).to.include({ accountSid: sid, logLevel: 'error', apiVersion: '2010-04-01', requestMethod: 'POST', moreInfo: 'https://www.twilio.com/docs/errors/12200' });
    expect(a.requestUrl).to.equal(app.url('/schema?auth_token=****cdef&lang=en'));
    expect(a.requestVariables, 'a list leaves the request out, as Twilio').to.equal(null);
    expect(a.dateCreated).to.be.instanceOf(Date);
    const whole = await client.monitor.v1.alerts(a.sid).fetch();
    const vars = new URLSearchParams(whole.requestVariables);
    expect(vars.get('CallSid')).to.equal(callSid(call.callId));
    expect(vars.get('AccountSid')).to.equal(sid);
    expect(whole.responseBody).to.include('not-a-number');
    expect(whole.alertText).to.include('ErrorCode=12200');
    expect(JSON.stringify(whole.toJSON())).to.not.include(secret);
  });

  it('response_headers: the failing answer’s headers as Twilio shows them, cookies and authorization masked', async () => {
    const cookie = 'session=c0ffee0123456789c0ffee0123456789';
    app.on('/down-headers', { status: 500, body: 'boom', headers: { 'X-Request-Id': 'req-42', 'Set-Cookie': [cookie, 'theme=dark'], Authorization: 'Bearer abcdefghijklmnop' } });
    const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/down-headers') } }]);
    placed.push(call);
    const r = await call.sipp;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const listed = await until(async () => (await client.monitor.v1.alerts.list({ logLevel: 'error' })).find((a) => a.resourceSid === callSid(call.callId)), 10_000, 'the 11200 alert');
    expect(listed.errorCode).to.equal('11200');
    expect(listed.responseHeaders, 'a list leaves it out, as Twilio').to.equal(null);
    const whole = await client.monitor.v1.alerts(listed.sid).fetch();
    const h = new URLSearchParams(whole.responseHeaders);
    expect(h.get('X-Request-Id')).to.equal('req-42');
    expect(h.get('content-type'), 'names as the app sent them').to.equal('text/plain');
    expect(h.getAll('Set-Cookie')).to.deep.equal(['****', '****']);
    expect(h.get('Authorization')).to.equal('****');
    expect(whole.responseHeaders).to.not.include('c0ffee').and.not.include('abcdefghijklmnop');
    const base = `/2010-04-01/Accounts/${sid}`;
    const n = await request(stack.api.app).get(`${base}/Notifications/${listed.sid}.json`).auth(sid, token);
    expect(n.body.response_headers).to.equal(whole.responseHeaders);
  });

  it('an answer that is not TwiML by its Content-Type (JSON): 12300, the error spoken, an Alert 12300', async () => {
    app.on('/json', { status: 200, body: '{"say":"hello"}', contentType: 'application/json; charset=utf-8' });
    const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/json') } }]);
    placed.push(call);
    const r = await call.sipp;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(call.peer.voiced(), 'the application error is spoken').to.be.greaterThan(10);
    const af = await endedFlowOfCall(call.callId);
    expect(af.error).to.equal('twiml error 12300: the document URL answered Content-Type application/json, not TwiML');
    const alerts = await client.monitor.v1.alerts.list();
    expect(alerts.filter((a) => a.resourceSid === callSid(call.callId)).map((a) => a.errorCode)).to.deep.equal(['12300']);
  });

  it('an outbound call (Calls.json) whose Url fails: status callback completed, Notifications listed, fetched, deleted; Alerts paged', async () => {
    const answering = await callee();
    app.on('/down', { status: 503, body: 'maintenance' });
    app.on('/status', 'ok');
    const to = `sip:callee@127.0.0.1:${answering.port}`;
    const c = await client.calls.create({ to, from: '+15550009999', url: app.url('/down'), statusCallback: app.url('/status') });
    const status = await app.next('/status', 30_000);
    expect(status.signed).to.equal(true);
    expect(status.params).to.include({ CallSid: c.sid, CallStatus: 'completed' });
    expect((await answering.run.done).code).to.equal(0);
    expect((await client.calls(c.sid).fetch()).status).to.equal('completed');

    const base = `/2010-04-01/Accounts/${sid}`;
    const all = await request(stack.api.app).get(`${base}/Notifications.json`).query({ Log: '0', PageSize: 50 }).auth(sid, token);
    expect(all.status).to.equal(200);
    const n = (all.body.notifications as Record<string, string>[]).find((x) => x.call_sid === c.sid)!;
    expect(n).to.include({ account_sid: sid, error_code: '11200', log: '0', request_method: 'POST', request_url: app.url('/down') });
    expect(n.sid).to.match(/^NO[0-9a-f]{32}$/);
    expect(n.message_date).to.match(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
    expect(n).to.not.have.property('request_variables');
    const today = new Date().toISOString().slice(0, 10);
    const byDay = await request(stack.api.app).get(`${base}/Notifications.json`).query({ MessageDate: today }).auth(sid, token);
    expect((byDay.body.notifications as { sid: string }[]).map((x) => x.sid)).to.include(n.sid);
    const before = await request(stack.api.app).get(`${base}/Notifications.json`).query({ 'MessageDate<': today }).auth(sid, token);
    expect(before.body.notifications).to.deep.equal([]);
    const perCall = await request(stack.api.app).get(`${base}/Calls/${c.sid}/Notifications.json`).auth(sid, token);
    expect((perCall.body.notifications as { sid: string }[]).map((x) => x.sid)).to.deep.equal([n.sid]);
    const one = await request(stack.api.app).get(`${base}/Notifications/${n.sid}.json`).auth(sid, token);
    expect(one.status).to.equal(200);
    expect(new URLSearchParams(one.body.request_variables).get('Direction')).to.equal('outbound-api');

    // Alerts are the same records; the client pages through them by meta.next_page_url
    const paged = await client.monitor.v1.alerts.list({ pageSize: 1 });
    expect(paged.length).to.be.at.least(3);
    expect(new Set(paged.map((a) => a.sid)).size).to.equal(paged.length);
    expect(paged.map((a) => a.sid)).to.include(n.sid);
    const later = await client.monitor.v1.alerts.list({ startDate: new Date(Date.now() + 3_600_000) });
    expect(later).to.deep.equal([]);
    const page0 = await request(stack.api.app).get('/v1/Alerts').query({ PageSize: 1 }).auth(sid, token);
    expect(page0.body.meta).to.include({ page: 0, page_size: 1, key: 'alerts', previous_page_url: null });
    expect(page0.body.meta.next_page_url).to.match(/\/v1\/Alerts\?PageSize=1&Page=1$/);

    // another account sees none of it
    const other = await createFixture(stack.api.ctx);
    const otherSid = accountSid(other.customer.id);
    const otherToken = twilioAuthToken(stack.api.ctx.config.jwtSecret, other.customer.id, 0);
    const theirs = await request(stack.api.app).get('/v1/Alerts').auth(otherSid, otherToken);
    expect(theirs.body.alerts).to.deep.equal([]);
    const notTheirs = await request(stack.api.app).get(`/v1/Alerts/${n.sid}`).auth(otherSid, otherToken);
    expect([notTheirs.status, notTheirs.body.code]).to.deep.equal([404, 20404]);
    const bad = await request(stack.api.app).get('/v1/Alerts').query({ StartDate: 'yesterday' }).auth(sid, token);
    expect([bad.status, bad.body.code]).to.deep.equal([400, 20001]);
    const noAuth = await request(stack.api.app).get('/v1/Alerts');
    expect([noAuth.status, noAuth.body.code]).to.deep.equal([401, 20003]);

    const del = await request(stack.api.app).delete(`${base}/Notifications/${n.sid}.json`).auth(sid, token);
    expect(del.status).to.equal(204);
    const gone = await request(stack.api.app).get(`${base}/Notifications/${n.sid}.json`).auth(sid, token);
    expect([gone.status, gone.body.code]).to.deep.equal([404, 20404]);
    const e = await restRefusal(client.monitor.v1.alerts(n.sid).fetch());
    expect(e.status).to.equal(404);
  });

  it('the account’s Debugger webhook: each new alert POSTed there as Twilio does, signed; set and cleared on /v1.0', async () => {
    const put = (url: string) => request(stack.api.app).put('/v1.0/twilio/debugger_webhook').query({ accesskey: f.accesskey }).send({ url });
    const refused = await put('http://169.254.169.254/latest');
    expect(refused.status).to.equal(400);
    expect((await put(app.url('/debugger'))).body).to.deep.equal({ url: app.url('/debugger') });
    const shown = await request(stack.api.app).get('/v1.0/twilio/debugger_webhook').query({ accesskey: f.accesskey });
    expect(shown.body).to.deep.equal({ url: app.url('/debugger') });
    app.on('/debugger', 'ok');
    app.on('/dbg-doc', '<Response><Dance/></Response>');
    const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/dbg-doc') } }]);
    placed.push(call);
    const hook = await app.next('/debugger');
    expect(hook.method).to.equal('POST');
    expect(hook.signed, 'X-Twilio-Signature with the account’s AuthToken').to.equal(true);
    expect(hook.params).to.include({ AccountSid: sid, Level: 'ERROR', PayloadType: 'application/json', ParentAccountSid: '' });
    expect(hook.params.Sid).to.match(/^NO[0-9a-f]{32}$/);
    expect(Number.isNaN(Date.parse(hook.params.Timestamp!))).to.equal(false);
    const payload = JSON.parse(hook.params.Payload!) as {
      resource_sid: string;
      error_code: string;
      more_info: Record<string, string>;
      webhook: { request: { url: string; parameters: Record<string, string> }; response: { headers: Record<string, string> } };
    };
    expect(payload).to.include({ resource_sid: callSid(call.callId), error_code: '12200' });
    expect(payload.more_info).to.include({ ErrorCode: '12200', LogLevel: 'ERROR' });
    expect(payload.webhook.request.url).to.equal(app.url('/dbg-doc'));
    expect(payload.webhook.request.parameters.CallSid).to.equal(callSid(call.callId));
    expect(payload.webhook.response.headers['content-type'], 'the document’s answer headers').to.equal('text/xml');
    const alert = await client.monitor.v1.alerts(hook.params.Sid!).fetch();
    expect(alert.resourceSid).to.equal(callSid(call.callId));
    const r = await call.sipp;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect((await put('')).body).to.deep.equal({ url: '' });
    const cleared = await request(stack.api.app).get('/v1.0/twilio/debugger_webhook').query({ accesskey: f.accesskey });
    expect(cleared.body).to.deep.equal({ url: '' });
  });
});
