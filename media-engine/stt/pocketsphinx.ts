/**
 * pocketsphinx (Debian's pocketsphinx_continuous with the en-us 16 kHz model) as a streaming
 * recogniser. 8 kHz audio is upsampled to 16 kHz (16 kHz frames of a wideband leg go as they are:
 * the model's own rate) and written to the process through a FIFO (Node's
 * stdio pipes are sockets, which `-infile /dev/stdin` cannot open). The FIFO's write end is opened
 * without ever blocking: O_NONBLOCK, tried every 20 ms until the recogniser has opened its read end
 * (audio waits in memory meanwhile, within the backlog), then written through the event loop (a
 * net.Socket on the fd). No threadpool thread ever waits in open() for a recogniser that may die
 * before it reads; the child, the socket, the retry timer and the directory are released on close.
 * pocketsphinx splits the stream
 * on silence and prints one hypothesis per utterance followed by word times (`-time yes`), which
 * give each segment's offset.
 *
 * Honest expectations (measured here, docs/speech.md): free-form word error on synthetic telephone speech is
 * 77–98 %; with a phrase list (JSGF) short flite-voiced phrases are usually exact. A grammar forces
 * every utterance onto some phrase, so treat grammar results as "closest phrase", not proof.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { FRAME_SAMPLES, type Frame } from '../dsp/frame';
import { SttError, sampleRateOf, type Direction, type SttProvider, type SttStream, type SttStreamEvents, type SttStreamOptions, type TranscriptEvent } from './provider';
import { Upsampler2x } from './upsample';

export interface PocketsphinxOptions {
  /** Extra pocketsphinx arguments (e.g. ['-hmm', dir, '-dict', file, '-lm', file] for another model). */
  extraArgs?: string[];
  /** Audio buffered towards the recogniser before frames are dropped, ms. Default 10000. */
  maxBacklogMs?: number;
  binary?: string;
  /** How long end() waits for the recogniser to finish the audio it holds (at most its backlog, decoded several times faster than real time) before killing it, ms. Default 20000. */
  endTimeoutMs?: number;
}

