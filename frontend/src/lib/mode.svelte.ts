// What runs a new message (CONTRACT.md, "Modes"), sent as `options.mode`: the composer's mode
// picker sets it; the Diagnose button of a dashboard sends one diagnosis without changing it.

export type Mode = "dynamic" | "none" | "yaml" | "diagnose";
export const MODES: readonly Mode[] = ["dynamic", "none", "yaml", "diagnose"];

export const mode = $state<{ current: Mode }>({ current: "dynamic" });

export function setMode(next: Mode): void {
  mode.current = next;
}

/** A diagnosis asked for from outside the chat (a dashboard's Diagnose button), waiting for
 * the chat panel to send it. */
export interface DiagnosisRequest {
  text: string;
}

export const diagnosisRequest = $state<{ next: DiagnosisRequest | null }>({ next: null });

export function requestDiagnosis(request: DiagnosisRequest): void {
  diagnosisRequest.next = request;
}

/** The waiting request, once (the panel that sends it takes it). */
export function takeDiagnosisRequest(): DiagnosisRequest | null {
  const next = diagnosisRequest.next;
  diagnosisRequest.next = null;
  return next;
}
