// POST /auth/boot {direct_hash} and POST /auth/boot/refresh: direct tokens (4 h) for anonymous visitors
// of one public resource (an AI, an AI team, a webchat widget). The token is bound to
// allowed_resource_id, a fresh id the one resource created with this token will take (an aicall, a
// webchat session); refresh keeps that binding and issues a new 4-hour token.
import type { RequestHandler } from 'express';
import { newId } from '../../core/ids';
import { signToken, DIRECT_TOKEN_TTL_SEC, type DirectClaims } from '../../core/credentials';
import { formatRfc3339 } from '../../core/time';
import { bare, isObject } from './bare';
import { bootBody, bootRefreshBody } from './schemas';
import { BOOTABLE_RESOURCE_TYPES, DIRECT_PREFIX, resolveDirectHash, type DirectResolver, type DirectTarget } from './direct-registry';
import type { AuthDeps } from './deps';

async function issue(deps: AuthDeps, target: DirectTarget, allowedResourceId: string, resolver?: DirectResolver) {
  const claims: DirectClaims = {
    typ: 'direct',
    customer_id: target.customer_id,
    resource_type: target.resource_type,
    resource_id: target.resource_id,
    allowed_resource_id: allowedResourceId,
    scope_version: deps.directScopeVersion(),
  };
  const { token, expiresAt } = await signToken(deps.ctx.config.jwtSecret, claims, DIRECT_TOKEN_TTL_SEC);
  const res: Record<string, unknown> = {
    token,
    type: 'direct',
    resource_type: target.resource_type,
    resource_id: target.resource_id,
    customer_id: target.customer_id,
    expire: formatRfc3339(expiresAt),
    allowed_resource_id: allowedResourceId,
    scope_version: claims.scope_version,
  };
  if (resolver?.publicDisplayConfig) {
    try {
      const cfg = await resolver.publicDisplayConfig(target);
      if (cfg && Object.keys(cfg).length > 0) res.resource_data = { public_display_config: cfg };
    } catch (err) {
      deps.ctx.logger.info({ err, resource_type: target.resource_type }, 'public display config unavailable'); // never fails the boot
    }
  }
  return res;
}

async function customerActive(deps: AuthDeps, customerId: string): Promise<boolean> {
  try {
    return (await deps.ctx.statusLookup(customerId))?.status === 'active';
  } catch {
    return false;
  }
}

export function postBoot(deps: AuthDeps): RequestHandler {
  return async (req, res) => {
    if (!isObject(req.body)) return bare(res);
    const p = bootBody.safeParse(req.body);
    if (!p.success || !p.data.direct_hash.startsWith(DIRECT_PREFIX) || p.data.direct_hash.length === DIRECT_PREFIX.length) return bare(res);
    const found = await resolveDirectHash(p.data.direct_hash);
    if (!found || !(BOOTABLE_RESOURCE_TYPES as readonly string[]).includes(found.target.resource_type)) return bare(res);
    if (!(await customerActive(deps, found.target.customer_id))) return bare(res);
    res.status(200).json(await issue(deps, found.target, newId(), found.resolver));
  };
}

export function postBootRefresh(deps: AuthDeps): RequestHandler {
  return async (req, res) => {
    const a = req.auth;
    if (!a || a.kind !== 'direct') return bare(res);
    const body = req.body === undefined ? {} : req.body;
    if (!isObject(body) || !bootRefreshBody.safeParse(body).success) return bare(res);
    if (!(await customerActive(deps, a.customerId))) return bare(res);
    const target = { resource_type: a.resourceType, resource_id: a.resourceId, customer_id: a.customerId };
    res.status(200).json(await issue(deps, target, a.allowedResourceId));
  };
}
