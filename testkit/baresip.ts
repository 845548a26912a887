// A real softphone for the suite: Debian's baresip 1.0, headless, on loopback only. Its microphone is
// a WAV file (aufile), what it hears is written to a WAV file, and the test drives it over its
// ctrl_tcp socket (netstring JSON commands: dial, hangup). Answering is automatic (answermode=auto).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, sipPortPair, sippMediaPort } from './ports';
import { captureOutput, endProcess } from './child-process';

export interface BaresipAccount {
  user: string;
  domain: string;
  password: string;
  /** Where REGISTER and calls go, e.g. `sip:127.0.0.1:5060` (the provisioning document's outbound proxy). */
  outboundProxy: string;
  /** Extra account parameters (`;mediaenc=srtp-mand` and the like). */
  params?: string;
  /** false: never REGISTER (a trunk or PBX that is known by its address). Default true. */
  register?: boolean;
  /** Audio codec modules loaded before g711.so, in this order, so the phone offers them first (`g722.so`, `opus.so`). */
  codecModules?: string[];
  /**
   * Contacts (the `contacts` file, e.g. `"B" <sip:1002@domain>;presence=p2p`); with any, the contact
   * and presence modules are loaded: the phone SUBSCRIBEs to each p2p contact's presence.
   */
  contacts?: string[];
  /** Load the mwi module: after registering, the phone SUBSCRIBEs to its own account's message-summary. */
  mwi?: boolean;
  /** baresip -s: every SIP message it sends and receives goes to `log`. */
  sipTrace?: boolean;
}

export class Baresip {
  private proc: ChildProcess | null = null;
  log = '';
  private ctrlBuf = '';
  private ctrl: net.Socket | null = null;
  /** the commands waiting for their answer, by the token each sent (ctrl_tcp echoes it) */
  private readonly waiting = new Map<string, (line: Record<string, unknown>) => void>();
  private tokens = 0;
  readonly events: Record<string, unknown>[] = [];
  /** who waits for an event of a type (`event`) */
  private eventWaiters: { type: string; resolve: () => void }[] = [];

  private constructor(
    readonly dir: string,
    readonly sipPort: number,
    readonly ctrlPort: number,
  ) {}

  /** The process id while baresip runs (the tests pause it with SIGSTOP). */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** The WAV file of what the phone heard in its last call (sndfile's `dump-...-dec.wav`), or '' before any. */
  get heardWav(): string {
    const dumps = fs
      .readdirSync(this.dir)
      .filter((f) => f.startsWith('dump-') && f.endsWith('-dec.wav'))
      .sort();
    return dumps.length ? path.join(this.dir, dumps[dumps.length - 1]!) : '';
  }

  /** Starts baresip with one account; `micWav` is what it sends (mono 16-bit WAV, 8 kHz or the wideband codec's rate). */
  static async start(account: BaresipAccount, micWav: string): Promise<Baresip> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baresip-'));
    const b = new Baresip(dir, await sipPortPair(), await freePort()); // SIP on the port, TLS on the next
    const rtp = await sippMediaPort();
    fs.writeFileSync(
      path.join(dir, 'config'),
      [
        'poll_method epoll',
        // loopback only: without these baresip puts the machine's first interface in Contact and SDP
        'net_interface 127.0.0.1',
        `sip_listen 127.0.0.1:${b.sipPort}`,
        'sip_trans_def udp',
        `audio_source aufile,${micWav}`,
        'audio_alert aufile,/dev/null',
        `rtp_ports ${rtp}-${rtp + 3}`,
        'module_path /usr/lib/baresip/modules',
        ...(account.codecModules ?? []).map((m) => `module ${m}`),
        'module g711.so',
        'module aufile.so',
        // sndfile dumps what the phone hears (and sends) to WAV files in snd_path
        'module sndfile.so',
        `snd_path ${dir}`,
        'module srtp.so',
        'module_app account.so',
        'module_app menu.so',
        ...(account.contacts?.length ? ['module_app contact.so', 'module_app presence.so'] : []),
        ...(account.mwi ? ['module_app mwi.so'] : []),
        'module_app ctrl_tcp.so',
        `ctrl_tcp_listen 127.0.0.1:${b.ctrlPort}`,
        '',
      ].join('\n'),
    );
    fs.writeFileSync(
      path.join(dir, 'accounts'),
      `<sip:${account.user}@${account.domain}>;auth_pass=${account.password};outbound="${account.outboundProxy}";regint=${account.register === false ? 0 : 600};answermode=auto${account.params ?? ''}\n`,
    );
    if (account.contacts?.length) fs.writeFileSync(path.join(dir, 'contacts'), account.contacts.join('\n') + '\n');
    try {
      await b.run(account.sipTrace ? ['-s'] : []);
    } catch (e) {
      await b.dispose();
      throw e;
    }
    return b;
  }

