// The browser phone end to end in Chromium: it registers over ws (loopback) and wss (a self-signed
// certificate the browser is told to accept); it calls an extension registered by sipp through
// sip-server, media-app and a real rtpengine (DTLS-SRTP + ICE towards the browser), and the tones
// cross both ways: the sipp side's RTP party hears the browser's 1000 Hz microphone tone, and the
// browser's getStats shows sipp's audio arriving (inbound-rtp packets and level).
import { expect } from 'chai';
import { RtpParty } from '../../testkit/conference/party';
import { chromiumAvailable, type TestBrowser } from '../../testkit/browser';
import { truncateAll } from '../../testkit/db';
import { freePort } from '../../testkit/ports';
import { Rtpengine } from '../../testkit/rtpengine';
import { selfSignedCert, type TestCert } from '../../testkit/tls-cert';
import { createExtension, killAllSipp, registerOnly, sipp, sleep } from '../../testkit/media-app/harness';
import { apiServer, audioStats, calleeToParty, callText, openPhone, phoneBrowser, signInExtension, startRig, toneWav, waitPhase, waitReg, type Rig } from '../../testkit/webphone/harness';

describe('webphone: calls from Chromium', function () {
  this.timeout(120_000);
  let rtp: Rtpengine;
  let cert: TestCert;
  let rig: Rig;
  let b: TestBrowser;

  before(async function () {
    if (!chromiumAvailable()) this.skip();
    await truncateAll();
    cert = selfSignedCert();
    rtp = await Rtpengine.create();
    rig = await startRig({ ws: true, tls: cert, publicWs: 'ws', platformEnv: { RTPENGINE_NG: rtp.ng } });
    b = await phoneBrowser(toneWav(1000), { ignoreCertificateErrors: true });
  });
  after(async () => {
    killAllSipp();
    await b?.close();
    await rig?.close();
    await rtp?.dispose();
  });

  it('registers over ws on loopback and over wss with a self-signed certificate', async () => {
    const { ext, domain, password } = await createExtension();
    const aor = `${ext.username}@${domain}`;
    const page = await openPhone(b, rig.base);
    await signInExtension(page, aor, password);
    await waitReg(page, 'registered');
    const [ws] = await rig.p.app.registrar.bindings.get(aor);
    expect(ws!.source.protocol).to.equal('ws');
    expect(ws!.contact).to.match(/;transport=ws$/);
    await page.close();

    // a control-api whose SIP_WSS_PUBLIC_URL is the wss listener (its CSP allows exactly that origin)
    const secure = await apiServer(rig.prefix, { SIP_WSS_PUBLIC_URL: rig.wssUrl }, rig.sparePort);
    try {
      const other = await createExtension();
      const page2 = await openPhone(b, secure.base);
      await signInExtension(page2, `${other.ext.username}@${other.domain}`, other.password);
      await waitReg(page2, 'registered');
      const [wss] = await rig.p.app.registrar.bindings.get(`${other.ext.username}@${other.domain}`);
      expect(wss!.source.protocol).to.equal('wss');
      expect(wss!.contact).to.match(/;transport=ws$/); // JsSIP writes transport=ws for both (RFC 7118 allows it)
      await page2.close();
    } finally {
      await secure.close();
    }
  });

  it("browser → extension registered by sipp: sipp's side hears the browser's 1000 Hz tone, the browser receives sipp's audio", async () => {
    const caller = await createExtension();
    const callee = await createExtension(caller.customerId);
    const party = await RtpParty.open(440);
    const phonePort = await freePort();
    const sipServer = `127.0.0.1:${rig.p.sipPort}`;
    const reg = await sipp(registerOnly(callee.ext.username, callee.domain), [sipServer, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', callee.ext.username, '-ap', callee.password])
      .done;
    expect(reg.code, reg.errors).to.equal(0);
    const uas = sipp(calleeToParty(callee.ext.username, party.port), ['-i', '127.0.0.1', '-p', String(phonePort), '-m', '1'], { killAfterMs: 60_000 });
    await sleep(300);

    const page = await openPhone(b, rig.base);
    try {
      await signInExtension(page, `${caller.ext.username}@${caller.domain}`, caller.password);
      await waitReg(page, 'registered');
      await page.type('#target', callee.ext.extension);
      await page.click('#call');
      await waitPhase(page, 'connected', 15_000);
      const from = Date.now();
      await sleep(3000);
      expect(party.framesBetween(from), 'RTP frames at the sipp side').to.be.greaterThan(100);
      expect(party.presence(1000, from), `the browser's tone at the sipp side`).to.be.greaterThan(0.8);
      const stats = await audioStats(page);
      expect(stats.inbound!.packetsReceived, 'browser inbound-rtp packets').to.be.greaterThan(100);
      // sipp's side sends a 440 Hz tone at 5000/32768 (RMS ≈ 0.11 of full scale); silence stays near 0
      expect(stats.inbound!.averageLevel, 'browser inbound audio level (RMS over the call)').to.be.greaterThan(0.03);
      expect(stats.outbound!.packetsSent).to.be.greaterThan(100);
      // HD voice (issue #34): the browser's leg is Opus both ways, by its own getStats codec reports (the
      // engine transcodes to sipp's PCMU)
      const codecs = (await page.evaluate(
        `window.openvoicePhone.session.connection.getStats().then((r) => [...r.values()].filter((s) => (s.type === 'inbound-rtp' || s.type === 'outbound-rtp') && s.kind === 'audio').map((s) => s.type + ' ' + (r.get(s.codecId)?.mimeType ?? 'none')))`,
      )) as string[];
      expect(codecs.sort(), "the browser leg's codecs").to.deep.equal(['inbound-rtp audio/opus', 'outbound-rtp audio/opus']);
      await page.click('#hangup');
      await waitPhase(page, 'ended');
      expect(await callText(page)).to.match(/Call ended/);
      const r = await uas.done;
      expect(r.code, r.errors + r.messages).to.equal(0);
    } finally {
      party.close();
      await page.close();
    }
  });
});
