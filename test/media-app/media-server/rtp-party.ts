// A far end of real RTP on loopback for the fsmrf suites: a UDP socket that sends 20 ms PCMU packets to a
// leg while it talks (its own interval, stopped when it stops or closes) and counts the packets it gets.
import dgram from 'node:dgram';

export class RtpParty {
  readonly socket = dgram.createSocket('udp4');
  private seq = 0;
  private ts = 0;
  /** packets sent, and received from the leg */
  sent = 0;
  received = 0;
  /** when it last sent a packet (performance.now()) */
  lastSent = 0;
  private timer: NodeJS.Timeout | null = null;

  /** Binds on loopback; resolves with its port (for its SDP). */
  async open(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.socket.once('error', reject);
      this.socket.bind(0, '127.0.0.1', () => {
        this.socket.off('error', reject);
        // a failure after the bind is the test's failure, not a silent one
        this.socket.on('error', (e) => {
          throw e;
        });
        resolve();
      });
    });
    this.socket.on('message', () => this.received++);
    return this.socket.address().port;
  }

  /** Leaves out the next `n` sequence numbers (as packets lost on the way). */
  skip(n: number): void {
    this.seq += n;
    this.ts += 160 * n;
  }

  /** Sends to `to` for `ms` (a packet every 20 ms; `packets`: exactly that many instead); resolves once it has stopped. */
  talk(to: { address: string; port: number }, ms: number, packets = Infinity): Promise<void> {
    const payload = Buffer.alloc(160, 0x55);
    const end = performance.now() + ms;
    let left = packets;
    return new Promise((resolve) => {
      const send = () => {
        if (left <= 0 || (packets === Infinity && performance.now() >= end)) {
          this.stop();
          return resolve();
        }
        left--;
        const h = Buffer.alloc(12);
        h[0] = 0x80;
        h.writeUInt16BE(this.seq++ & 0xffff, 2);
        h.writeUInt32BE((this.ts += 160) >>> 0, 4);
        h.writeUInt32BE(0x1234abcd, 8);
        this.socket.send(Buffer.concat([h, payload]), to.port, to.address);
        this.sent++;
        this.lastSent = performance.now();
      };
      send();
      this.timer = setInterval(send, 20);
    });
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  close(): void {
    this.stop();
    this.socket.close();
  }
}
