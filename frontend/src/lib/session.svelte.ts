// The signed-in user and their JWT, kept in localStorage so a reload (or a second tab) stays
// signed in until the token expires.

export interface SessionUser {
  id: string;
  username: string;
  roles: string[];
}

interface Stored {
  token: string;
  user: SessionUser;
  expiresAt: number;
}

const KEY = "agent-chat.session";

function load(): Stored | null {
  if (typeof localStorage === "undefined") return null;
  try {
    const stored = JSON.parse(localStorage.getItem(KEY) ?? "null") as Stored | null;
    return stored && stored.expiresAt > Date.now() ? stored : null;
  } catch {
    return null;
  }
}

export const session = $state<{ current: Stored | null; expired: boolean }>({
  current: load(),
  expired: false,
});

export function signIn(token: string, user: SessionUser, expiresInS: number): void {
  session.current = { token, user, expiresAt: Date.now() + expiresInS * 1000 };
  session.expired = false;
  localStorage.setItem(KEY, JSON.stringify(session.current));
}

/** Forget the session; `expired` tells the login page to say why. */
export function signOut(expired = false): void {
  session.current = null;
  session.expired = expired;
  localStorage.removeItem(KEY);
}

export function token(): string {
  return session.current?.token ?? "";
}
