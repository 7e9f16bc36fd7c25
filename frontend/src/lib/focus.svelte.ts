// Focus-target sync (FR-023): what the person is looking at in the host application, so the
// assistant can resolve "this dashboard".

export interface FocusTarget {
  kind: "dashboard";
  id: number;
  title: string;
}

export const focus = $state<{ target: FocusTarget | null; muted: boolean }>({
  target: null,
  muted: false,
});

export function setFocus(target: FocusTarget | null): void {
  focus.target = target;
  focus.muted = false;
}

/** The focus to send with a message, or null when there is none or the person muted it. */
export function activeFocus(): FocusTarget | null {
  return focus.muted ? null : focus.target;
}
