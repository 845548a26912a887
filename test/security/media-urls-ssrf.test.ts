// Finding 4: `play` stream URLs and `external_media_start` fetched and connected anywhere (loopback,
// link-local), and the flow error told the remote status ("answered 403 Forbidden"). Real calls from
// sipp into a number whose flow connects to / plays from a spelling of the forbidden servers of
// spellings.ts (the platform's policy allows only 127.0.0.2); they must get no request and no
// WebSocket upgrade. With loopback allowed by the operator, a refusing server's answer still never
// reaches the flow's error.
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { killAllSipp, startPlatform, type Platform } from '../../testkit/media-app/harness';
import { callNumber, numberWithFlow, trunkCustomer } from './calls';
import { SPELLINGS, startInternalTargets, type InternalTargets } from './spellings';

describe('security: play and external media URLs go through the egress policy (finding 4)', function () {
  this.timeout(300_000);
  after(() => killAllSipp());

  describe('the platform allows only 127.0.0.2', () => {
    let p: Platform;
    let cid: string;
    let targets: InternalTargets;
    before(async () => {
      targets = await startInternalTargets();
      p = await startPlatform(targets.env);
      cid = await trunkCustomer();
    });
    after(async () => {
      await p?.close();
      await targets?.close();
    });

    it('every spelling of spellings.ts: no audio fetched and no WebSocket opened on the forbidden servers', async () => {
      const reached: string[] = [];
      for (const [i, s] of SPELLINGS.entries()) {
        if (s.kind === 'rebind') targets.resetRebind();
        const number = `+8993000006${String(i).padStart(2, '0')}`;
        const wsUrl = s.url(targets).replace(/^http:/, 'ws:');
        await numberWithFlow(cid, number, [
          { type: 'answer' },
          // a redirect is an HTTP matter: a WebSocket dial does not follow one
          ...(s.kind === 'redirect' ? [] : [{ type: 'external_media_start', option: { url: wsUrl, encapsulation: 'audiosocket' } }]),
          { type: 'play', option: { stream_urls: [`${s.url(targets)}${s.kind === 'redirect' ? '' : '.wav'}`] } },
          { type: 'hangup' },
        ]);
        const before = targets.internalHits();
        const af = await callNumber(p, cid, number);
        if (targets.internalHits() > before) reached.push(`${s.label} (${targets.internalHits() - before} requests)`);
        expect(af.executed_actions.map((a) => a.type).slice(-1), s.label).to.deep.equal(['play']);
        expect(af.end_reason, s.label).to.equal('error');
        expect(af.error, s.label).not.to.contain(targets.secret);
        if (s.refused) expect(af.error, s.label).to.match(/not allowed/);
      }
      expect(reached, 'spellings that reached the forbidden servers').to.deep.equal([]);
    });
  });

  describe('loopback allowed by the operator (EGRESS_ALLOW_CIDRS)', () => {
    let p: Platform;
    let cid: string;
    let denied: http.Server;
    const seen: string[] = [];
    before(async () => {
      p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
      cid = await trunkCustomer();
      // a server that refuses everything (WebSocket upgrades too) with 403 Forbidden and a body naming itself
      denied = http.createServer((req, res) => {
        seen.push(req.url ?? '');
        res.writeHead(403, 'Forbidden').end('admin console: access denied');
      });
      await new Promise<void>((r) => denied.listen(0, '127.0.0.1', r));
    });
    after(async () => {
      denied?.close();
      await p?.close();
    });

    it('a URL answered 403 ends the flow without telling the status or the body', async () => {
      const port = (denied.address() as AddressInfo).port;
      const number = '+899300000700';
      await numberWithFlow(cid, number, [
        { type: 'answer' },
        { type: 'external_media_start', option: { url: `ws://127.0.0.1:${port}/bot`, encapsulation: 'audiosocket' } },
        { type: 'play', option: { stream_urls: [`http://127.0.0.1:${port}/prompt.wav`] } },
        { type: 'hangup' },
      ]);
      const af = await callNumber(p, cid, number);
      // the requests were made (loopback is allowed here): the refusal is the server's own
      expect(seen.sort()).to.deep.equal(['/bot', '/prompt.wav']);
      expect(af.end_reason).to.equal('error');
      expect(af.error).to.match(/play/);
      // word-bounded: the error names the action by its random id, which may hold the digits 403
      expect(af.error).not.to.match(/\b403\b|Forbidden|answered|access denied|admin console/i);
    });
  });
});
