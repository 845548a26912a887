// baresip 1.0 (Debian) as a real SIP phone for tests: one account, headless (no audio device: a sine
// source and a file player), auto-answer, loopback only. Its output is collected for assertions.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface BaresipOptions {
  /** the account line's AOR, e.g. sip:100@d.example;transport=tls */
  aor: string;
  password: string;
  /** outbound proxy, e.g. sip:127.0.0.1:5061;transport=tls */
  outbound: string;
  /** CA file that signs the server's certificate */
  caFile?: string;
  /** commands run at start (-e), e.g. "/dial sip:200@d.example" */
  commands?: string[];
}

/** A 2 s 440 Hz tone, 8 kHz 16-bit mono WAV (what aufile plays as the microphone). */
function tone(dir: string): string {
  const n = 16_000;
  const pcm = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)), i * 2);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0); h.writeUInt32LE(36 + pcm.length, 4); h.write('WAVE', 8); h.write('fmt ', 12);
  h.writeUInt32LE(16, 16); h.writeUInt16LE(1, 20); h.writeUInt16LE(1, 22); h.writeUInt32LE(8000, 24);
  h.writeUInt32LE(16_000, 28); h.writeUInt16LE(2, 32); h.writeUInt16LE(16, 34); h.write('data', 36); h.writeUInt32LE(pcm.length, 40);
  const file = path.join(dir, 'tone.wav');
  fs.writeFileSync(file, Buffer.concat([h, pcm]));
  return file;
}

export class Baresip {
  log = '';
  private constructor(private readonly proc: ChildProcess, readonly dir: string) {
    proc.stdout?.on('data', (d) => (this.log += d));
    proc.stderr?.on('data', (d) => (this.log += d));
  }

  static start(o: BaresipOptions): Baresip {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baresip-'));
    fs.writeFileSync(path.join(dir, 'config'), [
      'poll_method epoll',
      'sip_listen 127.0.0.1:0',
      ...(o.caFile ? [`sip_cafile ${o.caFile}`] : []),
      `audio_source aufile,${tone(dir)}`,
      'audio_player aufile,/dev/null',
      'audio_alert aufile,/dev/null',
      'module_path /usr/lib/baresip/modules',
      'module stdio.so',
      'module g711.so',
      'module aufile.so',
      'module_app account.so',
      'module_app menu.so',
      'net_interface 127.0.0.1',
      '',
    ].join('\n'));
    fs.writeFileSync(path.join(dir, 'accounts'), `<${o.aor}>;auth_pass=${o.password};outbound="${o.outbound}";regint=600;answermode=auto;audio_codecs=PCMU\n`);
    const args = ['-f', dir, '-4', ...(o.commands ?? []).flatMap((c) => ['-e', c])];
    const proc = spawn('baresip', args, { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
    return new Baresip(proc, dir);
  }

  /** Resolves when the output matches, rejects after `ms`. */
  async waitFor(re: RegExp, ms = 10_000): Promise<void> {
    const until = Date.now() + ms;
    while (!re.test(this.log)) {
      if (Date.now() > until) throw new Error(`baresip: no ${re} in:\n${this.log.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** A menu command typed on its console (stdio module). */
  command(c: string): void { this.proc.stdin?.write(`${c}\n`); }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.kill('SIGTERM');
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(t);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
