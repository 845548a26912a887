// No network input may end a process: every server the platform's processes create (http, https, net,
// tls) goes through core/net/socket-guard.ts (`guardServer`, or control-api's `answerClientErrors`,
// which calls it), and every 'upgrade' handler guards its socket before it admits anything
// (test/reliability/http-ws-faults.test.ts is the behaviour; this keeps a new listener from skipping it).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, sourceFiles } from './source-files';

const ROOMS = ['core', 'control-api', 'media-app', 'media-engine', 'sip-server', 'esl', 'evals'];

/** Lines creating a server that the same file never hands to the guard. */
export function unguarded(text: string): string[] {
  const creates = text.split('\n').filter((l) => /\b(?:http|https|net|tls)\.createServer\(/.test(l) && !/^\s*(\/\/|\*)/.test(l));
  return creates.length && !/\bguardServer\(|\banswerClientErrors\(/.test(text) ? creates : [];
}

/** 'upgrade' handlers (server.on('upgrade', ...)) in a file that never calls guardSocket. */
export function unguardedUpgrade(text: string): boolean {
  return /\.on\('upgrade',/.test(text) && !/\bguardSocket\(/.test(text);
}

describe('architecture: every listener guards its sockets', () => {
  it('the checks find an unguarded server and upgrade handler, and let guarded ones through', () => {
    expect(unguarded('const s = http.createServer(app);\ns.listen(1);')).to.have.length(1);
    expect(unguarded('const s = guardServer(net.createServer(onConn));')).to.deep.equal([]);
    expect(unguardedUpgrade("server.on('upgrade', (req, socket) => admit(req));")).to.equal(true);
    expect(unguardedUpgrade("server.on('upgrade', (req, socket) => { guardSocket(socket); admit(req); });")).to.equal(false);
  });

  it('no server of the platform is created without the guard, no upgrade handler without guardSocket', () => {
    const bad: string[] = [];
    for (const room of ROOMS) {
      for (const f of sourceFiles(room)) {
        const text = fs.readFileSync(path.join(ROOT, f), 'utf8');
        for (const line of unguarded(text)) bad.push(`${f}: ${line.trim()}`);
        if (unguardedUpgrade(text)) bad.push(`${f}: an 'upgrade' handler without guardSocket`);
      }
    }
    expect(bad).to.deep.equal([]);
  });
});
