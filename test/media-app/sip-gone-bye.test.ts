// The BYE a lost dialog's far end gets once sip-server is back (media-app/call/sip-gone-bye.ts): built
// from the dialog as drachtio-srf holds it (RFC 3261 §12.2.1.1), kept for a window. The end-to-end case
// (kill -9 of sip-server, a sipp caller gets the BYE with its Reason) is test/reliability/faults-sip-server.test.ts.
import { expect } from 'chai';
import { GONE_BYE_REASON, GONE_BYE_WINDOW_MS, goneBye, routeEntries, withinWindow } from '../../media-app/call/sip-gone-bye';

const headers = (h: Record<string, string>) => ({ get: (name: string) => h[name] });
const NOW = Date.parse('2026-11-26T10:00:00Z');

describe('media-app: the BYE of a dialog lost with sip-server', () => {
  it('uas (an incoming call): our side is the INVITE’s To with our tag, theirs its From; Route the Record-Route in order', () => {
    const dialog = {
      type: 'uas',
      sip: { callId: 'c1@phone', localTag: 'ours1', remoteTag: 'theirs1' },
      remote: { uri: 'sip:alice@192.0.2.10:5062' },
      req: headers({ From: '"Alice" <sip:alice@example.com>;tag=theirs1', To: '<sip:+15550100@pbx.example.com>', 'Record-Route': '<sip:p1.example.com;lr>, <sip:p2.example.com;lr>' }),
      res: headers({}),
    };
    const bye = goneBye(dialog, NOW)!;
    expect(bye.uri).to.equal('sip:alice@192.0.2.10:5062');
    expect(bye.headers).to.include({
      From: '<sip:+15550100@pbx.example.com>;tag=ours1',
      To: '"Alice" <sip:alice@example.com>;tag=theirs1',
      'Call-ID': 'c1@phone',
      Route: '<sip:p1.example.com;lr>, <sip:p2.example.com;lr>',
      Reason: GONE_BYE_REASON,
    });
    const cseq = Number(bye.headers.CSeq!.split(' ')[0]);
    expect(bye.headers.CSeq).to.match(/^\d+ BYE$/);
    expect(cseq, 'above any CSeq sip-server numbered up from 1..9999, below 2^31')
      .to.be.above(100_000_000)
      .and.below(2 ** 31);
  });

  it('uac (our INVITE): From as sent, To of the 200 with their tag; Route the 200’s Record-Route reversed; none without one', () => {
    const dialog = {
      type: 'uac',
      sip: { callId: 'c2', localTag: 'ours2', remoteTag: 'theirs2' },
      remote: { uri: 'sip:gw@198.51.100.7' },
      req: headers({ From: '<sip:+15550100@pbx>;tag=ours2', To: '<sip:+15550111@carrier>' }),
      res: headers({ To: '<sip:+15550111@carrier>;tag=theirs2', 'Record-Route': '<sip:a;lr>,<sip:b;lr>' }),
    };
    const bye = goneBye(dialog, NOW)!;
    expect(bye.headers).to.include({ From: '<sip:+15550100@pbx>;tag=ours2', To: '<sip:+15550111@carrier>;tag=theirs2', Route: '<sip:b;lr>, <sip:a;lr>' });
    const plain = goneBye({ ...dialog, res: headers({ To: '<sip:x@carrier>;tag=t' }) }, NOW)!;
    expect(plain.headers).to.not.have.property('Route');
  });

  it('not a SIP dialog (an internal call’s, or one missing its headers): no BYE', () => {
    expect(goneBye({ sip: { callId: 'x' }, remote: { uri: 'sip:x' } }, NOW)).to.equal(null);
    expect(goneBye(null, NOW)).to.equal(null);
    const noFrom = { type: 'uas', sip: { callId: 'c', localTag: 'a', remoteTag: 'b' }, remote: { uri: 'sip:x@h' }, req: headers({ To: '<sip:y@h>' }), res: headers({}) };
    expect(goneBye(noFrom, NOW)).to.equal(null);
  });

  it('Record-Route entries split at top-level commas only', () => {
    expect(routeEntries('<sip:a;lr>, "x, y" <sip:b;lr>,<sip:c,d;lr>')).to.deep.equal(['<sip:a;lr>', '"x, y" <sip:b;lr>', '<sip:c,d;lr>']);
    expect(routeEntries(undefined)).to.deep.equal([]);
  });

  it('a BYE kept longer than the window when the connection returns is dropped', () => {
    const at = (ms: number) => ({ uri: 'sip:x', headers: {}, at: ms, callId: String(ms) });
    const { due, dropped } = withinWindow([at(NOW - GONE_BYE_WINDOW_MS - 1), at(NOW - GONE_BYE_WINDOW_MS), at(NOW - 1000)], NOW);
    expect(due.map((b) => b.at)).to.deep.equal([NOW - GONE_BYE_WINDOW_MS, NOW - 1000]);
    expect(dropped).to.equal(1);
  });
});
