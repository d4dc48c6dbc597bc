// Permission names a role can hold (docs/decisions.md section 1). The seed names the CHANNELS_*
// ones for experiments; the others guard the events list, the prompts list, session routing and
// webhook endpoints.
export const PERMISSIONS = [
  'EVENTS_READ',
  'PROMPTS_READ',
  'CHANNELS_READ',
  'CHANNELS_WRITE',
  'CHANNELS_DELETE',
  'SESSIONS_WRITE',
  'WEBHOOKS_READ',
  'WEBHOOKS_WRITE',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(name: string): name is Permission {
  return (PERMISSIONS as readonly string[]).includes(name);
}

/**
 * What an operation's `x-agentline-permission` says when any valid key may call it. Written out
 * rather than left absent, so an operation that forgets its permission is refused to every key
 * instead of being open to all of them.
 */
export const NO_PERMISSION = 'none';
