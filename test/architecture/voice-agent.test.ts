// The voice agent's seams (media-app/ai/README.md): its turn-taking state changes in one guarded
// place (TurnJudge.move, against VOICE_MOVES); every timer of the session is owned by the state that
// armed it (PhaseTimers on the session's clock), none is a bare setTimeout; and the ai_talk action
// reaches the agent only through the AI service (services.ai.talk), never importing it by value.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
/** The voice session's files: its life and media, the judge and its table, the reply, the duck. */
const VOICE = ['voice.ts', 'voice-moves.ts', 'turn-judge.ts', 'voice-reply.ts', 'duck.ts'].map((f) => `media-app/ai/${f}`);

/** A file's code with its comments removed. */
function code(file: string): string {
  return fs
    .readFileSync(path.join(ROOT, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '');
}

describe('architecture: the voice agent', () => {
  it('arms no bare timer: every timer is a PhaseTimers one, on the session clock', () => {
    for (const f of VOICE) expect(code(f), f).not.to.match(/\bset(Timeout|Interval|Immediate)\(/);
    for (const f of ['media-app/ai/voice.ts', 'media-app/ai/turn-judge.ts', 'media-app/ai/duck.ts']) expect(code(f), f).to.match(/new PhaseTimers</);
  });

  it('changes its turn-taking state only in TurnJudge.move, checked against the table', () => {
    const judge = code('media-app/ai/turn-judge.ts');
    expect(judge.match(/this\.st = /g) ?? []).to.have.length(1);
    expect(judge).to.match(/if \(!canMoveVoice\(from, to\)\) throw new VoiceMoveError/);
    for (const f of VOICE.filter((x) => !x.endsWith('turn-judge.ts'))) expect(code(f), f).not.to.match(/\.st = /);
  });

  it('the ai_talk action imports nothing of the AI subsystem by value', () => {
    const file = 'media-app/flow/actions/ai_talk.ts';
    const src = ts.createSourceFile(file, fs.readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest);
    const byValue = src.statements
      .filter(ts.isImportDeclaration)
      .filter((d) => (d.moduleSpecifier as ts.StringLiteral).text.includes('/ai/'))
      .filter((d) => !d.importClause?.isTypeOnly)
      .map((d) => (d.moduleSpecifier as ts.StringLiteral).text);
    expect(byValue).to.deep.equal([]);
  });
});
