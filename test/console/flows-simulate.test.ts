// The flow page's Simulate panel in Chromium, against a real control-api and a real media-app node
// (whose flow simulator subsystem runs the simulations): a flow edited in the page is saved, its
// simulation shown in the page matches the API's answer for the same script, an unsaved edit is
// simulated as edited, and a bad script shows the API's refusal. Operated from the keyboard.
import { expect } from 'chai';
import request from 'supertest';
import type { Page } from 'puppeteer-core';
import type { Fixture } from '../../testkit/api';
import { closeCommandBus } from '../../control-api/calls/bus';
import { js, LAPTOP, PHONE, shot, textOf, type ConsoleRig, useConsolePage } from './support';

interface Entry {
  t: number;
  event: string;
  type?: string;
  command?: string;
}
type Row = [number, string, string];

const SALES = 'b0000000-0000-4000-8000-000000000001';
const SCRIPT = { events: [{ at: 2500, dtmf: '1' }], speech: [{ at: 5000, duration: 1200 }], variables: { caller: 'Ada' } };

describe('console: the flow simulator on the flow page (Chromium)', function () {
  this.timeout(120_000);
  let rig: ConsoleRig;
  let f: Fixture;
  let page: Page;
  const api = (method: 'get' | 'post', p: string) => request(rig.t.app)[method](`/v1.0${p}`).query({ accesskey: f.accesskey });
  const setText = (selector: string, text: string) =>
    js(page, `(() => { const t = document.querySelector(${JSON.stringify(selector)}); t.value = ${JSON.stringify(text)}; t.dispatchEvent(new Event('input', { bubbles: true })); })()`);
  /** What the page shows, one row per timeline entry: [t, event, action type or media command]. */
  const shownPath = () => js<Row[]>(page, `[...document.querySelectorAll('ol.sim-path li')].map((li) => [Number(li.dataset.t), li.dataset.event, li.dataset.what])`);
  const apiPath = (timeline: Entry[]): Row[] => timeline.map((e) => [e.t, e.event, String(e.type ?? e.command ?? '')]);
  /** Runs the panel from the keyboard: focus on the Simulate button, Enter; waits for a new answer. */
  const simulateByKeyboard = async () => {
    await js(page, `document.querySelector('ol.sim-path')?.remove()`);
    await page.focus('button[data-action=simulate]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('ol.sim-path li, #sim-status .error', { timeout: 15_000 });
  };

  /**
   * Opens a flow's page and waits until it is that flow's page with its editor filled: the console's
   * shell persists across hash routes, so the page of the flow viewed before is still there (with a
   * Simulate button) until the new one has loaded.
   */
  const openFlow = async (id: string) => {
    await page.goto(`${rig.base}/console/#/flows/${id}`);
    await page.waitForSelector(`textarea.code[data-flow-id="${id}"]`).catch(async (e: Error) => {
      throw new Error(`${e.message}\nat ${page.url()}: ${(await textOf(page)).slice(0, 800)}\nbrowser: ${rig.browser.errors.join('\n')}`);
    });
    await page.waitForSelector('button[data-action=simulate]');
  };

  // the command bus is closed before the console (useConsolePage's hooks run after this one)
  after(async () => {
    if (rig) await closeCommandBus(rig.t.ctx);
  });
  useConsolePage({ platform: true }, (s) => ({ rig, f, page } = s));

  it("a flow edited in the page is saved, and the path its simulation shows is the API's for the same script", async () => {
    const flow = (await api('post', '/flows').send({ name: 'Reception', actions: [{ type: 'answer' }, { type: 'talk', option: { text: 'Hello.' } }, { type: 'hangup' }] })).body as { id: string };
    await openFlow(flow.id);
    const edited = {
      name: 'Reception IVR',
      actions: [
        { type: 'answer' },
        { type: 'talk', option: { text: 'Hello ${caller}, press 1 for sales.', language: 'en-US' } },
        { type: 'digits_receive', option: { duration: 4000, length: 1 } },
        { type: 'branch', option: { target_ids: { '1': SALES } } },
        { type: 'talk', option: { text: 'Nobody pressed anything.' } },
        { type: 'hangup' },
        { id: SALES, type: 'talk', option: { text: 'Connecting you to sales.' } },
        { type: 'recording_start', option: { end_of_silence: 2, duration: 20 } },
        { type: 'sleep', option: { duration: 8000 } },
      ],
    };
    await setText('textarea.code:not(.sim-script)', JSON.stringify(edited, null, 2));
    await page.click('.buttons button.primary:not([data-action])');
    await page.waitForSelector('[data-field=saved]');
    const saved = (await api('get', `/flows/${flow.id}`)).body as { name: string; actions: { type: string }[] };
    expect(saved.name).to.equal('Reception IVR');
    expect(saved.actions.map((a) => a.type)).to.deep.equal(edited.actions.map((a) => a.type));

    // saved, so the panel runs the saved flow
    expect(await js<boolean>(page, `document.querySelector('input[name=sim-source][value=saved]').checked`)).to.equal(true);
    await setText('textarea.sim-script', JSON.stringify(SCRIPT, null, 2));
    await simulateByKeyboard();
    const shown = await shownPath();
    const viaApi = await api('post', `/flows/${flow.id}/simulate`).send(SCRIPT);
    expect(viaApi.status).to.equal(200);
    expect(shown).to.deep.equal(apiPath(viaApi.body.timeline as Entry[]));
    expect(shown.filter((r) => r[1] === 'action').map((r) => r[2])).to.deep.equal(['answer', 'talk', 'digits_receive', 'branch', 'talk', 'recording_start', 'sleep']);
    const text = await textOf(page);
    expect(text).to.include('Simulated the saved flow: the flow ran to its end; 7 actions');
    expect(text).to.include('says “Hello Ada, press 1 for sales.”');
    expect(text).to.include('caller presses 1');
    expect(text).to.include('digits collected: “1” (length)');
    expect(text).to.include('step 7: talk');
    expect(text).to.match(/target_ids\s+1 → step 7 \(talk\)/);
    expect(text).to.include('→ went to step 7 (talk)');
    expect(text).to.include('caller speaks for 1.20 s');
    expect(text).to.include('recording stops (silence');
    await js(page, `document.querySelector('ol.sim-path').scrollIntoView({ block: 'start' })`);
    await shot(rig, page, 'flow-simulate');
    // the path reads on a phone-sized screen without sideways scrolling
    await page.setViewport(PHONE);
    try {
      expect(await js<number>(page, 'document.documentElement.scrollWidth - window.innerWidth')).to.be.at.most(0);
    } finally {
      await page.setViewport(LAPTOP);
    }
  });

  it('an edit not saved yet is simulated as edited (POST /flows/simulate), and the saved flow stays as it was', async () => {
    const flow = (await api('post', '/flows').send({ name: 'Draft', actions: [{ type: 'answer' }, { type: 'talk', option: { text: 'Saved text.' } }] })).body as { id: string };
    await openFlow(flow.id);
    const draft = { name: 'Draft', actions: [{ type: 'answer' }, { type: 'talk', option: { text: 'Draft text for ${caller}.' } }, { type: 'digits_receive', option: { duration: 2000, length: 2 } }] };
    await setText('textarea.code:not(.sim-script)', JSON.stringify(draft, null, 2));
    await page.waitForFunction(`document.querySelector('input[name=sim-source][value=edited]').checked`);
    const script = { events: [{ at: 1000, dtmf: '42' }], variables: { caller: 'Bo' } };
    await setText('textarea.sim-script', JSON.stringify(script));
    await simulateByKeyboard();
    const viaApi = await api('post', '/flows/simulate').send({ ...script, actions: draft.actions });
    expect(viaApi.status).to.equal(200);
    expect(await shownPath()).to.deep.equal(apiPath(viaApi.body.timeline as Entry[]));
    const text = await textOf(page);
    expect(text).to.include('Simulated the edited JSON (not saved)');
    expect(text).to.include('says “Draft text for Bo.”');
    expect(text).to.include('digits collected: “42” (length)');
    expect(((await api('get', `/flows/${flow.id}`)).body as { actions: { option?: { text?: string } }[] }).actions[1]!.option!.text).to.equal('Saved text.');
  });

  it("a bad script shows the API's refusal; a script that is not JSON is refused in the page", async () => {
    const flow = (await api('post', '/flows').send({ actions: [{ type: 'answer' }] })).body as { id: string };
    await openFlow(flow.id);
    await setText('textarea.sim-script', JSON.stringify({ events: [{ at: 0, dtmf: 'nope' }] }));
    await simulateByKeyboard();
    await page.waitForFunction(`document.querySelector('#sim-status .error')?.innerText.includes('INVALID_ARGUMENT: events.0.dtmf')`);
    await setText('textarea.sim-script', '{ "events": [');
    await page.click('button[data-action=simulate]');
    await page.waitForFunction(`document.querySelector('#sim-status .error')?.innerText.includes('The script is not valid JSON')`);
    expect(rig.browser.errors.filter((e) => e.startsWith('pageerror'))).to.deep.equal([]);
  });
});
