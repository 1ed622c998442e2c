/**
 * The jupymem sidebar plugin: a side panel for the memory of the repository
 * that holds the document in focus (or, with no document in focus, the file
 * browser's folder).
 *
 * It runs in JupyterLab and in Jupyter Notebook 7 alike: it asks only for what
 * both front ends provide (the shell's `add(widget, 'left')`, `currentWidget`
 * and `currentChanged`, the document manager). `ILabShell` is optional: Notebook
 * has none, and requiring it failed the plugin there ("No provider for
 * ILabShell"). A command opens the panel, from the palette and with a shortcut
 * (schema/sidebar.json, so a person can rebind it), which Notebook needs most:
 * its side panels start hidden.
 */
import { ILabShell, ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { IDefaultFileBrowser } from '@jupyterlab/filebrowser';
import { NotebookPanel } from '@jupyterlab/notebook';
import { ServerConnection } from '@jupyterlab/services';
import { LabIcon } from '@jupyterlab/ui-components';
import type { Widget } from '@lumino/widgets';

import { JupymemApi } from './api';
import { localPath } from './logic';
import { MemorySidebar } from './sidebar';

// A notebook with a bookmark ribbon and written lines: kept notes, not an idea.
const iconSvg =
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" viewBox="0 0 24 24">' +
  '<path class="jp-icon3" fill="#616161" fill-rule="evenodd" d="' +
  'M6 2h12a2 2 0 0 1 2 2v16a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2z' + // the cover
  'M6.5 4.5v15h11v-15H16v6.5l-2-1.5-2 1.5V4.5z' + // its page, cut out around the ribbon
  'M8.5 13.5h7v1.6h-7zM8.5 16.5h5v1.6h-5z' + // two written lines
  '"/></svg>';

export const memoryIcon = new LabIcon({ name: 'jupymem:memory', svgstr: iconSvg });

/** The command that shows the panel (the palette's "Open project memory", the shortcut). */
export const OPEN_COMMAND = 'jupymem:open';

async function revealCell(widget: Widget | undefined, cellId: string | null): Promise<void> {
  if (!cellId || !(widget instanceof NotebookPanel)) {
    return;
  }
  await widget.context.ready;
  const notebook = widget.content;
  const cells = notebook.model?.cells;
  if (!cells) {
    return;
  }
  for (let i = 0; i < cells.length; i++) {
    if (cells.get(i).id === cellId) {
      notebook.activeCellIndex = i;
      await notebook.scrollToItem(i, 'center');
      return;
    }
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupymem:sidebar',
  description: "Browse and curate the memory of the repository you are working in.",
  autoStart: true,
  requires: [IDocumentManager],
  optional: [ILabShell, ILayoutRestorer, IDefaultFileBrowser, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    docManager: IDocumentManager,
    labShell: ILabShell | null,
    restorer: ILayoutRestorer | null,
    fileBrowser: IDefaultFileBrowser | null,
    palette: ICommandPalette | null
  ) => {
    const settings = ServerConnection.makeSettings();
    const api = new JupymemApi(settings.baseUrl, (url, init) => ServerConnection.makeRequest(url, init, settings));
    const sidebar = new MemorySidebar({
      api,
      openNotebook: (path, cellId) => {
        const widget = docManager.openOrReveal(path);
        void revealCell(widget, cellId).catch(err => console.warn('jupymem: could not reveal the cell', err));
      }
    });
    sidebar.id = 'jupymem-sidebar';
    sidebar.title.icon = memoryIcon;
    sidebar.title.caption = 'Project memory';
    if (!labShell) {
      // Notebook lists its side panels by label (View > Left Sidebar): name it there.
      sidebar.title.label = 'Project memory';
    }
    app.shell.add(sidebar, 'left', { rank: 600 });
    restorer?.add(sidebar, 'jupymem-sidebar');

    app.commands.addCommand(OPEN_COMMAND, {
      label: 'Open project memory',
      caption: "Show the memory of this document's repository",
      icon: memoryIcon,
      execute: () => {
        // Notebook's shell expands a side panel with expandLeft (its activateById finds side
        // panels only from 7.3 or so); JupyterLab's activateById opens it in the left area.
        const notebookShell = app.shell as { expandLeft?: (id?: string) => void };
        if (!labShell && typeof notebookShell.expandLeft === 'function') {
          notebookShell.expandLeft(sidebar.id);
        } else {
          app.shell.activateById(sidebar.id);
        }
        // Straight to the search box, where a person who asked for memory starts.
        requestAnimationFrame(() => sidebar.node.querySelector<HTMLInputElement>('.jp-jupymem-search-input')?.focus());
      }
    });
    palette?.addItem({ command: OPEN_COMMAND, category: 'Project memory' });

    // The document in focus: JupyterLab's shell and Notebook's both say which and when.
    const shell = app.shell;
    const follow = () => {
      const current = shell.currentWidget;
      const context = current ? docManager.contextForWidget(current) : undefined;
      if (context) {
        sidebar.setPath(localPath(context.path));
      } else if (fileBrowser) {
        sidebar.setPath(localPath(fileBrowser.model.path));
      }
    };
    shell.currentChanged?.connect(follow);
    fileBrowser?.model.pathChanged.connect(() => {
      if (!shell.currentWidget || !docManager.contextForWidget(shell.currentWidget)) {
        follow();
      }
    });
    void app.restored.then(follow);
    follow();
  }
};

export default plugin;
