// Finding 5: a caller's From lands in a flow's webhook_send through ${svc.call.source.*}. A real
// INVITE from sipp carries the hostile From; a loopback HTTP receiver (the customer's CRM) records
// what the platform asked for. Values are encoded for where they land: percent-encoded in a URL's
// path and query, JSON-escaped in a JSON body, control characters removed in header values.
import { expect } from 'chai';
import http from 'node:http';
import { substitute, substituteOption } from '../../core/flow';
import { killAllSipp, startPlatform, until, type Platform } from '../../testkit/media-app/harness';
import { callNumber, numberWithFlow, trunkCustomer } from './calls';

describe('security: ${...} values are encoded for the context they land in (finding 5)', function () {
  this.timeout(90_000);
  let p: Platform;
  let server: http.Server;
  let base: string;
  let customerId: string;
  const got: { method: string; url: string; body: string }[] = [];

  before(async () => {
    p = await startPlatform({ EGRESS_ALLOW_CIDRS: '127.0.0.1/32' }); // the CRM is on loopback
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c));
      req.on('end', () => {
        got.push({ method: req.method ?? '', url: req.url ?? '', body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    customerId = await trunkCustomer();
  });
  after(async () => {
    killAllSipp();
    server?.close();
    await p?.close();
  });

  /** A number of the test customer whose flow calls the CRM with the caller's From and hangs up. */
  function crmNumber(number: string, tag: string): Promise<void> {
    return numberWithFlow(customerId, number, [
      { type: 'answer' },
      { type: 'webhook_send', option: { sync: true, method: 'GET', uri: `${base}/lookup/\${svc.call.source.target}?caller=\${svc.call.source.target}&role=user&tag=${tag}` } },
      {
        type: 'webhook_send',
        option: { sync: true, method: 'POST', uri: `${base}/hook?tag=${tag}`, data: '{"caller":"${svc.call.source.target}","name":"${svc.call.source.target_name}","n":${svc.call.source.target}}' },
      },
      { type: 'hangup' },
    ]);
  }

  /** sipp calls `number` with the given From header value; resolves the two requests the CRM got. */
  async function callWithFrom(number: string, from: string, tag: string) {
    await callNumber(p, customerId, number, from);
    return until(
      () => {
        const mine = got.filter((g) => g.url.endsWith(`tag=${tag}`));
        return mine.length === 2 ? { get: mine.find((g) => g.method === 'GET')!, post: mine.find((g) => g.method === 'POST')! } : null;
      },
      15_000,
      'both CRM requests',
    );
  }

  it('the finding: From "x&role=admin" <sip:1&role=admin@...> cannot add a role to the CRM lookup', async () => {
    await crmNumber('+899200000501', 'a');
    const { get, post } = await callWithFrom('+899200000501', '"x&role=admin" <sip:1&role=admin@[local_ip]:[local_port]>', 'a');
    const u = new URL(get.url, base);
    expect(u.searchParams.getAll('role'), get.url).to.deep.equal(['user']);
    expect(u.searchParams.get('caller')).to.equal('1&role=admin');
    expect(decodeURIComponent(u.pathname)).to.equal('/lookup/1&role=admin');
    const body = JSON.parse(post.body) as Record<string, unknown>;
    expect(body).to.deep.equal({ caller: '1&role=admin', name: 'x&role=admin', n: '1&role=admin' });
  });

  it('a From user that decodes to quotes, slashes, a fragment and CR/LF stays one JSON string and one path segment', async () => {
    await crmNumber('+899200000502', 'b');
    // the user part is percent-decoded by the router: 1","role":"admin"/../admin?x#y<CR><LF>
    const hostile = '1%22,%22role%22%3A%22admin%22/../admin%3Fx%23y%0D%0A';
    const { get, post } = await callWithFrom('+899200000502', `<sip:${hostile}@[local_ip]:[local_port]>`, 'b');
    const value = '1","role":"admin"/../admin?x#y\r\n';
    const u = new URL(get.url, base);
    expect(u.pathname.split('/').length, get.url).to.equal(3);
    expect(decodeURIComponent(u.pathname.split('/')[2]!)).to.equal(value);
    expect(u.searchParams.getAll('role')).to.deep.equal(['user']);
    expect(u.searchParams.get('caller')).to.equal(value);
    const body = JSON.parse(post.body) as Record<string, unknown>;
    expect(Object.keys(body)).to.deep.equal(['caller', 'name', 'n']);
    expect(body.caller).to.equal(value);
  });

  describe('the encoding rules (pure substitution)', () => {
    const vars: Record<string, string> = { v: 'a&b=c d/e?f#g', j: 'x","admin":true,"y":"\\', num: '42', crlf: 'Bob\r\nX-Injected: 1\u0000', url: 'https://cdn.example/a b.wav' };
    const lookup = (n: string) => vars[n];

    it('url: after scheme:// percent-encoded; a reference that starts the URL is the URL itself', () => {
      const o = substituteOption('webhook_send', { uri: 'https://crm.example/x/${v}?q=${v}#${v}' }, lookup);
      expect(o.uri).to.equal(`https://crm.example/x/${encodeURIComponent(vars.v!)}?q=${encodeURIComponent(vars.v!)}#${encodeURIComponent(vars.v!)}`);
      expect(substituteOption('play', { stream_urls: ['${url}', '${url}?caller=${v}'] }, lookup).stream_urls).to.deep.equal([vars.url, `${vars.url}?caller=${encodeURIComponent(vars.v!)}`]);
      expect(substituteOption('fetch', { event_url: 'http://h/${v}' }, lookup).event_url).to.equal(`http://h/${encodeURIComponent(vars.v!)}`);
      expect(substituteOption('external_media_start', { url: 'ws://h/s?c=${v}' }, lookup).url).to.equal(`ws://h/s?c=${encodeURIComponent(vars.v!)}`);
      expect(substituteOption('amd', { voicemail_urls: ['http://h/${v}'] }, lookup).voicemail_urls).to.deep.equal([`http://h/${encodeURIComponent(vars.v!)}`]);
    });

    it('url: a value in the authority cannot move the request to another host', () => {
      const uri = substituteOption('webhook_send', { uri: 'http://${v}.crm.example/' }, lookup).uri as string;
      const bad = substituteOption('webhook_send', { uri: 'http://crm${j}.example/' }, () => 'x@127.0.0.1/#').uri as string;
      expect(() => new URL(uri).hostname).to.throw();
      expect(() => new URL(bad)).to.throw();
    });

    it('json: escaped inside strings; outside, a number stays a number and anything else becomes a string', () => {
      const data = '{"a":"${j}","n":${num},"s":${j},"e":${nope}}';
      const o = substituteOption('webhook_send', { uri: 'http://h/', data }, lookup);
      expect(JSON.parse(o.data as string)).to.deep.equal({ a: vars.j, n: 42, s: vars.j, e: '' });
      const typed = substituteOption('webhook_send', { uri: 'http://h/', data_type: 'application/vnd.crm+json; charset=utf-8', data: '{"a":"${j}"}' }, lookup);
      expect(JSON.parse(typed.data as string)).to.deep.equal({ a: vars.j });
    });

    it('form bodies percent-encoded; text bodies and talk text as is', () => {
      const form = substituteOption('webhook_send', { uri: 'http://h/', data_type: 'application/x-www-form-urlencoded', data: 'caller=${v}&role=user' }, lookup);
      expect(new URLSearchParams(form.data as string).getAll('role')).to.deep.equal(['user']);
      expect(substituteOption('webhook_send', { uri: 'http://h/', data_type: 'text/plain', data: 'hi ${v}' }, lookup).data).to.equal(`hi ${vars.v}`);
      expect(substituteOption('talk', { text: 'Hello ${crlf}, ${v}' }, lookup).text).to.equal(`Hello ${vars.crlf}, ${vars.v}`);
      expect(substituteOption('variable_set', { key: 'k', value: '${j}' }, lookup).value).to.equal(vars.j);
    });

    it('header: CR, LF and other control characters removed from SIP addresses, e-mail subjects and content types', () => {
      const addr = { type: 'sip', target: 'alice${crlf}@example.test', target_name: '${crlf}' };
      for (const type of ['call', 'connect'] as const) {
        const o = substituteOption(type, { source: addr, destinations: [addr] }, lookup) as { source: Record<string, string>; destinations: Record<string, string>[] };
        expect(o.source.target).to.equal('aliceBobX-Injected: 1@example.test');
        expect(o.destinations[0]!.target_name).to.equal('BobX-Injected: 1');
      }
      expect(substituteOption('email_send', { destinations: [], subject: 'Re: ${crlf}' }, lookup).subject).to.equal('Re: BobX-Injected: 1');
      expect(substituteOption('webhook_send', { uri: 'http://h/', data_type: 'text/plain${crlf}' }, lookup).data_type).to.equal('text/plainBobX-Injected: 1');
    });

    it('values are never re-scanned', () => {
      expect(substitute('${a}', (n) => (n === 'a' ? '${b}' : 'B'))).to.equal('${b}');
    });
  });
});
