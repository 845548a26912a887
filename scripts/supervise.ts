/**
 * The start command's supervisor (scripts/start.ts): a process of the platform that exits is started
 * again after a backoff, so a crash costs that process's work, not the platform (docs/reliability.md
 * "A crash is one process"). The backoff starts at SUPERVISE_BACKOFF_MS (1 s) and doubles up to
 * SUPERVISE_BACKOFF_MAX_MS (30 s); a life of SUPERVISE_STABLE_MS (60 s) or more starts it over. A crash
 * loop (SUPERVISE_CRASH_LOOP exits, 5, within SUPERVISE_CRASH_WINDOW_MS, 2 min) gives up: the caller
 * stops the platform with one message naming the process and its log.
 *
 *   const s = new Supervised({ name: 'media-app', spawn: () => spawn(...), policy, onLife, onGiveUp, log });
 *   s.start();  ...  await s.stop('SIGTERM');      // no restart after stop()
 */
import type { ChildProcess } from 'node:child_process';

export interface RestartSettings {
  initialMs: number;
  maxMs: number;
  /** a life at least this long resets the backoff */
  stableMs: number;
  /** this many exits within windowMs is a crash loop */
  loopExits: number;
  loopWindowMs: number;
}

export const DEFAULT_RESTART: RestartSettings = { initialMs: 1000, maxMs: 30_000, stableMs: 60_000, loopExits: 5, loopWindowMs: 120_000 };

const ENV: Record<keyof RestartSettings, string> = {
  initialMs: 'SUPERVISE_BACKOFF_MS',
  maxMs: 'SUPERVISE_BACKOFF_MAX_MS',
  stableMs: 'SUPERVISE_STABLE_MS',
  loopExits: 'SUPERVISE_CRASH_LOOP',
  loopWindowMs: 'SUPERVISE_CRASH_WINDOW_MS',
};

/** The settings from the environment; a bad value throws one line naming the variable. */
export function restartSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): RestartSettings {
  const out = { ...DEFAULT_RESTART };
  for (const key of Object.keys(ENV) as (keyof RestartSettings)[]) {
    const raw = env[ENV[key]];
    if (raw === undefined || raw === '') continue;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${ENV[key]}: must be a positive whole number (got ${JSON.stringify(raw)})`);
    out[key] = n;
  }
  return out;
}

export type ExitVerdict = { action: 'restart'; delayMs: number; exitsInWindow: number } | { action: 'give-up'; exitsInWindow: number };

/** When to start a process again after it exited; pure (times given), so tests need no clock. */
export class RestartPolicy {
  private delayMs: number;
  private readonly exits: number[] = [];

  constructor(private readonly s: RestartSettings = DEFAULT_RESTART) {
    this.delayMs = s.initialMs;
  }

  /** A life that started at `startedAt` ended at `now`. */
  onExit(startedAt: number, now: number): ExitVerdict {
    this.exits.push(now);
    while (this.exits.length && this.exits[0]! <= now - this.s.loopWindowMs) this.exits.shift();
    if (this.exits.length >= this.s.loopExits) return { action: 'give-up', exitsInWindow: this.exits.length };
    if (now - startedAt >= this.s.stableMs) this.delayMs = this.s.initialMs;
    const delayMs = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, this.s.maxMs);
    return { action: 'restart', delayMs, exitsInWindow: this.exits.length };
  }
}

export interface SupervisedOptions {
  name: string;
  /** Starts one life of the process. */
  spawn: () => ChildProcess;
  settings?: RestartSettings;
  /** Each new life (output prefixing). */
  onLife?: (child: ChildProcess) => void;
  /** A crash loop: the supervisor has stopped restarting. */
  onGiveUp: (name: string, verdict: ExitVerdict, last: string) => void;
  log: (line: string) => void;
  now?: () => number;
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `signal ${signal}` : `code ${code}`;
}

/** One process of the platform, kept running. */
export class Supervised {
  child: ChildProcess | null = null;
  /** Lives started so far (the first one included). */
  lives = 0;
  private stopping = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly policy: RestartPolicy;
  private readonly settings: RestartSettings;
  private readonly now: () => number;

  constructor(private readonly o: SupervisedOptions) {
    this.settings = o.settings ?? DEFAULT_RESTART;
    this.policy = new RestartPolicy(this.settings);
    this.now = o.now ?? Date.now;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    if (this.stopping) return;
    this.timer = null;
    const startedAt = this.now();
    const child = this.o.spawn();
    this.child = child;
    this.lives++;
    this.o.onLife?.(child);
    let ended = false;
    const end = (how: string) => {
      if (ended) return;
      ended = true;
      if (this.stopping) return;
      const verdict = this.policy.onExit(startedAt, this.now());
      if (verdict.action === 'give-up') return this.o.onGiveUp(this.o.name, verdict, how);
      const s = this.settings;
      this.o.log(`${this.o.name} exited (${how}); restarting in ${fmt(verdict.delayMs)} (exit ${verdict.exitsInWindow} of ${s.loopExits} allowed within ${fmt(s.loopWindowMs)})`);
      this.timer = setTimeout(() => this.start(), verdict.delayMs);
    };
    child.once('error', (err) => end(`did not start: ${err.message}`));
    child.once('exit', (code, signal) => end(describeExit(code, signal)));
  }

  /** Stops restarting; signals the running life and waits for it (SIGKILL after `graceMs`). */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const child = this.child;
    if (!child || !this.running) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill(signal);
    const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(force);
  }
}

export interface GroupOptions {
  settings?: RestartSettings;
  log: (line: string) => void;
  onLife?: (name: string, child: ChildProcess) => void;
  /** A member crash-loops; the group has stopped restarting it (the caller stops the rest). */
  onGiveUp: (name: string, verdict: ExitVerdict, last: string) => void;
}

/** The platform's processes, each supervised; stopped together, one of them optionally drained first. */
export class SupervisorGroup {
  readonly members = new Map<string, Supervised>();
  stopping = false;

  constructor(private readonly o: GroupOptions) {}

  add(name: string, spawn: () => ChildProcess): Supervised {
    const s = new Supervised({
      name,
      spawn,
      settings: this.o.settings,
      onLife: (child) => this.o.onLife?.(name, child),
      onGiveUp: (n, v, last) => !this.stopping && this.o.onGiveUp(n, v, last),
      log: this.o.log,
    });
    this.members.set(name, s);
    s.start();
    return s;
  }

  /**
   * Stops every member (SIGTERM, SIGKILL after `graceMs`). With `drain`, that member alone is stopped
   * first (SIGTERM, at most `drainMs`) and the others once it has exited: media-app lets its calls finish
   * while sip-server carries them.
   */
  async stop(o: { drain?: string; drainMs?: number; graceMs?: number } = {}): Promise<void> {
    this.stopping = true;
    const first = o.drain ? this.members.get(o.drain) : undefined;
    if (first?.running) await first.stop('SIGTERM', o.drainMs ?? 300_000);
    await Promise.all([...this.members.values()].map((s) => s.stop('SIGTERM', o.graceMs ?? 10_000)));
  }
}

function fmt(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
