// The parked calls page (#/parked) in Chromium against real phones (sipp, each phone's audio a tone of
// its own): A calls B, B blind-transfers A to the lot 700. The page, open before, shows A in slot 701
// within a second of the park (the parkedcall events), with its caller, who parked it, since when and
// the time left before the ring-back; a Retrieve to an unknown extension shows the API's error in the
// row; a Retrieve to C rings C, C answers and talks to A, and the slot shows free again. The busy
// lamps page open beside it shows the slot occupied by A, then free.
import { expect } from 'chai';
import request from 'supertest';
import { createFixture } from '../../testkit/api';
import { chromiumAvailable, fill } from '../../testkit/browser';
import { killAllSipp, until } from '../../testkit/media-app/harness';
import { DEFAULT_FEATURE_CODES } from '../../core/pbx/feature-codes';
import { pbxSettingsRepo } from '../../core/pbx/settings';
import { parkSlots } from '../../core/pbx/park-slots';
import { party, type Stack } from '../xfer/support';
import { answerOn, call, caller, callWhere, hears, phone, type Phone } from '../pbx/support';
import { js, shot, signIn, startConsole, type ConsoleRig } from './support';

const [TONE_A, TONE_B, TONE_C] = [400, 1600, 2000];

describe('console: parked calls page against a real park (Chromium, sipp)', function () {
  this.timeout(150_000);
  let rig: ConsoleRig;
  let s: Stack;
  const phones: Phone[] = [];
  before(async function () {
    if (!chromiumAvailable()) this.skip();
    rig = await startConsole({ platform: true });
    const f = await createFixture(rig.t.ctx);
    const auth = `Bearer ${f.token}`;
    // the PBX suites' stack, on the console's control-api and call plane
    s = {
      p: rig.platform!,
      t: rig.t,
      f,
      api: {
        post: (path, body) =>
          request(rig.t.app)
            .post(`/v1.0${path}`)
            .set('Authorization', auth)
            .send(body as object),
        get: (path) => request(rig.t.app).get(`/v1.0${path}`).set('Authorization', auth),
      },
      close: () => rig.close(),
    };
    // long enough that no ring-back comes during the test
    await pbxSettingsRepo(rig.t.ctx.db).put(f.customer.id, { ...DEFAULT_FEATURE_CODES, park_timeout_sec: 300 });
  });
  after(async () => {
    killAllSipp();
    for (const p of phones) p.audio.close();
    await rig?.close();
  });

  // A failed attempt leaves A parked in 701 and its phones running: a retry (TEST_RETRIES) would wait for a free
  // slot that never comes. Its calls are printed (what the retry cannot tell) and ended, so a retry starts
  // from the state the first attempt had.
  let finished = false;
  afterEach(async () => {
    // (mocha marks no state on an attempt it retries, so the test says it got to its end)
    if (finished || !s) return;
    const cid = s.f.customer.id;
    const rows = (await s.t.ctx.db('calls').where({ customer_id: cid })) as {
      id: string;
      status: string;
      direction: string;
      source: { target: string };
      destination: { target: string };
      hangup_reason: string | null;
    }[];
    for (const r of rows) console.log(`      call ${r.direction} ${r.source.target} → ${r.destination.target}: ${r.status}${r.hangup_reason ? ` (${r.hangup_reason})` : ''}`);
    console.log(`      parked: ${JSON.stringify(await parkSlots(rig.t.ctx.redis, rig.platform!.config.redisKeyPrefix).list(cid))}`);
    for (const r of rows) if (r.status !== 'hangup') await s.api.post(`/calls/${r.id}/hangup`, undefined);
    // the phones answer the BYEs first (killed before, a BYE waits out its transaction's 32 s)
    await until(async () => (await parkSlots(rig.t.ctx.redis, rig.platform!.config.redisKeyPrefix).list(cid)).length === 0, 20_000, 'the lot empty after a failed attempt');
    killAllSipp();
  });

  const newPhone = async (freq: number) => {
    const p = await phone(s, s.f.customer.id, freq);
    phones.push(p);
    return p;
  };

  it('a parked call appears in its slot live and is retrieved to an extension from the page', async () => {
    const cid = s.f.customer.id;
    const [a, b, c] = [await newPhone(TONE_A), await newPhone(TONE_B), await newPhone(TONE_C)];
    const page = await signIn(rig, s.f.admin.username, s.f.password, { width: 1280, height: 1000 });
    await page.waitForSelector('nav a[aria-current=page]');
    await page.click('nav a[href="#/parked"]');
    await page.waitForSelector('.socket-open');
    const row = (slot: number) => `table[aria-label="Park slots"] tr[data-id="${slot}"]`;
    await page.waitForSelector(row(720));
    // the busy lamps page, open beside it, shows the slot's lamp
    const lamps = await signIn(rig, s.f.admin.username, s.f.password);
    await lamps.waitForSelector('nav a[aria-current=page]');
    await lamps.goto(`${rig.base}/console/#/blf`);
    await lamps.waitForSelector('.socket-open');
    await lamps.waitForSelector('.lamps.slots li[data-slot="701"][data-state=free]');
    expect(await js<number>(page, `document.querySelectorAll('table[aria-label="Park slots"] tr.slot-free').length`)).to.equal(20);

    // A calls B; B blind-transfers A to the lot
    const bPhone = await answerOn(b, party({ rtpPort: b.audio.port, referTo: `sip:700@${b.domain}`, referAfterMs: 2500, byeTimeoutMs: 30_000 }));
    const aPhone = await call(s, a, caller({ user: a.user, domain: a.domain, target: b.extension, rtpPort: a.audio.port, byeTimeoutMs: 90_000 }));
    await hears(a.audio, TONE_B, 'A hears B before the park', { timeoutMs: 30_000 });
    const parked = await until(async () => (await parkSlots(rig.t.ctx.redis, rig.platform!.config.redisKeyPrefix).list(cid)).find((p) => p.parker?.target === b.extension) ?? null, 20_000, 'A parked');
    const parkedAt = Date.now();
    expect(parked.slot).to.equal(701);
    await page.waitForFunction(`document.querySelector('${row(701)} [data-field=state]')?.textContent === 'occupied'`, { timeout: 5000, polling: 'mutation' });
    expect(Date.now() - parkedAt, 'shown after the park (ms)').to.be.below(1000);
    const aRow = await callWhere(s, { customer_id: cid, direction: 'incoming', from: a.extension }, 'progressing', 'A up');
    expect(parked.call_id).to.equal(aRow.id);
    const cells = await js<Record<string, string>>(page, `Object.fromEntries([...document.querySelectorAll('${row(701)} [data-field]')].map((e) => [e.dataset.field, e.textContent]))`);
    expect(cells.caller).to.include(a.extension);
    expect(cells.parker).to.equal(b.extension);
    expect(cells.since).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(cells.left).to.match(/^[45]:\d\d$/); // 300 s less the seconds since the park
    expect((await bPhone.done).code).to.equal(0);
    await lamps.waitForSelector('.lamps.slots li[data-slot="701"][data-state=occupied]', { timeout: 5000 });
    expect(await js<string>(lamps, `document.querySelector('.lamps.slots li[data-slot="701"]').innerText`)).to.include(a.extension);
    await shot(rig, page, 'parked-calls');

    // a Retrieve to an extension that does not exist: the API's error shows in the row, nothing changes
    await page.type(`${row(701)} input[name=extension]`, 'nobody');
    await page.click(`${row(701)} button[type=submit]`);
    await page.waitForFunction(`document.querySelector('${row(701)} .error')?.textContent.includes('RESOURCE_NOT_FOUND')`, { timeout: 5000 });
    expect(await js<string>(page, `document.querySelector('${row(701)} .error').textContent`)).to.include('no extension "nobody"');
    expect((await s.api.get('/parkedcalls/701')).status).to.equal(200);

    // Retrieve to C: C's phone rings and answers, then C and A talk; the slot shows free
    const cPhone = await answerOn(c, party({ rtpPort: c.audio.port, byeTimeoutMs: 60_000 }));
    // the page redraws each second (the ring-back countdown): the box is filled as a user would, so a
    // redraw cannot put "nobody" back before the typing; the retrieve is accepted before A listens
    await fill(page, `${row(701)} input[name=extension]`, c.extension);
    expect(await js<string>(page, `document.querySelector('${row(701)} input[name=extension]').value`)).to.equal(c.extension);
    const retrieve = page.waitForResponse((r) => r.url().endsWith('/parkedcalls/701/retrieve') && r.request().method() === 'POST', { timeout: 10_000 });
    await page.click(`${row(701)} button[type=submit]`);
    expect((await retrieve).status(), 'the retrieve to C').to.equal(200);
    await hears(a.audio, TONE_C, 'A hears C');
    await hears(c.audio, TONE_A, 'C hears A');
    await page.waitForFunction(`document.querySelector('${row(701)} [data-field=state]')?.textContent === 'free'`, { timeout: 5000 });
    expect(await js<string>(page, `document.querySelector('${row(701)} .error')?.textContent ?? ''`)).to.equal('');
    await lamps.waitForSelector('.lamps.slots li[data-slot="701"][data-state=free]', { timeout: 5000 });
    expect((await s.api.post(`/calls/${aRow.id}/hangup`, undefined)).status).to.equal(200);
    const [ra, rc] = await Promise.all([aPhone.done, cPhone.done]);
    expect(ra.code, ra.errors).to.equal(0);
    expect(rc.code, rc.errors).to.equal(0);
    expect(rig.browser.errors.filter((e) => /Content Security Policy|pageerror/.test(e))).to.deep.equal([]);
    finished = true;
  });
});
