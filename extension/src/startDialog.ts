/**
 * The start dialog: the options of `%dtf_cluster start`, for a cluster the Jupyter server owns.
 */
import { Dialog, showDialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import { IStartOptions } from './api';

interface IField {
  key: string;
  label: string;
  type: 'text' | 'number' | 'checkbox';
  value: string;
  hint: string;
}

const FIELDS: IField[] = [
  { key: 'name', label: 'Name', type: 'text', value: '', hint: 'default: the first free local-N' },
  { key: 'ps', label: 'ps tasks', type: 'number', value: '1', hint: '--ps' },
  { key: 'workers', label: 'worker tasks', type: 'number', value: '2', hint: '--workers' },
  { key: 'jobs', label: 'Other jobs', type: 'text', value: '', hint: '--job: chief=1 evaluator=1' },
  { key: 'virtual_gpus', label: 'Virtual GPUs', type: 'number', value: '0', hint: 'CPU-backed /gpu:N per non-ps task' },
  { key: 'gpus_per_worker', label: 'GPUs per worker', type: 'text', value: '', hint: 'real GPUs per non-ps task (virtual without)' },
  { key: 'threads', label: 'Threads', type: 'number', value: '1', hint: 'torch threads per task' },
  { key: 'ports', label: 'Ports', type: 'text', value: '', hint: '--port: ps=2222 worker=2223,2224' },
  { key: 'file_roots', label: 'File roots', type: 'text', value: '', hint: '--file-root: directories, comma-separated' },
  { key: 'no_auth', label: 'No key (--no-auth)', type: 'checkbox', value: '', hint: 'every process of this machine could then use the tasks' }
];

/** What the form holds: a start request, or the mistake that keeps it from being one (naming the field). */
export type FormValue = { options: IStartOptions } | { error: string };

/** The dialog's form; `getValue()` reads it as a start request. */
export class StartForm extends Widget implements Dialog.IBodyWidget<FormValue> {
  constructor() {
    super();
    this.addClass('dtf-StartForm');
    for (const field of FIELDS) {
      const label = document.createElement('label');
      label.className = 'dtf-StartForm-field';
      const title = document.createElement('span');
      title.textContent = field.label;
      const input = document.createElement('input');
      input.type = field.type;
      input.name = field.key;
      input.value = field.value;
      input.placeholder = field.type === 'checkbox' ? '' : field.hint;
      input.title = field.hint;
      if (field.type === 'number') {
        input.min = field.key === 'threads' ? '1' : '0';
      }
      if (field.type !== 'checkbox') {
        input.classList.add('jp-mod-styled');
      }
      label.appendChild(title);
      label.appendChild(input);
      this.node.appendChild(label);
    }
  }

  input(key: string): HTMLInputElement {
    return this.node.querySelector(`input[name="${key}"]`) as HTMLInputElement;
  }

  getValue(): FormValue {
    try {
      return { options: this.read() };
    } catch (error) {
      return { error: (error as Error).message };
    }
  }

  read(): IStartOptions {
    const text = (key: string) => this.input(key).value.trim();
    const whole = (key: string): number => {
      const value = text(key);
      if (!/^[0-9]+$/.test(value)) {
        throw new Error(`${FIELDS.find(f => f.key === key)!.label} needs a whole number, not '${value}'`);
      }
      return parseInt(value, 10);
    };
    const options: IStartOptions = {
      ps: whole('ps'),
      workers: whole('workers'),
      virtual_gpus: whole('virtual_gpus'),
      threads: whole('threads'),
      no_auth: this.input('no_auth').checked
    };
    if (text('name')) {
      options.name = text('name');
    }
    if (text('gpus_per_worker')) {
      options.gpus_per_worker = whole('gpus_per_worker');
    }
    const jobs = pairs(text('jobs'), 'Other jobs', 'NAME=N');
    if (Object.keys(jobs).length) {
      options.jobs = Object.fromEntries(Object.entries(jobs).map(([job, n]) => [job, number(n, 'Other jobs')]));
    }
    const ports = pairs(text('ports'), 'Ports', 'JOB=PORT[,PORT...]');
    if (Object.keys(ports).length) {
      options.ports = Object.fromEntries(
        Object.entries(ports).map(([job, list]) => [job, list.split(',').map(p => number(p, 'Ports'))])
      );
    }
    const roots = text('file_roots')
      .split(',')
      .map(r => r.trim())
      .filter(r => r);
    if (roots.length) {
      options.file_roots = roots;
    }
    return options;
  }
}

function number(text: string, field: string): number {
  if (!/^[0-9]+$/.test(text.trim())) {
    throw new Error(`${field} needs whole numbers, not '${text}'`);
  }
  return parseInt(text, 10);
}

/** `a=1 b=2` as `{a: '1', b: '2'}`. */
function pairs(text: string, field: string, form: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const pair of text.split(/\s+/).filter(p => p)) {
    const [key, value] = pair.split('=');
    if (!key || value === undefined || value === '') {
      throw new Error(`${field} takes ${form}, not '${pair}'`);
    }
    result[key] = value;
  }
  return result;
}

/** Shows the start dialog; resolves to the options, or null when cancelled; rejects with a mistake in the form. */
export async function askStartOptions(): Promise<IStartOptions | null> {
  const result = await showDialog({
    title: 'Start a local cluster',
    body: new StartForm(),
    buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Start' })],
    focusNodeSelector: 'input[name="name"]'
  });
  if (!result.button.accept || result.value === null) {
    return null;
  }
  if ('error' in result.value) {
    throw new Error(result.value.error);
  }
  return result.value.options;
}
