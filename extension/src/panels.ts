/**
 * Main-area panels of one cluster: its live variables, a task's log, the placement of its last traced step.
 * Each refreshes while it is shown (and pauses while hidden); dock them anywhere in the layout.
 */
import { Message } from '@lumino/messaging';
import { Poll } from '@lumino/polling';
import { Widget } from '@lumino/widgets';

import { api, ApiError, IVariable } from './api';
import { visiblePoll } from './polling';

/** How often the panels refresh while shown (milliseconds). */
export const PANEL_INTERVAL = 1500;

function cell(row: HTMLTableRowElement, text: string, className = ''): HTMLTableCellElement {
  const td = row.insertCell();
  td.textContent = text;
  if (className) {
    td.className = className;
  }
  return td;
}

function statistic(value: number | string | null): string {
  if (value === null || value === undefined) {
    return '-';
  }
  return typeof value === 'number' ? Number(value.toPrecision(4)).toString() : value;
}

/** A panel that polls the server while visible, with a status line above its content. */
abstract class LivePanel extends Widget {
  constructor(id: string, label: string, interval: number) {
    super();
    this.id = id;
    this.title.label = label;
    this.title.closable = true;
    this.addClass('dtf-Panel');
    this.status = document.createElement('div');
    this.status.className = 'dtf-Panel-status';
    this.node.appendChild(this.status);
    this.content = document.createElement('div');
    this.content.className = 'dtf-Panel-content';
    this.node.appendChild(this.content);
    this.poll = visiblePoll(this, () => this._refresh(), interval, id);
  }

  readonly poll: Poll;
  protected status: HTMLElement;
  protected content: HTMLElement;

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this.poll.refresh();
  }

  protected abstract load(): Promise<void>;

  private async _refresh(): Promise<void> {
    try {
      await this.load();
      this.status.classList.remove('dtf-mod-error');
    } catch (error) {
      this.status.textContent = (error as Error).message;
      this.status.classList.add('dtf-mod-error');
      if (error instanceof ApiError && error.status === 404) {
        this.poll.dispose(); // the cluster is gone: nothing more will come
        return;
      }
      throw error;
    }
  }
}

/** Every variable of a cluster's tasks, with the statistics computed on the tasks. */
export class VariablesPanel extends LivePanel {
  constructor(readonly cluster: string) {
    super(`dtf-variables-${cluster}`, `Variables: ${cluster}`, PANEL_INTERVAL);
    this.addClass('dtf-VariablesPanel');
    this.table = document.createElement('table');
    this.table.className = 'dtf-Table';
    this.content.appendChild(this.table);
  }

  readonly table: HTMLTableElement;

  protected async load(): Promise<void> {
    const { tasks, variables } = await api.variables(this.cluster);
    const down = Object.entries(tasks).filter(([, state]) => state !== 'ok');
    const time = new Date().toLocaleTimeString();
    this.status.textContent =
      `${variables.length} variables on ${Object.keys(tasks).length} tasks, at ${time}` +
      (down.length ? ` · ${down.map(([task, state]) => `${task.replace('/replica:0', '')}: ${state}`).join('; ')}` : '');
    this._show(variables);
  }

  private _show(variables: IVariable[]): void {
    const table = this.table;
    table.textContent = '';
    const head = table.createTHead().insertRow();
    for (const h of ['task', 'name', 'shape', 'dtype', 'device', 'min', 'max', 'mean', 'norm']) {
      const th = document.createElement('th');
      th.textContent = h;
      head.appendChild(th);
    }
    const body = table.createTBody();
    for (const v of variables) {
      const row = body.insertRow();
      row.dataset.dtfVariable = v.name;
      if (!v.available) {
        row.classList.add('dtf-mod-stale');
      }
      cell(row, v.task.replace('/replica:0', ''));
      cell(row, v.container ? `${v.container}/${v.name}` : v.name, 'dtf-Variable-name');
      cell(row, v.shape === null ? '?' : `[${v.shape.join(', ')}]`);
      cell(row, v.dtype ?? '?');
      cell(row, v.device ? v.device.split('/device:').pop()! : '-');
      for (const value of [v.min, v.max, v.mean, v.norm]) {
        cell(row, v.initialized === false ? 'uninit.' : statistic(value), 'dtf-mod-number');
      }
    }
  }
}

/** The tail of one task's log, following it (a restarted task's new log replaces the old one). */
export class TaskLogPanel extends LivePanel {
  constructor(
    readonly cluster: string,
    readonly job: string,
    readonly task: number
  ) {
    super(`dtf-log-${cluster}-${job}-${task}`, `Log: ${job}:${task} (${cluster})`, PANEL_INTERVAL);
    this.addClass('dtf-LogPanel');
    this.pre = document.createElement('pre');
    this.pre.className = 'dtf-Log';
    this.content.appendChild(this.pre);
  }

  readonly pre: HTMLPreElement;

  protected async load(): Promise<void> {
    const tail = await api.log(this.cluster, this.job, this.task);
    const atBottom = this.content.scrollTop + this.content.clientHeight >= this.content.scrollHeight - 4;
    this.status.textContent = `task ${this.job}:${this.task} of ${this.cluster}, pid ${tail.pid}, ${tail.size} bytes`;
    if (this.pre.textContent !== tail.text) {
      this.pre.textContent = tail.text || '(the task has written nothing)';
      if (atBottom) {
        this.content.scrollTop = this.content.scrollHeight; // follow the end unless scrolled up
      }
    }
  }
}

/** The placement of the cluster's last traced step, as the kernel that traced it published it. */
export class PlacementPanel extends LivePanel {
  constructor(readonly cluster: string) {
    super(`dtf-placement-${cluster}`, `Placement: ${cluster}`, 5 * PANEL_INTERVAL);
    this.addClass('dtf-PlacementPanel');
    this.image = document.createElement('img');
    this.image.alt = 'placement graph';
    this.content.appendChild(this.image);
  }

  readonly image: HTMLImageElement;

  protected async load(): Promise<void> {
    let placement;
    try {
      placement = await api.placement(this.cluster);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        this.image.hidden = true;
        this.status.textContent = error.message;
        return; // none published yet: keep looking
      }
      throw error;
    }
    const published = new Date(placement.published * 1000).toLocaleTimeString();
    this.status.textContent = `${placement.summary} (traced step published at ${published})`;
    if (placement.svg) {
      // An <img> never runs what the picture holds: the SVG text comes from the graph's op names.
      const source = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(placement.svg)}`;
      if (this.image.src !== source) {
        this.image.src = source;
      }
      this.image.hidden = false;
    } else {
      this.image.hidden = true;
      this.status.textContent += ' · no picture: Graphviz was not there to draw it';
    }
  }
}
