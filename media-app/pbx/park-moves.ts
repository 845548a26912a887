/**
 * The states of a call parked on this node (park.ts `Parking`) and the one table of moves between
 * them: its state changes only through `ParkMoves.move` (call/move-table.ts), so a late event (the
 * ring-back's answer after a retrieve, the timeout after the call left) cannot take a call twice.
 *
 *   parked ◄──► retrieving ──► taken          (retrieving: another node's leg is being answered)
 *     │              ▲  │
 *     ▼              │  ▼                      (a retrieve that fails goes back where it came from)
 *   ringback ◄───────┘ ──► taken | fallback   (timed out: the parker, if any, rung back)
 *   parked, retrieving, ringback ──► taken | left   (left: the parked call hung up)
 *
 * One timer, `park_timeout`, owned by `parked`: armed on entering it for what remains until the slot's
 * tm_timeout, so a retrieve that fails after the deadline times the call out at once instead of
 * leaving it parked for good; any move out of `parked` cancels it.
 */
import { Moves, type MoveLog, type MoveTable, type TimerOwners } from '../call/move-table';
import { realTimers, type TimerHost } from '../call/phase-timers';

export type ParkState = 'parked' | 'retrieving' | 'ringback' | 'taken' | 'fallback' | 'left';

export type ParkTimer = 'park_timeout';

/** The moves a parked call may make. */
export const PARK_MOVES: MoveTable<ParkState> = {
  parked: ['retrieving', 'ringback', 'taken', 'left'],
  retrieving: ['parked', 'ringback', 'taken', 'left'],
  ringback: ['retrieving', 'taken', 'fallback', 'left'],
  taken: [],
  fallback: [],
  left: [],
};

/** The states each timer of a parked call lives in. */
export const PARK_TIMERS: TimerOwners<ParkState, ParkTimer> = {
  park_timeout: ['parked'],
};

/** The parked call's time: its timers and now() (a virtual clock's in tests). */
export interface ParkClock extends TimerHost {
  now(): number;
}

export const realParkClock: ParkClock = { ...realTimers, now: () => Date.now() };

export class ParkMoves extends Moves<ParkState, ParkTimer> {
  /** where a retrieve in progress came from (it goes back there if it fails) */
  private before: 'parked' | 'ringback' = 'parked';
  private readonly waiters = new Set<() => void>();

  /**
   * `deadline`: when the park times out (epoch ms, the slot's tm_timeout); `onTimeout` runs then if
   * the call is still parked. The park timeout is armed here, in `parked`.
   */
  constructor(
    callId: string,
    log: MoveLog,
    private readonly clock: ParkClock,
    private readonly deadline: number,
    private readonly onTimeout: () => void,
  ) {
    super(PARK_MOVES, PARK_TIMERS, 'parked', { what: 'parked call', id: callId, log, timers: clock });
    this.armTimeout();
  }

  protected override moved(to: ParkState): void {
    if (to === 'parked') this.armTimeout();
    for (const w of [...this.waiters]) w();
  }

  /** Parked or rung back: the call may be taken (a retrieve in progress has claimed it). */
  get holding(): boolean {
    return this.state === 'parked' || this.state === 'ringback';
  }

  private armTimeout(): void {
    this.arm('park_timeout', Math.max(0, this.deadline - this.clock.now()), this.onTimeout);
  }

  /** A retrieve through another node's leg starts: false when the call is not to be had. */
  claim(): boolean {
    const from = this.state;
    if ((from !== 'parked' && from !== 'ringback') || !this.move('retrieving', 'a leg retrieves it')) return false;
    this.before = from;
    return true;
  }

  /** The retrieve failed with the call still up: back where it was (parked: the timeout armed for what remains). */
  unclaim(): 'parked' | 'ringback' | null {
    if (this.state !== 'retrieving') return null;
    const back = this.before;
    return this.move(back, 'the retrieve failed') ? back : null;
  }

  /** Resolves at the next move (or at once after a final one). */
  nextMove(): Promise<void> {
    if (this.ended) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.waiters.delete(done);
        resolve();
      };
      this.waiters.add(done);
    });
  }
}
