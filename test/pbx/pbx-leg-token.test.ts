// The signature of a node-to-node PBX leg (media-app/xnode/pbx-token.ts): what the holding node
// accepts, and every way a header is refused (other secret, a conference leg's signature, a changed
// field, expired, another subject in the Request-URI, malformed values).
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { PBX_LEG_TTL_SEC, detailExtension, extensionDetail, pbxLegUser, signPbxLeg, verifyPbxLeg } from '../../media-app/xnode/pbx-token';
import { signLeg } from '../../media-app/xnode/token';

describe('PBX leg signature', () => {
  const secret = 's'.repeat(43);
  const claims = { kind: 'park' as const, customerId: randomUUID(), subjectId: randomUUID(), callId: randomUUID(), detail: '701' };
  const now = Date.parse('2026-11-24T01:00:00Z');
  const user = pbxLegUser(claims);

  it('a header signed with the shared secret verifies for its Request-URI until it expires', () => {
    expect(user).to.equal(`pleg.park.${claims.subjectId}`);
    const r = verifyPbxLeg(secret, signPbxLeg(secret, claims, now), { user, nowMs: now + 1000 });
    expect(r).to.deep.equal({ ok: true, claims: { ...claims, expires: Math.floor(now / 1000) + PBX_LEG_TTL_SEC } });
    expect(verifyPbxLeg(secret, signPbxLeg(secret, claims, now), { user, nowMs: now + (PBX_LEG_TTL_SEC + 1) * 1000 })).to.deep.equal({ ok: false, reason: 'expired' });
  });

  it('another secret, any changed field, or a conference leg signed with the same secret is refused', () => {
    const v = signPbxLeg(secret, claims, now);
    expect(verifyPbxLeg('t'.repeat(43), v, { nowMs: now })).to.deep.equal({ ok: false, reason: 'signature' });
    const parts = v.split(';');
    const changed = ['pickup', randomUUID(), randomUUID(), randomUUID(), '702', String(Number(parts[5]) + 3600)];
    changed.forEach((x, i) => {
      const t = [...parts];
      t[i] = x;
      expect(verifyPbxLeg(secret, t.join(';'), { nowMs: now }), `field ${i} changed`).to.deep.equal({ ok: false, reason: 'signature' });
    });
    // a conference leg's header has other fields; its MAC under our tag never matches either
    const conf = signLeg(secret, { conferenceId: claims.subjectId, callId: claims.callId, customerId: claims.customerId, conferencecallId: randomUUID() }, now);
    expect(verifyPbxLeg(secret, conf, { nowMs: now }).ok).to.equal(false);
  });

  it('a header for another kind or call than the Request-URI names is refused', () => {
    const v = signPbxLeg(secret, claims, now);
    expect(verifyPbxLeg(secret, v, { user: pbxLegUser({ kind: 'park', subjectId: randomUUID() }), nowMs: now })).to.deep.equal({ ok: false, reason: 'subject' });
    expect(verifyPbxLeg(secret, v, { user: pbxLegUser({ kind: 'supervise', subjectId: claims.subjectId }), nowMs: now })).to.deep.equal({ ok: false, reason: 'subject' });
  });

  it('missing, empty and malformed values are refused; a detail it cannot carry is not signed', () => {
    const v = signPbxLeg(secret, claims, now);
    for (const bad of [undefined, '', 'x', v + ';extra', v.replace(claims.callId, 'not-a-uuid'), v.replace('park;', 'spy;'), v.replace(/;\d+;([^;]+)$/, ';soon;$1')]) {
      expect(verifyPbxLeg(secret, bad, { nowMs: now }).ok, String(bad)).to.equal(false);
    }
    expect(() => signPbxLeg(secret, { ...claims, detail: '70;1' }, now)).to.throw(/detail/);
  });

  it('an extension of any characters travels as a pickup detail and comes back whole', () => {
    for (const ext of ['201', 'ext.7;x', 'é'.repeat(30), 'a'.repeat(64)]) {
      const detail = extensionDetail(ext);
      const v = signPbxLeg(secret, { ...claims, kind: 'pickup', detail }, now);
      const r = verifyPbxLeg(secret, v, { nowMs: now });
      expect(r.ok && detailExtension(r.claims.detail), ext).to.equal(ext);
    }
  });
});
