import net from 'node:net';
import dgram from 'node:dgram';

/**
 * A port free for TCP and UDP, drawn from 61000–65499: above the kernel's ephemeral ports (32768–60999),
 * which every outgoing connection of the suite takes from (a port found free there could be handed to a
 * connection before the test listened on it: CI on 7ffef1d, EADDRINUSE), and above every fixed range of
 * the suite. Handed out in turn from a random start, so one test process never gets the same port twice
 * until it has used them all.
 */
let nextFree = Math.floor(Math.random() * 4500);
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 61000 + (nextFree++ % 4500);
    if (await tcpUdpFree(port, host)) return port;
  }
  throw new Error('no free port found');
}

function udpFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = dgram.createSocket('udp4');
    s.once('error', () => resolve(false));
    s.bind(port, host, () => s.close(() => resolve(true)));
  });
}

/**
 * A base port for sipp's -mp: sipp binds four UDP ports from it (audio RTP/RTCP, video RTP/RTCP).
 * Drawn from 10000–19999: below the engine's default RTP range (20000–30000), the ranges the
 * test platforms give their engines (30000 and up) and the kernel's ephemeral ports (32768+), so
 * nothing else in the suite is handed one of the four meanwhile.
 */
export async function sippMediaPort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const base = 10000 + 4 * Math.floor(Math.random() * 2500);
    let ok = true;
    for (let i = 0; i < 4 && ok; i++) ok = await udpFree(base + i, host);
    if (ok) return base;
  }
  throw new Error('no free block of four UDP ports for sipp media');
}

/** TCP and UDP both free on `port` right now. */
async function tcpUdpFree(port: number, host: string): Promise<boolean> {
  const tcp = await new Promise<boolean>((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
  return tcp && udpFree(port, host);
}

/**
 * A SIP port for a phone that also opens TLS on the next one (baresip listens on `sip_listen` for UDP
 * and TCP and on port + 1 for TLS, with no way to turn that off): both free, drawn from 6000–7999,
 * below the kernel's ephemeral ports (32768+) that every connection in the suite takes from, so the
 * second one is not handed to someone else meanwhile.
 */
export async function sipPortPair(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const base = 6000 + 2 * Math.floor(Math.random() * 1000);
    if ((await tcpUdpFree(base, host)) && (await tcpUdpFree(base + 1, host))) return base;
  }
  throw new Error('no free pair of SIP ports');
}

