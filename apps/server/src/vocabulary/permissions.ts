// Permission names a role can hold (docs/decisions.md section 1). The seed names the CHANNELS_*
// ones for experiments; the others guard the events list, the prompts list and session routing.
export const PERMISSIONS = [
  'EVENTS_READ',
  'PROMPTS_READ',
  'CHANNELS_READ',
  'CHANNELS_WRITE',
  'CHANNELS_DELETE',
  'SESSIONS_WRITE',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export function isPermission(name: string): name is Permission {
  return (PERMISSIONS as readonly string[]).includes(name);
}
