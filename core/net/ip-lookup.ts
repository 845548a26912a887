/**
 * A `lookup` for sockets that are mostly handed IP literals (dgram's option, net's too): dgram
 * resolves the destination of every send through `lookup`, by default dns.lookup, which answers an
 * IP literal only on the next tick (the datagram waits behind the rest of the tick, and the lookup
 * costs CPU per message). An IP literal is answered at once; a name goes to dns.lookup.
 */
import dns from 'node:dns';
import net from 'node:net';

export function ipLookup(host: string, opts: dns.LookupOptions | number, cb: (err: NodeJS.ErrnoException | null, address: string, family: number) => void): void {
  const family = net.isIP(host);
  if (family) return cb(null, host, family);
  dns.lookup(host, typeof opts === 'number' ? { family: opts } : opts, cb as never); // cast: dns.lookup's overloads take no union of options
}
