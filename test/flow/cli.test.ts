import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';

function run(args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/flow-simulate.ts', ...args], { cwd: path.resolve(__dirname, '../..') }, (err, stdout) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout }),
    );
  });
}

describe('scripts/flow-simulate.ts', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flow-sim-'));

  it('prints the timeline of a flow against a script', async () => {
    writeFileSync(
      path.join(dir, 'flow.json'),
      JSON.stringify({ actions: [{ type: 'answer' }, { type: 'digits_receive', option: { duration: 3000, length: 1 } }, { type: 'talk', option: { text: 'you pressed ${svc.call.digits}' } }] }),
    );
    writeFileSync(path.join(dir, 'script.json'), JSON.stringify({ events: [{ at: 700, dtmf: '5' }] }));
    const { code, stdout } = await run([path.join(dir, 'flow.json'), path.join(dir, 'script.json')]);
    expect(code).to.equal(0);
    const out = JSON.parse(stdout);
    expect(out.outcome).to.equal('done');
    const talk = out.timeline.find((e: { command?: string }) => e.command === 'talk');
    expect(talk).to.include({ t: 700, text: 'you pressed 5' });
  });

  it('--no-http sends nothing: the request is in the timeline as http_not_sent, answered from the script', async () => {
    writeFileSync(path.join(dir, 'hook.json'), JSON.stringify([{ type: 'webhook_send', option: { sync: true, uri: 'http://127.0.0.1:9/hook' } }]));
    writeFileSync(path.join(dir, 'hook-script.json'), JSON.stringify({ http: [{ url: 'http://127.0.0.1:9/*', status: 204 }] }));
    const { code, stdout } = await run([path.join(dir, 'hook.json'), path.join(dir, 'hook-script.json'), '--no-http']);
    expect(code).to.equal(0);
    const out = JSON.parse(stdout);
    const entry = out.timeline.find((e: { event: string }) => e.event === 'http_not_sent');
    expect(entry).to.include({ method: 'POST', url: 'http://127.0.0.1:9/hook' });
  });

  it('exits 2 with the INVALID_ARGUMENT envelope on a bad flow', async () => {
    writeFileSync(path.join(dir, 'bad.json'), JSON.stringify([{ type: 'sleep', option: { duration: 'x' } }]));
    const { code, stdout } = await run([path.join(dir, 'bad.json')]);
    expect(code).to.equal(2);
    expect(JSON.parse(stdout).error.details[0]).to.include({ field: 'actions[0].option.duration', index: 0 });
  });
});
