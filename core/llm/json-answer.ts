/** The JSON object a model was asked to answer with, found in its text (models wrap it in prose or fences). */
export function jsonInAnswer(text: string, what: string): { value: unknown } | { error: string } {
  const m = /\{[\s\S]*\}/.exec(text);
  if (!m) return { error: `the model did not answer with a JSON ${what}` };
  try {
    return { value: JSON.parse(m[0]) as unknown };
  } catch {
    return { error: 'the model answered malformed JSON' };
  }
}
