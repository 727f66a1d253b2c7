/**
 * The left sidebar: every running cluster of this user (started by a kernel, the server or `dtf-cluster`), each
 * with its tasks' live status, variable counts and memory, and buttons for what the commands do.
 */
import { CommandRegistry } from '@lumino/commands';
import { Poll } from '@lumino/polling';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { api, ICluster, ITask, formatBytes } from './api';
import { CommandIDs } from './tokens';
import { visiblePoll } from './polling';

/** How often the sidebar asks for the clusters while it is shown (milliseconds). */
export const SIDEBAR_INTERVAL = 2000;

const OWNERS: Record<string, string> = { kernel: 'kernel', server: 'server', cli: 'CLI', process: 'process' };

function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text = ''
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text) {
    node.textContent = text;
  }
  return node;
}

export class ClusterSidebar extends Widget {
  constructor(private readonly _commands: CommandRegistry) {
    super();
    this.id = 'dtf-clusters-sidebar';
    this.addClass('dtf-Sidebar');
    this.title.caption = 'dtf clusters';
    const header = element('div', 'dtf-Sidebar-header');
    header.appendChild(element('h2', 'dtf-Sidebar-title', 'Clusters'));
    const start = this._button('Start…', CommandIDs.start, {}, 'start');
    start.classList.add('dtf-mod-accept');
    header.appendChild(start);
    header.appendChild(this._button('Refresh', CommandIDs.refresh, {}, 'refresh'));
    this.node.appendChild(header);
    this._busy = element('div', 'dtf-Sidebar-busy');
    this._busy.hidden = true;
    this.node.appendChild(this._busy);
    this._status = element('div', 'dtf-Sidebar-status');
    this.node.appendChild(this._status);
    this._list = element('div', 'dtf-Sidebar-list');
    this.node.appendChild(this._list);
    this.poll = visiblePoll(this, () => this.refresh(), SIDEBAR_INTERVAL, 'dtf:clusters');
  }

  /** The poll that refreshes the list (paused while the sidebar is hidden). */
  readonly poll: Poll;

  /** The clusters as last listed. */
  get clusters(): ICluster[] {
    return this._clusters;
  }

  /** Asks the server for the clusters now and shows them. */
  async refresh(): Promise<void> {
    try {
      const { clusters } = await api.list();
      this._clusters = clusters;
      this._status.textContent = clusters.length === 0 ? 'No running clusters. Start one, or run %dtf_cluster start in a notebook.' : '';
      this._status.classList.remove('dtf-mod-error');
      this._render();
    } catch (error) {
      this._status.textContent = `Cannot list the clusters: ${(error as Error).message}`;
      this._status.classList.add('dtf-mod-error');
      throw error; // the poll backs off
    }
  }

  /** Shows what a slow action is doing (a start takes seconds) above the list; '' clears it. */
  setBusy(text: string): void {
    this._busy.textContent = text;
    this._busy.hidden = !text;
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this.poll.refresh();
  }

  private _button(
    label: string,
    command: string,
    args: Record<string, string | number | boolean>,
    action: string
  ): HTMLButtonElement {
    const button = element('button', 'dtf-Button', label);
    button.dataset.dtfAction = action;
    button.addEventListener('mouseenter', () => {
      if (!button.title) {
        button.title = this._commands.caption(command, args) || this._commands.label(command, args);
      }
    });
    button.addEventListener('click', () => {
      void this._commands.execute(command, args);
    });
    return button;
  }

  private _render(): void {
    const seen = new Set<string>();
    for (const cluster of this._clusters) {
      seen.add(cluster.name);
      let card = this._cards.get(cluster.name);
      if (card === undefined) {
        card = this._card(cluster);
        this._cards.set(cluster.name, card);
      }
      this._list.appendChild(card); // in the server's order (oldest first)
      this._update(card, cluster);
    }
    for (const [name, card] of this._cards) {
      if (!seen.has(name)) {
        card.remove();
        this._cards.delete(name);
      }
    }
  }

  private _card(cluster: ICluster): HTMLElement {
    const name = cluster.name;
    const card = element('div', 'dtf-Cluster');
    card.dataset.dtfCluster = name;
    const head = element('div', 'dtf-Cluster-head');
    head.appendChild(element('span', 'dtf-Cluster-name', name));
    head.appendChild(element('span', 'dtf-Cluster-owner'));
    head.appendChild(element('span', 'dtf-Cluster-state'));
    card.appendChild(head);
    card.appendChild(element('div', 'dtf-Cluster-totals'));
    const actions = element('div', 'dtf-Cluster-actions');
    actions.appendChild(this._button('Connect code', CommandIDs.insertConnect, { name }, 'connect'));
    actions.appendChild(this._button('Variables', CommandIDs.variables, { name }, 'variables'));
    actions.appendChild(this._button('Placement', CommandIDs.placement, { name }, 'placement'));
    const stop = this._button('Stop', CommandIDs.stop, { name, confirm: true }, 'stop');
    stop.classList.add('dtf-mod-warn');
    actions.appendChild(stop);
    card.appendChild(actions);
    const table = element('table', 'dtf-Tasks');
    const header = element('tr', '');
    for (const h of ['task', 'status', 'vars', 'memory', '']) {
      header.appendChild(element('th', '', h));
    }
    table.appendChild(header);
    card.appendChild(table);
    return card;
  }

