// A running eval run's page follows the run's events in Chromium (issue 56, docs/evals.md "Console"):
// the run is a row made and claimed through the repos as the evals worker does, its results saved and its
// events published by the worker's own RunEvents through the event bus (Redis) to control-api's /v1.0/ws.
// The page changes without a reload and without polling (its reads of the run are counted); a socket the
// server drops is reopened and the page reads the run once more, so a call whose event it missed appears;
// leaving the page drops the run's subscription on the server (and its reopen listener in the page),
// while the console's one socket stays for its other pages (web/console/README.md "Live").
import { claimRun } from '../../testkit/evals/claimed';
import { expect } from 'chai';
import type { HTTPRequest, Page } from 'puppeteer-core';
import { createFixture, type Fixture } from '../../testkit/api';
import { chromiumAvailable } from '../../testkit/browser';
import { until } from '../../testkit/media-app/harness';
import { evalScenariosRepo } from '../../core/repos/eval-scenarios';
import { evalRunsRepo, type EvalRunRow } from '../../core/repos/eval-runs';
import { evalScenarioInput, type EvalCallResult } from '../../core/evals/schema';
import { eventPublisher } from '../../core/events/bus';
import { RunEvents } from '../../evals/run-events';
import { newId } from '../../core/ids';
import { js, shot, signIn, startConsole, textOf, type ConsoleRig } from './support';

const WORKER = 'console-live-test';

function result(scenarioId: string, passed: boolean, latency: number): EvalCallResult {
  return {
    scenario_id: scenarioId,
    call_id: newId(),
    sip_call_id: `eval-${newId()}`,
    ended_by: 'caller',
    transcript: [
      { role: 'caller', text: 'What are your opening hours?', t_ms: 300 },
      { role: 'agent', text: passed ? 'Nine to five.' : 'I am not sure.', t_ms: 1800 },
    ],
    heard: [],
    turns: [{ latency_ms: latency, end_of_turn_wait_ms: 200, stt_final_ms: 120, llm_first_token_ms: latency - 500, tts_first_byte_ms: 150, interrupted: false }],
    checks: [
      { type: 'latency_under', passed: true, evidence: `every turn within 4000 ms (slowest ${latency} ms)` },
      { type: 'transcript_contains', passed, evidence: passed ? 'agent said "Nine to five."' : 'no agent line contains "nine to five"' },
    ],
    passed,
  };
}

