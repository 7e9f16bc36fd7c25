// Whether the person's own Superset account matters here (SUPERSET__IDENTITY=person): a read
// was answered 403 SUPERSET_LOGIN_REQUIRED, or a session is connected. Either shows the
// "Superset" link in the top bar; on a service-account platform neither happens.

export const LOGIN_REQUIRED = "SUPERSET_LOGIN_REQUIRED";

export const supersetAccount = $state<{ needed: boolean; connected: boolean }>({
  needed: false,
  connected: false,
});

/** The REST client calls this with each 403's error code. */
export function noteRefusal(code: string | undefined): void {
  if (code === LOGIN_REQUIRED) supersetAccount.needed = true;
}

/** What GET /api/superset/session said: connected anywhere? */
export function noteSessions(environments: Record<string, { connected: boolean }>): void {
  supersetAccount.connected = Object.values(environments).some((s) => s.connected);
}
