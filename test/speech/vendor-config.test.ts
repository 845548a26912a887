// The recordings' Google engine is configured with the other vendors (core/speech/vendors.ts, read
// and validated in core/config.ts): GOOGLE_STT_BASE_URL defaults to the public endpoint, a bad one
// stops the start with a message naming it, and the key is never shown.
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../core/config';

describe('speech: vendor settings of the recordings engines', () => {
  const base = { DATABASE_URL: 'postgres://x/y', REDIS_URL: 'redis://127.0.0.1:1', JWT_SECRET: 'j'.repeat(40) };

  it('GOOGLE_STT_BASE_URL / GOOGLE_API_KEY: the default endpoint, or the one set (no trailing slash)', () => {
    expect(loadConfig(base, { persistSecret: false }).googleStt).to.deep.equal({ baseUrl: 'https://speech.googleapis.com', apiKey: '' });
    const c = loadConfig({ ...base, GOOGLE_STT_BASE_URL: 'http://127.0.0.1:9/', GOOGLE_API_KEY: 'g-secret-value-1234' }, { persistSecret: false });
    expect(c.googleStt).to.deep.equal({ baseUrl: 'http://127.0.0.1:9', apiKey: 'g-secret-value-1234' });
  });

  it('a bad GOOGLE_STT_BASE_URL stops the start with a line naming it; the key is not shown', () => {
    let err: unknown;
    try {
      loadConfig({ ...base, GOOGLE_STT_BASE_URL: 'ftp://speech.example', GOOGLE_API_KEY: 'g-secret-value-1234' }, { persistSecret: false });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as ConfigError).message)
      .to.include('GOOGLE_STT_BASE_URL')
      .and.not.include('g-secret-value-1234');
  });
});
