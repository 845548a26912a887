// A real softphone for the suite: Debian's linphonec 5.1 (liblinphone), headless, on loopback. It
// starts from a config that names only the provisioning URL (`[misc] config-uri`), as a phone does
// after scanning the QR code: liblinphone fetches the Linphone document and applies it by itself.
// Commands go to its stdin; its sound card is files (`soundcard use files`, `play`, `record`).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, sippMediaPort } from '../../testkit/ports';
import { captureOutput, endProcess } from '../../testkit/child-process';

export class Linphonec {
  private proc: ChildProcess | null = null;
  log = '';
  private readonly logWaiters = new Set<() => void>();

  private constructor(readonly dir: string) {}

  get rcFile(): string {
    return path.join(this.dir, 'linphonerc');
  }

  get logFile(): string {
    return path.join(this.dir, 'linphone.log');
  }

  /**
   * Starts linphonec with nothing but the provisioning URL (and loopback-only network settings);
   * `rtp`: more lines of its `[rtp]` section (e.g. `rtcp_xr_enabled=1`).
   */
  static async start(provisioningUrl: string, opts: { rtp?: string[] } = {}): Promise<Linphonec> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'linphonec-'));
    const l = new Linphonec(dir);
    fs.mkdirSync(path.join(dir, '.local', 'share', 'linphone'), { recursive: true });
    const sipPort = await freePort();
    const rtp = await sippMediaPort();
    fs.writeFileSync(
      l.rcFile,
      [
        '[misc]',
        `config-uri=${provisioningUrl}`,
        '[sip]',
        `sip_port=${sipPort}`,
        'sip_tcp_port=0',
        'sip_tls_port=0',
        'use_ipv6=0',
        'bind_address=127.0.0.1',
        '[rtp]',
        `audio_rtp_port=${rtp}`,
        'audio_jitt_comp=60',
        ...(opts.rtp ?? []),
        '[net]',
        'firewall_policy=0',
        '[sound]',
        'echocancellation=0',
        '',
      ].join('\n'),
    );
    l.run();
    return l;
  }

  private run(): void {
    const proc = spawn('linphonec', ['-c', this.rcFile, '-d', '5', '-l', this.logFile], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, HOME: this.dir },
    });
    this.proc = proc;
    captureOutput(proc, (d) => {
      this.log += d;
      for (const w of [...this.logWaiters]) w();
    });
    // a command written after linphonec is gone is an EPIPE on its stdin: said in the log (which a failing
    // test prints) with how it ended, not thrown from nowhere into whatever test runs then
    proc.stdin?.on('error', (e) => (this.log += `\n[linphonec stdin: ${e.message}]\n`));
    proc.on('exit', (code, signal) => {
      this.log += `\n[linphonec exited: ${signal ?? `code ${code}`}]\n`;
      if (this.proc === proc) this.proc = null;
      for (const w of [...this.logWaiters]) w();
    });
  }

  /** Where linphonec's console output ends now: `waitFor` and `connected` from here see only what follows. */
  mark(): number {
    return this.log.length;
  }

  /**
   * Resolves when linphonec's console output from `from` (default: its start) matches `re`, rejects
   * after `ms` or when linphonec exits first. Waits on its output, not on a clock.
   */
  waitFor(re: RegExp, ms: number, what: string, from = 0): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const check = () => {
        if (re.test(this.log.slice(from))) return finish(null);
        if (!this.proc) finish(new Error(`linphonec exited before: ${what}`));
      };
      const timer = setTimeout(() => finish(new Error(`timeout waiting for ${what}`)), ms);
      const finish = (err: Error | null) => {
        clearTimeout(timer);
        this.logWaiters.delete(check);
        if (err) reject(err);
        else resolve();
      };
      this.logWaiters.add(check);
      check();
    });
  }

  /**
   * A call placed after `from` (a `mark()` taken before the `call` command; default the log's start) has
   * its media running: linphonec's "Media streams established … for call N", printed when liblinphone's
   * call reaches StreamsRunning, after "Call N … connected". A `play` or `record` sent before it (the call
   * still ringing or only just connected, though the far end has answered) can crash linphonec 5.1 with
   * SIGSEGV: it then sends no BYE and the far end never sees the hang-up. Waiting for "connected" alone,
   * or for a line an earlier call printed, left that window open (issue 53's linphonec failures).
   */
  connected(ms = 15_000, from = 0): Promise<void> {
    return this.waitFor(/Media streams established with .* for call \d+/i, ms, 'linphonec connected (media streams established)', from);
  }

  /** One linphonec console command. */
  send(line: string): void {
    this.proc?.stdin?.write(`${line}\n`);
  }

  /** What liblinphone wrote to its config after provisioning (the applied document). */
  appliedConfig(): string {
    return fs.existsSync(this.rcFile) ? fs.readFileSync(this.rcFile, 'utf8') : '';
  }

  detailedLog(): string {
    return fs.existsSync(this.logFile) ? fs.readFileSync(this.logFile, 'utf8') : '';
  }

  async stop(): Promise<void> {
    if (this.proc) await endProcess(this.proc, () => this.send('quit'), 4000);
    this.proc = null;
  }

  async dispose(): Promise<void> {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
