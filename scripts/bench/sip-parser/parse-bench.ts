// Micro-benchmark: SIP parse (+ serialize) throughput against a baseline measured in the same run:
// JSON.parse of a JSON document carrying the same message (same bytes of headers and body).
// Run: npx tsx scripts/bench/sip-parser/parse-bench.ts
import { parseMessage } from '../../../sip-server/message';

const SDP = 'v=0\r\no=alice 2890844526 2890844526 IN IP4 198.51.100.7\r\ns=-\r\nc=IN IP4 198.51.100.7\r\nt=0 0\r\nm=audio 49172 RTP/AVP 0 8 101\r\na=rtpmap:101 telephone-event/8000\r\n';
const INVITE = Buffer.from(
  [
    'INVITE sip:+15551234567@203.0.113.10:5060;transport=udp SIP/2.0',
    'Via: SIP/2.0/UDP 198.51.100.7:5060;branch=z9hG4bK776asdhds;rport',
    'Via: SIP/2.0/UDP 10.0.0.2:5080;branch=z9hG4bK-524287-1---a8f5d1e2;received=10.0.0.2',
    'Max-Forwards: 69',
    'To: <sip:+15551234567@203.0.113.10>',
    'From: "Alice Example" <sip:+15557654321@198.51.100.7>;tag=1928301774',
    'Call-ID: a84b4c76e66710@pc33.example.com',
    'CSeq: 314159 INVITE',
    'Contact: <sip:alice@198.51.100.7:5060;transport=udp>',
    'Record-Route: <sip:198.51.100.7;lr>',
    'Allow: INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE, REFER, NOTIFY',
    'Supported: replaces, timer, 100rel',
    'User-Agent: ExamplePhone/1.2.3',
    'Content-Type: application/sdp',
    `Content-Length: ${Buffer.byteLength(SDP)}`,
    '',
    SDP,
  ].join('\r\n'),
);

const text = INVITE.toString();
const [head, body] = [text.slice(0, text.indexOf('\r\n\r\n')), text.slice(text.indexOf('\r\n\r\n') + 4)];
const JSON_DOC = Buffer.from(
  JSON.stringify({
    startLine: head.split('\r\n')[0],
    headers: head
      .split('\r\n')
      .slice(1)
      .map((l) => l.split(/:\s*/, 2)),
    body,
  }),
);

function rate(label: string, fn: () => void, ms = 1500): number {
  for (let i = 0; i < 2000; i++) fn(); // warm-up
  let n = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    for (let i = 0; i < 200; i++) fn();
    n += 200;
  }
  const perSec = n / (ms / 1000);
  console.log(`${label.padEnd(36)} ${Math.round(perSec).toLocaleString('en-US').padStart(10)} msg/s`);
  return perSec;
}

const baseline = rate('baseline JSON.parse (same content)', () => {
  JSON.parse(JSON_DOC.toString());
});
const parse = rate('parseMessage', () => {
  parseMessage(INVITE);
});
const full = rate('parseMessage + From/To/Via/CSeq', () => {
  const m = parseMessage(INVITE);
  void m.from;
  void m.to;
  void m.vias;
  void m.cseq;
});
const round = rate('parseMessage + toBuffer()', () => {
  parseMessage(INVITE).toBuffer();
});
console.log(`\nratios vs baseline: parse ${(parse / baseline).toFixed(2)}, parse+fields ${(full / baseline).toFixed(2)}, parse+serialize ${(round / baseline).toFixed(2)}`);
console.log(`message ${INVITE.length} bytes, JSON doc ${JSON_DOC.length} bytes`);
