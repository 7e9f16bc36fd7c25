// A diagnosis finding links to the tool cards of the calls it cites: following a link scrolls
// to the card and highlights it for a moment.

const HIGHLIGHT_MS = 2500;

export const evidence = $state<{ highlighted: string | null }>({ highlighted: null });
let timer: ReturnType<typeof setTimeout> | undefined;

/** Scroll to the tool card of `callId` within `root` and highlight it; false if not shown. */
export function showEvidence(callId: string, root: ParentNode | null): boolean {
  const selector = `[data-testid="tool-card"][data-call-id="${CSS.escape(callId)}"]`;
  const card = root?.querySelector<HTMLElement>(selector);
  if (!card) return false;
  card.scrollIntoView({ block: "center", behavior: "smooth" });
  evidence.highlighted = callId;
  clearTimeout(timer);
  timer = setTimeout(() => (evidence.highlighted = null), HIGHLIGHT_MS);
  return true;
}
