// The few JupyterLab / Lumino types the extension uses. The packages themselves are not installed:
// JupyterLab provides them at run time as shared modules (@jupyterlab/builder marks them import: false).
declare module "@lumino/signaling" {
  export interface ISignal<T, U> {
    connect(slot: (sender: T, args: U) => void, thisArg?: unknown): boolean;
    disconnect(slot: (sender: T, args: U) => void, thisArg?: unknown): boolean;
  }
}

declare module "@lumino/widgets" {
  export class Widget {
    constructor(options?: { node?: HTMLElement });
    readonly node: HTMLElement;
    readonly isDisposed: boolean;
    readonly isHidden: boolean;
    readonly disposed: import("@lumino/signaling").ISignal<Widget, void>;
    addClass(name: string): void;
    show(): void;
    hide(): void;
    dispose(): void;
  }
  export class Panel extends Widget {
    readonly widgets: ReadonlyArray<Widget>;
    addWidget(widget: Widget): void;
  }
}

declare module "@jupyterlab/rendermime" {
  import type { Widget } from "@lumino/widgets";
  export interface IMimeModel {
    readonly trusted: boolean;
    readonly data: Readonly<Record<string, any>>;
    readonly metadata: Readonly<Record<string, any>>;
    setData(options: unknown): void;
  }
  export interface IRendererFactory {
    readonly safe: boolean;
    readonly mimeTypes: ReadonlyArray<string>;
    createRenderer(options: { mimeType: string }): Widget;
  }
  export interface IRenderMimeRegistry {
    getFactory(mimeType: string): IRendererFactory | undefined;
    createRenderer(mimeType: string): Widget;
    addFactory(factory: IRendererFactory, rank?: number): void;
  }
  export const IRenderMimeRegistry: unknown;
}

declare module "@jupyterlab/notebook" {
  import type { ISignal } from "@lumino/signaling";
  import type { Widget } from "@lumino/widgets";
  import type { IRenderMimeRegistry } from "@jupyterlab/rendermime";
  export interface ISessionContext {
    readonly ready: Promise<void>;
    readonly kernelChanged: ISignal<ISessionContext, unknown>;
    readonly statusChanged: ISignal<ISessionContext, unknown>;
  }
  export class NotebookPanel extends Widget {
    readonly content: Widget & { readonly rendermime: IRenderMimeRegistry };
    readonly sessionContext: ISessionContext;
  }
  export interface INotebookTracker {
    forEach(fn: (panel: NotebookPanel) => void): void;
    readonly widgetAdded: ISignal<INotebookTracker, NotebookPanel>;
  }
  export const INotebookTracker: unknown;
}
