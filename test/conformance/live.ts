/**
 * Live prerequisites for the conformance scenarios: the suite runs with a real call plane
 * (sip-server with SIP capture + a media-app node, test/media-app/harness.ts) sharing the API's
 * database and Redis prefix, and a step's `prepare` starts sipp parties on loopback that the
 * platform dials (each answers, sends no audio of its own and waits for the platform's BYE).
 */
import { freePort } from '../support/ports';
import { killAllSipp, RtpSink, sipp, sleep } from '../media-app/harness';
import { party } from '../xfer/support';

export class LiveParties {
  private readonly sinks: RtpSink[] = [];

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
