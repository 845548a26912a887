/**
 * Extensions: SIP accounts registering at `{label}.reg.{SIP_DOMAIN}`. The password is returned by
 * the create call only; afterwards it is write-only (PUT) and reaches a phone through the
 * provisioning URL alone.
 */
import { z } from 'zod';
import { mediaEncryption } from './media-encryption-field';
import { dtmfMode } from './dtmf-mode-field';
import { codecsInput, codecsOutput, normaliseCodecs } from './codecs-field';
import { DEFAULT_EXTENSION_CODECS } from '../../core/calls/codecs';
import { DEFAULT_DTMF_MODE } from '../../core/calls/dtmf-mode';
import { defineRoute, idParams, orMissing, text } from '../route';
import type { AppContext } from '../context';
import { ApiError, alreadyExists, invalidArgument } from '../../core/errors';
import { extensionsRepo, extensionJson, type ExtensionRow } from '../../core/repos/extensions';
import { ensureCustomerLabel, registrationDomain } from '../../core/extensions/domain';
import { extensionProblem, generateDirectHash, generatePassword, passwordProblem } from '../../core/extensions/credentials';
import { DIGEST_ALGORITHMS } from '../../core/extensions/digest-algorithms';
import { parseMac } from '../../core/extensions/mac';
import { slotNamed } from '../../core/pbx/feature-codes';
import { pbxSettingsRepo } from '../../core/pbx/settings';

const DIGEST_DOC =
  "Digest challenge order for this extension's phone, most preferred first; null = the platform default " +
  '(SIP_DIGEST_ALGORITHMS, MD5 then SHA-256: every common phone registers). ["SHA-256"] refuses MD5 answers ' +
  '(phones without SHA-256, e.g. baresip 1.0 or older Yealink/Grandstream firmware, cannot register); ' +
  '["SHA-256","MD5"] offers SHA-256 first (clients that take the first challenge and know only MD5 fail).';
const MAC_DOC =
  'MAC address of the desk phone bound to this extension (12 hex digits, aa:bb:cc:dd:ee:ff, aa-bb-cc-dd-ee-ff or ' +
  "aabb.ccdd.eeff; shown as 12 lowercase hex digits), unique among the customer's extensions; null: none. The " +
  "customer provisioning URL (DHCP option 66) serves this extension's account in the files named after the MAC.";
const macField = z.string().max(32).nullable().describe(MAC_DOC);
const BLF_DOC =
  "Extensions and park slots of this customer shown on the desk phone's busy lamp keys, in key order (at most 32; " +
  'the provisioning documents render them for Yealink, Polycom, Grandstream and Snom; docs/pbx.md). Each must be ' +
  'an existing extension of the customer or a slot of its pbx_settings range (701, not 0701), named once.';
const blfKeysInput = z.array(z.string().min(1).max(64)).max(32).describe(BLF_DOC);

/**
 * The BLF keys as stored: each an existing extension of the customer or one of its park slots (checked
 * against the range when set), none twice; 400 naming `blf_keys` otherwise.
 */
async function blfKeysValue(ctx: AppContext, customerId: string, keys: string[] | undefined): Promise<string[] | undefined> {
  if (keys === undefined) return undefined;
  const twice = keys.find((k, i) => keys.indexOf(k) !== i);
  if (twice !== undefined) throw invalidArgument(`blf_keys: ${JSON.stringify(twice)} is listed twice`, [{ field: 'blf_keys' }]);
  const found = new Set(await extensionsRepo(ctx.db).existing(customerId, keys));
  const codes = await pbxSettingsRepo(ctx.db).get(customerId);
  const unknown = keys.find((k) => !found.has(k) && slotNamed(codes, k) === null);
  if (unknown !== undefined) {
    const slots = `${codes.park_slot_first}-${codes.park_slot_last}`;
    throw invalidArgument(`blf_keys: ${JSON.stringify(unknown)} is neither an extension of this customer nor one of its park slots (${slots})`, [{ field: 'blf_keys' }]);
  }
  return keys;
}

/** The bound MAC in stored form (12 lowercase hex), null to unbind; 400 naming `mac` when malformed. */
function macValue(v: string | null | undefined): string | null | undefined {
  if (v === undefined || v === null) return v;
  const r = parseMac(v);
  if (r.problem !== undefined) throw invalidArgument(`mac: ${r.problem}`, [{ field: 'mac' }]);
  return r.mac;
}

/** A unique-index conflict on create or update, as the API's 409. */
function conflict(c: string): ApiError {
  if (c === 'extensions_customer_mac_live_uq') return new ApiError('ALREADY_EXISTS', 'mac is bound to another extension of this customer', { details: [{ field: 'mac' }] });
  return alreadyExists('extension already exists');
}

const digestAlgorithms = z
  .array(z.enum(DIGEST_ALGORITHMS))
  .min(1)
  .max(2)
  .refine((l) => new Set(l).size === l.length, 'lists an algorithm twice')
  .nullable()
  .describe(DIGEST_DOC);