  private _update(card: HTMLElement, cluster: ICluster): void {
    const owner = card.querySelector('.dtf-Cluster-owner') as HTMLElement;
    owner.textContent = OWNERS[cluster.owner] ?? cluster.owner;
    owner.title = `started by ${OWNERS[cluster.owner] ?? cluster.owner} (pid ${cluster.owner_pid})${cluster.locked ? '; locked with a key' : '; NO key'}`;
    const state = card.querySelector('.dtf-Cluster-state') as HTMLElement;
    state.textContent = cluster.state;
    state.dataset.dtfState = cluster.state.split(' ')[0];
    const jobs = Object.entries(cluster.jobs)
      .map(([job, n]) => `${job}=${n}`)
      .join(' ');
    (card.querySelector('.dtf-Cluster-totals') as HTMLElement).textContent =
      `${jobs} · ${cluster.variables} variables (${formatBytes(cluster.variable_bytes)}) · ${formatBytes(cluster.memory_bytes)}`;
    const restartable = cluster.owner === 'server';
    const table = card.querySelector('.dtf-Tasks') as HTMLTableElement;
    const rows = new Map<string, HTMLTableRowElement>();
    table.querySelectorAll<HTMLTableRowElement>('tr[data-dtf-task]').forEach(row => rows.set(row.dataset.dtfTask!, row));
    const seen = new Set<string>();
    for (const task of cluster.tasks) {
      const key = `${task.job}:${task.task}`;
      seen.add(key);
      let row = rows.get(key);
      if (row === undefined) {
        row = this._taskRow(cluster.name, task);
        table.appendChild(row);
      }
      const cells = row.cells;
      cells[1].textContent = task.status;
      cells[1].dataset.dtfStatus = task.status.replace(/\(.*$/, '');
      cells[1].title = `pid ${task.pid}, ${task.address}`;
      cells[2].textContent = task.variables === null ? '-' : String(task.variables);
      cells[2].title = `${formatBytes(task.variable_bytes)} of variables`;
      cells[3].textContent = formatBytes(task.memory_bytes);
      const kill = row.querySelector('[data-dtf-action="kill"]') as HTMLButtonElement;
      kill.disabled = task.status !== 'running';
      const restart = row.querySelector('[data-dtf-action="restart"]') as HTMLButtonElement;
      restart.disabled = !restartable;
      restart.title = restartable
        ? `Start task ${key} again on its address`
        : `Only its owner (the ${OWNERS[cluster.owner] ?? cluster.owner}, pid ${cluster.owner_pid}) can restart it: %dtf_cluster restart ${key} there`;
    }
    for (const [key, row] of rows) {
      if (!seen.has(key)) {
        row.remove();
      }
    }
  }

  private _taskRow(name: string, task: ITask): HTMLTableRowElement {
    const key = `${task.job}:${task.task}`;
    const row = element('tr', 'dtf-Task');
    row.dataset.dtfTask = key;
    row.appendChild(element('td', 'dtf-Task-name', key));
    for (let i = 0; i < 3; i++) {
      row.appendChild(element('td', ''));
    }
    const buttons = element('td', 'dtf-Task-actions');
    const args = { name, job: task.job, task: task.task };
    // Small symbols (the sidebar is narrow); what each does is its tooltip and accessible name.
    const log = this._button('\u2630', CommandIDs.log, args, 'log');
    log.setAttribute('aria-label', `Log of ${key}`);
    buttons.appendChild(log);
    const kill = this._button('\u2715', CommandIDs.kill, args, 'kill');
    kill.setAttribute('aria-label', `Kill ${key}`);
    kill.classList.add('dtf-mod-warn');
    buttons.appendChild(kill);
    const restart = this._button('\u21bb', CommandIDs.restart, args, 'restart');
    restart.setAttribute('aria-label', `Restart ${key}`);
    buttons.appendChild(restart);
    row.appendChild(buttons);
    return row;
  }

  private _clusters: ICluster[] = [];
  private _cards = new Map<string, HTMLElement>();
  private _list: HTMLElement;
  private _status: HTMLElement;
  private _busy: HTMLElement;
}
