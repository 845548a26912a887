// The browser phone embedded in the console for the signed-in agent (iframe + postMessage): the phone
// gets the agent's SIP credential with the console's login cookie (POST
// /v1.0/service_agents/me/sip_credentials, no token in page script), registers over sip-server's
// WebSocket listener, the agent sets itself available in the page, and a real queue call from sipp
// rings the embedded phone; answered from the console's own button, audio flows both ways through
// rtpengine (the browser's inbound RTP and sipp's sink both count packets).
import { expect } from 'chai';
import request from 'supertest';
import type { Frame, HTTPRequest } from 'puppeteer-core';
import { Permission } from '../../core/permissions';
import { queuesRepo } from '../../core/repos/queues';
import { tagsRepo } from '../../core/repos/tags';
import { createAgent, createFixture, type Fixture } from '../../testkit/api';
import { chromiumAvailable } from '../../testkit/browser';
import { testDb } from '../../testkit/db';
import { Rtpengine } from '../../testkit/rtpengine';
import { createExtension, killAllSipp, RtpSink, sleep, until } from '../../testkit/media-app/harness';
import { queueCallFromSipp, queuecallInService, toneWav, type AudioStats } from '../../testkit/webphone/harness';
import { js, shot, signIn, startConsole, textOf, type ConsoleRig } from './support';

