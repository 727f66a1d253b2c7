/**
 * Refreshing a widget from the server while it can be seen.
 */
import { Poll } from '@lumino/polling';
import { Widget } from '@lumino/widgets';

/** Refreshes at most this often, and backs off up to this when the server fails to answer (milliseconds). */
export const MAX_INTERVAL = 30000;

/**
 * A poll that calls `refresh` every `interval` ms while `widget` is visible and the browser tab is shown, backing
 * off (up to 30 s) while `refresh` fails; it pauses while the widget is hidden and is disposed with it.
 */
export function visiblePoll(widget: Widget, refresh: () => Promise<void>, interval: number, name: string): Poll {
  const poll = new Poll({
    factory: refresh,
    frequency: { interval, backoff: true, max: MAX_INTERVAL },
    standby: () => !widget.isVisible || document.hidden,
    name
  });
  widget.disposed.connect(() => poll.dispose());
  return poll;
}