export const ExtensionSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  name: z.string(),
  detail: z.string(),
  extension: z.string(),
  domain_name: z.string(),
  username: z.string(),
  password: z.string().optional().describe('returned by POST /extensions only'),
  direct_hash: z.string(),
  digest_algorithms: z.array(z.enum(DIGEST_ALGORITHMS)).nullable().describe(DIGEST_DOC),
  media_encryption: mediaEncryption,
  mac: z
    .string()
    .regex(/^[0-9a-f]{12}$/)
    .nullable()
    .describe(MAC_DOC),
  dtmf_mode: dtmfMode,
  codecs: codecsOutput,
  blf_keys: z.array(z.string()).describe(BLF_DOC),
  pickup_groups: z.array(z.string()).describe('pickup groups (our extension, docs/pbx.md "Pickup"): *8 answers a call ringing another extension of a shared group'),
  mwi_unsolicited: z.boolean(),
  voicemail_on: z.object({ no_answer: z.boolean(), busy: z.boolean() }),
  voicemail_timeout: z.number(),
  direct_uri: z.string().describe('sip:direct.<direct_hash>@{sip_domain}'),
  tm_create: z.string(),
  tm_update: z.string(),
  tm_delete: z.string(),
});

/** Voicemail settings of an extension (docs/pbx.md "Voicemail"). */
const voicemailFields = {
  mwi_unsolicited: z.boolean().optional().describe('send unsolicited message-summary NOTIFYs (RFC 3842) to its registered contacts when its voicemail box changes'),
  voicemail_on: z
    .object({ no_answer: z.boolean(), busy: z.boolean() })
    .strict()
    .optional()
    .describe('when a call to the extension goes to its voicemail box: not answered within voicemail_timeout seconds (or nothing registered), or busy'),
  voicemail_timeout: z.number().int('must be an integer').min(5, 'must be >= 5').max(300, 'must be <= 300').optional().describe('seconds of ringing before voicemail_on.no_answer applies'),
};

const notFound = () => new ApiError('RESOURCE_NOT_FOUND', 'extension not found');

/** Pickup group names: short words, at most 16 per extension, no repeats (docs/pbx.md "Pickup"). */
const pickupGroups = z
  .array(z.string().regex(/^[A-Za-z0-9_.-]{1,32}$/, 'a pickup group is 1-32 letters, digits, _ . -'))
  .max(16)
  .refine((g) => new Set(g).size === g.length, 'pickup groups must not repeat');

function constraintOf(e: unknown): string | null {
  const err = e as { code?: string; constraint?: string };
  return err && err.code === '23505' ? (err.constraint ?? 'unique') : null;
}

export function showExtension(ctx: AppContext, e: ExtensionRow, withPassword = false) {
  return extensionJson(e, { sipDomain: ctx.config.sipDomain, withPassword });
}

/** The customer's live extension or 404 (another customer's extension is "not found" too). */
export async function ownedExtension(ctx: AppContext, customerId: string, id: string): Promise<ExtensionRow> {
  const e = await extensionsRepo(ctx.db).getOwned(customerId, id);
  if (!e) throw notFound();
  return e;
}

function checkPassword(pw: string): void {
  const problem = passwordProblem(pw);
  if (problem) throw invalidArgument(`password: ${problem}`, [{ field: 'password' }]);
}

/** The body fields create and update both take as optional, with the same rules. */
const optionalExtensionFields = {
  digest_algorithms: digestAlgorithms.optional(),
  media_encryption: mediaEncryption.optional(),
  mac: macField.optional(),
  dtmf_mode: dtmfMode.optional(),
  codecs: codecsInput(DEFAULT_EXTENSION_CODECS).optional(),
  blf_keys: blfKeysInput.optional(),
  pickup_groups: pickupGroups.optional(),
  ...voicemailFields,
};

