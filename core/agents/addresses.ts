/**
 * Agent addresses: where an agent is rung. Only dialable types are accepted (extension, tel, sip);
 * an agent address is a CommonAddress otherwise (target_name, name, detail are free text).
 */
import { z } from 'zod';

export const AGENT_ADDRESS_TYPES = ['extension', 'tel', 'sip'] as const;

const E164 = /^\+[1-9][0-9]{6,14}$/;

export const agentAddress = z
  .object({
    type: z.enum(AGENT_ADDRESS_TYPES),
    target: z.string().trim().min(1).max(255),
    target_name: z.string().max(255).optional(),
    name: z.string().max(255).optional(),
    detail: z.string().max(1024).optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    if (a.type === 'tel' && !E164.test(a.target)) ctx.addIssue({ code: 'custom', path: ['target'], message: 'a tel target is an E.164 number (+ and 7 to 15 digits)' });
    if (a.type === 'sip' && !/^(sips?:)?[^@\s]+@[^@\s]+$/i.test(a.target)) ctx.addIssue({ code: 'custom', path: ['target'], message: 'a sip target is user@host' });
    if (a.type === 'extension' && !/^[A-Za-z0-9_.+-]{1,64}$/.test(a.target)) ctx.addIssue({ code: 'custom', path: ['target'], message: 'an extension target is the extension number' });
  });

export const agentAddresses = z.array(agentAddress).max(16);
export type AgentAddressInput = z.infer<typeof agentAddress>;
