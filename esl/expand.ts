/**
 * FreeSWITCH's variable expansion (switch_channel_expand_variables) of what it is given to run: every
 * application's argument (switch_core_session_execute_application, before CHANNEL_EXECUTE, whose
 * Application-Data is the expanded form) and saymember's text (conference_api_sub_saymember, with the
 * member's channel). `${name}` becomes the channel's variable, nothing when it has none, as FreeSWITCH's.
 * `${api(args)}` is where FreeSWITCH runs the API command `api` (switch_api_execute), a shell command
 * for `system`: this switch runs none; it reports the call as a failure of its own (ExpansionRanApi,
 * through `failed`) and puts nothing in its place, so a test sees a text that would have run one.
 * Nested `${…${…}…}` and `$${global}` (expanded once, when FreeSWITCH reads its configuration) are not served.
 */
export class ExpansionRanApi extends Error {
  constructor(readonly api: string) {
    super(`variable expansion would run the API command ${JSON.stringify(api)} (FreeSWITCH's \${api(args)})`);
    this.name = 'ExpansionRanApi';
  }
}

export function expandVariables(vars: ReadonlyMap<string, string>, text: string, failed: (e: Error) => void): string {
  if (!text.includes('${')) return text;
  return text.replace(/\$\{([^{}]*)\}/g, (_all, inner: string) => {
    const call = /^([^(\s]+)\((.*)\)$/s.exec(inner);
    if (call) {
      failed(new ExpansionRanApi(`${call[1]} ${call[2]}`.trim()));
      return '';
    }
    return vars.get(inner) ?? '';
  });
}
