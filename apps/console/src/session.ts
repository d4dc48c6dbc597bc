// The signed-in key: kept in sessionStorage, so it lives as long as the tab and is gone at
// sign-out or when the tab closes, and sent by the SDK on every call. The console knows of the key
// only what the API tells its holder (`keys.current`): its name, role and permissions decide which
// buttons are shown; the API still decides what is allowed.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { createClient, type AgentlineClient, type ApiKeyInfo } from '@agentline/sdk';

const STORAGE_KEY = 'agentline.console.api-key';

export interface Session {
  client: AgentlineClient;
  key: ApiKeyInfo;
  /** Whether the key's role has the permission (`CHANNELS_WRITE`, ...). */
  can: (permission: string) => boolean;
}

export function rememberedKey(): string | null {
  return sessionStorage.getItem(STORAGE_KEY);
}

/** Checks the key with the API (a wrong one throws its 401) and keeps it for the tab. */
export async function signIn(apiKey: string): Promise<Session> {
  // Same origin: the server that served the console serves the API.
  const client = createClient({ apiKey, baseUrl: location.origin });
  const key = await client.keys.current();
  sessionStorage.setItem(STORAGE_KEY, apiKey);
  const permissions = new Set(key.permissions);
  return { client, key, can: (permission) => permissions.has(permission) };
}

export function forgetKey(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in console');
  return session;
}
