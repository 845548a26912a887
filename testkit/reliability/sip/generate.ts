// Generated malformed SIP messages: mutations of valid INVITE / REGISTER / OPTIONS / BYE / CANCEL /
// ACK requests and of responses (truncations, bad start lines, huge headers, bad Content-Length,
// binary noise, header injection, missing or duplicated mandatory headers, odd line endings).
// fast-check draws them from a seed so a failing batch can be replayed exactly.
import fc from 'fast-check';

export interface Peer {
  host: string;
  port: number;
  stackPort: number;
}

const SDP = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n';
const METHODS = ['INVITE', 'REGISTER', 'OPTIONS', 'BYE', 'CANCEL', 'ACK', 'INFO', 'SUBSCRIBE', 'NOTIFY', 'MESSAGE'];

/** A valid message as a list of lines (start line first) plus a body. */
export interface Template {
  lines: string[];
  body: string;
}

function base(method: string, p: Peer, n: number, toTag: boolean): Template {
  const body = method === 'INVITE' ? SDP : '';
  const lines = [
    `${method} sip:${method === 'REGISTER' ? '' : 'svc@'}127.0.0.1:${p.stackPort} SIP/2.0`,
    `Via: SIP/2.0/UDP ${p.host}:${p.port};branch=z9hG4bK-fz${n};rport`,
    'Max-Forwards: 70',
    `From: "Fuzz" <sip:fuzz@${p.host}>;tag=f${n}`,
    `To: <sip:svc@127.0.0.1:${p.stackPort}>${toTag ? `;tag=t${n}` : ''}`,
    `Call-ID: fz-${n}@${p.host}`,
    `CSeq: ${1 + (n % 1000)} ${method}`,
    `Contact: <sip:fuzz@${p.host}:${p.port}>`,
    ...(method === 'REGISTER' ? ['Expires: 60'] : []),
    ...(body ? ['Content-Type: application/sdp'] : []),
    `Content-Length: ${Buffer.byteLength(body)}`,
  ];
  return { lines, body };
}

function response(p: Peer, n: number, status: number): Template {
  return {
    lines: [
      `SIP/2.0 ${status} Whatever`,
      `Via: SIP/2.0/UDP 127.0.0.1:${p.stackPort};branch=z9hG4bK-unknown${n}`,
      `From: <sip:a@127.0.0.1>;tag=a${n}`,
      `To: <sip:b@127.0.0.1>;tag=b${n}`,
      `Call-ID: resp-${n}`,
      `CSeq: 1 INVITE`,
      'Content-Length: 0',
    ],
    body: '',
  };
}

function render(t: Template, eol = '\r\n'): string {
  return t.lines.join(eol) + eol + eol + t.body;
}

