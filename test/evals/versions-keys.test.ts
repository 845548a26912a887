// An AI's versions keep its vendor keys no longer than they are the AI's (docs/ai.md "Versions"):
// deleting the AI (DELETE /ais/{id}, a soft delete) blanks every key of every version in the same
// transaction; a new key for the same place (engine_url origin or vendor, voice vendor) blanks the
// earlier versions' keys for that place. A version whose key was blanked runs with the AI's current key
// only while that key goes to the same place; else it does not run, saying why. Rows read directly from
// Postgres (the API masks keys either way).
import { expect } from 'chai';
import request from 'supertest';
import { useTestApp, type TestApp, type Fixture } from '../../testkit/api';
import { aisRepo } from '../../core/repos/ais';
import { aiAtVersion, type AiVersionRow } from '../../core/repos/ai-versions';
import { openKey } from '../../core/secrets/keys';
import type { AiRow } from '../../core/db/rows/ais';

const ENC = /enc:v1:/;

describe('agent versions: keys kept no longer than they are the AI’s', () => {
  let t: TestApp;
  let f: Fixture;
  useTestApp((s) => ({ t, f } = s));
  const versions = async (aiId: string) => (await t.ctx.db('ai_versions').where({ ai_id: aiId }).orderBy('number')) as AiVersionRow[];

  it('deleting the AI leaves no sealed key of it in ai_versions; the API then finds neither it nor its versions', async () => {
    const ai = await aisRepo(t.ctx.db).create(f.customer.id, {
      name: 'gone',
      engine_model: 'openai.gpt-test',
      engine_key: 'sk-delete-me-0123456789',
      tts_type: 'elevenlabs',
      parameter: { tts_key: 'el-delete-me-abcdef', llm_fallback: { engine_model: 'openai.gpt-fb', engine_key: 'sk-fallback-delete-me' }, greeting: 'Hi' },
    });
    await aisRepo(t.ctx.db).update(f.customer.id, ai.id, { engine_key: 'sk-delete-me-second-key' });
    expect(JSON.stringify(await versions(ai.id))).to.match(ENC);

    await request(t.app).delete(`/v1.0/ais/${ai.id}`).query({ accesskey: f.accesskey }).expect(200);
    const after = await versions(ai.id);
    expect(after).to.have.length(2);
    expect(JSON.stringify(after), 'a sealed key left in a version of the deleted AI').to.not.match(ENC);
    for (const v of after) {
      expect(v.engine_key).to.equal('');
      expect(v.parameter).to.deep.include({ tts_key: '', greeting: 'Hi' });
      expect(v.parameter.llm_fallback).to.deep.equal({ engine_model: 'openai.gpt-fb', engine_key: '' });
    }
    expect(after[1]!.keys_withheld).to.have.members(['engine_key', 'parameter.tts_key', 'parameter.llm_fallback.engine_key']);
    await request(t.app).get(`/v1.0/ais/${ai.id}/versions/1`).query({ accesskey: f.accesskey }).expect(404);
  });

  it("a rotated key is blanked in the earlier versions; they run with the AI's current key while it goes to the same place, else fail saying why", async () => {
    const repo = aisRepo(t.ctx.db);
    const ai = await repo.create(f.customer.id, { name: 'rotating', engine_model: 'openai.gpt-test', engine_key: 'sk-first-key-0001', tts_type: 'elevenlabs', parameter: { tts_key: 'el-first-key' } });
    // the engine key rotated: version 1's is blanked, its voice key (unchanged) kept
    const rotated = (await repo.update(f.customer.id, ai.id, { engine_key: 'sk-second-key-0002' }))!;
    let [v1, v2] = await versions(ai.id);
    expect(v1!.engine_key).to.equal('');
    expect(v1!.keys_withheld).to.deep.equal(['engine_key']);
    expect(openKey(v1!.parameter.tts_key as string)).to.equal('el-first-key');
    expect(openKey(v2!.engine_key)).to.equal('sk-second-key-0002');
    // version 1 runs with the current key: the same vendor
    const at1 = aiAtVersion(rotated, v1!) as AiRow;
    expect(openKey(at1.engine_key!)).to.equal('sk-second-key-0002');

    // a voice key rotated for the same voice vendor goes the same way
    await repo.update(f.customer.id, ai.id, { parameter: { tts_key: 'el-second-key' } });
    [v1, v2] = await versions(ai.id);
    expect(v1!.parameter.tts_key).to.equal('');
    expect(v2!.parameter.tts_key).to.equal('');
    expect(v2!.keys_withheld).to.deep.equal(['parameter.tts_key']);

    // the AI moves to another vendor with its key: version 2's key (another place) is not superseded, kept
    const moved = (await repo.update(f.customer.id, ai.id, { engine_model: 'anthropic.claude-test', engine_key: 'sk-ant-third-key' }))!;
    [v1, v2] = await versions(ai.id);
    expect(openKey(v2!.engine_key)).to.equal('sk-second-key-0002');
    // version 1's key was withheld, and the AI's key now goes elsewhere: it does not run
    expect(aiAtVersion(moved, v1!)).to.deep.equal({
      error: `version 1 of ai ${ai.id} cannot run: its engine_key was withdrawn (replaced by a later key, or the AI deleted) and the AI's engine_key now goes to vendor:anthropic, not vendor:openai`,
    });
  });
});
