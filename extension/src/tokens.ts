/**
 * The extension's command ids: the sidebar's buttons and the command palette run the same commands.
 */
export const CommandIDs = {
  open: 'dtf:open-sidebar',
  refresh: 'dtf:refresh-clusters',
  start: 'dtf:start-cluster',
  stop: 'dtf:stop-cluster',
  kill: 'dtf:kill-task',
  restart: 'dtf:restart-task',
  log: 'dtf:show-task-log',
  variables: 'dtf:show-variables',
  placement: 'dtf:show-placement',
  insertConnect: 'dtf:insert-connect-code'
} as const;

/** The palette's category for every command of the extension. */
export const CATEGORY = 'dtf clusters';
