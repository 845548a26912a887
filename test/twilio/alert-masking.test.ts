// What an alert stores of a request (core/twilio/alerts.ts): credential-like values masked wherever they
// stand, in a URL that parses and in text that does not (a scheme-less user:TOKEN@host, a broken URL with
// ?Token=…), which was kept whole before.
import { expect } from 'chai';
import { maskedHeaders, maskedUrl, maskedVariables } from '../../core/twilio/alerts';

const TOKEN = '0123456789abcdef0123456789abcdef';

describe('twilio alerts: what a stored request keeps of a secret', () => {
  it('a URL: its password and credential-like query values masked, the rest kept', () => {
    const u = maskedUrl(`https://bob:${TOKEN}@app.example/voice?AuthToken=${TOKEN}&From=%2B1555`);
    expect(u).to.not.include(TOKEN);
    expect(u).to.include('app.example/voice').and.include('From=%2B1555');
  });

  it('text that is not a URL: no user part, no query, whatever stood there', () => {
    for (const text of [`bob:${TOKEN}@app.example/voice`, `app example/voice?Token=${TOKEN}`, `http://[bad/x?auth=${TOKEN}`, `ftp//u:${TOKEN}@h#k=${TOKEN}`]) {
      const m = maskedUrl(text);
      expect(m, text).to.not.include(TOKEN);
      expect(m.length, text).to.be.at.most(200);
    }
    expect(maskedUrl('bob:secret@app.example/voice')).to.equal('app.example/voice');
    expect(maskedUrl('not a url at all')).to.equal('not a url at all');
  });

  it('request variables: credential-like names and AuthToken-like values masked', () => {
    const v = maskedVariables({ AccountSid: 'AC1', Password: 'hunter2hunter2', Digits: '1234', Note: TOKEN });
    expect(v).to.not.include('hunter2hunter2').and.not.include(TOKEN);
    expect(v).to.include('Digits=1234');
  });

  it('response headers: form-encoded in the order sent, cookies and the authorization family masked whole', () => {
    const h = maskedHeaders([
      ['Content-Type', 'text/html'],
      ['Set-Cookie', `sid=${TOKEN}; Path=/`],
      ['Set-Cookie', 'theme=dark'],
      ['WWW-Authenticate', 'Basic realm="app"'],
      ['X-Api-Key', 'k-1234567890abcdef'],
      ['X-Trace', TOKEN],
    ]);
    expect(h).to.equal('Content-Type=text%2Fhtml&Set-Cookie=****&Set-Cookie=****&WWW-Authenticate=****&X-Api-Key=****cdef&X-Trace=****cdef');
  });
});
