// The voicemail pages (#/voicemail, #/voicemail/<box>) in Chromium against a message left by a real
// call: sipp calls a number whose flow runs the `voicemail` action, stays silent 6 s, plays an 1800 Hz
// tone 6 s and presses #. The boxes list shows the counts; the box page shows the message (caller,
// time, duration, New) drawn as a waveform whose bars follow the audio (low during the silence, high
// during the tone: the WAV fetched through the API and decoded in the page), plays it to the end,
// marks it read (the counts follow), deletes it. Errors from the API show in the page: an unknown box,
// a greeting that is not a WAV; a greeting uploaded and removed; an agent sees no upload form.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createAgent, createFixture, type Fixture } from '../../testkit/api';
import { chromiumAvailable } from '../../testkit/browser';
import { killAllSipp, until } from '../../testkit/media-app/harness';
import { extensionWithBox, leaveToneMessage, numberWithFlow } from '../../testkit/pbx/voicemail';
import { addBalance, ensureBillingAccount } from '../../core/billing';
import { Permission } from '../../core/permissions';
import { newId } from '../../core/ids';
import { toneWav } from '../../testkit/webphone/harness';
import request from 'supertest';
import { parseWav } from '../../media-engine/audio/wav';
import { rms } from '../../testkit/media-engine/support';
import { bufferBody } from '../../testkit/buffer-body';
import { js, shot, signIn, startConsole, textOf, type ConsoleRig } from './support';
import { loopbackTrunk } from '../../testkit/trunks';

const MESSAGE_HZ = 1800;

/** Where in `samples` (a fraction of their length) the first 20 ms block at a third of the loudest block's RMS or more starts. */
function toneOnset(samples: Int16Array): number {
  const blocks = Array.from({ length: Math.floor(samples.length / 160) }, (_, b) => rms(samples, b * 160, b * 160 + 160));
  const loud = Math.max(...blocks);
  return (blocks.findIndex((r) => r >= loud / 3) * 160) / samples.length;
}

