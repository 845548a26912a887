// The emitters of sip-server's transports and stack and of media-app's conference Room, VoiceAgent
// and SpeakingSession are typed by an event map (EventEmitter<Events>): a wrong event name or payload
// is a compile error. Each `@ts-expect-error` below fails `npx tsc --noEmit -p .` the day the error it
// expects goes away (an emitter made untyped again); the test itself checks the maps at run time.
import { expect } from 'chai';
import type { UdpTransport } from '../../sip-server/transport/udp';
import type { StreamTransport } from '../../sip-server/transport/stream';
import type { WsTransport } from '../../sip-server/transport/ws';
import type { TransportLayer } from '../../sip-server/transport';
import type { SipStack } from '../../sip-server/stack';
import type { Room } from '../../media-app/conference/room';
import type { VoiceAgent } from '../../media-app/ai/voice';
import type { SpeakingSession } from '../../media-app/speech/speaking';

/** Never called: only compiled. */
function wrongUses(e: { udp: UdpTransport; stream: StreamTransport; ws: WsTransport; layer: TransportLayer; stack: SipStack; room: Room; agent: VoiceAgent; speaking: SpeakingSession }): void {
  e.udp.on('message', (data: Buffer) => void data.length);
  // @ts-expect-error: no such event
  e.udp.on('mesage', () => undefined);
  // @ts-expect-error: the payload is a Buffer, not a string
  e.stream.emit('message', 'INVITE', { transport: 'tcp', address: '', port: 0 });
  // @ts-expect-error: origin-refused carries the origin and the address
  e.ws.emit('origin-refused', 42);
  // @ts-expect-error: no such event
  e.layer.on('flow-close', () => undefined);
  e.stack.on('request', (req, srv) => void [req.method, srv.id]);
  // @ts-expect-error: a response listener gets a SipResponse, not a number
  e.stack.on('response', (res: number) => void res);
  // @ts-expect-error: no such event
  e.room.emit('terminate');
  // @ts-expect-error: no such event
  e.agent.on('bargein', () => undefined);
  // @ts-expect-error: flushed carries the last flushed number
  e.speaking.emit('flushed', 'all');
  e.speaking.on('spoken', (s) => void s.seq.toFixed());
}

describe('typed emitters', () => {
  it('compile only with their own event names and payloads (see the @ts-expect-error lines)', () => {
    expect(wrongUses).to.be.a('function');
  });
});
