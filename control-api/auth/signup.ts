// POST /auth/signup: customer (initial), its admin agent, an access key, an empty OutboundConfig and a
// verification mail. The agent gets no password (an empty hash can never match); the mail sent after
// verification carries the link that sets the first one, as voipbin does.
import type { RequestHandler } from 'express';
import { clock } from '../../core/clock';
import { repos, customerJson, accesskeyJson } from '../../core/repos';
import { verificationMail } from '../../core/smtp';
import { bare, isObject } from './bare';
import { signupBody } from './schemas';
import { issueVerificationToken, VERIFICATION_TOKEN_TTL_MS } from './verification-tokens';
import { sendQuietly, type AuthDeps } from './deps';
import { egressUrlProblem } from '../egress-field';
import { createDefaultAdmin } from '../customers/default-admin';

const EMAIL_RE = /^[^\s@"<>()[\],;:\\]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

export function isEmail(s: string): boolean {
  return s.length <= 254 && EMAIL_RE.test(s);
}

export function signup(deps: AuthDeps): RequestHandler {
  const { db, logger } = deps.ctx;
  return async (req, res) => {
    if (!isObject(req.body)) return bare(res);
    const p = signupBody.safeParse(req.body);
    if (!p.success || p.data.accepted_tos !== true) return bare(res);
    const b = p.data;
    // the webhook goes through the egress policy: http(s), no internal literal address
    if (b.webhook_uri && egressUrlProblem(deps.ctx, b.webhook_uri)) return bare(res);

    // Answers that must not reveal whether an address is registered: 200 {}.
    const email = b.email.trim().toLowerCase();
    if (!isEmail(email)) return void res.status(200).json({});
    const r = repos(db);
    if ((await r.customers.getByEmail(email)) || (await r.agents.getByUsername(email))) return void res.status(200).json({});

    let created;
    try {
      created = await db.transaction(async (trx) => {
        const t = repos(trx);
        const customer = await t.customers.create({
          email,
          name: b.name ?? '',
          detail: b.detail ?? '',
          phone_number: b.phone_number ?? '',
          address: b.address ?? '',
          webhook_method: b.webhook_method ?? '',
          webhook_uri: b.webhook_uri ?? '',
          status: 'initial',
          email_verified: false,
          terms_agreed_version: clock.now().toISOString(),
          terms_agreed_ip: req.ip ?? '',
        });
        await createDefaultAdmin(t, customer.id, email);
        const ak = await t.accesskeys.create({ customer_id: customer.id, name: 'default', detail: 'Auto-provisioned API key' });
        await t.outboundConfigs.create({ customer_id: customer.id });
        const token = await issueVerificationToken(trx, customer.id);
        return { customer, ak, token };
      });
    } catch (err) {
      // A concurrent signup of the same address loses on the unique index: same silent answer.
      if ((err as { code?: string }).code === '23505') return void res.status(200).json({});
      throw err;
    }
    logger.info({ customer_id: created.customer.id }, 'customer signed up');
    await sendQuietly(deps, verificationMail(deps.ctx.config.publicUrl, email, created.token, VERIFICATION_TOKEN_TTL_MS / 3600_000));
    res.status(200).json({ customer: customerJson(created.customer), accesskey: accesskeyJson(created.ak.row, created.ak.token) });
  };
}
