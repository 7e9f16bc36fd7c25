// Every write the browser sends to the backend carries an Idempotency-Key (CONTRACT.md,
// "Failover through the gateway"): one key per logical write, the same on each of its retries,
// so a write whose answer was lost (a replica died, the connection dropped) is sent again and
// done once; the backend answers it as the first time.

export const HEADER = "Idempotency-Key";
const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);
/** Answers that say the request reached no live replica: sent again, with the same key. */
export const RETRIED_STATUSES = new Set([502, 503, 504]);
/** The waits before the second and the third try. */
export const RETRY_DELAYS_MS = [300, 1000];

type Fetch = (request: Request) => Promise<Response>;

export interface KeyedOptions {
  newKey?: () => string;
  sleep?: (ms: number) => Promise<void>;
  delaysMs?: number[];
}

/** A random UUID v4. `crypto.randomUUID` exists only in secure contexts (https, localhost);
 * `getRandomValues` everywhere, so a site served over plain http on a LAN still gets keys. */
export function newKey(): string {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function isWrite(request: Request): boolean {
  return WRITES.has(request.method.toUpperCase()) && new URL(request.url).pathname.startsWith("/api/");
}

/** `send`, with a new key on each write that has none, and the same request (key and body)
 * sent again after a network error or a 502/503/504, `delaysMs` apart. */
export function keyedFetch(send: Fetch, options: KeyedOptions = {}): Fetch {
  const makeKey = options.newKey ?? newKey;
  const sleep = options.sleep ?? wait;
  const delays = options.delaysMs ?? RETRY_DELAYS_MS;
  return async (request: Request) => {
    if (isWrite(request) && !request.headers.has(HEADER)) request.headers.set(HEADER, makeKey());
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= delays.length;
      try {
        const response = await send(last ? request : request.clone());
        if (last || !RETRIED_STATUSES.has(response.status)) return response;
      } catch (error) {
        // a network error is a TypeError; an abort (AbortSignal) is not sent again
        if (last || !(error instanceof TypeError)) throw error;
      }
      await sleep(delays[attempt]);
    }
  };
}
