// The scanner blocklist (issue #32 item 6): sipp sends OPTIONS with real tools' User-Agents to a stack
// with the default blocklist. Whole product names of scanners are dropped (friendly-scanner,
// sipcli/v1.8); monitoring tools and names that merely contain a scanner's (sipsak/0.9.8,
// mysipclient) are answered; what was dropped is logged with the User-Agent and source, once per
// source per minute.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import pino from 'pino';
import { makeSipConfig } from '../../../sip-config';
import { SipStack } from '../../../sip-server/stack';
import { ScannerDropLog, productNames } from '../../../sip-server/security/scanner';
import { freePort } from '../../../testkit/ports';
import { FAST_TIMERS, runSipp } from './support';
import { attachTestUas } from './test-uas';

function optionsScenario(ua: string): string {
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="options-probe">
<send><![CDATA[
OPTIONS sip:ping@[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: <sip:monitor@[local_ip]:[local_port]>;tag=[call_number]
To: <sip:ping@[remote_ip]:[remote_port]>
Call-ID: [call_id]
CSeq: 1 OPTIONS
Max-Forwards: 70
User-Agent: ${ua}
Content-Length: 0

]]></send>
<recv response="200" timeout="1500"/>
</scenario>`;
}

describe('sip-server: scanner blocklist by product token (sipp OPTIONS)', function () {
  this.timeout(60_000);
  let stack: SipStack;
  let dir: string;
  const lines: Record<string, unknown>[] = [];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scanner-'));
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
        cb();
      },
    });
    const port = await freePort();
    // the default blocklist: what an operator gets without setting SIP_UA_BLOCKLIST
    stack = new SipStack(makeSipConfig({ listen: { host: '127.0.0.1', port, transports: ['udp'] }, timers: FAST_TIMERS }), { logger: pino({ level: 'info' }, sink) });
    await stack.start();
    attachTestUas(stack);
  });
  after(async () => {
    await stack?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const probe = async (ua: string, from = '127.0.0.1'): Promise<boolean> => {
    const file = path.join(dir, `s${Math.random().toString(36).slice(2)}.xml`);
    fs.writeFileSync(file, optionsScenario(ua));
    const r = await runSipp(['-sf', file, `127.0.0.1:${stack.listening[0]!.port}`, '-i', from, '-p', String(await freePort(from)), '-m', '1', '-timeout', '10s'], 20_000);
    return r.code === 0;
  };
  const dropLines = () => lines.filter((l) => l.msg === 'scanner dropped');

  it('answers sipsak/0.9.8 and mysipclient; drops friendly-scanner and sipcli/v1.8', async () => {
    expect(await probe('sipsak/0.9.8'), 'sipsak/0.9.8 answered').to.equal(true);
    expect(await probe('mysipclient'), 'mysipclient answered').to.equal(true);
    expect(await probe('Nagios check_sip/1.4 (monitoring)'), 'a Nagios probe answered').to.equal(true);
    expect(await probe('friendly-scanner'), 'friendly-scanner dropped').to.equal(false);
    expect(await probe('sipcli/v1.8'), 'sipcli/v1.8 dropped').to.equal(false);
    expect(await probe('Foo/1.0 VaxSIPUserAgent/3.1'), 'a scanner product after another one dropped').to.equal(false);
    // a comment is not a product: "(like sipvicious)" is prose
    expect(await probe('Acme-Phone/2.0 (not sipvicious)'), 'a scanner named in a comment only answered').to.equal(true);
  });

  it('logs the first drop per source with User-Agent and source, then stays quiet for that source', async () => {
    const drops = dropLines();
    expect(drops, JSON.stringify(drops)).to.have.length(1);
    expect(drops[0]).to.include({ src: '127.0.0.1', ua: 'friendly-scanner', match: 'friendly-scanner' });
    // another source is logged on its own
    expect(await probe('friendly-scanner', '127.0.0.2')).to.equal(false);
    expect(dropLines()).to.have.length(2);
    expect(dropLines()[1]).to.include({ src: '127.0.0.2', ua: 'friendly-scanner' });
  });

  it('the drop log tells how many were suppressed once the interval is over', () => {
    let t = 0;
    const out: { src: string; suppressed?: number }[] = [];
    const log = new ScannerDropLog(
      (f) => out.push(f),
      60_000,
      2,
      () => t,
    );
    const m = { entry: 'sipcli', ua: 'sipcli/v1.8' };
    log.note('192.0.2.1', m);
    for (let i = 0; i < 5; i++) log.note('192.0.2.1', m);
    expect(out).to.have.length(1);
    t = 60_000;
    log.note('192.0.2.1', m);
    expect(out).to.have.length(2);
    expect(out[1]).to.include({ src: '192.0.2.1', suppressed: 5 });
    // more sources than remembered: one line per interval for all of them together
    log.note('192.0.2.2', m);
    log.note('192.0.2.3', m);
    log.note('192.0.2.4', m);
    expect(out.map((o) => o.src)).to.deep.equal(['192.0.2.1', '192.0.2.1', '192.0.2.2', '192.0.2.3']);
  });

  it('a flood from more sources than it remembers (spoofed UDP) costs no scan of all of them per drop', () => {
    let t = 1_000_000;
    let lines = 0;
    const log = new ScannerDropLog(
      () => lines++,
      60_000,
      10_000,
      () => t,
    );
    const m = { entry: 'friendly-scanner', ua: 'friendly-scanner' };
    const source = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    for (let i = 0; i < 10_000; i++) log.note(source(i), m);
    // 30,000 drops from new sources within the minute: each used to walk all 10,000 remembered ones
    t += 1000;
    for (let i = 10_000; i < 40_000; i++) log.note(source(i), m);
    // counted, not timed: the old code walked all 10,000 on each of the 30,000 drops
    expect(log.sweeps, 'walks of the remembered sources for 30,000 drops in one minute').to.equal(1);
    expect(lines, 'one line per remembered source, then one for the overflow').to.equal(10_001);
    // once the minute is over the old sources are forgotten and new ones are logged again
    t += 60_001;
    log.note(source(50_000), m);
    expect(lines).to.equal(10_002);
  });

  it('product names: tokens before "/", comments skipped', () => {
    expect(productNames('Foo/1.0 (bar baz/2) SIPcli/v1.8')).to.deep.equal(['foo', 'sipcli']);
    expect(productNames('friendly-scanner')).to.deep.equal(['friendly-scanner']);
    expect(productNames('a (x (nested) y) b')).to.deep.equal(['a', 'b']);
  });
});
