// Forwarding Opus pairs served in C (native/rtp_legs.c) leave for JS before any operation and for each RTCP
// report (c-legs.ts), and come back. A packet C forwarded waits in the leg's own buffers for the ring's next
// submit: the leg's move to JS must not free them under it (found by the codec-legs bench: EDESTADDRREQ on a
// few sends a second at 500 legs). The engine runs in a process of its own (fixtures/opus-c-moves.ts) under
// MALLOC_PERTURB_, so a send from freed memory is refused by the kernel instead of going out unseen; A's far
// end sends a packet every millisecond, and an operation that changes nothing takes the pair to JS every few
// ms, so many moves find packets waiting.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { rtpUring } from '../../media-engine/native';
import { portRange } from '../../testkit/media-engine/support';

const FIXTURE = path.join(__dirname, 'fixtures', 'opus-c-moves.ts');

function run(reports: number): Promise<Record<string, number>> {
  const { min, max } = portRange(40);
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', FIXTURE, String(reports), String(min), String(max)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, MALLOC_PERTURB_: '165' },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`the engine's process ended ${code}: ${err.slice(-2000)}`));
      else resolve(JSON.parse(line) as Record<string, number>);
    }),
  );
}

describe('media-engine: forwarding Opus pairs in C through their RTCP reports', function () {
  this.timeout(60000);
  before(function () {
    if (!rtpUring) this.skip(); // no ring built: every leg is in JS
  });

  it('no forwarded packet is sent from a leg freed by its move to JS', async () => {
    const r = await run(3);
    expect(r.reports, "B's RTCP reports").to.be.at.least(3);
    expect(r.moves, 'moves to JS asked').to.be.greaterThan(500);
    expect(r.cLegs, 'the pair is served in C').to.equal(2);
    expect(r.forwarded, 'packets B forwarded as they came').to.be.greaterThan(1000);
    expect(r.sendErrors, 'sends the kernel refused').to.equal(0);
  });
});