/** Build a JSGF grammar that accepts exactly one of the phrases. */
export function phrasesToJsgf(phrases: string[]): string {
  const clean = phrases
    .map((p) =>
      p
        .toLowerCase()
        .replace(/[^a-z' ]+/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter((p) => p.length > 0);
  if (clean.length === 0) throw new SttError('BAD_GRAMMAR', 'phrase list has no usable phrase');
  return `#JSGF V1.0;\ngrammar phrases;\npublic <phrase> = ${[...new Set(clean)].join(' | ')} ;\n`;
}

const WORD_LINE = /^(\S+) (\d+\.\d+) (\d+\.\d+) ([\d.]+)$/;

class PocketsphinxStream extends EventEmitter<SttStreamEvents> implements SttStream {
  droppedFrames = 0;
  private readonly child: ChildProcess;
  private readonly fifoDir: string;
  private readonly fifo: string;
  /** the FIFO's write end, once the recogniser has opened the read end */
  private writer: net.Socket | null = null;
  /** audio written before that */
  private queued: Buffer[] = [];
  private queuedBytes = 0;
  private openTimer: NodeJS.Timeout | null = null;
  private readonly up = new Upsampler2x();
  private readonly maxBacklogBytes: number;
  private lineBuf = '';
  private pending: { text: string; words: Array<{ w: string; start: number; end: number; p: number }> } | null = null;
  private flushTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private ended = false;
  private readonly closedPromise: Promise<void>;
  private stderr = '';

  constructor(
    private readonly direction: Direction,
    args: string[],
    binary: string,
    maxBacklogMs: number,
    grammar: string | null,
    /** the frames' rate: 8000 (upsampled 2×) or 16000 (written as they are) */
    private readonly rate: 8000 | 16000,
    private readonly endTimeoutMs: number,
  ) {
    super();
    this.maxBacklogBytes = maxBacklogMs * 32; // 16 kHz · 2 bytes
    this.fifoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stt-'));
    const fifo = (this.fifo = path.join(this.fifoDir, 'audio.fifo'));
    const mk = spawnSync('mkfifo', [fifo]);
    if (mk.status !== 0) {
      fs.rmSync(this.fifoDir, { recursive: true, force: true });
      throw new SttError('RECOGNIZER_FAILED', `mkfifo failed: ${mk.stderr?.toString() ?? mk.error?.message}`);
    }
    const full = ['-infile', fifo, '-time', 'yes', '-logfn', '/dev/null', ...args];
    if (grammar) {
      const g = path.join(this.fifoDir, 'grammar.gram');
      fs.writeFileSync(g, grammar);
      full.push('-jsgf', g);
    }
    this.child = spawn(binary, full, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (d: string) => this.onStdout(d));
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-2000)));
    this.closedPromise = new Promise((resolve) => {
      this.child.on('error', (err) => this.fail(new SttError('RECOGNIZER_FAILED', `cannot run ${binary}: ${err.message}`)));
      this.child.on('close', (code, signal) => {
        this.onStdout('\n');
        this.emitPending();
        if (code !== 0 && !this.closed) {
          this.fail(new SttError('RECOGNIZER_FAILED', `pocketsphinx exited with ${signal ?? code}${this.stderr ? ': ' + this.stderr.trim().split('\n').pop() : ''}`));
        }
        this.cleanup();
        resolve();
      });
    });
    this.openWriter();
  }

  /** Opens the write end if the recogniser reads already, else tries again in 20 ms; never blocks. */
  private openWriter = (): void => {
    this.openTimer = null;
    if (this.closed || this.writer) return;
    let fd: number;
    try {
      fd = fs.openSync(this.fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
    } catch (e) {
      // ENXIO: no reader yet. Anything else: the child's exit reports what went wrong.
      if ((e as NodeJS.ErrnoException).code === 'ENXIO') this.openTimer = setTimeout(this.openWriter, 20);
      return;
    }
    const w = new net.Socket({ fd, readable: false, writable: true });
    w.on('error', () => {}); // reader gone: the child's exit reports it
    this.writer = w;
    for (const b of this.queued) w.write(b);
    this.queued = [];
    this.queuedBytes = 0;
    if (this.ended) w.end();
  };

  private send(buf: Buffer): void {
    if (this.writer) this.writer.write(buf);
    else {
      this.queued.push(buf);
      this.queuedBytes += buf.length;
    }
  }

  /** Bytes waiting for the recogniser: in its pipe's buffer, or queued before the process took the pipe. */
  private get backlogBytes(): number {
    return this.writer ? this.writer.writableLength : this.queuedBytes;
  }

  backlogShare(): number {
    return Math.min(1, this.backlogBytes / this.maxBacklogBytes);
  }

  write(frame: Frame): void {
    if (this.ended || this.closed) return;
    if (this.backlogBytes > this.maxBacklogBytes) {
      this.droppedFrames++;
      return;
    }
    this.send(this.to16k(frame));
  }

  /** A frame as the recogniser's 16 kHz bytes (a fresh buffer: the socket holds it until written). */
  private to16k(frame: Frame): Buffer {
    if (this.rate === 16000) return Buffer.from(frame.buffer.slice(frame.byteOffset, frame.byteOffset + frame.byteLength));
    const buf = Buffer.allocUnsafe(frame.length * 4);
    this.up.process(frame, new Int16Array(buf.buffer, buf.byteOffset, frame.length * 2));
    return buf;
  }

  async end(): Promise<void> {
    if (!this.ended) {
      this.ended = true;
      // A little trailing silence lets the recogniser close the last utterance.
      const tail = new Int16Array((FRAME_SAMPLES * this.rate) / 8000);
      for (let i = 0; i < 25 && !this.closed; i++) this.send(this.to16k(tail));
      // not open yet: openWriter() ends it once the recogniser reads
      this.writer?.end();
      // the ending's bound: a recogniser that never finishes (hung, stopped) is killed and the stream fails
      const t = setTimeout(() => {
        this.fail(new SttError('RECOGNIZER_FAILED', `pocketsphinx did not finish within ${this.endTimeoutMs} ms of the audio's end`));
        this.child.kill('SIGKILL');
      }, this.endTimeoutMs);
      void this.closedPromise.finally(() => clearTimeout(t));
    }
    await this.closedPromise;
  }

  abort(): void {
    this.closed = true;
    this.child.kill('SIGKILL');
    this.release();
  }

  private onStdout(d: string): void {
    this.lineBuf += d;
    let nl: number;
    while ((nl = this.lineBuf.indexOf('\n')) >= 0) {
      const line = this.lineBuf.slice(0, nl).trim();
      this.lineBuf = this.lineBuf.slice(nl + 1);
      if (!line) continue;
      const m = WORD_LINE.exec(line);
      if (m && this.pending) {
        this.pending.words.push({ w: m[1], start: Number(m[2]), end: Number(m[3]), p: Number(m[4]) });
      } else if (!m) {
        this.emitPending();
        this.pending = { text: line, words: [] };
      }
    }
    // Word times follow their hypothesis in the same burst: emit once the output goes quiet.
    if (this.pending) {
      if (this.flushTimer) clearTimeout(this.flushTimer);
      this.flushTimer = setTimeout(() => this.emitPending(), 50);
    }
  }

  private emitPending(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const u = this.pending;
    this.pending = null;
    if (!u || this.closed) return;
    const words = u.words.filter((w) => !/^<.*>$/.test(w.w) && w.w !== '[NOISE]');
    const start = words.length ? words[0].start : (u.words[0]?.start ?? 0);
    const end = words.length ? words[words.length - 1].end : (u.words[u.words.length - 1]?.end ?? start);
    const ev: TranscriptEvent = {
      text: u.text,
      final: true,
      offsetMs: Math.round(start * 1000),
      durationMs: Math.round((end - start) * 1000),
      direction: this.direction,
    };
    if (words.length) ev.confidence = Math.round((words.reduce((t, w) => t + w.p, 0) / words.length) * 1000) / 1000;
    this.emit('transcript', ev);
  }

  private fail(err: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.release();
    if (this.listenerCount('error') > 0) this.emit('error', err);
  }

  /** The write end, the retry timer and the queued audio go (the child's close still follows). */
  private release(): void {
    if (this.openTimer) clearTimeout(this.openTimer);
    this.openTimer = null;
    this.writer?.destroy();
    this.queued = [];
    this.queuedBytes = 0;
  }

  private cleanup(): void {
    this.closed = true;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    this.release();
    fs.rmSync(this.fifoDir, { recursive: true, force: true });
    this.emit('close');
  }
}

export class PocketsphinxProvider implements SttProvider {
  readonly name = 'pocketsphinx';

  constructor(private readonly opts: PocketsphinxOptions = {}) {}

  createStream(o: SttStreamOptions = {}): SttStream {
    const lang = (o.language ?? 'en-US').toLowerCase();
    if (!lang.startsWith('en') && !this.opts.extraArgs?.includes('-hmm')) {
      throw new SttError('UNSUPPORTED_LANGUAGE', `pocketsphinx has only an English model installed, not "${o.language}"`);
    }
    const grammar = o.grammar ?? (o.phrases ? phrasesToJsgf(o.phrases) : null);
    return new PocketsphinxStream(
      o.direction ?? 'inbound',
      this.opts.extraArgs ?? [],
      this.opts.binary ?? 'pocketsphinx_continuous',
      this.opts.maxBacklogMs ?? 10000,
      grammar,
      sampleRateOf(o),
      this.opts.endTimeoutMs ?? 20_000,
    );
  }
}
