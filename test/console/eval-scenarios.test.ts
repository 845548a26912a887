// Eval scenarios in Chromium (issue 56, docs/evals.md "Scenarios"): the list and a scenario's page show what
// the API holds (a name with markup as text), a scenario written as JSON in the page is what the API then
// returns, bad JSON is said before anything is sent and the API's 400 is shown with its message, an edit is
// saved, a run of the scenario starts from its page (read back through the API: no evals worker here, the
// run stays running), delete asks first, and an agent below manager reads but is offered no writing.
import { expect } from 'chai';
import request from 'supertest';
import type { Page } from 'puppeteer-core';
import { createAgent, type Fixture } from '../../testkit/api';
import { Permission } from '../../core/permissions';
import { numbersRepo } from '../../core/repos/numbers';
import { js, shot, signIn, textOf, type ConsoleRig, useConsolePage } from './support';

const NUMBER = '+899570000101';
const MARKUP = '<b>x</b> <img src=x id=injected onerror="window.__pwned=1">';

interface Scenario {
  id: string;
  name: string;
  target: unknown;
  caller: unknown;
  checks: unknown[];
}

describe('console: eval scenarios listed, shown, written as JSON, run and deleted (Chromium)', function () {
  this.timeout(90_000);
  let rig: ConsoleRig;
  let f: Fixture;
  let page: Page;
  let made: Scenario;
  const api = (method: 'get' | 'post' | 'put' | 'delete', p: string) => request(rig.t.app)[method](`/v1.0${p}`).query({ accesskey: f.accesskey });
  const { open } = useConsolePage({}, (s) => ({ rig, f, page } = s));
  /** A field's value set as typing would (an input event, which the page's handlers read). */
  const setValue = (selector: string, text: string) =>
    js(page, `(() => { const t = document.querySelector(${JSON.stringify(selector)}); t.value = ${JSON.stringify(text)}; t.dispatchEvent(new Event('input', { bubbles: true })); })()`);
  const setText = (id: string, text: string) => setValue(`#${id}`, text);
  const statusError = (id: string) => js<string>(page, `document.querySelector('#${id}-status .error')?.textContent ?? ''`);

  before(async () => {
    await numbersRepo(rig.t.ctx.db).create({ customer_id: f.customer.id, number: NUMBER, type: 'virtual' });
    const r = await api('post', '/eval_scenarios').send({
      name: MARKUP,
      target: { type: 'number', target: NUMBER },
      caller: { language: 'en-GB', persona: 'An impatient customer', turns: [{ wait_ms: 2500 }, { say: 'What are your opening hours?', after_agent_ms: 800 }, { dtmf: '1' }, { hangup: true }] },
      checks: [
        { type: 'latency_under', ms: 4000 },
        { type: 'transcript_contains', role: 'agent', text: 'nine to five' },
      ],
    });
    expect(r.status, r.text).to.equal(200);
    made = r.body as Scenario;
  });

  it('the list shows a scenario made through the API: its name as text, target, turns and checks counts', async () => {
    await page.click('nav a[href="#/evals"]');
    await page.waitForSelector('a[data-action=scenarios]');
    await page.click('a[data-action=scenarios]');
    await page.waitForSelector(`table[aria-label="Eval scenarios"] tr[data-id="${made.id}"]`);
    const cell = (field: string) => js<string>(page, `document.querySelector('tr[data-id="${made.id}"] [data-field=${field}]').textContent`);
    expect(await cell('name')).to.equal(MARKUP);
    expect(await cell('target')).to.equal(`number ${NUMBER}`);
    expect(await cell('turns')).to.equal('4');
    expect(await cell('checks')).to.equal('2');
    expect(await js<boolean>(page, `document.querySelector('tr[data-id="${made.id}"] b') === null && document.getElementById('injected') === null && window.__pwned === undefined`)).to.equal(true);
    await shot(rig, page, 'eval-scenarios');
  });

  it("a scenario's page shows its target, its caller's language, persona and turns in order, and its checks", async () => {
    await page.click(`tr[data-id="${made.id}"] a[data-field=name]`);
    await page.waitForSelector('ol[aria-label=Turns]');
    expect(await js<string>(page, `document.querySelector('dd[data-field=name]').textContent`)).to.equal(MARKUP);
    expect(await js<string>(page, `document.querySelector('[data-field=target]').textContent`)).to.equal(`number ${NUMBER}`);
    expect(await js<string>(page, `document.querySelector('[data-field=language]').textContent`)).to.equal('en-GB');
    expect(await js<string>(page, `document.querySelector('[data-field=persona]').textContent`)).to.equal('An impatient customer');
    expect(await js<string[]>(page, `[...document.querySelectorAll('ol[aria-label=Turns] li')].map((li) => li.textContent)`)).to.deep.equal([
      'wait 2500 ms',
      'say “What are your opening hours?”, talking over the agent 800 ms after it starts',
      'press 1',
      'hang up',
    ]);
    expect(await js<string[]>(page, `[...document.querySelectorAll('ol[aria-label=Checks] li')].map((li) => li.dataset.check + ': ' + li.textContent)`)).to.deep.equal([
      'latency_under: latency_under every agent turn answers within 4000 ms',
      "transcript_contains: transcript_contains the agent's lines contain “nine to five”",
    ]);
    expect(await js<boolean>(page, `document.querySelector('main b') === null && document.getElementById('injected') === null`)).to.equal(true);
    await shot(rig, page, 'eval-scenario');
  });

  it('bad JSON is said in the page and nothing is sent; the API 400 is shown with its message', async () => {
    await open('evals/scenarios', '#scenario-new-json');
    const before = (await api('get', '/eval_scenarios')).body.result.length as number;
    await setText('scenario-new-json', '{ "name": ');
    await page.click('button[data-action=scenario-new-submit]');
    await page.waitForFunction(`document.querySelector('#scenario-new-status .error')?.textContent.startsWith('Not valid JSON')`);
    // a target that is not the customer's number: the API's own refusal
    await setText('scenario-new-json', JSON.stringify({ name: 'elsewhere', target: { type: 'number', target: '+899579999999' }, caller: { turns: [{ hangup: true }] } }));
    await page.click('button[data-action=scenario-new-submit]');
    await page.waitForFunction(`document.querySelector('#scenario-new-status .error')?.textContent.includes('INVALID_ARGUMENT')`);
    expect(await statusError('scenario-new')).to.include('+899579999999 is not a number of this customer');
    await shot(rig, page, 'eval-scenario-refused');
    expect((await api('get', '/eval_scenarios')).body.result.length).to.equal(before);
  });

  it('a scenario created in the page is what the API then returns; an edit saved in its page too', async () => {
    const body = {
      name: 'Press one',
      target: { type: 'number', target: NUMBER },
      caller: { language: 'en-US', turns: [{ say: 'Hello' }, { dtmf: '1#' }, { hangup: true }] },
      checks: [{ type: 'ended_by', by: 'caller' }, { type: 'no_self_interruption' }],
    };
    await open('evals/scenarios', '#scenario-new-json');
    await setText('scenario-new-json', JSON.stringify(body, null, 2));
    await page.click('button[data-action=scenario-new-submit]');
    await page.waitForFunction(`/^#\\/evals\\/scenarios\\/[0-9a-f-]{36}$/.test(location.hash)`);
    const id = await js<string>(page, `location.hash.split('/').pop()`);
    await page.waitForSelector('ol[aria-label=Turns]');
    const got = (await api('get', `/eval_scenarios/${id}`)).body as Scenario;
    expect({ name: got.name, target: got.target, caller: got.caller, checks: got.checks }).to.deep.equal(body);
    // the page's editor holds it; a new name saved there reaches the API
    await setText('scenario-edit-json', JSON.stringify({ ...body, name: 'Press one, edited' }));
    await page.click('button[data-action=scenario-edit-submit]');
    await page.waitForSelector('#scenario-edit-status [data-field=saved]');
    expect((await api('get', `/eval_scenarios/${id}`)).body.name).to.equal('Press one, edited');
    await page.waitForFunction(`document.querySelector('dd[data-field=name]').textContent === 'Press one, edited'`);
  });

  it("a run started from a scenario's page is made with its calls and concurrency, and the console goes to it", async () => {
    await open(`evals/scenarios/${made.id}`, 'form[aria-label=Run]');
    await setValue('form[aria-label=Run] input[name=calls]', '3');
    await setValue('form[aria-label=Run] input[name=concurrency]', '2');
    await page.click('form[aria-label=Run] button[data-action=start-run]');
    await page.waitForFunction(`/^#\\/evals\\/[0-9a-f-]{36}$/.test(location.hash)`);
    const runId = await js<string>(page, `location.hash.split('/').pop()`);
    const run = (await api('get', `/eval_runs/${runId}`)).body as { scenario_ids: string[]; calls: number; concurrency: number; status: string };
    expect(run).to.include({ calls: 3, concurrency: 2, status: 'running' });
    expect(run.scenario_ids).to.deep.equal([made.id]);
    await page.waitForSelector('[data-field=status]');
    expect(await js<string>(page, `document.querySelector('[data-field=calls]').textContent`)).to.equal('0 / 3');
  });

  it('an agent below manager reads the scenarios but is offered no new one, no edit, no run and no delete', async () => {
    const agent = await createAgent(rig.t.ctx, f.customer.id, Permission.CustomerAgent);
    const ap = await signIn(rig, agent.agent.username, agent.password);
    try {
      await ap.waitForSelector('nav a[aria-current=page]');
      await ap.goto(`${rig.base}/console/#/evals/scenarios`);
      await ap.waitForSelector(`tr[data-id="${made.id}"]`);
      expect(await ap.$('#scenario-new-json')).to.equal(null);
      await ap.goto(`${rig.base}/console/#/evals/scenarios/${made.id}`);
      await ap.waitForSelector('ol[aria-label=Turns]');
      expect(await js<number>(ap, `document.querySelectorAll('#scenario-edit-json, form[aria-label=Run], button[data-action=delete-scenario]').length`)).to.equal(0);
    } finally {
      await ap.close();
    }
  });

  it('delete asks first, then the scenario is gone from the list and the API', async () => {
    const dialogs: string[] = [];
    const onDialog = (d: { message(): string }) => void dialogs.push(d.message());
    page.on('dialog', onDialog);
    try {
      await open(`evals/scenarios/${made.id}`, 'button[data-action=delete-scenario]');
      await page.click('button[data-action=delete-scenario]');
      await page.waitForFunction(`location.hash === '#/evals/scenarios'`);
      await page.waitForSelector('table[aria-label="Eval scenarios"]');
      expect(await page.$(`tr[data-id="${made.id}"]`)).to.equal(null);
      expect(dialogs).to.have.length(1);
      expect(dialogs[0]).to.include(MARKUP);
      expect((await api('get', `/eval_scenarios/${made.id}`)).status).to.equal(404);
      expect(await textOf(page)).to.include('Press one, edited');
    } finally {
      page.off('dialog', onDialog);
    }
  });
});
