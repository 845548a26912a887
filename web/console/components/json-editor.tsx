/**
 * A JSON body edited as text, as the flow page edits a flow: the text is parsed before anything is sent
 * (bad JSON is said here, with the parser's message, and nothing is sent); the API validates the body
 * and its refusal (a 400 with its message) is shown as it came. `initial` is the text while nothing
 * was typed, so a reload of what it shows never overwrites an edit.
 */
import { useState } from 'preact/hooks';
import { ErrorLine, useAction } from './common';

export function JsonEditor(props: {
  /** the element ids' prefix (`<id>-status` holds the errors and the notice) */
  id: string;
  label: string;
  initial: string;
  submitLabel: string;
  /** sends the parsed body; resolves to the notice to show, or throws the API's error */
  onSubmit: (body: unknown) => Promise<string>;
  rows?: number;
}) {
  const [edit, setText] = useState<string | null>(null);
  const [parseError, setParseError] = useState('');
  const [notice, setNotice] = useState('');
  const act = useAction();
  const text = edit ?? props.initial;

  const submit = () => {
    setNotice('');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (e) {
      setParseError(`Not valid JSON: ${(e as Error).message}`);
      return;
    }
    setParseError('');
    void act.run(async () => {
      const said = await props.onSubmit(body);
      setText(null);
      setNotice(said);
    });
  };

  return (
    <>
      <label class="block">
        {props.label}
        <textarea
          id={`${props.id}-json`}
          class="code"
          rows={props.rows ?? 18}
          spellcheck={false}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
          aria-describedby={`${props.id}-status`}
        />
      </label>
      <div class="buttons">
        <button class="primary" data-action={`${props.id}-submit`} onClick={submit} disabled={act.busy}>
          {props.submitLabel}
        </button>
        <button data-action={`${props.id}-revert`} onClick={() => (setText(null), setParseError(''), act.clear())}>
          Revert
        </button>
      </div>
      <div id={`${props.id}-status`} aria-live="polite">
        <ErrorLine error={parseError || act.error} />
        {notice && (
          <p class="notice" data-field="saved">
            {notice}
          </p>
        )}
      </div>
    </>
  );
}