describe('console: the browser phone embedded for agents (Chromium, sipp, rtpengine)', function () {
  this.timeout(120_000);
  let rtp: Rtpengine;
  let rig: ConsoleRig;
  let f: Fixture;

  before(async function () {
    if (!chromiumAvailable()) this.skip();
    rtp = await Rtpengine.create();
    rig = await startConsole({ phone: { rtpengineNg: rtp.ng, wav: toneWav(1000) } });
    f = await createFixture(rig.t.ctx);
  });
  after(async () => {
    killAllSipp();
    await rig?.close();
    await rtp?.dispose();
  });

  it("an agent's embedded phone registers with its credential, the agent goes available and answers a sipp queue call in the page; audio flows", async () => {
    const db = await testDb();
    const tag = await tagsRepo(db).create(f.customer.id, { name: `support-${Date.now()}` });
    if (tag === 'duplicate') throw new Error('tag');
    const { ext } = await createExtension(f.customer.id);
    const a = await createAgent(rig.t.ctx, f.customer.id, Permission.CustomerAgent);
    await rig.t.ctx.repos.agents.update(a.agent.id, { name: 'Ada Agent', addresses: [{ type: 'extension', target: ext.extension }], tag_ids: [tag.id], status: 'away' });

    const page = await signIn(rig, a.agent.username, a.password);
    await page.waitForSelector('nav a');
    const credentialRequests: HTTPRequest[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/v1.0/service_agents/me/sip_credentials')) credentialRequests.push(r);
    });
    // raw audio and loopback ICE for the phone, handed over from the console's query string
    await page.goto(`${rig.base}/console/?ice=loopback&audio_processing=off#/contact-center`);
    await page.waitForSelector('.agent-phone[data-registration=registered]', { timeout: 15_000 }).catch(async (e: Error) => {
      throw new Error(`${e.message}\n${await textOf(page)}`);
    });
    // the credential came from the phone's own request, authenticated by the login cookie
    const post = credentialRequests.find((r) => r.method() === 'POST');
    expect(post, 'POST sip_credentials').to.not.equal(undefined);
    expect(post!.headers().authorization).to.equal(undefined);
    expect(post!.frame()?.url()).to.include('/phone/?embed=1&ice=loopback&audio_processing=off');
    // an agent (below manager) follows its own topics: the event stream stays open
    await page.waitForSelector('.socket-open', { timeout: 5000 });
    const phone = page.frames().find((fr) => fr.url().includes('/phone/')) as Frame;
    expect(await phone.evaluate('document.body.classList.contains("embedded")')).to.equal(true);

    // available from the page
    expect(await js<string>(page, `document.querySelector('[data-field=agent-status]').textContent`)).to.equal('away');
    await page.click('[data-action=available]');
    await page.waitForFunction(`document.querySelector('[data-field=agent-status]').textContent === 'available'`, { timeout: 5000 });
    const agent = await request(rig.t.app).get(`/v1.0/agents/${a.agent.id}`).query({ accesskey: f.accesskey });
    expect(agent.body.status).to.equal('available');

    // the phone stays registered on the other pages (hidden while no call is up)
    await js(page, `location.hash = '#/calls'`);
    await page.waitForFunction(`document.querySelector('main h2')?.textContent === 'Live calls'`);
    expect(await js<boolean>(page, `document.getElementById('phone-slot').hidden`)).to.equal(true);
    expect(await js<string>(page, `document.querySelector('.agent-phone').dataset.registration`)).to.equal('registered');

    // a queue call from sipp rings the phone while the agent looks at the live calls: the phone shows up
    const queue = await queuesRepo(db).create(f.customer.id, { name: 'support', tag_ids: [tag.id], service_timeout: 20_000 });
    const sink = await RtpSink.open();
    try {
      const uas = await queueCallFromSipp(rig.t.app, f.accesskey, queue.id, sink.port, '+15550007777');
      await page.waitForSelector('.agent-phone[data-phase=incoming]', { timeout: 20_000 });
      expect(await js<string>(page, `document.querySelector('[data-field=phone-call]').textContent`)).to.match(/^Incoming call from /);
      expect(await js<boolean>(page, `document.getElementById('phone-slot').hidden`)).to.equal(false);
      await page.click('[data-action=answer]');
      await page.waitForSelector('.agent-phone[data-phase=connected]', { timeout: 10_000 });
      const qc = await queuecallInService(db, queue.id);
      expect(qc.service_agent_id).to.equal(a.agent.id);
      // audio: the browser receives the caller side, and the browser's tone reaches the caller
      await sleep(1500);
      const stats = (await phone.evaluate('window.openvoicePhone.stats()')) as AudioStats;
      expect(stats.inbound!.packetsReceived).to.be.greaterThan(30);
      expect(stats.outbound!.packetsSent).to.be.greaterThan(30);
      expect(sink.packets).to.be.greaterThan(30);
      await js(page, `location.hash = '#/contact-center'`);
      await page.waitForFunction(`document.querySelector('main h2')?.textContent === 'Agents'`);
      await js(page, `document.getElementById('phone-slot').scrollIntoView()`);
      await shot(rig, page, 'agent-phone');
      await page.click('[data-action=phone-hangup]');
      await page.waitForSelector('.agent-phone[data-phase=ended]', { timeout: 10_000 });
      await uas.done;
      // signing out of the console revokes the agent's browser credentials
      await page.click('.top button.link');
      await page.waitForSelector('form[aria-label="Sign in"]');
      await until(async () => ((await rig.t.ctx.redis.keys(`${rig.platform!.config.redisKeyPrefix}websip:cred:*`)).length === 0 ? true : null), 5000, 'credentials revoked');
    } finally {
      sink.close();
      await page.close();
    }
    expect(rig.browser.errors.filter((e) => !/Failed to load resource/.test(e))).to.deep.equal([]);
  });

  it('an agent without an extension sees why the phone cannot sign in', async () => {
    const a = await createAgent(rig.t.ctx, f.customer.id, Permission.CustomerAgent);
    const page = await signIn(rig, a.agent.username, a.password);
    await page.waitForSelector('nav a');
    await page.goto(`${rig.base}/console/#/contact-center`);
    await page.waitForSelector('.agent-phone .error', { timeout: 15_000 });
    expect(await js<string>(page, `document.querySelector('.agent-phone .error').textContent`)).to.match(/extension/i);
    expect(await js<string>(page, `document.querySelector('.agent-phone').dataset.registration`)).to.not.equal('registered');
    await page.close();
  });
});
