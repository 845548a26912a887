/**
 * Call set-up time of the browser phone: Chromium (web/phone, JsSIP over SIP WebSocket) calls an
 * extension registered by sipp through sip-server, media-app and rtpengine (DTLS-SRTP + ICE towards
 * the browser); measured from the browser's first INVITE to its 200 OK (the 407 digest round trip
 * included), and from the click to the 200 OK (getUserMedia and ICE gathering included). Same-run
 * baseline: sipp as a plain SIP phone (UDP, RTP/AVP, no relay) calling the same extension, first
 * INVITE → 200 OK with the same 407 round trip, alternating with the browser calls so both share the
 * machine's load. Bounded: N calls each, one at a time, on loopback.
 *
 *   source .data/env && NODE_ENV=test npx tsx scripts/bench/webrtc/setup.ts [N=30]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RtpParty } from '../../../testkit/conference/party';
import { freePort } from '../../../testkit/ports';
import { Rtpengine } from '../../../testkit/rtpengine';
import { createExtension, killAllSipp, sipp, sleep } from '../../../testkit/media-app/harness';
import { calleeToParty, openPhone, phoneBrowser, signInExtension, startRig, toneWav, waitPhase, waitReg } from '../../../testkit/webphone/harness';
import { registerPhone, callerPhone } from '../../../testkit/media-app/phones';

const N = Math.max(5, Math.min(200, Number(process.argv[2]) || 30));

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}
const row = (name: string, xs: number[]) => `| ${name} | ${xs.length} | ${pct(xs, 50).toFixed(1)} | ${pct(xs, 90).toFixed(1)} | ${pct(xs, 99).toFixed(1)} | ${Math.max(...xs).toFixed(1)} |`;

/** One sipp plain call; the INVITE→200 time from sipp's own response-time trace (ms). */
async function plainCall(sipPort: number, user: string, domain: string, password: string, target: string): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-webrtc-'));
  // the extension caller of the tests, without its REGISTER and its second of talk, timing INVITE → 200
  fs.writeFileSync(path.join(dir, 's.xml'), callerPhone(user, domain, target, sipPort, { register: false, timeSetup: true, holdMs: 0 }));
  const mp = await freePort();
  const code = await new Promise<number | null>((resolve) => {
    const p = spawn(
      'sipp',
      [
        `127.0.0.1:${sipPort}`,
        '-sf',
        's.xml',
        '-i',
        '127.0.0.1',
        '-m',
        '1',
        '-au',
        user,
        '-ap',
        password,
        '-mi',
        '127.0.0.1',
        '-mp',
        String(mp),
        '-nostdin',
        '-timeout',
        '15s',
        '-trace_rtt',
        '-rtt_freq',
        '1',
      ],
      { cwd: dir, stdio: 'ignore' },
    );
    p.on('exit', resolve);
  });
  const csv = fs.readdirSync(dir).find((f) => f.endsWith('_rtt.csv'));
  const lines = csv ? fs.readFileSync(path.join(dir, csv), 'utf8').trim().split('\n') : [];
  fs.rmSync(dir, { recursive: true, force: true });
  const last = lines[lines.length - 1]?.split(';');
  // Date_ms;response_time_ms;rtd_no
  const ms = last ? Number(last[1]) : NaN;
  if (code !== 0 || !Number.isFinite(ms)) throw new Error(`sipp plain call failed (code ${code})`);
  return ms;
}

async function main(): Promise<void> {
  const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const rtp = await Rtpengine.create();
  const rig = await startRig({ ws: true, publicWs: 'ws', platformEnv: { RTPENGINE_NG: rtp.ng, LOG_LEVEL: 'silent', SIP_DIGEST_ALGORITHMS: 'MD5,SHA-256' } });
  const b = await phoneBrowser(toneWav(1000));
  const party = await RtpParty.open(440);
  try {
    const callee = await createExtension();
    const browserExt = await createExtension(callee.customerId);
    const plainExt = await createExtension(callee.customerId);
    const phonePort = await freePort();
    const reg = await registerPhone(`127.0.0.1:${rig.p.sipPort}`, callee, '127.0.0.1', phonePort);
    if (reg.code !== 0) throw new Error('callee registration failed');
    // the callee answers every call at once (2N calls), audio to the RTP party
    const uas = sipp(calleeToParty(callee.ext.username, party.port), ['-i', '127.0.0.1', '-p', String(phonePort), '-m', String(2 * N)], { killAfterMs: 60_000 + N * 20_000 });
    await sleep(300);
    const page = await openPhone(b, rig.base);
    await signInExtension(page, `${browserExt.ext.username}@${browserExt.domain}`, browserExt.password);
    await waitReg(page, 'registered');

    const invite200: number[] = [];
    const click200: number[] = [];
    const plain: number[] = [];
    let plainFailed = 0;
    for (let i = 0; i < N; i++) {
      await page.type('#target', callee.ext.extension);
      await page.click('#call');
      await waitPhase(page, 'connected', 15_000);
      const t = (await page.evaluate('window.openvoicePhone.timing')) as { dialAt: number; inviteAt: number; answeredAt: number };
      invite200.push(t.answeredAt - t.inviteAt);
      click200.push(t.answeredAt - t.dialAt);
      await page.click('#hangup');
      await waitPhase(page, 'ended');
      await sleep(200);
      try {
        plain.push(await plainCall(rig.p.sipPort, plainExt.ext.username, plainExt.domain, plainExt.password, callee.ext.extension));
      } catch {
        plainFailed++;
      }
      await sleep(300);
    }
    const loadAfter = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const out = [
      `N = ${N} calls each, alternating; load average ${load} before, ${loadAfter} after; ${os.cpus().length} vCPU (${os.cpus()[0]?.model ?? '?'}), Node ${process.version}`,
      '',
      '| set-up (ms) | calls | p50 | p90 | p99 | max |',
      '|---|---|---|---|---|---|',
      row('browser: first INVITE → 200 OK (407 round trip, rtpengine offer/answer)', invite200),
      row('browser: click → 200 OK (getUserMedia, ICE gathering included)', click200),
      row('sipp plain SIP: first INVITE → 200 OK (407 round trip, no relay)', plain),
      '',
      `ratio browser/plain at p50: ${(pct(invite200, 50) / pct(plain, 50)).toFixed(2)}; sipp plain calls that failed: ${plainFailed}`,
    ].join('\n');
    console.log(out);
    await page.close();
    killAllSipp();
    await uas.done;
  } finally {
    party.close();
    await b.close();
    await rig.close();
    await rtp.dispose();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
