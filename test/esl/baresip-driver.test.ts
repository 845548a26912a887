// The softphone driver scripts/fsmrf/e2e.ts starts (testkit/baresip.ts), against the real baresip: a
// machine without baresip fails the start (the caller prints FAIL) instead of ending the process, and a
// command that timed out leaves no waiter behind (each later command gets its own answer), and a wait for an
// event (CALL_CLOSED) is woken by baresip's ctrl event, not polled.
import { expect } from 'chai';
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import { Baresip } from '../../testkit/baresip';
import { tmpDir } from '../../testkit/media-engine/support';
import { parseSip, response } from '../../evals/sip-message';

const account = { user: 'phone', domain: '127.0.0.1', password: 'unused', outboundProxy: 'sip:127.0.0.1:9', register: false };

describe('testkit/baresip: the driver against the real baresip', () => {
  let dir: string;
  let phone: Baresip | undefined;
  before(() => (dir = tmpDir()));
  afterEach(async () => {
    await phone?.dispose();
    phone = undefined;
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('no baresip on PATH: start rejects with why; the process goes on', async () => {
    const saved = process.env.PATH;
    process.env.PATH = path.join(dir, 'empty');
    try {
      const err = await Baresip.start(account, '/dev/null').then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).to.match(/baresip exited:[\s\S]*ENOENT/);
    } finally {
      process.env.PATH = saved;
    }
  });

  it('a command that timed out leaves no waiter: the next commands get their own answers', async () => {
    phone = await Baresip.start(account, '/dev/null');
    const pid = phone.pid!;
    process.kill(pid, 'SIGSTOP');
    try {
      const late = await phone.command('about', '', 200).then(
        () => 'answered',
        (e: Error) => e.message,
      );
      expect(late).to.equal('baresip: no answer to about');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // the paused command's answer comes now and is dropped: each command gets its own
    const own = await phone.command('dial', 'no-such-uri-$$$');
    const other = await phone.command('about');
    expect(JSON.stringify(own)).to.not.equal(JSON.stringify(other));
    expect(String(other.data), 'the answer to about').to.match(/baresip/i);
  });

  it('event(type) is woken by the ctrl event: rejects after its timeout, resolves when it comes and at once once seen', async () => {
    // the far end: a UDP socket on loopback that answers every INVITE 486 (baresip ACKs it; the call closes)
    const far = dgram.createSocket('udp4');
    far.on('error', () => undefined);
    far.on('message', (buf, from) => {
      const m = parseSip(buf);
      if (m?.method === 'INVITE') far.send(response(m, 486, 'Busy Here', 'far'), from.port, from.address);
    });
    await new Promise<void>((r) => far.bind(0, '127.0.0.1', r));
    try {
      phone = await Baresip.start({ ...account, outboundProxy: `sip:127.0.0.1:${far.address().port}` }, '/dev/null');
      const early = await phone.event('CALL_CLOSED', 100).then(
        () => 'resolved',
        (e: Error) => e.message,
      );
      expect(early).to.equal('baresip: no CALL_CLOSED within 100 ms');
      const closed = phone.event('CALL_CLOSED', 10_000);
      await phone.dial(`sip:busy@127.0.0.1:${far.address().port}`);
      await closed;
      expect(phone.saw('CALL_CLOSED')).to.equal(true);
      await phone.event('CALL_CLOSED', 1); // seen before: at once
    } finally {
      far.close();
    }
  });
});
