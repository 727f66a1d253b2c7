/**
 * A fallback for widget outputs that no widget manager can draw: their own `text/html` copy.
 *
 * A notebook stores a widget output as a reference to a model only its kernel holds
 * (`application/vnd.jupyter.widget-view+json`), next to the static copies its producer added (dtf_notebook's
 * widgets add `text/html`). JupyterLab always prefers the widget, so a notebook reopened with a new kernel (or
 * none) shows "Error displaying widget: model not found", or "Loading widget..." for good, where nbviewer and
 * nbconvert show the copy. This watches each notebook's outputs: while a widget output's renderer says either,
 * the output's `text/html` is shown in its place (rendered by the notebook's own rendermime, so an untrusted
 * notebook's HTML is sanitized as any output's would be); once the widget draws (its kernel restored it), the
 * copy goes away again. Outputs without an HTML copy are left as they are.
 */
import { CodeCell } from '@jupyterlab/cells';
import { NotebookPanel } from '@jupyterlab/notebook';
import { MimeModel } from '@jupyterlab/rendermime';
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { IDisposable } from '@lumino/disposable';
import { Panel, Widget } from '@lumino/widgets';

export const WIDGET_VIEW_MIMETYPE = 'application/vnd.jupyter.widget-view+json';

/** What @jupyter-widgets/jupyterlab-manager's renderer writes while it has no view to show. */
const NO_VIEW = /^(Loading widget\.\.\.|Error displaying widget)/;

const HIDDEN_CLASS = 'dtf-WidgetFallback-hidden';
const FALLBACK_CLASS = 'dtf-WidgetFallback';

function htmlOf(data: unknown): string | null {
  if (typeof data === 'string') {
    return data;
  }
  if (Array.isArray(data) && data.every(part => typeof part === 'string')) {
    return data.join('');
  }
  return null;
}

/** Keeps one notebook's widget outputs showing their HTML copy while the widget cannot be drawn. */
export class WidgetFallback implements IDisposable {
  constructor(private readonly _panel: NotebookPanel) {
    this._observer = new MutationObserver(() => this._schedule());
    this._observer.observe(_panel.content.node, { childList: true, subtree: true, characterData: true });
    _panel.disposed.connect(() => this.dispose());
    this._schedule();
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._observer.disconnect();
    if (this._frame) {
      cancelAnimationFrame(this._frame);
    }
  }

  private _schedule(): void {
    if (!this._frame && !this._disposed) {
      this._frame = requestAnimationFrame(() => {
        this._frame = 0;
        this.scan();
      });
    }
  }

  /** Looks at every widget output of the notebook once: shows or drops its copy as its renderer needs. */
  scan(): void {
    for (const cell of this._panel.content.widgets) {
      if (!(cell instanceof CodeCell)) {
        continue;
      }
      const area = cell.outputArea;
      const count = Math.min(area.model.length, area.widgets.length);
      for (let i = 0; i < count; i++) {
        const output = area.model.get(i);
        if (!(WIDGET_VIEW_MIMETYPE in output.data)) {
          continue;
        }
        const html = htmlOf(output.data['text/html']);
        const item = area.widgets[i];
        if (html === null || !(item instanceof Panel)) {
          continue;
        }
        const renderer = item.widgets.find(w => w.hasClass('jp-OutputArea-output'));
        if (renderer !== undefined) {
          this._update(item, renderer, html, output.trusted);
        }
      }
    }
  }

  private _update(item: Panel, renderer: Widget, html: string, trusted: boolean): void {
    const node = renderer.node;
    const noView = !renderer.isHidden && node.childElementCount === 0 && NO_VIEW.test((node.textContent ?? '').trim());
    const shown = this._fallbacks.get(renderer);
    if (noView && shown === undefined) {
      const fallback = this._panel.content.rendermime.createRenderer('text/html');
      fallback.addClass(FALLBACK_CLASS);
      fallback.addClass('jp-OutputArea-output');
      this._fallbacks.set(renderer, fallback);
      renderer.addClass(HIDDEN_CLASS);
      item.addWidget(fallback);
      void fallback.renderModel(new MimeModel({ data: { 'text/html': html }, trusted }));
    } else if (!noView && shown !== undefined) {
      this._fallbacks.delete(renderer);
      renderer.removeClass(HIDDEN_CLASS);
      shown.dispose();
    }
  }

  private _disposed = false;
  private _frame = 0;
  private _observer: MutationObserver;
  private _fallbacks = new WeakMap<Widget, IRenderMime.IRenderer>();
}
