// <Refer><Sip>: compiled to sip_refer (refusals checked pure), and on real calls: a sipp caller is
// sent a REFER inside its call; it accepts (202, NOTIFYs 100 then 200) or refuses (603), and the
// action URL gets ReferCallStatus and ReferSipResponseCode, signed (twilio.validateRequest).
import { expect } from 'chai';
import twilio from 'twilio';
import { compileTwiml } from '../../core/twiml/compile';
import { callSid } from '../../core/twilio/sids';
import { placeCall, type Stack } from '../../testkit/streams/support';
import { referAccepted, referRefused } from '../../testkit/twiml/refer-steps';
import type { TwimlServer } from '../../testkit/twiml/server';
import { endedFlowOfCall } from '../../testkit/call-ends';
import { useTwimlStack } from '../../testkit/twiml/stack';
import { DOC, refusal, optionsRefused } from '../../testkit/twiml/compile-checks';
import type { Fixture } from '../../testkit/api';

const { VoiceResponse } = twilio.twiml;

describe('TwiML <Refer>: compiling', () => {
  it('one sip_refer with the target; with action: ReferCallStatus and ReferSipResponseCode to it; without: the next verb', () => {
    const r = new VoiceResponse();
    r.refer({ action: '/referred', method: 'GET' }).sip('sip:alice@example.com;transport=tcp');
    const actions = compileTwiml(r.toString(), { documentUrl: DOC, method: 'POST' });
    expect(actions.map((a) => a.type)).to.deep.equal(['sip_refer', 'variable_set', 'variable_set', 'twiml']);
    expect(actions[0]!.option).to.deep.equal({ refer_to: 'sip:alice@example.com;transport=tcp' });
    expect(actions.slice(1, 3).map((a) => a.option.key)).to.deep.equal(['twiml.param.ReferCallStatus', 'twiml.param.ReferSipResponseCode']);
    expect(actions[3]!.option).to.deep.equal({ url: 'https://app.example.com/referred', method: 'GET' });

    const plain = new VoiceResponse();
    plain.refer().sip('sips:bob@example.com');
    plain.say('Still here');
    const a2 = compileTwiml(plain.toString(), { documentUrl: DOC, method: 'POST' });
    expect(a2.map((a) => a.type)).to.deep.equal(['sip_refer', 'talk']);
  });

  it('bad Refer documents are 12200 naming what is wrong; nothing compiles', () => {
    const cases: [string, RegExp][] = [
      ['<Refer/>', /exactly one <Sip> \(nothing given\)/],
      ['<Refer><Sip>sip:a@x</Sip><Sip>sip:b@x</Sip></Refer>', /exactly one <Sip>/],
      ['<Refer><Number>+15551230000</Number></Refer>', /exactly one <Sip> \(<Number> given\)/],
      ['<Refer>sip:a@x</Refer>', /not text/],
      ['<Refer><Sip>tel:+15551230000</Sip></Refer>', /sip: or sips: URI/],
      ['<Refer><Sip>sip:a@x&gt;;evil=1</Sip></Refer>', /sip: or sips: URI/],
      ['<Refer><Sip>sip:a b@x</Sip></Refer>', /sip: or sips: URI/],
      ['<Refer><Sip username="u">sip:a@x</Sip></Refer>', /<Sip> has no attribute "username"/],
      ['<Refer timeout="5"><Sip>sip:a@x</Sip></Refer>', /<Refer> has no attribute "timeout"/],
      ['<Refer method="PUT"><Sip>sip:a@x</Sip></Refer>', /method must be one of GET, POST/],
      ['<Refer action="ftp://x/y"><Sip>sip:a@x</Sip></Refer>', /action must be an http or https URL/],
    ];
    for (const [doc, words] of cases) {
      const e = refusal(`<Response>${doc}<Say>after</Say></Response>`);
      expect(e.code, doc).to.equal(12200);
      expect(e.message, doc).to.match(words);
    }
  });

  it('sip_refer options are validated with the field named', () => {
    const bad: [unknown, string, RegExp][] = [
      [{ type: 'sip_refer', option: {} }, 'refer_to', /./],
      [{ type: 'sip_refer', option: { refer_to: 'http://x' } }, 'refer_to', /sip: or sips: URI/],
      [{ type: 'sip_refer', option: { refer_to: 'sip:a@x\r\nX-Evil: 1' } }, 'refer_to', /sip: or sips: URI/],
      [{ type: 'sip_refer', option: { refer_to: 'sip:a@x', timeout: -1 } }, 'timeout', />= 0/],
    ];
    optionsRefused(bad);
  });
});

