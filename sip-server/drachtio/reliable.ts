/**
 * Reliable provisional responses, UAS side (RFC 3262 section 3), for one INVITE server transaction.
 * drachtio-server hands an application's 1xx carrying `Require: 100rel` to sofia's reliable-reply
 * machinery; this does the same job: the server owns RSeq (random start, +1 per response), sends one
 * reliable 1xx at a time (later ones wait for the PRACK of the earlier), retransmits over UDP at T1,
 * 2T1, 4T1 ... until the PRACK, and gives up after 64*T1 answering the INVITE `503 Reliable
 * Response Time-Out` (sofia's wording). A 2xx waits while a reliable 1xx carrying a body (the SDP
 * answer) is unacknowledged, as the RFC requires; other finals go at once.
 */
import type { SipRequest, SipResponse } from '../message';
import type { InboundTransaction } from './sip-port';

interface Outstanding {
  res: SipResponse;
  rseq: number;
  timers: NodeJS.Timeout[];
}

/** True when `Require` or `Supported` of a request (or `Require` of a response) names 100rel. */
export function names100rel(values: string[]): boolean {
  return values.some((v) => /(^|[\s,])100rel($|[\s,])/i.test(v));
}

export class ReliableProvisionals {
  private nextRSeq = 1 + Math.floor(Math.random() * 0x7fff_fffe);
  private outstanding?: Outstanding;
  private readonly queue: SipResponse[] = [];
  private heldFinal?: SipResponse;
  private done = false;

  constructor(
    private readonly tx: InboundTransaction,
    /** tx's INVITE: once answered and ACKed, the transaction no longer holds it, and a late timer or PRACK may still come */
    private readonly inv: SipRequest,
    private readonly t1: number,
    /** no PRACK within 64*T1: the INVITE has been answered 503; `held` is a 2xx that never went out */
    private readonly onTimeout: (held: SipResponse | undefined) => void,
  ) {}

  /** Stamp the next RSeq on a reliable 1xx and send it, or queue it behind the unacknowledged one. */
  send(res: SipResponse): boolean {
    if (this.done) return false;
    res.headers.set('RSeq', String(this.nextRSeq++));
    if (!names100rel(res.headers.getAll('Require'))) res.headers.append('Require', '100rel');
    if (this.outstanding) {
      this.queue.push(res);
      return true;
    }
    return this.transmit(res);
  }

  /**
   * A PRACK's RAck (`<rseq> <cseq> <method>`): true when it acknowledges the outstanding reliable
   * response (then the next queued one, or a held 2xx, goes out). A PRACK that matches nothing gets
   * 481 from the caller (RFC 3262 section 3).
   */
  prack(rack: string | undefined): boolean {
    const m = /^\s*(\d+)\s+(\d+)\s+(\S+)\s*$/.exec(rack ?? '');
    const o = this.outstanding;
    if (!m || !o) return false;
    const inv = this.inv;
    if (Number(m[1]) !== o.rseq || Number(m[2]) !== inv.cseq.seq || m[3] !== inv.method) return false;
    this.clear();
    if (this.heldFinal) {
      const res = this.heldFinal;
      this.heldFinal = undefined;
      this.finish();
      this.tx.respond(res);
    } else {
      const next = this.queue.shift();
      if (next) this.transmit(next);
    }
    return true;
  }

  /** A final response: sent now, or held (true) while an answer-carrying 1xx awaits its PRACK. */
  sendFinal(res: SipResponse): boolean {
    if (this.done) return false;
    if (res.status < 300 && this.outstanding && this.outstanding.res.body.length > 0) {
      this.heldFinal = res;
      return true;
    }
    this.finish();
    return this.tx.respond(res);
  }

  /** The transaction ended some other way (CANCEL, application gone): stop retransmitting. */
  finish(): void {
    this.done = true;
    this.clear();
    this.queue.length = 0;
  }

  private transmit(res: SipResponse): boolean {
    if (!this.tx.respond(res)) return false;
    const o: Outstanding = { res, rseq: Number(res.headers.get('RSeq')), timers: [] };
    this.outstanding = o;
    if (this.tx.destination.transport === 'udp') {
      // T1, 2T1, 4T1 ... measured from the first transmission, all within 64*T1
      for (let at = this.t1, step = this.t1; at < 64 * this.t1; step *= 2, at += step) {
        o.timers.push(
          setTimeout(() => {
            if (this.outstanding === o) this.tx.respond(res);
          }, at),
        );
      }
    }
    o.timers.push(setTimeout(() => this.giveUp(o), 64 * this.t1));
    for (const t of o.timers) t.unref();
    return true;
  }

  private giveUp(o: Outstanding): void {
    if (this.outstanding !== o) return;
    const held = this.heldFinal;
    this.heldFinal = undefined;
    this.finish();
    let toTag: string | undefined;
    try {
      toTag = o.res.toTag;
    } catch {
      /* none */
    }
    this.tx.respond(this.inv.makeResponse(503, 'Reliable Response Time-Out', { toTag })); // false once answered (e.g. CANCEL's 487)
    this.onTimeout(held);
  }

  private clear(): void {
    if (this.outstanding) for (const t of this.outstanding.timers) clearTimeout(t);
    this.outstanding = undefined;
  }
}