const junk = fc.string({ unit: 'binary', maxLength: 80 });
const token = fc.stringMatching(/^[A-Za-z0-9!%*_+`'~.-]{1,20}$/);
const hugeLen = fc.integer({ min: 1_000, max: 60_000 });

type Mutation = (t: Template) => fc.Arbitrary<string | Buffer>;

const replaceLine = (t: Template, re: RegExp, v: string): Template => ({ ...t, lines: t.lines.map((l) => (re.test(l) ? v : l)) });
const dropLine = (t: Template, re: RegExp): Template => ({ ...t, lines: t.lines.filter((l) => !re.test(l)) });

const MUTATIONS: Record<string, Mutation> = {
  valid: (t) => fc.constant(render(t)),
  truncate: (t) => {
    const s = render(t);
    return fc.integer({ min: 0, max: s.length - 1 }).map((i) => s.slice(0, i));
  },
  badStartLine: (t) =>
    fc
      .oneof(
        junk,
        token.map((m) => `${m} sip:x SIP/2.0`),
        fc.constant('INVITE sip:x SIP/3.0'),
        fc.constant('INVITE  SIP/2.0'),
        fc.constant('INVITE sip:x'),
        fc.constant('SIP/2.0 99999 Huge'),
        fc.constant('SIP/2.0 abc OK'),
        fc.constant(''),
        fc.constant(' INVITE sip:x SIP/2.0'),
        fc.constant('INVITE <sip:x> SIP/2.0'),
        fc.constant('INVITE sip:[::1 SIP/2.0'),
      )
      .map((l) => render({ ...t, lines: [l, ...t.lines.slice(1)] })),
  hugeHeader: (t) =>
    fc
      .tuple(hugeLen, fc.constantFrom('Subject', 'Via', 'From', 'Contact', 'X-Big', 'Call-ID'))
      .map(([n, name]) =>
        render(
          name === 'Subject' || name === 'X-Big'
            ? { ...t, lines: [...t.lines.slice(0, -1), `${name}: ${'a'.repeat(n)}`, t.lines.at(-1)!] }
            : replaceLine(t, new RegExp(`^${name}:`), `${name}: ${name === 'Via' ? 'SIP/2.0/UDP ' : ''}${'x'.repeat(n)}`),
        ),
      ),
  manyHeaders: (t) => fc.integer({ min: 50, max: 3000 }).map((n) => render({ ...t, lines: [...t.lines.slice(0, -1), ...Array.from({ length: n }, (_, i) => `X-H${i}: v`), t.lines.at(-1)!] })),
  manyVias: (t) =>
    fc
      .integer({ min: 2, max: 800 })
      .map((n) => render({ ...t, lines: [t.lines[0], ...Array.from({ length: n }, (_, i) => `Via: SIP/2.0/UDP 10.0.${i % 256}.1;branch=z9hG4bK${i};rport`), ...t.lines.slice(1)] })),
  contentLength: (t) =>
    fc
      .oneof(fc.constantFrom('-1', 'abc', '99999999999999999999', '1e3', '0x10', '', ' ', '5 5', '4294967296', '65536', '+3', '3.5'), fc.integer({ min: 0, max: 100_000 }).map(String))
      .map((v) => render(replaceLine(t, /^Content-Length:/, `Content-Length: ${v}`))),
  duplicateContentLength: (t) =>
    fc.tuple(fc.nat(500), fc.nat(500)).map(([a, b]) => render({ ...dropLine(t, /^Content-Length:/), lines: [...dropLine(t, /^Content-Length:/).lines, `Content-Length: ${a}`, `l: ${b}`] })),
  binaryNoise: (t) => {
    const s = Buffer.from(render(t));
    return fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.nat(s.length)).map(([noise, at]) => Buffer.concat([s.subarray(0, at), Buffer.from(noise), s.subarray(at)]));
  },
  flipBytes: (t) => {
    const s = Buffer.from(render(t));
    return fc.array(fc.tuple(fc.nat(s.length - 1), fc.nat(255)), { minLength: 1, maxLength: 12 }).map((flips) => {
      const b = Buffer.from(s);
      for (const [i, v] of flips) b[i] = v;
      return b;
    });
  },
  randomBytes: () => fc.uint8Array({ minLength: 0, maxLength: 1500 }).map((a) => Buffer.from(a)),
  headerInjection: (t) =>
    fc
      .tuple(
        fc.constantFrom('From', 'To', 'Call-ID', 'CSeq', 'Via', 'Contact', 'Max-Forwards'),
        fc.constantFrom('\r\nContent-Length: 9999', '\r\n\r\nINVITE sip:evil SIP/2.0', '\nVia: SIP/2.0/UDP evil', '\0\0', '\r', '\u00ff\u00fe', ';tag=;tag=', '\r\n Folded', '"unterminated <sip:x>'),
      )
      .map(([name, inj]) => render(replaceLine(t, new RegExp(`^${name}:`), `${t.lines.find((l) => l.startsWith(`${name}:`)) ?? `${name}:`}${inj}`))),
  missingHeader: (t) => fc.constantFrom('Via', 'From', 'To', 'Call-ID', 'CSeq', 'Max-Forwards', 'Content-Length', 'Contact').map((h) => render(dropLine(t, new RegExp(`^${h}:`)))),
  duplicateHeader: (t) =>
    fc.constantFrom('From', 'To', 'Call-ID', 'CSeq', 'Max-Forwards').map((h) => {
      const line = t.lines.find((l) => l.startsWith(`${h}:`)) ?? `${h}: 1`;
      return render({ ...t, lines: [...t.lines.slice(0, -1), line.replace(/[0-9a-z]+$/, 'zz9'), t.lines.at(-1)!] });
    }),
  badValues: (t) =>
    fc
      .tuple(
        fc.constantFrom('Via', 'From', 'To', 'CSeq', 'Max-Forwards', 'Call-ID', 'Contact', 'Expires', 'Route', 'Record-Route'),
        fc.oneof(
          junk,
          fc.constantFrom(
            'SIP/2.0/UDP',
            'SIP/2.0/UDP 127.0.0.1:99999;branch=z9hG4bK1',
            'SIP/2.0/XYZ host',
            '<sip:>',
            '<>',
            'sip:@',
            '<sip:a@b;tag',
            '1',
            'abc INVITE',
            '4294967296 INVITE',
            '-1',
            '999999999999',
            '1 REGISTER',
            '',
            ' ',
            '<sip:a@[::1>',
            'SIP/2.0/UDP [::1;branch=z9hG4bK',
            'sip:a@b:0',
            '<tel:+1>;tag=x',
            '*',
          ),
        ),
      )
      .map(([h, v]) =>
        render(t.lines.some((l) => l.startsWith(`${h}:`)) ? replaceLine(t, new RegExp(`^${h}:`), `${h}: ${v}`) : { ...t, lines: [...t.lines.slice(0, -1), `${h}: ${v}`, t.lines.at(-1)!] }),
      ),
  lineEndings: (t) => fc.constantFrom('\n', '\r', '\n\r', '\r\r\n').map((eol) => render(t, eol)),
  folding: (t) =>
    fc.nat(t.lines.length - 2).map((i) => {
      const lines = [...t.lines];
      const [k, ...v] = lines[i + 1].split(':');
      lines[i + 1] = `${k}:\r\n   ${v.join(':')}`;
      return render({ ...t, lines });
    }),
  compactAndCase: (t) =>
    fc.constant(
      render({
        ...t,
        lines: t.lines.map((l, i) =>
          i === 0
            ? l
            : l
                .replace(/^Via:/, 'v:')
                .replace(/^Call-ID:/, 'I:')
                .replace(/^From:/, 'FROM:')
                .replace(/^Content-Length:/, 'l:'),
        ),
      }),
    ),
  bodyMismatch: (t) =>
    fc
      .tuple(fc.string({ unit: 'binary', maxLength: 2000 }), fc.boolean())
      .map(([b, keep]) => render({ ...t, body: b, lines: keep ? t.lines : replaceLine(t, /^Content-Length:/, `Content-Length: ${Buffer.byteLength(b)}`).lines })),
  leadingJunk: (t) => fc.constantFrom('\r\n', '\r\n\r\n', '   ', '\0', '\uFEFF').map((j) => j + render(t)),
  mutationChain: (t) =>
    fc.tuple(fc.nat(t.lines.length - 1), fc.nat(400)).map(([li, at]) => {
      const lines = [...t.lines];
      lines[li] = lines[li].slice(0, at % (lines[li].length + 1));
      return render({ ...t, lines });
    }),
};

export const MUTATION_NAMES = Object.keys(MUTATIONS);

export interface FuzzCase {
  mutation: string;
  data: Buffer;
}

/** An arbitrary over malformed (and a few valid) messages from peer p. */
export function fuzzCase(p: Peer): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(fc.constantFrom(...METHODS), fc.nat(1_000_000), fc.boolean(), fc.constantFrom(...MUTATION_NAMES), fc.constantFrom(100, 180, 200, 404, 487, 999))
    .chain(([method, n, toTag, mutation, status]) => {
      const t = method === 'ACK' && n % 7 === 0 ? response(p, n, status) : base(method, p, n, toTag);
      return MUTATIONS[mutation](t).map((d) => ({ mutation, data: typeof d === 'string' ? Buffer.from(d, 'latin1') : d }));
    });
}

/** Draw `count` cases deterministically from `seed`. */
export function sampleCases(p: Peer, count: number, seed: number): FuzzCase[] {
  return fc.sample(fuzzCase(p), { numRuns: count, seed });
}
