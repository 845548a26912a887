// The dashboard page (#/dashboard) and the call page's per-leg quality, in Chromium against a real
// control-api and Postgres: seeded calls of the last hour (two bridged legs with quality summaries and
// 5 s call_quality samples written by the real events store), webhook deliveries, another customer's
// call that must not count, a voice agent's turns. Charts are uPlot canvases under the console's CSP (no CSP error allowed).
import { insertCallRow } from '../../testkit/cdr';
import { insertDelivery } from '../../testkit/deliveries';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { createFixture, type Fixture } from '../../testkit/api';
import { chromiumAvailable } from '../../testkit/browser';
import { newId, EMPTY_UUID } from '../../core/ids';
import { storeEvent } from '../../core/events/store';
import { eventPublisher } from '../../core/events/bus';
import { LAPTOP, PHONE, js, shot, signIn, startConsole, textOf, type ConsoleRig } from './support';

const MIN = 60_000;

describe('console: dashboard and call quality (Chromium)', function () {
  this.timeout(90_000);
  let rig: ConsoleRig;
  let f: Fixture;
  let legA: string;
  before(async function () {
    if (!chromiumAvailable()) this.skip();
    rig = await startConsole();
    f = await createFixture(rig.t.ctx);
    const other = await createFixture(rig.t.ctx);
    const now = Date.now();
    const ago = (ms: number) => new Date(now - ms);
    const call = (fx: Fixture, fields: Record<string, unknown>) => insertCallRow(rig.t.ctx.db, fx.customer.id, fields);
    const summary = (min: number, avg: number, loss: number) => ({ mos_min: min, mos_avg: avg, loss_pct: loss, jitter_ms: 12.5, rtt_ms: 48 });
    // two bridged legs, 2 minutes, 50 minutes ago; samples every 5 s with a loss burst in the middle
    legA = newId();
    const legB = newId();
    const start = now - 50 * MIN;
    await call(f, {
      id: legA,
      chained_call_ids: [legB],
      tm_create: ago(50 * MIN),
      tm_progressing: ago(50 * MIN - 3000),
      tm_hangup: ago(48 * MIN),
      quality: { codec: 'PCMU', in: summary(2.91, 4.02, 2.4), out: summary(3.6, 4.2, 0.5) },
    });
    await call(f, {
      id: legB,
      master_call_id: legA,
      direction: 'outgoing',
      destination: { type: 'tel', target: '+15550003333' },
      tm_create: ago(50 * MIN - 1000),
      tm_progressing: ago(50 * MIN - 2500),
      tm_hangup: ago(48 * MIN),
      quality: { codec: 'PCMA', in: summary(4.1, 4.3, 0.2), out: null },
    });
    for (const [leg, dip] of [
      [legA, 1.5],
      [legB, 0.3],
    ] as const) {
      for (let i = 0; i < 24; i++) {
        const bad = i >= 10 && i < 14;
        const sample = (mos: number) => ({ mos, r_factor: 80, loss_pct: bad ? 4 : 0.2, jitter_ms: bad ? 35 : 8, rtt_ms: 48 });
        await storeEvent(rig.t.ctx.db, {
          id: newId(),
          event_type: 'call_quality',
          customer_id: f.customer.id,
          resource: 'call',
          resource_id: leg,
          timestamp: new Date(start + 3000 + i * 5000).toISOString(),
          data: {
            id: newId(),
            customer_id: f.customer.id,
            call_id: leg,
            activeflow_id: EMPTY_UUID,
            codec: 'PCMU',
            final: i === 23,
            in: sample(bad ? 4.3 - dip : 4.3),
            out: leg === legB ? null : sample(bad ? 3.6 : 4.2),
          },
        });
      }
    }
    // more calls over the hour: 6 answered of 8, and a live one
    for (let i = 0; i < 8; i++) {
      const t0 = now - (40 - i * 4) * MIN;
      await call(f, {
        tm_create: new Date(t0),
        tm_progressing: i % 4 === 3 ? null : new Date(t0 + 4000),
        tm_hangup: new Date(t0 + 4000 + (i + 1) * 20_000),
        quality: i % 4 === 3 ? null : { codec: 'PCMU', in: summary(4.0 + i * 0.04, 4.3, 0), out: null },
      });
    }
    await call(f, { tm_create: ago(5 * MIN), tm_progressing: ago(5 * MIN - 2000), status: 'progressing', hangup_reason: '' });
    await call(other, { tm_create: ago(30 * MIN), tm_progressing: ago(30 * MIN - 1000), tm_hangup: ago(29 * MIN), quality: { codec: 'PCMU', in: summary(1.1, 1.2, 30), out: null } });
    // a voice agent's turns over the hour: reply times 600, 900, ..., 3300 ms; first audio out 400, 500, ..., 1300 ms
    const aicall = newId();
    await rig.t.ctx
      .db('aicalls')
      .insert({ id: aicall, customer_id: f.customer.id, assistance_type: 'ai', assistance_id: newId(), status: 'terminated', reference_type: 'call', reference_id: newId(), tm_create: ago(45 * MIN) });
    for (let i = 0; i < 10; i++) {
      const said = now - (44 - i * 4) * MIN;
      for (const [role, tm] of [
        ['user', said],
        ['assistant', said + 600 + i * 300],
      ] as const) {
        const latency = { end_of_turn_wait_ms: 300, stt_final_ms: 250, llm_first_token_ms: 200 + i * 10, tts_first_byte_ms: 150, first_rtp_ms: 400 + i * 100 };
        const metadata = JSON.stringify(role === 'assistant' ? { latency } : {});
        await rig.t.ctx
          .db('aimessages')
          .insert({ id: newId(), customer_id: f.customer.id, aicall_id: aicall, role, content: role, direction: role === 'user' ? 'incoming' : 'outgoing', tm_create: new Date(tm), metadata });
      }
    }
    for (let i = 0; i < 12; i++) {
      await insertDelivery(rig.t.ctx.db, f.customer.id, i % 4 === 0 ? 'failed' : 'delivered', ago((45 - i * 3) * MIN));
    }
  });
  after(async () => rig?.close());

  it('draws the dashboard from GET /dashboard with its totals, charts and worst calls', async () => {
    const page = await signIn(rig, f.admin.username, f.password, { ...LAPTOP, height: 2150 });
    await page.waitForSelector('nav a[aria-current=page]');
    expect(await page.$$eval('nav a', (as) => as.map((a) => a.textContent))).to.include('Dashboard');
    await page.click('nav a[href="#/dashboard"]');
    await page.waitForSelector('[data-field=calls]');
    await page.click('.segmented button:first-child'); // Last hour
    await page.waitForFunction(`location.hash === '#/dashboard?range=1h' && document.querySelector('.segmented button[aria-pressed=true]')?.textContent === 'Last hour'`);
    await page.waitForFunction(`document.querySelector('[data-field=calls]')?.textContent === '11'`);
    const tile = (f: string) => js<string>(page, `document.querySelector('[data-field=${f}]').textContent`);
    // 2 legs + 8 + the live one; answered 2 + 6 + 1 of 11; the other customer's call not counted
    expect(await tile('asr')).to.equal('82%');
    expect(await tile('concurrent')).to.equal('2');
    expect(await tile('webhook-failures')).to.equal('3 of 12');
    expect(await tile('mos')).to.not.equal('—');
    // p90 of 600..3300 ms in steps of 300: 600 + 0.9 × 9 × 300
    expect(await tile('ai-p90')).to.equal('3.0 s');
    expect(await textOf(page)).to.match(/10 turns: p50 1\.9 s, p90 3\.0 s, p99 3\.3 s/);
    // p90 of the first audio 400..1300 ms: 400 + 0.9 × 9 × 100 = 1210 ms; and the stages of the range
    expect(await tile('ai-first-audio-p90')).to.equal('1.2 s');
    const stages = await js<string[]>(page, `[...document.querySelectorAll('table[aria-label="AI turn latency by stage"] tbody tr')].map((r) => r.textContent)`);
    expect(stages).to.deep.equal([
      "Caller's last word → first audio out850 ms1.2 s1.3 s",
      'End-of-turn wait300 ms300 ms300 ms',
      "Recogniser's final words250 ms250 ms250 ms",
      'LLM first token245 ms281 ms289 ms',
      'Voice first audio150 ms150 ms150 ms',
    ]);
    // eight charts, each a uPlot canvas with pixels drawn on it
    await page.waitForFunction(`document.querySelectorAll('.chart .uplot canvas').length === 8`);
    const painted = await js<number[]>(
      page,
      `[...document.querySelectorAll('.chart .uplot canvas')].map((c) => {
         const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
         let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
         return n;
       })`,
    );
    expect(
      painted.every((n) => n > 500),
      String(painted),
    ).to.equal(true);
    // the worst call first, linking to its page; the other customer's 1.10 is not there
    const worst = await js<string[]>(page, `[...document.querySelectorAll('table[aria-label="Calls with the lowest MOS"] tbody tr')].map((r) => r.innerText)`);
    expect(worst[0]).to.include('2.91').and.include('+15550001111 → +15550002222');
    expect(worst.join('\n')).to.not.include('1.10');
    // the numbers are there for a screen reader too (the charts' hidden tables)
    expect(await js<string>(page, `document.querySelector('figure[data-chart="Calls by their lowest MOS"] .visually-hidden table').textContent`)).to.include('2.5–3.0');
    await shot(rig, page, 'dashboard');
    // ranges up to 30 days
    await page.click('.segmented button:nth-child(5)');
    await page.waitForFunction(`location.hash === '#/dashboard?range=30d' && document.body.innerText.includes('buckets of 6 h')`);
    // on a phone the charts follow the screen's width: nothing wider than the page
    await page.setViewport(PHONE);
    // (the charts are there: while a range's data loads the list may be empty, and `every` of none is true;
    // the layout viewport's width, not innerWidth: a phone zooms out to show a page wider than its screen)
    await page.waitForFunction(
      `(() => { const u = [...document.querySelectorAll('.chart .uplot')]; return u.length > 0 && u.every((c) => c.getBoundingClientRect().right <= document.documentElement.clientWidth); })()`,
    );
    expect(await js<number>(page, 'document.documentElement.scrollWidth')).to.be.at.most(PHONE.width);
    // uPlot redraws a resized chart on the next frame
    await page.waitForFunction(
      `[...document.querySelectorAll('.chart .uplot canvas')].every((c) => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) return true; return false; })`,
    );
    await shot(rig, page, 'dashboard-phone');
    expect(rig.browser.errors.filter((e) => /Content Security Policy|pageerror/.test(e))).to.deep.equal([]);
  });

  it("shows each leg's quality over time on the call page", async () => {
    const page = await signIn(rig, f.admin.username, f.password, { ...LAPTOP, height: 1000 });
    await page.waitForSelector('nav a[aria-current=page]');
    await page.goto(`${rig.base}/console/#/calls/${legA}`);
    await page.waitForFunction(`document.querySelectorAll('.leg-quality').length === 2`);
    await page.waitForFunction(`document.querySelectorAll('.leg-quality .uplot canvas').length === 4`);
    const mins = await js<string[]>(page, `[...document.querySelectorAll('.leg-quality [data-field=mos_min]')].map((e) => e.textContent)`);
    expect(mins).to.deep.equal(['2.91', '3.60', '4.10']);
    // the samples are the chart's data: 24 per leg, the dip visible in this leg's MOS in
    const rows = await js<string[]>(page, `[...document.querySelectorAll('.leg-quality figure .visually-hidden table')[0].querySelectorAll('tbody tr')].map((r) => r.textContent)`);
    expect(rows).to.have.length(24);
    expect(rows.filter((r) => r.includes('2.80'))).to.have.length(4);
    const legText = await js<string>(page, `document.querySelectorAll('.leg-quality')[1].innerText`);
    expect(legText).to.include('outgoing leg').and.include('+15550003333').and.include('not measured');
    const section = await page.$('.card:has(.leg-quality)');
    await section!.scrollIntoView();
    const file = path.join(rig.shots, 'call-quality.png');
    await section!.screenshot({ path: file as `${string}.png` });
    expect(fs.statSync(file).size).to.be.greaterThan(10_000);
    expect(rig.browser.errors.filter((e) => /Content Security Policy|pageerror/.test(e))).to.deep.equal([]);
  });

  it('keeps the call on its page when a live call_quality event arrives (a sample, not the call), and charts the new sample', async () => {
    const page = await signIn(rig, f.admin.username, f.password);
    await page.waitForSelector('nav a[aria-current=page]');
    await page.goto(`${rig.base}/console/#/calls/${legA}`);
    await page.waitForSelector('.socket-open');
    await page.waitForFunction(`document.querySelector('[data-field=status]')?.textContent === 'hangup'`);
    const publisher = eventPublisher(rig.t.ctx);
    const sample = { mos: 4.1, r_factor: 85, loss_pct: 0, jitter_ms: 5, rtt_ms: 40 };
    /** One more live quality sample of leg A, as media-app publishes it. */
    const publishSample = () =>
      publisher.publish('call_quality', f.customer.id, legA, {
        id: newId(),
        customer_id: f.customer.id,
        call_id: legA,
        activeflow_id: EMPTY_UUID,
        codec: 'PCMU',
        final: false,
        in: sample,
        out: sample,
      });
    // the page's subscription settles a moment after the socket opens: publish until the page reacts
    let reacted = false;
    for (let i = 0; i < 20 && !reacted; i++) {
      const answered = page
        .waitForResponse((r) => r.url().includes(`/timelines/calls/${legA}/events`), { timeout: 1000 })
        .then(
          () => true,
          () => false,
        );
      await publishSample();
      reacted = await answered;
    }
    expect(reacted, 'the page never saw the event').to.equal(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(await js<string>(page, `document.querySelector('[data-field=status]')?.textContent ?? ''`)).to.equal('hangup');
    expect(await textOf(page)).to.include('Call +15550001111 → +15550002222');
    // the sample reaches the timeline through the events store, maybe after the page read it: another
    // sample reads again; the leg's chart then holds more than the 24 seeded samples
    const charted = () => js<number>(page, `document.querySelectorAll('.leg-quality figure .visually-hidden table')[0].querySelectorAll('tbody tr').length`);
    for (let i = 0; i < 10 && (await charted()) <= 24; i++) {
      await publishSample();
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(await charted()).to.be.greaterThan(24);
  });
});
