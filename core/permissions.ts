/**
 * Agent permissions as VoIPbin's bitmask (AgentManagerAgentPermission), so stored values and the
 * `permission` field of an agent match theirs. Routes ask for a level by name.
 */
export const Permission = {
  None: 0,
  ProjectSuperAdmin: 1,
  ProjectAll: 15,
  CustomerAgent: 16,
  CustomerAdmin: 32,
  CustomerManager: 64,
  CustomerAll: 240,
  All: 65535,
} as const;

/** Minimum level a route requires. */
export type PermissionLevel = 'superadmin' | 'admin' | 'manager' | 'agent';

/** Names accepted where a level is written as text (bootstrap, tests, the auth helper). */
export const PERMISSION_BY_NAME = {
  admin: Permission.CustomerAdmin,
  manager: Permission.CustomerManager,
  agent: Permission.CustomerAgent,
  ProjectSuperAdmin: Permission.ProjectSuperAdmin | Permission.CustomerAdmin,
} as const;

export function isProjectSuperAdmin(mask: number): boolean {
  return (mask & Permission.ProjectSuperAdmin) !== 0;
}

/** Does a bitmask satisfy the required level? Super admins pass everything within their customer. */
export function hasLevel(mask: number, level: PermissionLevel): boolean {
  if (isProjectSuperAdmin(mask)) return true;
  if (level === 'superadmin') return false;
  const admin = (mask & Permission.CustomerAdmin) !== 0;
  const manager = (mask & Permission.CustomerManager) !== 0;
  const agent = (mask & Permission.CustomerAgent) !== 0;
  switch (level) {
    case 'admin':
      return admin;
    case 'manager':
      return admin || manager;
    case 'agent':
      return admin || manager || agent;
  }
  return false;
}