  private async run(args: string[]): Promise<void> {
    const proc = spawn('baresip', ['-f', this.dir, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    captureOutput(proc, (d) => (this.log += d));
    // no baresip on PATH (ENOENT), or it cannot be run: the start fails below, the process goes on
    proc.on('error', (e) => {
      this.log += `${e.message}\n`;
      if (this.proc === proc) this.proc = null;
    });
    proc.on('exit', () => {
      if (this.proc === proc) this.proc = null;
    });
    const end = Date.now() + 5000;
    while (!this.ctrl) {
      if (!this.proc) throw new Error(`baresip exited:\n${this.log.slice(-2000)}`);
      if (Date.now() > end) throw new Error(`baresip ctrl_tcp did not open:\n${this.log.slice(-2000)}`);
      this.ctrl = await new Promise<net.Socket | null>((resolve) => {
        const s = net.connect(this.ctrlPort, '127.0.0.1');
        s.once('connect', () => resolve(s));
        s.once('error', () => resolve(null));
      });
      if (!this.ctrl) await new Promise((r) => setTimeout(r, 50));
    }
    this.ctrl.setEncoding('utf8');
    this.ctrl.on('data', (d: string) => this.onCtrl(d));
    this.ctrl.on('error', () => undefined);
  }

  /** Netstrings `len:json,` from ctrl_tcp: responses and events. */
  private onCtrl(d: string): void {
    this.ctrlBuf += d;
    for (;;) {
      const colon = this.ctrlBuf.indexOf(':');
      if (colon < 0) return;
      const len = Number(this.ctrlBuf.slice(0, colon));
      if (this.ctrlBuf.length < colon + 1 + len + 1) return;
      const body = this.ctrlBuf.slice(colon + 1, colon + 1 + len);
      this.ctrlBuf = this.ctrlBuf.slice(colon + 1 + len + 1);
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(body) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (msg.event) {
        this.events.push(msg);
        const now = this.eventWaiters.filter((w) => w.type === msg.type);
        this.eventWaiters = this.eventWaiters.filter((w) => w.type !== msg.type);
        for (const w of now) w.resolve();
        continue;
      }
      // an answer whose command timed out has no waiter any more: dropped
      const token = typeof msg.token === 'string' ? msg.token : '';
      const w = this.waiting.get(token);
      this.waiting.delete(token);
      w?.(msg);
    }
  }

  /** One ctrl_tcp command; resolves with baresip's response to it (matched by its token), rejects after `timeoutMs`. */
  command(command: string, params = '', timeoutMs = 5000): Promise<Record<string, unknown>> {
    const token = `t${++this.tokens}`;
    const body = JSON.stringify({ command, params, token });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(token);
        reject(new Error(`baresip: no answer to ${command}`));
      }, timeoutMs);
      this.waiting.set(token, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      this.ctrl!.write(`${Buffer.byteLength(body)}:${body},`);
    });
  }

  /** Once an event of `type` was seen (now or before); rejects after `timeoutMs`. */
  event(type: string, timeoutMs: number): Promise<void> {
    if (this.saw(type)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const w = {
        type,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.eventWaiters = this.eventWaiters.filter((x) => x !== w);
        reject(new Error(`baresip: no ${type} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.eventWaiters.push(w);
    });
  }

  dial(uri: string): Promise<Record<string, unknown>> {
    return this.command('dial', uri);
  }

  hangup(): Promise<Record<string, unknown>> {
    return this.command('hangup');
  }

  /** The events of one class seen so far (`CALL_ESTABLISHED`, `CALL_CLOSED`, `REGISTER_OK`, ...). */
  saw(type: string): boolean {
    return this.events.some((e) => e.type === type);
  }

  /** SIGKILL: the phone dies at once, without a BYE or a REGISTER; resolves once it has exited. */
  kill(): Promise<void> {
    return this.end('SIGKILL');
  }

  stop(): Promise<void> {
    return this.end('SIGTERM');
  }

  private async end(signal: NodeJS.Signals): Promise<void> {
    this.ctrl?.destroy();
    if (this.proc) await endProcess(this.proc, signal, 3000);
    this.proc = null;
  }

  async dispose(): Promise<void> {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