export const routes = [
  defineRoute({
    method: 'post',
    path: '/extensions',
    tag: 'Extension',
    summary: 'Create an extension',
    description: 'The response is the only one that carries the password (a random one when omitted).',
    permission: 'manager',
    body: z.object({
      extension: z.string().max(64),
      password: z.string().max(128).optional(),
      name: text().optional(),
      detail: text(1024).optional(),
      ...optionalExtensionFields,
    }),
    response: ExtensionSchema,
    handler: async ({ body, auth, ctx }) => {
      const problem = extensionProblem(body.extension);
      if (problem) throw invalidArgument(`extension: ${problem}`, [{ field: 'extension' }]);
      const mac = macValue(body.mac) ?? null;
      const blfKeys = (await blfKeysValue(ctx, auth.customerId, body.blf_keys)) ?? [];
      const password = body.password ?? generatePassword();
      checkPassword(password);
      const domain = registrationDomain(await ensureCustomerLabel(ctx.db, auth.customerId), ctx.config.sipDomain);
      for (let attempt = 0; ; attempt++) {
        try {
          const row = await extensionsRepo(ctx.db).create({
            customer_id: auth.customerId,
            extension: body.extension,
            username: body.extension,
            domain_name: domain,
            password,
            direct_hash: generateDirectHash(),
            name: body.name ?? '',
            detail: body.detail ?? '',
            digest_algorithms: body.digest_algorithms ?? null,
            media_encryption: body.media_encryption ?? 'none',
            mac,
            dtmf_mode: body.dtmf_mode ?? DEFAULT_DTMF_MODE,
            codecs: normaliseCodecs(body.codecs ?? DEFAULT_EXTENSION_CODECS),
            blf_keys: blfKeys,
            pickup_groups: body.pickup_groups ?? [],
            ...(body.mwi_unsolicited !== undefined ? { mwi_unsolicited: body.mwi_unsolicited } : {}),
            ...(body.voicemail_on !== undefined ? { voicemail_on: body.voicemail_on } : {}),
            ...(body.voicemail_timeout !== undefined ? { voicemail_timeout: body.voicemail_timeout } : {}),
          });
          return showExtension(ctx, row, true);
        } catch (e) {
          const c = constraintOf(e);
          if (c === 'extensions_direct_hash_uq' && attempt < 5) continue;
          if (c) throw conflict(c);
          throw e;
        }
      }
    },
  }),
  defineRoute({
    method: 'get',
    path: '/extensions',
    tag: 'Extension',
    summary: 'List extensions',
    permission: 'agent',
    paginated: true,
    response: z.object({ result: z.array(ExtensionSchema), next_page_token: z.string() }),
    handler: async ({ auth, ctx, page }) => {
      const p = await extensionsRepo(ctx.db).list(auth.customerId, page);
      return { result: p.result.map((e) => showExtension(ctx, e)), next_page_token: p.next_page_token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/extensions/:id',
    tag: 'Extension',
    summary: 'Get an extension',
    permission: 'agent',
    params: idParams,
    response: ExtensionSchema,
    handler: async ({ params, auth, ctx }) => showExtension(ctx, await ownedExtension(ctx, auth.customerId, params.id)),
  }),
  defineRoute({
    method: 'put',
    path: '/extensions/:id',
    tag: 'Extension',
    summary: 'Update an extension',
    description:
      'name, detail, password, digest_algorithms (null: the platform default), media_encryption, dtmf_mode, codecs, mac (null: unbind), blf_keys, pickup_groups, mwi_unsolicited, voicemail_on, voicemail_timeout; omitted fields stay unchanged. The password is not echoed back.',
    permission: 'manager',
    params: idParams,
    body: z.object({
      name: text().optional(),
      detail: text(1024).optional(),
      password: z.string().max(128).optional(),
      ...optionalExtensionFields,
    }),
    response: ExtensionSchema,
    handler: async ({ params, body, auth, ctx }) => {
      await ownedExtension(ctx, auth.customerId, params.id);
      if (body.password !== undefined) checkPassword(body.password);
      const { mac: rawMac, codecs, blf_keys: rawBlf, ...fields } = body;
      const blfKeys = await blfKeysValue(ctx, auth.customerId, rawBlf);
      const withCodecs = codecs ? { ...fields, codecs: normaliseCodecs(codecs) } : fields;
      const rest = blfKeys ? { ...withCodecs, blf_keys: blfKeys } : withCodecs;
      const mac = macValue(rawMac);
      const patch = mac === undefined ? rest : { ...rest, mac };
      let row: ExtensionRow | null;
      try {
        row = await extensionsRepo(ctx.db).update(params.id, patch);
      } catch (e) {
        const c = constraintOf(e);
        if (c) throw conflict(c);
        throw e;
      }
      if (!row) throw notFound();
      return showExtension(ctx, row);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/extensions/:id',
    tag: 'Extension',
    summary: 'Delete an extension',
    permission: 'manager',
    params: idParams,
    response: ExtensionSchema,
    handler: async ({ params, auth, ctx }) => {
      await ownedExtension(ctx, auth.customerId, params.id);
      return showExtension(ctx, await orMissing(extensionsRepo(ctx.db).softDelete(params.id), notFound));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/extensions/:id/direct-hash-regenerate',
    tag: 'Extension',
    summary: 'Give the extension a new direct hash (the old direct URI stops working)',
    permission: 'manager',
    params: idParams,
    response: ExtensionSchema,
    handler: async ({ params, auth, ctx }) => {
      await ownedExtension(ctx, auth.customerId, params.id);
      for (let attempt = 0; ; attempt++) {
        try {
          const row = await extensionsRepo(ctx.db).update(params.id, { direct_hash: generateDirectHash() });
          if (!row) throw notFound();
          return showExtension(ctx, row);
        } catch (e) {
          if (constraintOf(e) === 'extensions_direct_hash_uq' && attempt < 5) continue;
          throw e;
        }
      }
    },
  }),
];
