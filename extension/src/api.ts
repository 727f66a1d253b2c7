/**
 * The server extension's REST API (`dtf/clusters` under the server's base URL), typed.
 *
 * Every request goes through JupyterLab's server connection, so it carries the token (or the login's XSRF
 * cookie) like Lab's own requests do. An error answer becomes an `ApiError` with the server's plain message.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/** One task of a cluster, as `GET dtf/clusters` gives it. */
export interface ITask {
  job: string;
  task: number;
  address: string;
  pid: number;
  status: string;
  devices: string[];
  variables: number | null;
  variable_bytes: number | null;
  memory_bytes: number | null;
}

/** One running cluster: who started it, its state and tasks, and their totals. */
export interface ICluster {
  name: string;
  owner: 'server' | 'kernel' | 'cli' | 'process';
  owner_pid: number;
  started: number;
  state: string;
  locked: boolean;
  spec: Record<string, string[]>;
  jobs: Record<string, number>;
  tasks: ITask[];
  variables: number;
  variable_bytes: number;
  memory_bytes: number;
}

/** One variable of a task, with the statistics computed on the task. */
export interface IVariable {
  task: string;
  name: string;
  container: string;
  shape: number[] | null;
  dtype: string | null;
  device: string | null;
  initialized?: boolean;
  min: number | string | null;
  max: number | string | null;
  mean: number | string | null;
  norm: number | string | null;
  available: boolean;
}

export interface IVariables {
  tasks: Record<string, string>;
  variables: IVariable[];
}

export interface ILogTail {
  job: string;
  task: number;
  pid: number;
  size: number;
  text: string;
}

export interface IPlacement {
  cluster: string;
  summary: string;
  svg: string | null;
  published: number;
}

/** The options of `%dtf_cluster start`, as the start request takes them. */
export interface IStartOptions {
  name?: string;
  ps?: number;
  workers?: number;
  jobs?: Record<string, number>;
  virtual_gpus?: number;
  gpus_per_worker?: number | null;
  threads?: number;
  ports?: Record<string, number[]>;
  file_roots?: string[];
  no_auth?: boolean;
}

/** An error answer of the API: `status` is the HTTP status, the message the server's own words. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number
  ) {
    super(message);
  }
}

/** Sends a request to `dtf/clusters/<path>` and returns the JSON answer. */
export async function requestAPI<T>(path = '', init: RequestInit = {}): Promise<T> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(settings.baseUrl, 'dtf', 'clusters', path);
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (error) {
    throw new ServerConnection.NetworkError(error as TypeError);
  }
  const text = await response.text();
  let data: unknown = null;
  if (text.length > 0) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { message: text };
    }
  }
  if (!response.ok) {
    const message = (data as { message?: string } | null)?.message ?? response.statusText;
    throw new ApiError(message, response.status);
  }
  return data as T;
}

const enc = encodeURIComponent;

export const api = {
  list: (): Promise<{ clusters: ICluster[] }> => requestAPI(''),
  get: (name: string): Promise<ICluster> => requestAPI(enc(name)),
  start: (options: IStartOptions): Promise<ICluster> =>
    requestAPI('', { method: 'POST', body: JSON.stringify(options) }),
  stop: (name: string): Promise<{ name: string; stopped: number }> =>
    requestAPI(enc(name), { method: 'DELETE' }),
  kill: (name: string, job: string, task: number): Promise<unknown> =>
    requestAPI(`${enc(name)}/tasks/${enc(job)}/${task}/kill`, { method: 'POST' }),
  restart: (name: string, job: string, task: number): Promise<unknown> =>
    requestAPI(`${enc(name)}/tasks/${enc(job)}/${task}/restart`, { method: 'POST' }),
  log: (name: string, job: string, task: number, lines = 400): Promise<ILogTail> =>
    requestAPI(`${enc(name)}/tasks/${enc(job)}/${task}/log?lines=${lines}`),
  variables: (name: string): Promise<IVariables> => requestAPI(`${enc(name)}/variables`),
  placement: (name: string): Promise<IPlacement> => requestAPI(`${enc(name)}/placement`)
};

/** A byte count for people, as the cluster table writes it: `512 B`, `1.5 KiB`, `184 MiB`; `-` when unknown. */
export function formatBytes(count: number | null | undefined): string {
  if (count === null || count === undefined) {
    return '-';
  }
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let size = count;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${size} B` : `${parseFloat(size.toPrecision(3))} ${units[unit]}`;
}
