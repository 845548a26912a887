// The busy-lamp page (#/blf) in Chromium against a real call plane: two extensions of the customer,
// sipp phones registered through sip-server, one calling the other. The page shows the callee
// ringing, then both in the call, then idle, each within a second of the presence change that made
// it (the change notices media-app publishes, heard here on the same channel), through the
// WebSocket's extension_state_updated frames; registration shows on the lamp.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createFixture, type Fixture } from '../../testkit/api';
import { chromiumAvailable } from '../../testkit/browser';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { answeringUas, createExtension, killAllSipp, registerOnly, sipp, until } from '../../testkit/media-app/harness';
import { callerPhone } from '../../testkit/media-app/phones';
import { PresenceStore, type PresenceChange } from '../../core/presence/store';
import { js, shot, signIn, startConsole, type ConsoleRig } from './support';

describe('console: busy lamps page against a real call (Chromium, sipp)', function () {
  this.timeout(120_000);
  let rig: ConsoleRig;
  let f: Fixture;
  let listener: Redis;
  const changes: PresenceChange[] = [];
  let unlisten: () => Promise<void>;
  before(async function () {
    if (!chromiumAvailable()) this.skip();
    rig = await startConsole({ platform: true });
    f = await createFixture(rig.t.ctx);
    listener = rig.t.ctx.redis.duplicate();
    unlisten = await new PresenceStore(rig.t.ctx.redis, rig.platform!.config.redisKeyPrefix).listen(listener, (c) => changes.push(c));
  });
  after(async () => {
    killAllSipp();
    await unlisten?.();
    listener?.disconnect();
    await rig?.close();
  });

  it('an extension ringing, then in a call, then idle, each within a second of the change; registered or not', async () => {
    const cid = f.customer.id;
    const caller = await createExtension(cid, { extension: '2101' });
    const callee = await createExtension(cid, { extension: '2102' });
    const idle = await createExtension(cid, { extension: '2103' });
    await rig.t.ctx.db('extensions').where({ id: callee.ext.id }).update({ name: 'Reception' });
    const page = await signIn(rig, f.admin.username, f.password, { width: 1280, height: 900 });
    await page.waitForSelector('nav a[aria-current=page]');
    await page.click('nav a[href="#/blf"]');
    await page.waitForSelector('.socket-open');
    const lamp = (ext: string) => `.lamps li[data-extension="${ext}"]`;
    await page.waitForSelector(lamp(idle.ext.extension));
    expect(await js<string>(page, `document.querySelector('${lamp(idle.ext.extension)}').dataset.state`)).to.equal('idle');
    expect(await js<string>(page, `document.querySelector('${lamp(idle.ext.extension)} [data-field=presence]').textContent`)).to.equal('Not registered');
    expect(await js<number>(page, `document.querySelectorAll('.lamps.slots li[data-state=free]').length`)).to.equal(20);

    // the callee's phone registers: the lamp shows it registered (a registration notice)
    const sipServer = `127.0.0.1:${rig.platform!.sipPort}`;
    const phonePort = await freePort();
    const reg = await sipp(registerOnly(callee.ext.username, callee.domain), [sipServer, '-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-au', callee.ext.username, '-ap', callee.password])
      .done;
    expect(reg.code, reg.errors).to.equal(0);
    await page.waitForFunction(`document.querySelector('${lamp(callee.ext.extension)}')?.dataset.registered === 'true'`, { timeout: 5000 });

    // a real call: the callee answers 3 s after ringing, the caller hangs up 3 s after the answer
    const answering = sipp(
      answeringUas({ tag: '[pid]callee', contact: `<sip:${callee.ext.username}@[local_ip]:[local_port]>`, inviteTimeoutMs: 20000, pauseMs: 3000 }),
      ['-i', '127.0.0.1', '-p', String(phonePort), '-m', '1', '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { killAfterMs: 60_000 },
    );
    await new Promise((r) => setTimeout(r, 300));
    changes.length = 0;
    const calling = sipp(
      callerPhone(caller.ext.username, caller.domain, callee.ext.extension, rig.platform!.sipPort, { holdMs: 3000 }),
      [sipServer, '-i', '127.0.0.1', '-m', '1', '-au', caller.ext.username, '-ap', caller.password, '-mi', '127.0.0.1', '-mp', String(await sippMediaPort())],
      { killAfterMs: 60_000 },
    );
    /** Waits until the page shows `state` on the lamp; how long after the first dialog change of the extension since `after`. */
    const shown = async (ext: string, state: string, after: number) => {
      await page.waitForFunction(`document.querySelector('${lamp(ext)}')?.dataset.state === '${state}'`, { timeout: 15_000, polling: 'mutation' });
      const seen = Date.now();
      const change = changes.find((c) => c.resource === ext && c.kind === 'dialog' && c.at >= after);
      expect(change, `a dialog change of ${ext}`).to.not.equal(undefined);
      return seen - change!.at;
    };
    const t0 = Date.now();
    expect(await shown(callee.ext.extension, 'ringing', t0), 'ringing shown after the change (ms)').to.be.below(1000);
    const ringing = await js<string>(page, `document.querySelector('${lamp(callee.ext.extension)}').innerText`);
    expect(ringing).to.include('Ringing').and.include(`from Alice (${caller.ext.extension})`);
    await shot(rig, page, 'blf');
    // answered: the change that confirms the dialog, then the page
    const t1 = await until(() => changes.find((c) => c.resource === callee.ext.extension && c.kind === 'dialog' && c.at > t0 + 1000)?.at ?? null, 15_000, 'the answer changes the callee');
    expect(await shown(callee.ext.extension, 'in_call', t1), 'in a call shown after the change (ms)').to.be.below(1000);
    await page.waitForFunction(`document.querySelector('${lamp(caller.ext.extension)}')?.dataset.state === 'in_call'`, { timeout: 5000 });
    expect(await js<string>(page, `document.querySelector('${lamp(caller.ext.extension)}').innerText`)).to.include(`to ${callee.ext.extension}`);
    expect(await js<string>(page, `document.querySelector('${lamp(callee.ext.extension)}').innerText`)).to.include('Reception');
    // hung up: idle again
    const [rc, ra] = await Promise.all([calling.done, answering.done]);
    expect(rc.code, rc.errors).to.equal(0);
    expect(ra.code, ra.errors).to.equal(0);
    const ended = await until(() => changes.filter((c) => c.resource === callee.ext.extension && (c.ended?.length ?? 0) > 0).pop()?.at ?? null, 10_000, 'the call ended');
    expect(await shown(callee.ext.extension, 'idle', ended - 1), 'idle shown after the change (ms)').to.be.below(1000);
    await page.waitForFunction(`document.querySelector('${lamp(caller.ext.extension)}')?.dataset.state === 'idle'`, { timeout: 5000 });
    expect(rig.browser.errors.filter((e) => /Content Security Policy|pageerror/.test(e))).to.deep.equal([]);
  });
});
