// Re-encryption of the stored AI vendor keys for a new platform secret (docs/ai.md "Keys",
// rotation): the real command (core/secrets/rekey-cli.ts, a child process against this test's
// Postgres) seals every key again under the new secret, keys stored in plain included; a dry run
// writes nothing; a key that cannot be opened under the old secret stops it with nothing changed and
// the row named, never a key; usage errors exit 2. An AI's versions (ai_versions) hold its keys sealed
// too and are re-sealed with it.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { aisRepo } from '../../core/repos/ais';
import { repos } from '../../core/repos';
import { deriveKey, openKey, SealedKeyError, useKeySecret } from '../../core/secrets/keys';
import { rekeyStoredKeys } from '../../core/secrets/rekey';
import { TEST_JWT_SECRET } from '../../testkit/api';
import { testDatabaseUrl, testDb, truncateAll } from '../../testkit/db';

const ROOT = path.resolve(__dirname, '../..');
const NEW_SECRET = 'the-new-platform-secret-0123456789-rotated';
const KEYS = { engine: 'sk-rekey-engine-0123456789', tts: 'el-rekey-tts-key-abcdef', stt: 'dg-rekey-stt-key-987654', legacy: 'sk-legacy-plain-key-55555' };

function rekey(env: Record<string, string | undefined>, ...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'core/secrets/rekey-cli.ts'), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'test', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('ai: re-encrypting stored vendor keys for a new secret (rekey-cli)', function () {
  this.timeout(120_000);
  let url: string;
  let ids: { sealed: string; legacy: string };
  const rows = async () => (await testDb())('ais').select('id', 'engine_key', 'parameter').orderBy('id');
  const oldKek = deriveKey(TEST_JWT_SECRET);
  const newKek = deriveKey(NEW_SECRET);

  before(async () => {
    useKeySecret(TEST_JWT_SECRET);
    await truncateAll();
    url = await testDatabaseUrl();
    const db = await testDb();
    const cid = (await repos(db).customers.create({ email: `rekey${Date.now()}@example.test`, status: 'active', name: 'rekey' })).id;
    const sealed = await aisRepo(db).create(cid, {
      name: 'sealed',
      engine_model: 'openai.gpt-5',
      engine_key: KEYS.engine,
      tts_type: 'elevenlabs',
      parameter: { tts_key: KEYS.tts, stt_key: KEYS.stt, greeting: 'Hi' },
    });
    const legacy = await aisRepo(db).create(cid, { name: 'legacy', engine_model: 'openai.gpt-5' });
    // as stored before migration 0958: in plain
    await db('ais').where({ id: legacy.id }).update({ engine_key: KEYS.legacy });
    ids = { sealed: sealed.id, legacy: legacy.id };
  });
  after(async () => {
    // the keys back under the test secret, for the suites that run after this one in this process
    const db = await testDb();
    await db('ais').where('name', 'tampered').del();
    await rekeyStoredKeys(db, newKek, oldKek).catch(() => undefined);
  });

  it('usage errors exit 2: no OLD_JWT_SECRET, an unknown argument; the same secret twice exits 1', () => {
    expect(rekey({ DATABASE_URL: url, JWT_SECRET: NEW_SECRET })).to.include({ code: 2 });
    expect(rekey({ DATABASE_URL: url, JWT_SECRET: NEW_SECRET, OLD_JWT_SECRET: TEST_JWT_SECRET }, '--force').code).to.equal(2);
    const same = rekey({ DATABASE_URL: url, JWT_SECRET: TEST_JWT_SECRET, OLD_JWT_SECRET: TEST_JWT_SECRET });
    expect(same.code).to.equal(1);
    expect(same.err).to.include('the same');
  });

  it('--dry-run counts the keys and writes nothing', async () => {
    const before = await rows();
    const r = rekey({ DATABASE_URL: url, JWT_SECRET: NEW_SECRET, OLD_JWT_SECRET: TEST_JWT_SECRET }, '--dry-run');
    expect(r.code, r.err).to.equal(0);
    // the sealed AI's keys twice: in its row and in its version 1 (ai_versions)
    expect(r.out).to.include('dry run: 7 key(s) in 3 row(s)');
    expect(await rows()).to.deep.equal(before);
  });

  it('seals every key under the new secret (the plain legacy one too); the old secret opens none of them; other fields kept', async () => {
    const r = rekey({ DATABASE_URL: url, JWT_SECRET: NEW_SECRET, OLD_JWT_SECRET: TEST_JWT_SECRET });
    expect(r.code, r.err).to.equal(0);
    expect(r.out).to.include('7 key(s) in 3 row(s) sealed under the new secret');
    for (const k of Object.values(KEYS)) expect(r.out + r.err).to.not.include(k);
    const db = await testDb();
    const sealed = (await db('ais').where({ id: ids.sealed }).first()) as { engine_key: string; parameter: Record<string, string> };
    const legacy = (await db('ais').where({ id: ids.legacy }).first()) as { engine_key: string };
    expect(openKey(sealed.engine_key, newKek)).to.equal(KEYS.engine);
    expect(openKey(sealed.parameter.tts_key!, newKek)).to.equal(KEYS.tts);
    expect(openKey(sealed.parameter.stt_key!, newKek)).to.equal(KEYS.stt);
    expect(sealed.parameter.greeting).to.equal('Hi');
    expect(legacy.engine_key).to.match(/^enc:v1:/);
    expect(openKey(legacy.engine_key, newKek)).to.equal(KEYS.legacy);
    expect(() => openKey(sealed.engine_key, oldKek)).to.throw(SealedKeyError);
    // an AI's versions keep its keys sealed the same way: re-sealed too, the rest of the version as it was
    const version = (await db('ai_versions').where({ ai_id: ids.sealed, number: 1 }).first())!;
    expect(openKey(version.engine_key, newKek)).to.equal(KEYS.engine);
    expect(openKey(version.parameter.tts_key as string, newKek)).to.equal(KEYS.tts);
    expect(version.parameter.greeting).to.equal('Hi');
    expect(version.config.name).to.equal('sealed');
  });

  it('a key the old secret cannot open (altered) stops it: exit 1, that row and field named, no key printed, nothing written', async () => {
    const db = await testDb();
    const src = (await db('ais').where({ id: ids.sealed }).first()) as { customer_id: string; engine_key: string };
    const copy: Record<string, unknown> = { ...(await db('ais').where({ id: ids.sealed }).first()) };
    const tampered: Record<string, unknown> = { ...copy, id: '7e0b1c2d-0000-4000-8000-0000000000aa', name: 'tampered', engine_key: src.engine_key.slice(0, -4) + 'AAAA' };
    for (const k of ['parameter', 'vad_config', 'tool_names']) tampered[k] = JSON.stringify(copy[k]);
    const [t] = (await db('ais').insert(tampered).returning('id')) as { id: string }[];
    const before = await rows();
    // the rows are under NEW_SECRET now: rotate again to a third secret
    const r = rekey({ DATABASE_URL: url, JWT_SECRET: 'a-third-secret-0123456789-abcdefghij', OLD_JWT_SECRET: NEW_SECRET });
    expect(r.code).to.equal(1);
    expect(r.err).to.include(`ais ${t!.id} engine_key`).and.include('nothing was changed');
    expect(r.err).to.not.include(ids.sealed);
    for (const k of Object.values(KEYS)) expect(r.out + r.err).to.not.include(k);
    expect(await rows()).to.deep.equal(before);
  });
});