describe('TwiML <Refer> on real calls (a sipp caller is sent the REFER)', function () {
  this.timeout(90_000);
  let stack: Stack;
  let app: TwimlServer;
  let f: Fixture;

  useTwimlStack((s) => ({ stack, app, f } = s));

  it('accepted (202, NOTIFY 100 then 200): the action gets ReferCallStatus=in-progress, ReferSipResponseCode=200, signed', async () => {
    const doc = new VoiceResponse();
    doc.refer({ action: '/referred' }).sip('sip:alice@pbx.example.com');
    app.on('/refer', doc.toString());
    const done = new VoiceResponse();
    done.hangup();
    app.on('/referred', done.toString());
    const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/refer') } }], {
      talk: false,
      steps: () => referAccepted('sip:alice@pbx.example.com'),
    });
    await app.next('/refer');
    const cb = await app.next('/referred', 30_000);
    expect(cb.signed, 'X-Twilio-Signature').to.equal(true);
    expect(cb.params.ReferCallStatus).to.equal('in-progress');
    expect(cb.params.ReferSipResponseCode).to.equal('200');
    expect(cb.params.CallSid).to.equal(callSid(call.callId));
    const r = await call.sipp;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const af = await endedFlowOfCall(call.callId);
    expect(af.error).to.equal('');
    expect((af.executed_actions as { type: string }[]).map((a) => a.type)).to.include('sip_refer');
    call.peer.close();
  });

  it('refused (603 to the REFER): the action gets ReferCallStatus=failed, ReferSipResponseCode=603, and its TwiML runs', async () => {
    const doc = new VoiceResponse();
    doc.refer({ action: '/refused' }).sip('sip:bob@pbx.example.com');
    app.on('/refer-no', doc.toString());
    const after = new VoiceResponse();
    after.say('The transfer did not work');
    after.hangup();
    app.on('/refused', after.toString());
    const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/refer-no') } }], {
      talk: false,
      live: false,
      steps: () => referRefused('sip:bob@pbx.example.com', '603 Decline'),
    });
    await app.next('/refer-no');
    const cb = await app.next('/refused', 30_000);
    expect(cb.signed).to.equal(true);
    expect(cb.params.ReferCallStatus).to.equal('failed');
    expect(cb.params.ReferSipResponseCode).to.equal('603');
    const r = await call.sipp;
    expect(r.code, r.errors + r.messages).to.equal(0);
    expect(call.peer.voiced(), 'the action TwiML spoke').to.be.greaterThan(10);
    call.peer.close();
  });

  it('accepted but the referred call fails (NOTIFY 486): ReferCallStatus=failed, ReferSipResponseCode=486', async () => {
    const doc = new VoiceResponse();
    doc.refer({ action: '/busy' }).sip('sip:carol@pbx.example.com');
    app.on('/refer-busy', doc.toString());
    const done = new VoiceResponse();
    done.hangup();
    app.on('/busy', done.toString());
    const call = await placeCall(stack, f.customer.id, [{ type: 'twiml', option: { url: app.url('/refer-busy') } }], {
      talk: false,
      steps: () => referAccepted('sip:carol@pbx.example.com', '486 Busy Here'),
    });
    await app.next('/refer-busy');
    const cb = await app.next('/busy', 30_000);
    expect(cb.params.ReferCallStatus).to.equal('failed');
    expect(cb.params.ReferSipResponseCode).to.equal('486');
    const r = await call.sipp;
    expect(r.code, r.errors + r.messages).to.equal(0);
    call.peer.close();
  });

  it('sip_refer timeout: a 202 with no final NOTIFY within it → svc.refer.status failed, no code; the flow goes on', async () => {
    const call = await placeCall(stack, f.customer.id, [{ type: 'sip_refer', option: { refer_to: 'sip:dave@pbx.example.com', timeout: 1500 } }, { type: 'hangup' }], {
      talk: false,
      live: false,
      steps: () => referAccepted('sip:dave@pbx.example.com', null),
    });
    const r = await call.sipp;
    expect(r.code, r.errors + r.messages).to.equal(0);
    const af = await endedFlowOfCall(call.callId);
    expect(af.error).to.equal('');
    expect(af.variables['svc.refer.status']).to.equal('failed');
    expect(af.variables['svc.refer.sip_code']).to.equal('');
    expect((af.executed_actions as { type: string }[]).map((a) => a.type)).to.deep.equal(['sip_refer', 'hangup']);
    call.peer.close();
  });
});