describe('console: a running eval run followed live over the WebSocket (Chromium)', function () {
  this.timeout(90_000);
  let rig: ConsoleRig;
  let f: Fixture;
  let page: Page;
  let scenarioId: string;
  let events: RunEvents;
  /** GET /v1.0/eval_runs/<id> requests the page made, by run id. */
  const reads = new Map<string, number>();
  const runs = () => evalRunsRepo(rig.t.ctx.db);
  const topicOf = (run: EvalRunRow) => `customer_id:${f.customer.id}:eval_run:${run.id}`;
  /** The customer's sockets on control-api's hub. */
  const sockets = () => rig.ws.hub.all().filter((c) => c.auth.customerId === f.customer.id);
  const subscribed = (run: EvalRunRow) => sockets().some((c) => c.topics.has(topicOf(run)));
  const field = (name: string) => js<string>(page, `document.querySelector('[data-field=${name}]')?.textContent ?? ''`);
  const shows = (name: string, text: string) => page.waitForFunction(`document.querySelector('[data-field=${name}]')?.textContent === ${JSON.stringify(text)}`);

  /** A running run of one scenario, claimed as the evals worker claims it. */
  async function runningRun(calls: number): Promise<EvalRunRow> {
    const s = (await evalScenariosRepo(rig.t.ctx.db).get(f.customer.id, scenarioId))!;
    const created = await runs().create(f.customer.id, { scenarios: [{ id: s.id, name: s.name, target: s.target, caller: s.caller, checks: s.checks }], calls, concurrency: 1 });
    await claimRun(rig.t.ctx.db, created.id, WORKER);
    return created;
  }

  /** A call of the run ends: its result saved, then its event published (evals/runner.ts carryRun's order). */
  async function callEnds(run: EvalRunRow, results: EvalCallResult[], planned: number): Promise<void> {
    await runs().saveResults(run.id, WORKER, results);
    await events.progressed(run, planned, results);
  }

  /** Opens the run's page and waits until its subscription holds on the server. */
  async function openRun(run: EvalRunRow): Promise<void> {
    await page.goto(`${rig.base}/console/#/evals/${run.id}`);
    await page.waitForSelector('[data-field=calls]');
    await until(() => subscribed(run), 10_000, "the run page's subscription on the server");
  }

  /** Waits until a request issued after every earlier one is seen: any earlier request has been counted by then. */
  async function settled(): Promise<void> {
    const marker = `/console/?settled=${newId()}`;
    const seen = page.waitForRequest((r) => r.url().endsWith(marker));
    await js(page, `fetch(${JSON.stringify(marker)}, { credentials: 'same-origin' }).then(() => 1)`);
    await seen;
  }

  before(async function () {
    if (!chromiumAvailable()) this.skip();
    rig = await startConsole();
    f = await createFixture(rig.t.ctx);
    events = new RunEvents(eventPublisher(rig.t.ctx), rig.t.ctx.logger);
    const scenario = await evalScenariosRepo(rig.t.ctx.db).create(
      f.customer.id,
      evalScenarioInput.parse({
        name: 'Opening hours',
        target: { type: 'number', target: '+899100000001' },
        caller: { language: 'en-US', turns: [{ say: 'What are your opening hours?' }, { hangup: true }] },
        checks: [
          { type: 'latency_under', ms: 4000 },
          { type: 'transcript_contains', role: 'agent', text: 'nine to five' },
        ],
      }),
    );
    scenarioId = scenario.id;
    page = await signIn(rig, f.admin.username, f.password);
    await page.waitForSelector('nav a[aria-current=page]');
    await page.waitForSelector('.socket-open');
    page.on('request', (r: HTTPRequest) => {
      const m = /\/v1\.0\/eval_runs\/([0-9a-f-]{36})$/.exec(new URL(r.url()).pathname);
      if (m && r.method() === 'GET') reads.set(m[1]!, (reads.get(m[1]!) ?? 0) + 1);
    });
  });
  after(async () => {
    await page?.close();
    await rig?.close();
  });

  it('shows each call and the counts as its event arrives, then the final status and summary, with no reload and no polling', async () => {
    const run = await runningRun(2);
    await openRun(run);
    expect(await field('status')).to.equal('running');
    expect(await field('calls')).to.equal('0 / 2');
    await js(page, 'window.__notReloaded = true');

    const first = result(scenarioId, true, 800);
    await callEnds(run, [first], 2);
    await shows('calls', '1 / 2');
    expect(await field('pass-rate')).to.equal('100 %');
    expect(await js<string>(page, `document.querySelector('.eval-call[data-call="0"] [data-field=verdict]').textContent`)).to.equal('passed');

    const second = result(scenarioId, false, 2400);
    await callEnds(run, [first, second], 2);
    await shows('calls', '2 / 2');
    expect(await field('pass-rate')).to.equal('50 %');
    expect(await js<string>(page, `document.querySelector('.eval-call[data-call="1"] [data-field=verdict]').textContent`)).to.equal('failed');
    expect(await js<string>(page, `document.querySelector('.eval-call[data-call="1"] [data-field=checks]').textContent`)).to.include('1 of 2 checks passed');
    expect(await field('status')).to.equal('running');
    await shot(rig, page, 'evals-live-running');
    await settled();
    expect(reads.get(run.id), 'the calls came from the events, not from reading the run again').to.equal(1);

    await runs().end(run.id, WORKER, 'finished', [first, second]);
    await events.ended(run, 'finished', '', [first, second]);
    await shows('status', 'finished');
    // the run read once more at its end: each call in full, the failing check with its evidence
    await page.waitForSelector('.eval-call[data-call="1"] li.check-failed');
    expect(await js<string>(page, `document.querySelector('.eval-call[data-call="1"] li.check-failed .evidence').textContent`)).to.equal('no agent line contains "nine to five"');
    expect(await js<number>(page, `document.querySelectorAll('.eval-call.pending').length`)).to.equal(0);
    expect(await field('pass-rate')).to.equal('50 %');
    expect(await textOf(page)).to.include('2400 ms'); // the summary's latency_ms p95, and the failing call's turn
    await settled();
    expect(reads.get(run.id)).to.equal(2);
    expect(await js<boolean>(page, 'window.__notReloaded === true')).to.equal(true);
  });

  it('reopens a socket the server dropped, reads the run once more (a call whose event it missed appears) and follows it again', async () => {
    const run = await runningRun(2);
    await openRun(run);
    expect(reads.get(run.id)).to.equal(1);
    const before = sockets();
    expect(before).to.have.length(1);
    // a call ends and its event goes out while the page cannot hear it: saved, not announced to the page
    const first = result(scenarioId, true, 900);
    await runs().saveResults(run.id, WORKER, [first]);
    for (const c of before) c.socket.terminate();
    await shows('calls', '1 / 2');
    await until(() => subscribed(run) && !before.includes(sockets()[0]!), 10_000, 'the run subscribed again on a new socket');
    await settled();
    expect(reads.get(run.id), 'one read on the reopen').to.equal(2);
    // and the events reach the page again on the new socket
    const second = result(scenarioId, true, 950);
    await callEnds(run, [first, second], 2);
    await shows('calls', '2 / 2');
    await settled();
    expect(reads.get(run.id)).to.equal(2);
  });

  it("leaving the run's page drops its subscription and its reopen listener; the console's socket stays", async () => {
    const run = await runningRun(1);
    await openRun(run);
    const socket = sockets()[0]!;
    await page.click('a[href="#/evals"]');
    await page.waitForSelector('table[aria-label="Eval runs"]');
    await until(() => !subscribed(run), 10_000, "the run's topic dropped on the server");
    expect(sockets(), "the console's one socket").to.deep.equal([socket]);
    // a reopen after leaving reads nothing of the run
    socket.socket.terminate();
    await until(() => sockets().length === 1 && sockets()[0] !== socket, 10_000, 'the socket reopened');
    await page.waitForSelector('.socket-open');
    await settled();
    expect(reads.get(run.id)).to.equal(1);
    expect(rig.browser.errors.filter((e) => /Content Security Policy|pageerror/.test(e))).to.deep.equal([]);
  });
});
