// What the lossy relay's two threads say to each other: the test's side (index.ts) asks, the relay's
// worker (worker.ts) answers each request by its id (testkit/thread-calls.ts); the counts and the lateness
// are not messages but one shared array the worker writes and the test reads at any time (Atomics, so a
// read is whole). Closing is ending the thread: its sockets and delayed packets go with it.

export interface Impairment {
  lossPct: number;
  jitterMs: number;
}

/** The two sides: `near` (a phone, sipp, a test endpoint) and `far` (the platform). */
export type SideName = 'near' | 'far';

export type RelayRequest =
  /** bind the side's RTP socket on `base` and its RTCP on `base + 1`, loopback */
  | { t: 'bind'; side: SideName; base: number }
  /** start relaying: both sides are bound */
  | { t: 'start'; toFar: Impairment | null; toNear: Impairment | null; seed: number; clockHz: number }
  /** the side's peer, before it has sent anything */
  | { t: 'peer'; side: SideName; address: string; rtpPort: number; rtcpPort: number }
  /** forward nothing more; answered once every delayed packet went out */
  | { t: 'hold' };

/** The directions, in the shared array's order. */
export const DIRECTIONS = ['toFar', 'toNear'] as const;
export type Direction = (typeof DIRECTIONS)[number];

/** Each direction's cells in the shared array: RTP in, dropped, forwarded, RTCP forwarded, worst lateness in µs. */
export const CELLS = ['rtpIn', 'dropped', 'forwarded', 'rtcp', 'worstUs'] as const;
export type Cell = (typeof CELLS)[number];

/** The shared array's index of a direction's cell. */
export function cellIndex(dir: Direction, cell: Cell): number {
  return DIRECTIONS.indexOf(dir) * CELLS.length + CELLS.indexOf(cell);
}

/** The shared array's size in bytes (Int32 cells). */
export const SHARED_BYTES = DIRECTIONS.length * CELLS.length * Int32Array.BYTES_PER_ELEMENT;
