import { expect } from 'chai';
import twilio from 'twilio';
import { accountSid, callSid, fromSid, toSid } from '../../core/twilio/sids';
import { twilioSignature, validTwilioSignature } from '../../core/twilio/signature';
import { twilioAuthToken } from '../../core/twilio/auth-token';

describe('core/twilio', () => {
  const id = '2f1c0d3e-4b5a-4c6d-8e7f-0123456789ab';

  it('maps ids to SIDs and back, and refuses anything else', () => {
    expect(accountSid(id)).to.equal('AC2f1c0d3e4b5a4c6d8e7f0123456789ab');
    expect(fromSid('AC', accountSid(id))).to.equal(id);
    expect(fromSid('CA', callSid(id.toUpperCase()))).to.equal(id);
    expect(fromSid('CA', accountSid(id))).to.equal(null);
    expect(fromSid('AC', 'AC2f1c0d3e4b5a4c6d8e7f0123456789a')).to.equal(null);
    expect(fromSid('AC', 'AC2f1c0d3e4b5a4c6d8e7f0123456789zz')).to.equal(null);
    expect(fromSid('AC', 42)).to.equal(null);
    expect(() => toSid('CA', 'not-a-uuid')).to.throw(/not a UUID/);
  });

  it('signs as twilio.validateRequest checks, for POST parameters and for a GET URL', () => {
    const token = twilioAuthToken('platform-secret', id, 0);
    const url = 'https://app.example.com/voice?x=1&y=%C3%A9';
    const params = { CallSid: callSid(id), From: '+15005550006', Digits: '1#', To: 'sip:alice@example.com' };
    const sig = twilioSignature(token, url, params);
    expect(twilio.validateRequest(token, sig, url, params)).to.equal(true);
    expect(twilio.validateRequest(token, twilioSignature(token, url), url, {})).to.equal(true);
    expect(validTwilioSignature(token, sig, url, params)).to.equal(true);
    expect(validTwilioSignature(token, sig, url, { ...params, Digits: '2' })).to.equal(false);
    expect(validTwilioSignature(token, undefined, url, params)).to.equal(false);
  });

  it('derives a 32-hex AuthToken per customer and generation', () => {
    const a = twilioAuthToken('s', id, 0);
    expect(a).to.match(/^[0-9a-f]{32}$/);
    expect(twilioAuthToken('s', id.toUpperCase(), 0)).to.equal(a);
    expect(twilioAuthToken('s', id, 1)).to.not.equal(a);
    expect(twilioAuthToken('t', id, 0)).to.not.equal(a);
  });
});
