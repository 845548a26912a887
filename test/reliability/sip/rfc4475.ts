// The 49 messages of RFC 4475 section 3 ("SIP Torture Test Messages", May 2006) as exact bytes,
// each with what the RFC says a receiver must do with it. Source: the RFC text (the 46 plain-ASCII
// messages are kept once, in test/sip-server/parser/rfc4475-vectors.ts, and reused here); the three
// with non-ASCII or binary octets (intmeth, mpart01, unreason) are rebuilt here from the octets the
// RFC gives (section 2.2 <hex> notation; mpart01's second part is the 342-octet DER blob of the RFC,
// which makes its Content-Length of 553 come out exactly).
import { RFC4475 } from '../../sip-server/parser/rfc4475-vectors';

/**
 * valid: must be accepted and handed to the application (which answers it);
 * invalid: must not reach the application; 400 (505 for the version) when a response can be
 * formed, else dropped; either: the RFC allows rejecting or accepting (baddate, badbranch).
 */
export type Verdict = 'valid' | 'invalid' | 'either';

export interface TortureCase {
  name: string;
  section: string;
  verdict: Verdict;
  /** responses (noreason, unreason, scalarlg, bigcode, bcast) match no transaction and get no answer */
  kind: 'request' | 'response';
  /** the transport of the message's top Via: TCP/TLS ones are sent over TCP, the rest over UDP */
  transport: 'udp' | 'tcp';
  /** for invalid requests: the status expected, or 'drop' when no response can be formed */
  reject?: 400 | 505 | 'drop';
  data: Buffer;
}

const latin1 = (s: string): Buffer => Buffer.from(s, 'latin1');
const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

const INTMETH = "!interesting-Method0123456789_*+`.%indeed'~";
/** 3.1.1.2: every legal token character, quoted NUL/BEL/DEL, UTF-8 in a parameter and a header. */
const intmeth = Buffer.concat([
  utf8(
    `${INTMETH} sip:1_unusual.URI~(to-be!sure)&isn't+it$/crazy?,/;;*:&it+has=1,weird!*pas$wo~d_too.(doesn't-it)@example.com SIP/2.0\r\n` +
      "Via: SIP/2.0/TCP host1.example.com;branch=z9hG4bK-.!%66*_+`'~\r\n",
  ),
  latin1('To: "BEL:\\\x07 NUL:\\\x00 DEL:\\\x7F" <sip:1_unusual.URI~(to-be!sure)&isn\'t+it$/crazy?,/;;*@example.com>\r\n'),
  utf8(
    "From: token1~` token2'+_ token3*%!.- <sip:mundane@example.com>;fromParam''~+*_!.-%=\"\u0440\u0430\u0431\u043e\u0442\u0430\u044e\u0449\u0438\u0439\";tag=_token~1'+`*%!-.\r\n" +
      'Call-ID: intmeth.word%ZK-!.*_+\'@word`~)(><:\\/"][?}{\r\n' +
      `CSeq: 139122385 ${INTMETH}\r\nMax-Forwards: 255\r\n` +
      "extensionHeader-!.%*+_`'~:\uFEFF\u5927\u505C\u96FB\r\nContent-Length: 0\r\n\r\n",
  ),
]);

const SDP198 = 'v=0\r\no=mhandley 29739 7272939 IN IP4 192.0.2.198\r\ns=-\r\nc=IN IP4 192.0.2.198\r\nt=0 0\r\nm=audio 49217 RTP/AVP 0 12\r\nm=video 3227 RTP/AVP 31\r\na=rtpmap:31 LPC\r\n';
/** 3.1.1.12: a UTF-8 reason phrase. */
const unreason = utf8(
  'SIP/2.0 200 = 2**3 * 5**2 \u043d\u043e \u0441\u0442\u043e \u0434\u0435\u0432\u044f\u043d\u043e\u0441\u0442\u043e \u0434\u0435\u0432\u044f\u0442\u044c - \u043f\u0440\u043e\u0441\u0442\u043e\u0435\r\n' +
    'Via: SIP/2.0/UDP 192.0.2.198;branch=z9hG4bK1324923\r\nCall-ID: unreason.1234ksdfak3j2erwedfsASdf\r\nCSeq: 35 INVITE\r\n' +
    'From: sip:user@example.com;tag=11141343\r\nTo: sip:user@example.edu;tag=2229\r\nContent-Length: 154\r\nContent-Type: application/sdp\r\n' +
    `Contact: <sip:user@host198.example.com>\r\n\r\n${SDP198}`,
);

