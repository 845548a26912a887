// The baresip phone suites' set-up (baresip.test.ts, hdvoice-baresip.test.ts): a platform on an emptied
// database that reaches loopback, tones as the phones' microphones, and phones registered as extensions;
// the phones disposed after each test, the platform and the tones after the suite.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { truncateAll } from '../../testkit/db';
import { startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { Baresip } from '../../testkit/baresip';
import { toneWav } from './audio';

export interface BaresipSuite {
  /** A WAV of a `hz` sine at `rate`, made once: stereo at 48 kHz (baresip's opus runs at 48 kHz stereo, and aufile wants its file in the codec's own format). */
  tone(hz: number, rate?: number): string;
  /** A phone of the extension with `mic` as its microphone (`codecModules` loaded before g711); resolves once the platform holds its registration. */
  phone(ext: { username: string }, domain: string, password: string, mic: string, codecModules?: string[]): Promise<Baresip>;
}

/** Mocha hooks of such a suite; `skip` (checked in its `before`) skips it all, e.g. for a codec module baresip lacks here. */
export function useBaresipSuite(skip: () => boolean = () => false): BaresipSuite {
  let p: Platform | undefined;
  let dir: string | undefined;
  const phones: Baresip[] = [];
  before(async function () {
    if (skip()) this.skip();
    await truncateAll();
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' });
  });
  afterEach(async () => {
    await Promise.all(phones.splice(0).map((b) => b.dispose()));
  });
  after(async () => {
    await p?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    tone(hz, rate = 8000) {
      dir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'baresip-tones-'));
      const f = path.join(dir, `${hz}-${rate}.wav`);
      if (!fs.existsSync(f)) toneWav(f, hz, rate, rate === 48000 ? 2 : 1);
      return f;
    },
    async phone(ext, domain, password, mic, codecModules) {
      const platform = p!;
      const b = await Baresip.start({ user: ext.username, domain, password, outboundProxy: `sip:127.0.0.1:${platform.sipPort}`, ...(codecModules ? { codecModules } : {}) }, mic);
      phones.push(b);
      await until(async () => (await platform.app.registrar.bindings.get(`${ext.username}@${domain}`)).length > 0 || null, 10_000, `${ext.username} registered`).catch((err: Error) => {
        throw new Error(`${err.message}\n${b.log.slice(-3000)}`);
      });
      return b;
    },
  };
}
