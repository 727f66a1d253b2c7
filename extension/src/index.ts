/**
 * dtf_notebook's JupyterLab extension: the cluster sidebar, the variables / log / placement panels, the commands
 * (all in the palette), and the HTML fallback of widget outputs that no kernel can draw any more.
 */
import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, InputDialog, MainAreaWidget, WidgetTracker, showDialog, showErrorMessage, Dialog } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { LabIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { api, ICluster } from './api';
import { PlacementPanel, TaskLogPanel, VariablesPanel } from './panels';
import { ClusterSidebar } from './sidebar';
import { askStartOptions } from './startDialog';
import { CATEGORY, CommandIDs } from './tokens';
import { WidgetFallback } from './widgetFallback';

const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <rect x="9" y="2" width="6" height="5" rx="1"/>
    <rect x="2" y="16" width="6" height="5" rx="1"/>
    <rect x="9" y="16" width="6" height="5" rx="1"/>
    <rect x="16" y="16" width="6" height="5" rx="1"/>
    <rect x="11.25" y="7" width="1.5" height="5"/>
    <rect x="4.25" y="11" width="15.5" height="1.5"/>
    <rect x="4.25" y="11" width="1.5" height="5"/>
    <rect x="11.25" y="11" width="1.5" height="5"/>
    <rect x="18.25" y="11" width="1.5" height="5"/>
  </g>
</svg>`;

export const clusterIcon = new LabIcon({ name: 'dtf-notebook:cluster', svgstr: ICON_SVG });

/** The code a notebook runs to use a cluster: the magic's `connect` binds it to `cluster`. */
export function connectCode(name: string): string {
  return `%load_ext dtf_notebook\n%dtf_cluster connect ${name}`;
}

interface ITaskArgs {
  name: string;
  job: string;
  task: number;
}

function plainError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const clustersPlugin: JupyterFrontEndPlugin<void> = {
  id: 'dtf-notebook:clusters',
  description: 'A sidebar of local clusters with live tasks, variables and logs',
  autoStart: true,
  requires: [],
  optional: [ICommandPalette, INotebookTracker, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    palette: ICommandPalette | null,
    notebooks: INotebookTracker | null,
    restorer: ILayoutRestorer | null
  ) => {
    const { commands, shell } = app;
    const panels = new WidgetTracker<MainAreaWidget>({ namespace: 'dtf-notebook-panels' });
    const sidebar = new ClusterSidebar(commands);

    const refresh = () => void sidebar.poll.refresh();
    const clusterNames = async (): Promise<string[]> => (await api.list()).clusters.map(c => c.name);

    /** The cluster a command names, else the one picked in a dialog (null: none running, or cancelled). */
    const pickCluster = async (args: Record<string, unknown>, verb: string): Promise<string | null> => {
      if (typeof args.name === 'string' && args.name) {
        return args.name;
      }
      const names = await clusterNames();
      if (names.length === 0) {
        await showErrorMessage('No running clusters', 'Start one first (dtf clusters: Start a cluster).');
        return null;
      }
      const result = await InputDialog.getItem({ title: `Cluster to ${verb}`, items: names });
      return result.button.accept ? result.value : null;
    };

    /** The task a command names, else one picked in a dialog. */
    const pickTask = async (args: Record<string, unknown>, verb: string): Promise<ITaskArgs | null> => {
      const name = await pickCluster(args, verb);
      if (name === null) {
        return null;
      }
      if (typeof args.job === 'string' && typeof args.task === 'number') {
        return { name, job: args.job, task: args.task };
      }
      const cluster: ICluster = await api.get(name);
      const items = cluster.tasks.map(t => `${t.job}:${t.task}`);
      const result = await InputDialog.getItem({ title: `Task of ${name} to ${verb}`, items });
      if (!result.button.accept || !result.value) {
        return null;
      }
      const [job, task] = result.value.split(':');
      return { name, job, task: parseInt(task, 10) };
    };

    const openPanel = (content: Widget) => {
      const existing = panels.find(w => w.content.id === content.id);
      if (existing) {
        content.dispose();
        shell.activateById(existing.id);
        return existing;
      }
      const widget = new MainAreaWidget({ content });
      widget.id = `${content.id}-panel`;
      widget.title.label = content.title.label;
      widget.title.icon = clusterIcon;
      widget.title.closable = true;
      void panels.add(widget);
      shell.add(widget, 'main', { mode: 'split-right' });
      shell.activateById(widget.id);
      return widget;
    };

    const failing = (what: string, run: (args: Record<string, unknown>) => Promise<unknown>) => {
      return async (args: Record<string, unknown>) => {
        try {
          return await run(args);
        } catch (error) {
          await showErrorMessage(what, plainError(error));
          return null;
        } finally {
          refresh();
        }
      };
    };

    commands.addCommand(CommandIDs.open, {
      label: 'Show the cluster sidebar',
      caption: 'Show the sidebar of local clusters',
      execute: () => shell.activateById(sidebar.id)
    });
    commands.addCommand(CommandIDs.refresh, {
      label: 'Refresh the cluster list',
      caption: 'Ask the server for the running clusters now',
      execute: () => sidebar.refresh().catch(() => undefined)
    });
    commands.addCommand(CommandIDs.start, {
      label: 'Start a cluster…',
      caption: 'Start a local cluster owned by the Jupyter server (the options of %dtf_cluster start)',
      execute: failing('Cannot start the cluster', async () => {
        const options = await askStartOptions();
        if (options === null) {
          return null;
        }
        sidebar.setBusy(`Starting ${options.name || 'a cluster'}…`);
        try {
          return await api.start(options);
        } finally {
          sidebar.setBusy('');
        }
      })
    });
    commands.addCommand(CommandIDs.stop, {
      label: args => (args.name ? `Stop cluster ${args.name}` : 'Stop a cluster…'),
      caption: 'Stop every task of a cluster (whoever started it)',
      execute: failing('Cannot stop the cluster', async args => {
        const name = await pickCluster(args, 'stop');
        if (name === null) {
          return null;
        }
        if (args.confirm === true) {
          const answer = await showDialog({
            title: `Stop cluster ${name}?`,
            body: 'Its tasks stop, with the variables they hold.',
            buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Stop' })]
          });
          if (!answer.button.accept) {
            return null;
          }
        }
        return api.stop(name);
      })
    });
    commands.addCommand(CommandIDs.kill, {
      label: args => (args.job !== undefined ? `Kill task ${args.job}:${args.task}` : 'Kill a task…'),
      caption: 'Kill a task at once (SIGKILL), as a crash would',
      execute: failing('Cannot kill the task', async args => {
        const task = await pickTask(args, 'kill');
        return task && api.kill(task.name, task.job, task.task);
      })
    });
    commands.addCommand(CommandIDs.restart, {
      label: args => (args.job !== undefined ? `Restart task ${args.job}:${args.task}` : 'Restart a task…'),
      caption: 'Start a task again on its address (clusters the server started)',
      execute: failing('Cannot restart the task', async args => {
        const task = await pickTask(args, 'restart');
        return task && api.restart(task.name, task.job, task.task);
      })
    });
    commands.addCommand(CommandIDs.log, {
      label: args => (args.job !== undefined ? `Log of task ${args.job}:${args.task}` : 'Show a task log…'),
      caption: "Open a panel following a task's log",
      execute: failing('Cannot show the log', async args => {
        const task = await pickTask(args, 'show the log of');
        return task && openPanel(new TaskLogPanel(task.name, task.job, task.task));
      })
    });
    commands.addCommand(CommandIDs.variables, {
      label: args => (args.name ? `Variables of ${args.name}` : 'Show the variables of a cluster…'),
      caption: "Open a panel of the cluster's variables, refreshed live",
      execute: failing('Cannot show the variables', async args => {
        const name = await pickCluster(args, 'show the variables of');
        return name && openPanel(new VariablesPanel(name));
      })
    });
    commands.addCommand(CommandIDs.placement, {
      label: args => (args.name ? `Placement of ${args.name}` : 'Show the placement of a cluster…'),
      caption: 'Open a panel with the placement of the last traced step a kernel showed',
      execute: failing('Cannot show the placement', async args => {
        const name = await pickCluster(args, 'show the placement of');
        return name && openPanel(new PlacementPanel(name));
      })
    });
    commands.addCommand(CommandIDs.insertConnect, {
      label: args => (args.name ? `Insert connect code for ${args.name}` : 'Insert connect code…'),
      caption: 'Insert a cell with %dtf_cluster connect NAME below the active cell of the current notebook',
      isEnabled: () => notebooks !== null && notebooks.currentWidget !== null,
      execute: failing('Cannot insert the connect code', async args => {
        const panel = notebooks?.currentWidget;
        if (!panel) {
          throw new Error('Open a notebook first: the code goes below its active cell');
        }
        const name = await pickCluster(args, 'connect to');
        if (name === null) {
          return null;
        }
        shell.activateById(panel.id);
        NotebookActions.insertBelow(panel.content);
        const cell = panel.content.activeCell;
        if (cell) {
          cell.model.sharedModel.setSource(connectCode(name));
        }
        return name;
      })
    });

    sidebar.title.icon = clusterIcon;
    shell.add(sidebar, 'left', { rank: 400 });
    if (restorer) {
      restorer.add(sidebar, sidebar.id);
    }

    if (palette) {
      for (const command of Object.values(CommandIDs)) {
        palette.addItem({ command, category: CATEGORY });
      }
    }
  }
};

const fallbackPlugin: JupyterFrontEndPlugin<void> = {
  id: 'dtf-notebook:widget-fallback',
  description: "Shows a widget output's text/html when no widget manager can draw it",
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, notebooks: INotebookTracker) => {
    const watch = (panel: NotebookPanel) => new WidgetFallback(panel);
    notebooks.forEach(watch);
    notebooks.widgetAdded.connect((_, panel) => {
      watch(panel);
    });
  }
};

export default [clustersPlugin, fallbackPlugin];
