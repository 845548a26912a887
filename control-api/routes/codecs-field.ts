/**
 * The `codecs` field (core/calls/codecs.ts): a list on trunks and extensions (our extension of the
 * API); on providers the reference document's comma-separated string ("PCMU,PCMA"; empty: the
 * platform's default), its names checked the same way and stored as the same list.
 */
import { z } from 'zod';
import { codecName, KNOWN_CODECS, parseCodecList, type AudioCodecName } from '../../core/calls/codecs';

const DESCRIPTION =
  `The audio codecs this party's calls may use, in the order the platform's own offers (outbound INVITEs) list them: ` +
  `names from ${KNOWN_CODECS.join(', ')} (any case), each once. An offer from the party is answered with its own first codec ` +
  'that is in this list; one with none of them gets 488. Default: ';

const name = z
  .string()
  .max(16)
  .refine((s) => codecName(s) !== null, { error: (iss) => `unknown codec ${JSON.stringify(String(iss.input).slice(0, 16))}: one of ${KNOWN_CODECS.join(', ')}` });

/** A list of codec names (input): 1-4 known names, no name twice. */
export function codecsInput(defaults: readonly AudioCodecName[]) {
  return z
    .array(name)
    .min(1, 'at least one codec')
    .max(KNOWN_CODECS.length)
    .refine((l) => parseCodecList(l).codecs.length === l.length, 'a codec is named twice')
    .describe(DESCRIPTION + defaults.join(', ') + '.');
}

/** The list as stored and answered. */
export const codecsOutput = z.array(z.enum(KNOWN_CODECS as [AudioCodecName, ...AudioCodecName[]])).describe('The codecs in offer order (see the input field).');

/** Names as the engine writes them (input validated by codecsInput). */
export function normaliseCodecs(list: readonly string[]): AudioCodecName[] {
  return parseCodecList(list).codecs;
}

/** The providers' form (reference OpenAPI): "PCMU,PCMA", names separated by commas; "" for the default. */
export function codecsTextInput(defaults: readonly AudioCodecName[]) {
  return z
    .string()
    .max(200)
    .superRefine((text, ctx) => {
      const names = text
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean);
      const { codecs, unknown } = parseCodecList(names);
      if (unknown.length) ctx.addIssue({ code: 'custom', message: `unknown codec ${JSON.stringify(unknown[0]!.slice(0, 16))}: one of ${KNOWN_CODECS.join(', ')}` });
      else if (codecs.length !== names.length) ctx.addIssue({ code: 'custom', message: 'a codec is named twice' });
    })
    .describe(`Comma-separated codec preference list (e.g. "PCMU,PCMA"), names from ${KNOWN_CODECS.join(', ')} (any case), each once; empty: the platform's default, ${defaults.join(',')}.`);
}

/** The providers' form as answered: the stored list, comma-separated, as the engine writes the names. */
export const codecsTextOutput = z.string().describe('The codecs in offer order, comma-separated (see the input field).');
