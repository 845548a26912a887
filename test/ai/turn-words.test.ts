// The turn-taking word rules per language (core/ai/turns.ts, core/ai/turn-words.ts): the end of a turn
// from the words, backchannels that do not interrupt and stop words that do, in each language with
// rules; a language without rules decides by punctuation only and lets every word interrupt.
import { expect } from 'chai';
import { endOfTurn, endpointingDelay, interruptionOf, TURN_DEFAULTS } from '../../core/ai/turns';
import { TURN_LANGUAGES, turnWords } from '../../core/ai/turn-words';

describe('ai: turn-taking word rules per language', () => {
  it('has rules for en, es, fr, de, pt, it, chosen by the primary subtag; none for others', () => {
    expect(TURN_LANGUAGES).to.have.members(['en', 'es', 'fr', 'de', 'pt', 'it']);
    expect(turnWords('es-MX')).to.equal(turnWords('es'));
    expect(turnWords('PT_br')).to.equal(turnWords('pt'));
    expect(turnWords('ja-JP')).to.equal(null);
  });

  const cases: [string, string, 'complete' | 'continuation'][] = [
    ['en-US', 'What time is it.', 'complete'],
    ['en-US', 'and then uh', 'continuation'],
    ['en-US', 'um.', 'continuation'],
    ['en-US', 'I would like to book a table', 'complete'],
    ['es-ES', 'y entonces', 'continuation'],
    ['es-ES', 'quiero pagar la factura', 'complete'],
    ['es-ES', 'eh.', 'continuation'],
    ['fr-FR', 'je voudrais parler avec', 'continuation'],
    ['fr-FR', "c'est tout.", 'complete'],
    ['de-DE', 'ich möchte und', 'continuation'],
    ['de-DE', 'ähm.', 'continuation'],
    ['de-DE', 'Das ist alles', 'complete'],
    ['pt-BR', 'eu queria saber se', 'continuation'],
    ['it-IT', 'vorrei prenotare per', 'continuation'],
    ['it-IT', 'grazie mille', 'complete'],
    // no rules: punctuation only (a trailing comma still trails)
    ['ja-JP', 'and then uh', 'complete'],
    ['ja-JP', 'and then,', 'continuation'],
  ];
  for (const [lang, text, want] of cases) {
    it(`${lang}: "${text}" is ${want}`, () => expect(endOfTurn(text, lang)).to.equal(want));
  }

  it('the wait follows the rule of the language: short after a finished sentence, long after a trailing word', () => {
    expect(endpointingDelay('y entonces', TURN_DEFAULTS, 'es-ES')).to.deep.equal({ rule: 'continuation', delayMs: TURN_DEFAULTS.maxDelayMs });
    // under the English rules "entonces" would have ended the turn
    expect(endpointingDelay('y entonces', TURN_DEFAULTS, 'en-US')).to.deep.equal({ rule: 'complete', delayMs: TURN_DEFAULTS.minDelayMs });
  });

  const over: [string, string, ReturnType<typeof interruptionOf>][] = [
    ['en-US', 'okay', 'backchannel'],
    ['en-US', 'mm-hm, right', 'backchannel'],
    ['en-US', 'wait', 'stop'],
    ['en-US', 'what about tomorrow', 'words'],
    ['es-ES', 'vale', 'backchannel'],
    ['es-ES', 'sí, claro', 'backchannel'],
    ['es-ES', '¡Espera!', 'stop'],
    ['es-ES', 'para mí un café', 'words'],
    ['fr-FR', "d'accord", 'backchannel'],
    ['fr-FR', 'attendez', 'stop'],
    ['de-DE', 'ja genau', 'backchannel'],
    ['de-DE', 'Moment mal', 'stop'],
    ['pt-BR', 'uhum, tá', 'backchannel'],
    ['pt-BR', 'não', 'stop'],
    ['it-IT', 'va bene', 'backchannel'],
    ['it-IT', 'aspetta', 'stop'],
    // no rules: every word interrupts; silence is still nothing
    ['ja-JP', 'okay', 'words'],
    ['ja-JP', '', 'none'],
  ];
  for (const [lang, text, want] of over) {
    it(`${lang}: "${text}" over the agent is ${want}`, () => expect(interruptionOf(text, lang)).to.equal(want));
  }
});
