// Reconnect policy for the agent (spec edge case: "Gradio unreachable -> reconnect 5x5s").

export const RECONNECT_ATTEMPTS = 5;
export const RECONNECT_DELAY_MS = 5000;

export interface RetryOptions {
  attempts?: number;
  delayMs?: number;
  /** Errors for which retrying cannot help (bad credentials): rethrown at once. */
  isFatal?: (error: unknown) => boolean;
  /** Told before each wait: the attempt that failed (1-based) and the total. */
  onRetry?: (attempt: number, attempts: number) => void;
  sleep?: (ms: number) => Promise<void>;
}

export class RetriesExhausted extends Error {
  constructor(readonly attempts: number, readonly last: unknown) {
    super(`gave up after ${attempts} attempts`);
  }
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Run `task` until it succeeds, at most `attempts` times, `delayMs` apart. */
export async function withRetries<T>(task: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? RECONNECT_ATTEMPTS;
  const delayMs = options.delayMs ?? RECONNECT_DELAY_MS;
  const sleep = options.sleep ?? wait;
  let last: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      return await task();
    } catch (error) {
      if (options.isFatal?.(error)) throw error;
      last = error;
      if (attempt < attempts) {
        options.onRetry?.(attempt, attempts);
        await sleep(delayMs);
      }
    }
  }
  throw new RetriesExhausted(attempts, last);
}

// Following a run again after its stream dropped (CONTRACT.md, "Runs outlive the page"):
// attach at once-ish, then back off, and give up ("connection lost") after about 30 s.
export const RESUME_FIRST_DELAY_MS = 500;
export const RESUME_MAX_DELAY_MS = 8000;
export const RESUME_BOUND_MS = 30000;

/** The waits before each re-attach: 0.5, 1, 2, 4, 8, 8 ... s, `boundMs` in all. */
export function resumeDelays(
  boundMs = RESUME_BOUND_MS,
  firstMs = RESUME_FIRST_DELAY_MS,
  maxMs = RESUME_MAX_DELAY_MS,
): number[] {
  const delays: number[] = [];
  let total = 0;
  for (let next = firstMs; total < boundMs; next = Math.min(next * 2, maxMs)) {
    const delay = Math.min(next, boundMs - total);
    delays.push(delay);
    total += delay;
  }
  return delays;
}