describe('console: voicemail pages against a message left by a real call (Chromium, sipp)', function () {
  this.timeout(150_000);
  let rig: ConsoleRig;
  let f: Fixture;
  let dir: string;
  let boxId = '';
  let messageId = '';
  before(async function () {
    if (!chromiumAvailable()) this.skip();
    rig = await startConsole({ platform: true });
    f = await createFixture(rig.t.ctx);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-vm-'));
    // the caller comes in as the customer's trunk (trusted by address); the calls are paid for
    await loopbackTrunk(rig.t.ctx.db, f.customer.id, `cvm${process.pid}x${Date.now() % 100000}`);
    await addBalance(rig.t.ctx.db, (await ensureBillingAccount(rig.t.ctx.db, f.customer.id)).id, 1_000_000_000, `cvm-topup:${f.customer.id}`);
    const { box } = await extensionWithBox(f.customer.id, { number: '301', pin: '2468', name: 'Sales desk', greeting_text: 'Leave a message.' });
    boxId = box.id;
    const number = '+899100003811';
    await numberWithFlow(f.customer.id, number, [{ type: 'voicemail', option: { box_id: box.id } }, { type: 'hangup' }]);
    // 6 s of silence before the tone: some of it is recorded after the greeting and beep however slow they are
    await leaveToneMessage(rig.platform!.sipPort, number, path.join(dir, 'caller.pcap'), MESSAGE_HZ, 6000);
    const m = await until(async () => (await rig.t.ctx.db('voicemail_messages').where({ box_id: box.id }))[0] as { id: string } | undefined, 10_000, 'message stored');
    messageId = m.id;
    // what the speech subsystem writes once it transcribed the message (it does not run in this rig)
    await rig.t.ctx.db('voicemail_messages').where({ id: m.id }).update({ transcript: 'Please call me back about the order.' });
  });
  after(async () => {
    killAllSipp();
    await rig?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lists the box with its counts, draws and plays the message, marks it read and deletes it', async () => {
    const page = await signIn(rig, f.admin.username, f.password, { width: 1280, height: 900 });
    await page.waitForSelector('nav a[aria-current=page]');
    await page.click('nav a[href="#/voicemail"]');
    const boxRow = `table[aria-label="Voicemail boxes"] tr[data-id="${boxId}"]`;
    await page.waitForSelector(boxRow);
    const field = (sel: string) => js<string>(page, `document.querySelector(${JSON.stringify(sel)})?.textContent ?? ''`);
    expect(await field(`${boxRow} [data-field=new]`)).to.equal('1');
    expect(await field(`${boxRow} [data-field=old]`)).to.equal('0');
    expect(await js<string>(page, `document.querySelector('${boxRow}').innerText`)).to.include('Sales desk');
    await page.click(`${boxRow} a`);
    const item = `li.vm-message[data-id="${messageId}"]`;
    await page.waitForSelector(`${item} .player[data-ready=true]`, { timeout: 15_000 });
    expect(await field(`${item} [data-field=caller]`)).to.equal('Trunk Caller <15557654321>');
    expect(await field(`${item} [data-field=folder]`)).to.equal('New');
    expect(await field(`${item} [data-field=duration]`)).to.match(/^0:(0[5-9]|1[0-2])$/);
    expect(await field(`${item} [data-field=time]`)).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(await field(`${item} [data-field=transcript]`)).to.equal('Please call me back about the order.');
    expect(await field('[data-field=counts]')).to.equal('1 new, 0 old');
    // the waveform: bars low during the silence, high during the tone (drawn from the decoded audio)
    const bars = await js<number[]>(
      page,
      `(() => { const c = document.querySelector('${item} canvas.waveform'); const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
         const cols = []; for (let x = 0; x < c.width; x++) { let n = 0; for (let y = 0; y < c.height; y++) if (d[(y * c.width + x) * 4 + 3] > 0) n++; cols.push(n); } return cols; })()`,
    );
    const drawn = bars.filter((n) => n > 0);
    expect(drawn.length, 'columns drawn').to.be.greaterThan(bars.length / 2);
    const tall = Math.max(...drawn);
    const short = Math.min(...drawn);
    expect(tall, 'the tone reaches most of the height').to.be.greaterThan(40);
    expect(short * 4, `not flat (${short}..${tall})`).to.be.below(tall);
    // the tall bars are where the tone is, read from the message itself: how much of the caller's silence it holds is
    // the greeting's and the beep's doing (CI: under load the tone began within the first quarter, 14 of 56 columns)
    const wav = (await request(rig.t.app).get(`/v1.0/voicemail_messages/${messageId}/media`).set('Authorization', `Bearer ${f.token}`).buffer(true).parse(bufferBody)).body as Buffer;
    const onset = toneOnset(parseWav(wav).samples);
    expect(onset, "the message opens with the caller's silence").to.be.within(0.1, 0.7);
    const over = (from: number, to: number) => bars.slice(Math.floor(bars.length * from), Math.ceil(bars.length * to));
    expect(Math.max(...over(0, onset - 0.04)) * 4, `low over the silence (the tone from ${onset.toFixed(2)})`).to.be.below(tall);
    const tone = over(onset + 0.04, Math.min(1, onset + 0.3)).filter((n) => n > 0); // the bars, not the gaps between them
    expect([Math.max(...tone), Math.min(...tone) * 2 > tall], 'high over the tone').to.deep.equal([tall, true]);
    await shot(rig, page, 'voicemail');
    // plays in the page (the audio element, from the bytes the API served) to its end
    await js(page, `(() => { const a = document.querySelector('${item} audio'); window.__ended = false; a.addEventListener('ended', () => (window.__ended = true)); return a.play(); })()`);
    await page.waitForFunction('window.__ended === true', { timeout: 25_000 });
    expect(await js<number>(page, `document.querySelector('${item} audio').duration`)).to.be.within(5, 12);
    // mark read: the folder and the counts follow (the box page reloads on the API's answer)
    await page.click(`${item} .actions button`);
    await page.waitForFunction(`document.querySelector('${item} [data-field=folder]')?.textContent === 'Saved'`, { timeout: 5000 });
    await page.waitForFunction(`document.querySelector('[data-field=counts]')?.textContent === '0 new, 1 old'`, { timeout: 5000 });
    expect(((await rig.t.ctx.db('voicemail_messages').where({ id: messageId }).first()) as { folder: string }).folder).to.equal('old');
    // unread again, then read
    await page.click(`${item} .actions button`);
    await page.waitForFunction(`document.querySelector('${item} [data-field=folder]')?.textContent === 'New'`, { timeout: 5000 });
    await page.click(`${item} .actions button`);
    await page.waitForFunction(`document.querySelector('${item} [data-field=folder]')?.textContent === 'Saved'`, { timeout: 5000 });
    // delete: asked once more, then gone from the page and the API
    await page.click(`${item} .actions button:nth-child(2)`);
    await page.waitForFunction(`[...document.querySelectorAll('${item} .actions button')].some((b) => b.textContent === 'Delete for good')`);
    await page.click(`${item} .actions button.danger`);
    await page.waitForFunction(`!document.querySelector('${item}') && document.body.innerText.includes('No messages.')`, { timeout: 5000 });
    expect(((await rig.t.ctx.db('voicemail_messages').where({ id: messageId }).first()) as { tm_delete: Date | null }).tm_delete).to.not.equal(null);
    await page.waitForFunction(`document.querySelector('[data-field=counts]')?.textContent === '0 new, 0 old'`, { timeout: 5000 });
    expect(rig.browser.errors.filter((e) => /Content Security Policy|pageerror/.test(e))).to.deep.equal([]);
  });

  it('shows the API errors in the page (an unknown box, a bad greeting file), uploads and removes a greeting; an agent gets no upload form', async () => {
    const page = await signIn(rig, f.admin.username, f.password);
    await page.waitForSelector('nav a[aria-current=page]');
    await page.goto(`${rig.base}/console/#/voicemail/${newId()}`);
    await page.waitForFunction(`document.querySelector('main .error')?.textContent.includes('RESOURCE_NOT_FOUND')`, { timeout: 10_000 });
    expect(await textOf(page)).to.include('voicemail box not found');
    // a greeting that is not a WAV: refused 400, the reason shown, nothing stored
    await page.goto(`${rig.base}/console/#/voicemail/${boxId}`);
    await page.waitForSelector('form[aria-label="Upload a greeting"]');
    const bad = path.join(dir, 'greeting.wav');
    fs.writeFileSync(bad, 'not a wav file at all');
    const input = await page.$('form[aria-label="Upload a greeting"] input[type=file]');
    await input!.uploadFile(bad);
    await page.click('form[aria-label="Upload a greeting"] button[type=submit]');
    await page.waitForFunction(`document.querySelector('form[aria-label="Upload a greeting"] + .error')?.textContent.includes('INVALID_ARGUMENT')`, { timeout: 10_000 });
    const greeting = () => js<string>(page, `document.querySelector('li[data-kind=unavailable] [data-field=greeting]').textContent`);
    expect(await greeting()).to.equal('spoken from text (default)');
    // a real WAV (2 s, sox): stored, the box shows it recorded; Remove goes back to the text
    await input!.uploadFile(toneWav(600, 2));
    await page.click('form[aria-label="Upload a greeting"] button[type=submit]');
    await page.waitForFunction(`document.querySelector('li[data-kind=unavailable] [data-field=greeting]')?.textContent === 'recorded'`, { timeout: 10_000 });
    expect((await request(rig.t.app).get(`/v1.0/voicemail_boxes/${boxId}`).set('Authorization', `Bearer ${f.token}`)).body.greeting_unavailable).to.equal(true);
    await page.click('li[data-kind=unavailable] button');
    await page.waitForFunction(`document.querySelector('li[data-kind=unavailable] [data-field=greeting]')?.textContent === 'spoken from text (default)'`, { timeout: 10_000 });
    // an agent reads the box but cannot upload greetings (manager and up, as the REST enforces)
    const agent = await createAgent(rig.t.ctx, f.customer.id, Permission.CustomerAgent);
    const ap = await signIn(rig, agent.agent.username, agent.password);
    await ap.waitForSelector('nav a[aria-current=page]');
    await ap.goto(`${rig.base}/console/#/voicemail/${boxId}`);
    await ap.waitForSelector('[data-field=counts]');
    expect(await ap.$('form[aria-label="Upload a greeting"]')).to.equal(null);
    expect(await ap.$$eval('nav a', (as) => as.map((a) => a.textContent))).to.not.include('Busy lamps');
  });
});
