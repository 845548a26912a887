/**
 * The words behind the turn-taking rules (core/ai/turns.ts), per language of the AI's recogniser
 * (`stt_language`, its primary subtag): words after which a speaker has not finished
 * (conjunctions, fillers, articles, prepositions), what a listener says to show they follow
 * (backchannels), and what stops the agent at once. A language without a set here has no word
 * rules: the turn ends on the recogniser's punctuation and the silence alone, and every word said
 * over the agent interrupts it (docs/ai.md "Turn-taking").
 */
export interface TurnWords {
  continuations: ReadonlySet<string>;
  /** longest first, so that "mm hm" is taken before "mm" */
  backchannels: readonly string[];
  stops: readonly string[];
  /** fillers that, before a full stop, still mean "not finished" ("um.") */
  fillers: readonly string[];
}

const set = (s: string) => new Set(s.split(' '));
const longestFirst = (a: string[]) => [...a].sort((x, y) => y.length - x.length);

const WORDS: Record<string, TurnWords> = {
  en: {
    continuations: set(
      'and or but so because cause then uh um er erm ah hmm like the a an to of for with in on at my your our if that which who when while although though since unless until as is are was were',
    ),
    backchannels: longestFirst(['mm hm', 'mm hmm', 'mhm', 'mm', 'hmm', 'uh huh', 'okay', 'ok', 'yeah', 'yes', 'yep', 'right', 'sure', 'i see', 'alright', 'all right', 'got it', 'uh', 'um']),
    stops: ['wait', 'stop', 'no', 'hold on', 'hang on', 'excuse me', 'sorry', 'pardon'],
    fillers: ['uh', 'um', 'er', 'erm'],
  },
  es: {
    continuations: set('y e o u pero porque entonces pues este eh em mm el la los las un una de del al para con en a mi tu su que cuando mientras aunque si como es son era'),
    backchannels: longestFirst(['sí', 'si', 'vale', 'ajá', 'aja', 'claro', 'ya', 'bueno', 'entiendo', 'de acuerdo', 'okay', 'ok', 'mhm', 'mm', 'eh']),
    // not "para": it is also "for"
    stops: ['espera', 'espere', 'alto', 'no', 'un momento', 'perdón', 'perdona', 'disculpa', 'oiga'],
    fillers: ['eh', 'em', 'este'],
  },
  fr: {
    continuations: set("et ou mais donc parce car alors euh ben le la les un une de du des pour avec dans à au aux mon ton son que qui quand si comme est c'est"),
    backchannels: longestFirst(['oui', 'ouais', "d'accord", 'ok', 'okay', 'mhm', 'mm', 'hm', 'je vois', 'bien sûr', 'voilà', 'ah', 'euh']),
    stops: ['attendez', 'attends', 'arrête', 'arrêtez', 'stop', 'non', 'pardon', 'excusez moi', 'un instant'],
    fillers: ['euh', 'ben'],
  },
  de: {
    continuations: set('und oder aber also weil denn dann äh ähm öh der die das den dem ein eine einen zu von für mit in an auf mein dein wenn dass ob als wie ist sind war'),
    backchannels: longestFirst(['ja', 'genau', 'okay', 'ok', 'mhm', 'mm', 'hm', 'aha', 'stimmt', 'klar', 'richtig', 'verstehe', 'alles klar', 'gut', 'äh']),
    stops: ['warte', 'warten sie', 'stopp', 'stop', 'halt', 'nein', 'moment', 'entschuldigung', 'augenblick'],
    fillers: ['äh', 'ähm', 'öh'],
  },
  pt: {
    continuations: set('e ou mas porque então entao tipo é eh hum o a os as um uma de do da para com em no na meu minha que quando se como'),
    backchannels: longestFirst(['sim', 'tá', 'ta', 'certo', 'claro', 'ok', 'okay', 'uhum', 'aham', 'entendi', 'beleza', 'é', 'mhm']),
    // not "para": it is also "for"
    stops: ['espera', 'espere', 'pare', 'não', 'nao', 'um momento', 'desculpa', 'com licença'],
    fillers: ['eh', 'hum', 'tipo'],
  },
  it: {
    continuations: set('e o ma perché perche quindi allora ehm cioè il lo la i gli le un una di del per con in a mio che quando se come è'),
    backchannels: longestFirst(['sì', 'si', 'certo', 'ok', 'okay', 'va bene', 'ho capito', 'capito', 'esatto', 'giusto', 'mhm', 'mm', 'ah']),
    stops: ['aspetta', 'aspetti', 'fermo', 'ferma', 'basta', 'stop', 'no', 'un attimo', 'scusa', 'scusi'],
    fillers: ['ehm', 'cioè'],
  },
};

/** The languages with word rules (primary subtags). */
export const TURN_LANGUAGES = Object.keys(WORDS);

/** The word rules of `language` (a BCP-47 tag: "es-ES" → es), or null when there are none for it. */
export function turnWords(language: string): TurnWords | null {
  return WORDS[language.trim().toLowerCase().split(/[-_]/)[0] ?? ''] ?? null;
}
