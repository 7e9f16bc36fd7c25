// The return from the organisation's OpenID provider: the backend sends the browser to
// `next#login_code=...` (or `#error=NO_ROLE`). The fragment is read once, as the app starts
// (before the router moves to /login), and wiped from the address bar and history at once,
// so the one-time code is never bookmarked, shared or sent anywhere but the exchange.

export type SsoReturn = { loginCode: string } | { error: string };

/** What a location fragment says about an OIDC return; null when it is not one. */
export function parseSsoFragment(hash: string): SsoReturn | null {
  const params = new URLSearchParams(hash.startsWith("#") ? hash.slice(1) : hash);
  const code = params.get("login_code");
  if (code) return { loginCode: code };
  const error = params.get("error");
  return error ? { error } : null;
}

function capture(): SsoReturn | null {
  if (typeof window === "undefined") return null;
  const found = parseSsoFragment(window.location.hash);
  if (found) {
    const { pathname, search } = window.location;
    history.replaceState(history.state, "", pathname + search);
  }
  return found;
}

let pending = capture();

/** The OIDC return the app started with, handed out once. */
export function takeSsoReturn(): SsoReturn | null {
  const found = pending;
  pending = null;
  return found;
}
