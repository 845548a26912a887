import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, ConfigError } from '../../core/config';

describe('core/config', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('defaults describe the embedded single-machine set-up', () => {
    const c = loadConfig({ DATA_DIR: dir });
    expect(c).to.include({
      databaseUrl: 'postgres://postgres@127.0.0.1:55432/platform',
      redisUrl: 'redis://127.0.0.1:56379/0',
      httpHost: '127.0.0.1',
      httpPort: 8080,
      publicUrl: 'http://127.0.0.1:8080',
      logLevel: 'info',
      smtpUrl: '',
      sipDomain: 'sip.localhost',
      rateLimitScale: 1,
      trustProxy: false,
      outboxDir: path.join(dir, 'outbox'),
      directScopeVersion: 1,
    });
    expect(Object.isFrozen(c)).to.equal(true);
  });

  it('generates JWT_SECRET once into $DATA_DIR/jwt-secret and reuses it', () => {
    const a = loadConfig({ DATA_DIR: dir });
    const b = loadConfig({ DATA_DIR: dir });
    expect(a.jwtSecret).to.have.length.above(40);
    expect(b.jwtSecret).to.equal(a.jwtSecret);
    expect(fs.readFileSync(path.join(dir, 'jwt-secret'), 'utf8').trim()).to.equal(a.jwtSecret);
    expect(fs.statSync(path.join(dir, 'jwt-secret')).mode & 0o077).to.equal(0);
    expect(loadConfig({ DATA_DIR: dir, JWT_SECRET: 'x'.repeat(40) }).jwtSecret).to.equal('x'.repeat(40));
  });

  it('collects every bad value, one line each, naming the variable', () => {
    let err: ConfigError | undefined;
    try {
      loadConfig({
        DATA_DIR: dir,
        HTTP_PORT: 'eighty',
        DATABASE_URL: 'mysql://x',
        REDIS_URL: 'nope',
        PUBLIC_URL: 'ftp://x',
        LOG_LEVEL: 'loud',
        RATE_LIMIT_SCALE: '-1',
        TRUST_PROXY: 'maybe',
        SMTP_URL: 'http://mail',
        JWT_SECRET: 'short',
        SIP_DOMAIN: 'bad domain',
      });
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err).to.be.instanceOf(ConfigError);
    const vars = err!.problems.map((p) => p.split(':')[0]);
    expect(vars).to.have.members(['HTTP_PORT', 'DATABASE_URL', 'REDIS_URL', 'PUBLIC_URL', 'LOG_LEVEL', 'RATE_LIMIT_SCALE', 'TRUST_PROXY', 'SMTP_URL', 'JWT_SECRET', 'SIP_DOMAIN']);
    expect(err!.message.split('\n')).to.have.length(11);
    expect(err!.message).to.include('HTTP_PORT: must be a port number (got "eighty")');
  });

  it('parses types: ports, booleans, scale, trailing slash of PUBLIC_URL; empty means unset', () => {
    const c = loadConfig({ DATA_DIR: dir, HTTP_PORT: '0', TRUST_PROXY: 'true', RATE_LIMIT_SCALE: '0', PUBLIC_URL: 'https://pbx.example.com/', LOG_LEVEL: '', SMTP_URL: 'smtp://mail:25' });
    expect(c).to.include({ httpPort: 0, trustProxy: true, rateLimitScale: 0, publicUrl: 'https://pbx.example.com', logLevel: 'info', smtpUrl: 'smtp://mail:25' });
  });

  it('.env.example documents every variable the config reads', () => {
    const example = fs.readFileSync(path.join(__dirname, '../../.env.example'), 'utf8');
    const src = fs.readFileSync(path.join(__dirname, '../../core/config.ts'), 'utf8');
    const vars = [...src.matchAll(/^ {2}([A-Z][A-Z0-9_]+): /gm)].map((m) => m[1]);
    expect(vars.length).to.be.above(15);
    for (const v of vars) expect(example, v).to.match(new RegExp(`^#?\\s*${v}=`, 'm'));
  });
});
