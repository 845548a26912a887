import http from 'node:http';
import { expect } from 'chai';
import { freePort } from '../../testkit/ports';
import { egressPolicyFor } from '../../core/net';
import { FlowHttpError, PolicyHttp } from '../../media-app/kit/http';
import { FETCH_FAILED } from '../../media-app/flow/actions/fetch';
import { events, executed, first, media, sim } from './helpers';

interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A real HTTP server on loopback; `handler` decides each answer. */
async function server(handler: (hit: Hit, res: http.ServerResponse) => void) {
  const hits: Hit[] = [];
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const hit = { method: req.method!, url: req.url!, headers: req.headers, body, at: Date.now() };
      hits.push(hit);
      handler(hit, res);
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => srv.listen(port, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${port}`, hits, close: () => new Promise<void>((r) => srv.close(() => r())) };
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

describe('flow actions over HTTP (real local servers)', () => {
  it('fetch POSTs {activeflow_id, reference_id} and runs the returned actions, then resumes', async () => {
    const s = await server((hit, res) =>
      json(res, 200, [
        { type: 'variable_set', option: { key: 'fetched', value: 'yes' } },
        { type: 'talk', option: { text: 'from the server, ${svc.call.digits}' } },
      ]),
    );
    try {
      const r = await sim([
        { type: 'fetch', option: { event_url: `${s.url}/next?x=1`, event_method: 'POST' } },
        { type: 'variable_set', option: { key: 'after', value: 'y' } },
      ]);
      expect(executed(r)).to.deep.equal(['fetch', 'variable_set', 'talk', 'variable_set']);
      expect(s.hits).to.have.length(1);
      expect(s.hits[0]!.method).to.equal('POST');
      expect(s.hits[0]!.url).to.equal('/next?x=1');
      expect(JSON.parse(s.hits[0]!.body)).to.deep.equal({ activeflow_id: first(r).id, reference_id: r.call_id });
      expect(first(r).variables).to.include({ fetched: 'yes', after: 'y' });
      expect(media(r).find((m) => m.command === 'talk')!.text).to.equal('from the server, ');
    } finally {
      await s.close();
    }
  });

  it('fetch GET sends the same fields as query parameters', async () => {
    const s = await server((_hit, res) => json(res, 200, [{ type: 'stop' }]));
    try {
      const r = await sim([
        { type: 'fetch', option: { event_url: `${s.url}/a`, event_method: 'GET' } },
        { type: 'talk', option: { text: 'no' } },
      ]);
      const q = new URL(s.hits[0]!.url, 'http://x').searchParams;
      expect(s.hits[0]!.method).to.equal('GET');
      expect(q.get('activeflow_id')).to.equal(first(r).id);
      expect(executed(r)).to.deep.equal(['fetch', 'stop']);
    } finally {
      await s.close();
    }
  });

  it('fetch failures end the activeflow with one generic reason; the cause (status, not JSON, invalid actions) is only in the trace', async () => {
    const answers = [
      (res: http.ServerResponse) => json(res, 500, { oops: true }),
      (res: http.ServerResponse) => res.end('not json'),
      (res: http.ServerResponse) => json(res, 200, [{ type: 'sleep', option: { duration: 'x' } }]),
    ];
    let n = 0;
    const s = await server((_hit, res) => answers[n++]!(res));
    try {
      const causes: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await sim([
          { type: 'fetch', option: { event_url: s.url } },
          { type: 'talk', option: { text: 'no' } },
        ]);
        expect(first(r).end_reason).to.equal('error');
        expect(first(r).error).to.equal(FETCH_FAILED);
        const note = events(r, 'fetch_failed')[0]!;
        causes.push(note.status ?? note.problem);
      }
      expect(causes[0]).to.equal(500);
      expect(causes[1]).to.contain('not JSON');
      expect(causes[2]).to.contain('response[0].option.duration');
    } finally {
      await s.close();
    }
  });

  it('webhook_send sync waits for the receiver; async does not', async () => {
    const s = await server((_hit, res) => setTimeout(() => json(res, 200, {}), 300));
    try {
      const flow = (sync: boolean) => [
        { type: 'webhook_send', option: { sync, uri: `${s.url}/hook`, method: 'POST', data_type: 'application/json', data: '{"digits":"${svc.call.digits}","who":"${name}"}' } },
        { type: 'variable_set', option: { key: 'after', value: 'y' } },
      ];
      const t0 = Date.now();
      const sync = await sim(flow(true), { variables: { name: 'Ann' } });
      const syncMs = Date.now() - t0;
      expect(JSON.parse(s.hits[0]!.body)).to.deep.equal({ digits: '', who: 'Ann' });
      expect(s.hits[0]!.headers['content-type']).to.equal('application/json');
      const sent = events(sync, 'webhook_sent')[0]!;
      const after = sync.timeline.find((e) => e.event === 'action' && e.type === 'variable_set')!;
      expect(sync.timeline.indexOf(sent)).to.be.lessThan(sync.timeline.indexOf(after));
      expect(syncMs).to.be.greaterThan(250);

      const async = await sim(flow(false));
      const sentAsync = events(async, 'webhook_sent')[0]!;
      const afterAsync = async.timeline.find((e) => e.event === 'action' && e.type === 'variable_set')!;
      expect(sentAsync).to.include({ status: 200, sync: false });
      expect(async.timeline.indexOf(afterAsync)).to.be.lessThan(async.timeline.indexOf(sentAsync));
      expect(s.hits).to.have.length(2);
    } finally {
      await s.close();
    }
  });

  it('a failed sync webhook is noted and the flow goes on', async () => {
    const port = await freePort();
    const r = await sim([{ type: 'webhook_send', option: { sync: true, uri: `http://127.0.0.1:${port}/none` } }, { type: 'stop' }]);
    expect(events(r, 'webhook_failed')).to.have.length(1);
    expect(executed(r)).to.deep.equal(['webhook_send', 'stop']);
  });

  it('the production HTTP client refuses loopback targets unless EGRESS_ALLOW_CIDRS covers them', async () => {
    const s = await server((_hit, res) => json(res, 200, []));
    try {
      const strict = new PolicyHttp(egressPolicyFor({}));
      let err: Error | undefined;
      await strict.request({ method: 'GET', url: s.url, timeoutMs: 1000 }).catch((e: Error) => (err = e));
      expect(err).to.be.instanceOf(FlowHttpError);
      expect(err?.message).to.match(/^refused: .*loopback/);
      expect(s.hits).to.have.length(0);
      const open = new PolicyHttp(egressPolicyFor({ EGRESS_ALLOW_CIDRS: '127.0.0.0/8' }));
      expect((await open.request({ method: 'GET', url: s.url, timeoutMs: 1000 })).status).to.equal(200);
    } finally {
      await s.close();
    }
  });
});
