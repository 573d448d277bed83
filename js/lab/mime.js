// The mime types the JupyterLab extension knows, and the rank that makes a saved view win.

/** A ContextView's saved output: `{version, state}` (agentctx_widgets/widget/saved_output.py); the model id is the widget-view data's. */
export const VIEW_MIME = "application/vnd.agentctx.view+json";

/** The ipywidgets view mime every ContextView output carries too. */
export const WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json";

/** The format of VIEW_MIME's data this front end reads. */
export const VIEW_FORMAT = 1;

/**
 * Lower ranks are preferred: @jupyter-widgets/jupyterlab-manager registers the widget-view renderer
 * at -10 (python/jupyterlab_widgets/src/plugin.ts), so a bundle holding both is drawn by us.
 */
export const VIEW_RANK = -20;
