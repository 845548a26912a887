import { expect } from 'chai';
import { jsonText } from '../../core/json-text';

describe('jsonText', () => {
  it('keeps strings, prints scalars, and writes objects as JSON rather than "[object Object]"', () => {
    expect(jsonText('hello')).to.equal('hello');
    expect(jsonText(42)).to.equal('42');
    expect(jsonText(false)).to.equal('false');
    expect(jsonText({ text: 'hi' })).to.equal('{"text":"hi"}');
    expect(jsonText(['a', 1])).to.equal('["a",1]');
  });

  it('gives the fallback for undefined and null only', () => {
    expect(jsonText(undefined)).to.equal('');
    expect(jsonText(null, 'queued')).to.equal('queued');
    expect(jsonText('', 'queued')).to.equal('');
    expect(jsonText(0, 'x')).to.equal('0');
  });
});