const DER = Buffer.from(
  '3082015206092A864886F70D010702A08201433082013F0201013109300706052B0E03021A300B06092A864886F70D01' +
    '0701318201203082011C020101307C3070310B3009060355040613025553311330110603550408130A43616C69666F72' +
    '6E69613111300F0603550407130853616E204A6F7365310E300C060355040A1305736970697431293027060355040B13' +
    '205369706974205465737420436572746966696361746520417574686F7269747902080195007102330113300706052B' +
    '0E03021A300D06092A864886F70D01010105000481808EF466F948F0522DD2E5978E9D95AAE9F2FE15A06659716292E8' +
    'DA2AA8D8350A68CEFFAE3CBD2BFF1675DDD5648E593DD64728F26220F7E941749E330D9A15EDABDB93D10C42102E7B72' +
    '89D29CC0C9AE2EFBC7C0CFF9172F3B027E4FC027E1546DE4B6AA3ABB3E66CCCB5DD6C64B8383149CB8E6FF182D944FE5' +
    '7B65BC99D005',
  'hex',
);
/** 3.1.1.11: a multipart body whose second part is binary (NULs, CR and LF octets inside). */
const mpart01 = Buffer.concat([
  utf8(
    'MESSAGE sip:kumiko@example.org SIP/2.0\r\n' +
      'Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK-d87543-4dade06d0bdb11ee-1--d87543-;rport\r\n' +
      'Max-Forwards: 70\r\nRoute: <sip:127.0.0.1:5080>\r\n' +
      'Identity: r5mwreLuyDRYBi/0TiPwEsY3rEVsk/G2WxhgTV1PF7hHuLIK0YWVKZhKv9Mj8UeXqkMVbnVq37CD+813gvYjcBUaZngQmXc9WNZSDNGCzA+fWl9MEUHWIZo1CeJebdY/XlgKeTa0Olvq0rt70Q5jiSfbqMJmQFteeivUhkMWYUA=\r\n' +
      'Contact: <sip:fluffy@127.0.0.1:5070>\r\nTo: <sip:kumiko@example.org>\r\nFrom: <sip:fluffy@example.com>;tag=2fb0dcc9\r\n' +
      'Call-ID: 3d9485ad0c49859b@Zmx1ZmZ5LW1hYy0xNi5sb2NhbA..\r\nCSeq: 1 MESSAGE\r\nContent-Transfer-Encoding: binary\r\n' +
      'Content-Type: multipart/mixed;boundary=7a9cbec02ceef655\r\nDate: Sat, 15 Oct 2005 04:44:56 GMT\r\n' +
      'User-Agent: SIPimp.org/0.2.5 (curses)\r\nContent-Length: 553\r\n\r\n' +
      '--7a9cbec02ceef655\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: binary\r\n\r\nHello\r\n' +
      '--7a9cbec02ceef655\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\n\r\n',
  ),
  DER,
  utf8('\r\n--7a9cbec02ceef655--\r\n'),
]);

const BUILT: Record<string, Buffer> = { intmeth, unreason, mpart01 };

