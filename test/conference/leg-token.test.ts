// The signature of a conference bridge leg (media-app/xnode/token.ts): what the host accepts, and
// every way a header is refused (bad signature, other secret, expired, other conference, tampered
// fields, malformed values).
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { signLeg, verifyLeg, LEG_TTL_SEC } from '../../media-app/xnode/token';
import { leaveReasonOf } from '../../media-app/xnode/leg';

describe('conference bridge leg signature', () => {
  const secret = 's'.repeat(43);
  const claims = { conferenceId: randomUUID(), callId: randomUUID(), customerId: randomUUID(), conferencecallId: randomUUID() };
  const now = Date.parse('2026-11-22T16:00:00Z');

  it('a header signed with the shared secret verifies, for its conference, until it expires', () => {
    const v = signLeg(secret, claims, now);
    const r = verifyLeg(secret, v, { conferenceId: claims.conferenceId, nowMs: now + 1000 });
    expect(r).to.deep.equal({ ok: true, claims: { ...claims, expires: Math.floor(now / 1000) + LEG_TTL_SEC } });
  });

  it('a bad signature, another secret, or any changed field is refused', () => {
    const v = signLeg(secret, claims, now);
    const parts = v.split(';');
    expect(verifyLeg('t'.repeat(43), v, { nowMs: now })).to.deep.equal({ ok: false, reason: 'signature' });
    expect(verifyLeg(secret, [...parts.slice(0, 5), 'AAAA'].join(';'), { nowMs: now })).to.deep.equal({ ok: false, reason: 'signature' });
    for (let i = 0; i < 5; i++) {
      const t = [...parts];
      t[i] = i === 4 ? String(Number(t[4]) + 3600) : randomUUID();
      expect(verifyLeg(secret, t.join(';'), { nowMs: now }), `field ${i} changed`).to.deep.equal({ ok: false, reason: 'signature' });
    }
  });

  it('an expired header is refused', () => {
    const v = signLeg(secret, claims, now);
    expect(verifyLeg(secret, v, { nowMs: now + (LEG_TTL_SEC + 1) * 1000 })).to.deep.equal({ ok: false, reason: 'expired' });
  });

  it('a header signed for another conference is refused', () => {
    const v = signLeg(secret, claims, now);
    expect(verifyLeg(secret, v, { conferenceId: randomUUID(), nowMs: now })).to.deep.equal({ ok: false, reason: 'conference' });
  });

  it('missing, empty and malformed values are refused', () => {
    const v = signLeg(secret, claims, now);
    for (const bad of [undefined, '', 'x', v + ';extra', v.replace(claims.callId, 'not-a-uuid'), v.replace(/;\d+;/, ';soon;')]) {
      expect(verifyLeg(secret, bad, { nowMs: now }).ok, String(bad)).to.equal(false);
    }
  });

  it("the host's BYE names why the participant left; a BYE without a reason means the host is lost", () => {
    const bye = (v?: string) => ({ get: (n: string) => (n === 'X-Openvoice-Leave-Reason' ? v : undefined) });
    expect(leaveReasonOf(bye('kicked'))).to.equal('kicked');
    expect(leaveReasonOf(bye('terminated'))).to.equal('terminated');
    expect(leaveReasonOf(bye())).to.equal('host_lost');
    expect(leaveReasonOf(bye('whatever'))).to.equal('host_lost');
    expect(leaveReasonOf(undefined)).to.equal('host_lost');
  });
});
