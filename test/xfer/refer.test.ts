// Refer-To parsing (RFC 3515 / RFC 3891): the target URI, and a Replaces parameter naming another dialog.
import { expect } from 'chai';
import { parseReferTo } from '../../media-app/transfer/refer';

describe('Refer-To parsing', () => {
  it('takes the URI in angle brackets, with or without a display name', () => {
    expect(parseReferTo('<sip:c@127.0.0.1:5070>')).to.deep.equal({ uri: 'sip:c@127.0.0.1:5070', replaces: null });
    expect(parseReferTo('"Carol" <sip:1002@acme.reg.example.com;transport=udp>')!.uri).to.equal('sip:1002@acme.reg.example.com;transport=udp');
    expect(parseReferTo('sip:bob@example.com')!.uri).to.equal('sip:bob@example.com');
  });

  it('decodes Replaces into the dialog it names', () => {
    const r = parseReferTo('<sip:bob@example.com?Replaces=abc%40host%3Bto-tag%3D7743%3Bfrom-tag%3D6472>');
    expect(r).to.deep.equal({ uri: 'sip:bob@example.com', replaces: { callId: 'abc@host', toTag: '7743', fromTag: '6472' } });
  });

  it('refuses what is not a Refer-To', () => {
    expect(parseReferTo(undefined)).to.equal(null);
    expect(parseReferTo('')).to.equal(null);
    expect(parseReferTo('<sip:b@h?Replaces=%E0%A4%A>')).to.equal(null);
  });
});