// [name, section, verdict, reject] in RFC order
const TABLE: [string, string, Verdict, TortureCase['reject']?][] = [
  ['wsinv', '3.1.1.1', 'valid'],
  ['intmeth', '3.1.1.2', 'valid'],
  ['esc01', '3.1.1.3', 'valid'],
  ['escnull', '3.1.1.4', 'valid'],
  ['esc02', '3.1.1.5', 'valid'],
  ['lwsdisp', '3.1.1.6', 'valid'],
  ['longreq', '3.1.1.7', 'valid'],
  ['dblreq', '3.1.1.8', 'valid'],
  ['semiuri', '3.1.1.9', 'valid'],
  ['transports', '3.1.1.10', 'valid'],
  ['mpart01', '3.1.1.11', 'valid'],
  ['unreason', '3.1.1.12', 'valid'],
  ['noreason', '3.1.1.13', 'valid'],
  ['badinv01', '3.1.2.1', 'invalid', 'drop'],
  ['clerr', '3.1.2.2', 'invalid', 400],
  ['ncl', '3.1.2.3', 'invalid', 400],
  ['scalar02', '3.1.2.4', 'invalid', 400],
  ['scalarlg', '3.1.2.5', 'invalid'],
  ['quotbal', '3.1.2.6', 'invalid', 400],
  ['ltgtruri', '3.1.2.7', 'invalid', 400],
  ['lwsruri', '3.1.2.8', 'invalid', 400],
  ['lwsstart', '3.1.2.9', 'invalid', 400],
  ['trws', '3.1.2.10', 'invalid', 400],
  ['escruri', '3.1.2.11', 'invalid', 400],
  ['baddate', '3.1.2.12', 'either', 400],
  ['regbadct', '3.1.2.13', 'invalid', 400],
  ['badaspec', '3.1.2.14', 'invalid', 400],
  ['baddn', '3.1.2.15', 'invalid', 400],
  ['badvers', '3.1.2.16', 'invalid', 505],
  ['mismatch01', '3.1.2.17', 'invalid', 400],
  ['mismatch02', '3.1.2.18', 'invalid', 400],
  ['bigcode', '3.1.2.19', 'invalid'],
  ['badbranch', '3.2.1', 'either', 400],
  ['insuf', '3.3.1', 'invalid', 'drop'],
  ['unkscm', '3.3.2', 'valid'],
  ['novelsc', '3.3.3', 'valid'],
  ['unksm2', '3.3.4', 'valid'],
  ['bext01', '3.3.5', 'valid'],
  ['invut', '3.3.6', 'valid'],
  ['regaut01', '3.3.7', 'valid'],
  ['multi01', '3.3.8', 'invalid', 400],
  ['mcl01', '3.3.9', 'invalid', 400],
  ['bcast', '3.3.10', 'valid'],
  ['zeromf', '3.3.11', 'valid'],
  ['cparam01', '3.3.12', 'valid'],
  ['cparam02', '3.3.13', 'valid'],
  ['regescrt', '3.3.14', 'valid'],
  ['sdp01', '3.3.15', 'valid'],
  ['inv2543', '3.4.1', 'valid'],
];

function topViaTransport(data: Buffer): 'udp' | 'tcp' {
  // the first Via (full or compact form, possibly folded): "SIP / 2.0 / TCP"
  const m = /^(?:via|v)[ \t]*:[ \t\r\n]*SIP[ \t\r\n]*\/[ \t\r\n]*[\d.]+[ \t\r\n]*\/[ \t\r\n]*([A-Za-z]+)/im.exec(data.toString('latin1'));
  const t = m?.[1]?.toUpperCase();
  return t === 'TCP' || t === 'TLS' ? 'tcp' : 'udp';
}

export const TORTURE: readonly TortureCase[] = TABLE.map(([name, section, verdict, reject]) => {
  const text = RFC4475[name];
  if (!BUILT[name] && text === undefined) throw new Error(`no RFC 4475 text for ${name}`);
  const data = BUILT[name] ?? Buffer.from(text!, 'utf8');
  const kind = data.toString('latin1', 0, 8).startsWith('SIP/') ? 'response' : 'request';
  return { name, section, verdict, kind, transport: topViaTransport(data), reject: kind === 'request' ? reject : undefined, data };
});
