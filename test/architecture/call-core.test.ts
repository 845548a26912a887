// The call core's seams (docs/architecture.md "The call core"): the dialler (media-app/outbound/) runs
// attempts over the DialHost it declares and never imports the call core (call/ → outbound/, one
// direction); a call's media endpoint is made in one place (call/endpoint.ts); an INVITE of this node
// is sent in one place (outbound/uac.ts). Infrastructure legs that are not a call's endpoint (a
// conference's accepted leg, the cross-node leg's own endpoint) are named here with their reason.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT, sourceFiles } from './source-files';

/** The root-relative targets of a file's relative imports (imports, export-from, import types). */
function importsOf(file: string, text: string): string[] {
  const names = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) names.push(m[1]);
  return names.filter((n) => n.startsWith('.')).map((n) => path.posix.normalize(path.posix.join(path.posix.dirname(file), n)));
}

/** Files of media-app that call `what(` in code (comments stripped). */
function callersOf(what: RegExp): string[] {
  return sourceFiles('media-app').filter((f) => {
    const code = fs
      .readFileSync(path.join(ROOT, f), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '');
    return what.test(code);
  });
}

/** Why a file of outbound/ may not import `to`, or null. */
export function dialDirection(from: string, to: string): string | null {
  return from.startsWith('media-app/outbound/') && (to === 'media-app/call' || to.startsWith('media-app/call/')) ? `${from} → ${to}: outbound/ must not import call/` : null;
}

describe('architecture: the call core', () => {
  it('the dial direction rule refuses outbound → call and lets call → outbound through', () => {
    expect(dialDirection('media-app/outbound/dialer.ts', 'media-app/call/session')).to.match(/must not import call/);
    expect(dialDirection('media-app/outbound/internal.ts', 'media-app/call/session-types')).to.match(/must not import call/);
    expect(dialDirection('media-app/call/dial.ts', 'media-app/outbound/dialer')).to.equal(null);
    expect(dialDirection('media-app/outbound/dialer.ts', 'media-app/callflow/x')).to.equal(null);
    expect(importsOf('media-app/outbound/x.ts', "import type { CallSession } from '../call/session';").map((t) => dialDirection('media-app/outbound/x.ts', t))[0]).to.match(/must not import call/);
  });

  it('no file of media-app/outbound imports media-app/call', () => {
    const out = sourceFiles('media-app/outbound');
    expect(out.length).to.be.above(3);
    const bad = out.flatMap((f) =>
      importsOf(f, fs.readFileSync(path.join(ROOT, f), 'utf8'))
        .map((to) => dialDirection(f, to))
        .filter((x): x is string => !!x),
    );
    expect(bad, bad.join('\n')).to.deep.equal([]);
  });

  it("a call's media endpoint is made only in call/endpoint.ts", () => {
    // conference/accept-leg.ts: the host's end of a cross-node leg, in the room's mix; xnode/leg.ts: the
    // participant's leg endpoint beside the call's own: neither is a call's endpoint; media-server/fsmrf:
    // the fsmrf backend's createEndpoint, behind the port (it calls fsmrf's)
    expect(callersOf(/\.createEndpoint\(/).sort()).to.deep.equal([
      'media-app/call/endpoint.ts',
      'media-app/conference/accept-leg.ts',
      'media-app/media-server/fsmrf/backend.ts',
      'media-app/xnode/leg.ts',
    ]);
  });

  it("a call's timers are its phase's: call/session.ts arms no timer outside PhaseTimers", () => {
    // issue 52: a dial timeout armed with a bare timer outlived the ringing and cut every answered call
    const code = fs.readFileSync(path.join(ROOT, 'media-app/call/session.ts'), 'utf8').replace(/\/\/.*$/gm, '');
    expect(code).not.to.match(/\bset(Timeout|Interval)\(/);
    expect(code).to.match(/new PhaseTimers</);
  });

  it('an INVITE of this node is sent only by outbound/uac.ts', () => {
    expect(callersOf(/\.createUAC\(/)).to.deep.equal(['media-app/outbound/uac.ts']);
  });
});
