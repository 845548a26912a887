/**
 * Live prerequisites for the conformance scenarios: the suite runs with a real call plane
 * (sip-server with SIP capture + a media-app node, testkit/media-app/harness.ts) sharing the API's
 * database and Redis prefix, and a step's `prepare` starts sipp parties on loopback that the
 * platform dials (each answers, sends no audio of its own and waits for the platform's BYE).
 */
import type { Knex } from 'knex';
import { freePort } from '../../testkit/ports';
import { numbersRepo } from '../../core/repos/numbers';
import { killAllSipp, RtpSink, sipp, sleep } from '../../testkit/media-app/harness';
import { party } from '../xfer/support';

export class LiveParties {
  private readonly sinks: RtpSink[] = [];
  /** Set by the suite once its database is up. */
  db: Knex | null = null;

  /**
   * A normal number of the customer (an SMS source). Written to the database: buying one through
   * the API needs a number provider, which this machine cannot reach.
   */
  async number(customerId: string): Promise<string> {
    const number = `+1555${String(Date.now()).slice(-7)}`;
    await numbersRepo(this.db!).create({ customer_id: customerId, number, type: 'normal' });
    return number;
  }

  /** A sipp party listening on loopback; its SIP target (`name@127.0.0.1:port`). */
  async party(name = 'party'): Promise<string> {
    const sink = await RtpSink.open();
    this.sinks.push(sink);
    const port = await freePort();
    void sipp(party({ rtpPort: sink.port, byeTimeoutMs: 90_000 }), ['-i', '127.0.0.1', '-p', String(port), '-m', '1', '-timeout', '100s'], { killAfterMs: 110_000 }).done;
    await sleep(200);
    return `${name}@127.0.0.1:${port}`;
  }

  close(): void {
    killAllSipp();
    for (const s of this.sinks) s.close();
  }
}
