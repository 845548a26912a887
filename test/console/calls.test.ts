// The live calls table and the call page against a real call: control-api's POST /v1.0/calls
// (made outside the page) dials a sipp callee through media-app and sip-server; the page sees the
// call appear within a second from /v1.0/ws and follows it to hangup. The flow records a prompt, so
// the recording page then plays a real recording (the audio element reaches `ended`) over its
// waveform drawn from the playfile peaks.
import { expect } from 'chai';
import request from 'supertest';
import { createFixture, type Fixture } from '../../testkit/api';
import { chromiumAvailable } from '../../testkit/browser';
import { sippMediaPort, freePort } from '../../testkit/ports';
import { answeringUas, killAllSipp, sipp, until } from '../../testkit/media-app/harness';
import { js, PHONE, shot, signIn, startConsole, textOf, type ConsoleRig } from './support';

describe('console: live calls, call page and recordings against a real call (Chromium, sipp)', function () {
  this.timeout(120_000);
  let rig: ConsoleRig;
  let f: Fixture;
  let callId = '';
  before(async function () {
    if (!chromiumAvailable()) this.skip();
    rig = await startConsole({ platform: true });
    f = await createFixture(rig.t.ctx);
  });
  after(async () => {
    killAllSipp();
    await rig?.close();
  });

  /** A sipp callee that answers, and a POST /v1.0/calls (outside the page) that dials it and runs `actions`. */
  async function dialOut(actions: unknown[]) {
    const port = await freePort();
    const callee = sipp(answeringUas(), ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())], { killAfterMs: 60_000 });
    await callee.port;
    const res = await request(rig.t.app)
      .post('/v1.0/calls')
      .query({ accesskey: f.accesskey })
      .send({
        source: { type: 'tel', target: '+15550100000' },
        destinations: [{ type: 'sip', target: `callee@127.0.0.1:${port}` }],
        actions,
      });
    const posted = Date.now();
    expect(res.status, JSON.stringify(res.body)).to.be.oneOf([200, 201]);
    const id = ((Array.isArray(res.body) ? res.body : (res.body.calls ?? [res.body])) as { id: string }[])[0]!.id;
    return { id, posted, callee };
  }

  it('a POST /v1.0/calls made outside the page shows in the live table within 1 s and moves to hangup', async () => {
    const page = await signIn(rig, f.admin.username, f.password);
    await page.waitForSelector('.socket-open');
    await page.waitForSelector('main .card');
    const { id, posted, callee } = await dialOut([
      { type: 'recording_start', option: { format: 'wav' } },
      { type: 'talk', option: { text: 'This call is recorded for the console test.', language: 'en-US' } },
      { type: 'recording_stop' },
      { type: 'hangup' },
    ]);
    callId = id;
    const row = `table[aria-label=Calls] tr[data-id="${id}"]`;
    await page.waitForSelector(row, { timeout: 1000 });
    const seenAfterMs = Date.now() - posted;
    expect(seenAfterMs).to.be.below(1000);
    // it is answered and talks: the page shows it progressing with a running duration
    await page.waitForFunction(`document.querySelector(${JSON.stringify(row + ' [data-field=status]')})?.textContent === 'progressing'`, { timeout: 15_000 });
    // the node holding the call: the API's opaque node name, shown in its column
    const apiNode = (await request(rig.t.app).get(`/v1.0/calls/${id}`).query({ accesskey: f.accesskey })).body.node_id as string;
    expect(apiNode).to.match(/^node-[0-9a-f]{10}$/);
    await page.waitForFunction(`document.querySelector(${JSON.stringify(row + ' [data-field=node]')})?.textContent === ${JSON.stringify(apiNode)}`, { timeout: 5000 });
    await shot(rig, page, 'calls-live');
    await page.waitForFunction(`document.querySelector(${JSON.stringify(row + ' [data-field=status]')})?.textContent === 'hangup'`, { timeout: 30_000 });
    const r = await callee.done;
    expect(r.code, r.errors + r.messages).to.equal(0);
    // the page's last word is the API's
    const api = await request(rig.t.app).get(`/v1.0/calls/${callId}`).query({ accesskey: f.accesskey });
    expect(api.body.status).to.equal('hangup');
    const duration = await js<string>(page, `document.querySelector(${JSON.stringify(row + ' [data-field=duration]')}).textContent`);
    expect(duration).to.match(/^0:0[1-9]|^0:[1-5]\d/);
    await shot(rig, page, 'calls');
    await page.setViewport(PHONE); // a mobile viewport reloads the page
    await page.waitForSelector(`${row} [data-field=status]`);
    await shot(rig, page, 'calls-phone');
    expect(await js<number>(page, 'document.documentElement.scrollWidth - window.innerWidth')).to.be.at.most(0);
    await page.close();
  });

  it('the call page shows the timeline, the SIP ladder, its recording, and the hang-up state', async () => {
    expect(callId).to.not.equal('');
    const page = await signIn(rig, f.admin.username, f.password);
    await page.waitForSelector('main .card');
    await page.goto(`${rig.base}/console/#/calls/${callId}`);
    await page.waitForSelector('ol.timeline li');
    const text = await textOf(page);
    for (const t of ['call_created', 'call_progressing', 'call_hangup', 'SIP ladder', 'Transcripts']) expect(text).to.include(t);
    // the SIP ladder: the messages sip-server captured, in the API's order
    await page.waitForSelector('.ladder-msg');
    const shown = await js<string[]>(page, `[...document.querySelectorAll('.ladder-msg')].map((d) => d.dataset.method)`);
    const ladder = await request(rig.t.app).get(`/v1.0/timelines/calls/${callId}/sip-analysis`).query({ accesskey: f.accesskey });
    expect(ladder.status).to.equal(200);
    expect(shown).to.deep.equal((ladder.body.sip_messages as { method: string }[]).map((m) => m.method));
    for (const m of ['INVITE', '180 Ringing', '200 OK', 'ACK', 'BYE']) expect(shown).to.include(m);
    await js(page, `document.querySelector('.ladder').closest('.card').scrollIntoView()`);
    await shot(rig, page, 'call-ladder');
    // a message opens to its raw text (keyboard: the summary is focusable)
    await page.focus('.ladder-msg summary');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.ladder-msg[open] pre.raw');
    expect(await js<string>(page, `document.querySelector('.ladder-msg[open] pre.raw').textContent`)).to.match(/^INVITE sip:/);
    expect(await page.$eval('button.danger', (b) => (b as unknown as { disabled: boolean }).disabled)).to.equal(true);
    await page.waitForSelector('a[href^="#/recordings/"]');
    await js(page, 'window.scrollTo(0, 0)');
    await shot(rig, page, 'call');
    await page.close();
  });

  it('a recording plays in the page to its end, over a waveform drawn from the peaks', async () => {
    const call = await until(
      async () => {
        const c = await request(rig.t.app).get(`/v1.0/calls/${callId}`).query({ accesskey: f.accesskey });
        return (c.body.recording_ids as string[]).length > 0 ? c.body : null;
      },
      10_000,
      'recording id',
    );
    const recId = (call.recording_ids as string[])[0]!;
    const files = await until(
      async () => {
        const p = await request(rig.t.app).get(`/v1.0/recordings/${recId}/playfiles`).query({ accesskey: f.accesskey });
        return p.status === 200 && p.body.length > 0 && p.body[0].peaks.length > 0 ? p.body : null;
      },
      10_000,
      'playfiles with peaks',
    );
    const page = await signIn(rig, f.admin.username, f.password);
    await page.waitForSelector('main .card');
    await page.goto(`${rig.base}/console/#/recordings/${recId}`);
    await page.waitForSelector('canvas.waveform');
    await page.waitForSelector('audio');
    // the waveform: pixels drawn where the peaks are
    const drawn = await js<number>(
      page,
      `(() => { const c = document.querySelector('canvas.waveform'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; })()`,
    );
    expect(drawn).to.be.greaterThan(100);
    expect(files[0].duration).to.be.greaterThan(0.5);
    // play it to the end
    await js(page, `(() => { const a = document.querySelector('audio'); window.__ended = false; a.addEventListener('ended', () => (window.__ended = true)); return a.play(); })()`);
    await page.waitForFunction('window.__ended === true', { timeout: Math.ceil(files[0].duration * 1000) + 10_000 });
    const playedTo = await js<number>(page, `document.querySelector('audio').currentTime`);
    expect(playedTo).to.be.closeTo(files[0].duration, 0.2);
    const href = await page.$eval('a.button[download]', (a) => (a as unknown as { href: string }).href);
    expect(href).to.equal(files[0].uri_download);
    await shot(rig, page, 'recording');
    await page.close();
  });

  it("the call page's buttons act on a live call: record, mute, hang up", async () => {
    const page = await signIn(rig, f.admin.username, f.password);
    await page.waitForSelector('.socket-open');
    const { id, callee } = await dialOut([{ type: 'sleep', option: { duration: 15000 } }, { type: 'hangup' }]);
    await page.goto(`${rig.base}/console/#/calls/${id}`);
    const opened = Date.now();
    await page.waitForFunction(`document.querySelector('[data-field=status]')?.textContent === 'progressing'`, { timeout: 15_000 });
    const get = async () =>
      (await request(rig.t.app).get(`/v1.0/calls/${id}`).query({ accesskey: f.accesskey })).body as { recording_id: string; mute_direction: string; status: string; hangup_by: string };
    const button = (label: string) =>
      page.waitForFunction(`[...document.querySelectorAll('.buttons button')].find((b) => b.textContent === ${JSON.stringify(label)} && !b.disabled)`, { timeout: 10_000 }).catch(async (e: Error) => {
        throw new Error(`button ${label}: ${e.message}\n${await textOf(page)}`);
      });
    await (await button('Record')).asElement()!.click();
    await until(async () => ((await get()).recording_id !== '00000000-0000-0000-0000-000000000000' ? true : null), 10_000, 'recording started');
    await button('Stop recording'); // the page learnt it from the call's events
    // Mute: the page reads nothing again; it shows muted from the call_updated event alone
    // (past the page's own reads 1 s and 4 s after it subscribed)
    await new Promise((r) => setTimeout(r, Math.max(0, opened + 4500 - Date.now())));
    const reads: string[] = [];
    const onRequest = (r: { url(): string; method(): string }) => {
      if (r.method() === 'GET' && r.url().includes(`/v1.0/calls/${id}`)) reads.push(r.url());
    };
    page.on('request', onRequest);
    await (await button('Mute')).asElement()!.click();
    await page.waitForSelector('[data-field=mute]', { timeout: 10_000 });
    await button('Unmute');
    page.off('request', onRequest);
    expect(reads, 'GETs of the call after Mute').to.deep.equal([]);
    expect(await js<string>(page, `document.querySelector('[data-field=mute]').textContent`)).to.equal('muted (both)');
    expect((await get()).mute_direction).to.equal('both');
    await (await button('Unmute')).asElement()!.click();
    await page.waitForFunction(`!document.querySelector('[data-field=mute]')`, { timeout: 10_000 });
    await button('Mute');
    expect(await textOf(page)).to.not.include('INVALID_ARGUMENT');
    await shot(rig, page, 'call-live');
    await (await button('Hang up')).asElement()!.click();
    await page.waitForFunction(`document.querySelector('[data-field=status]')?.textContent === 'hangup'`, { timeout: 10_000 });
    const ended = await get();
    expect(ended.status).to.equal('hangup');
    expect(ended.hangup_by).to.equal('local');
    expect((await callee.done).code).to.equal(0);
    await page.close();
  });
});
