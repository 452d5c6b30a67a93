// The extension's unit tests run under plain Node, without VS Code: `require("vscode")` gives
// this stand-in, which keeps what the extension hands VS Code (a notification's message, a
// progress line, a tree item, an input box's options, a setting read) for the tests to read.
// The extension's compiled modules are read from EXTENSION_OUT (default: ../out).

"use strict";
const Module = require("node:module");
const path = require("node:path");

const shown = [];
const state = { levels: {}, commands: new Map(), shown };

class Disposable { dispose() {} }
const disposable = () => new Disposable();

class TreeItem {
  constructor(label, collapsibleState) {
    this.label = label;
    this.collapsibleState = collapsibleState;
  }
}

const vscode = {
  TreeItem,
  TreeItemCollapsibleState: { None: 0, Collapsed: 1, Expanded: 2 },
  ProgressLocation: { SourceControl: 1, Window: 10, Notification: 15 },
  DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
  StatusBarAlignment: { Left: 1, Right: 2 },
  ViewColumn: { Active: -1, Beside: -2, One: 1 },
  Range: class { constructor(...at) { this.at = at; } },
  Diagnostic: class { constructor(range, message, severity) { Object.assign(this, { range, message, severity }); } },
  ThemeColor: class { constructor(id) { this.id = id; } },
  ThemeIcon: class { constructor(id, color) { this.id = id; this.color = color; } },
  Uri: { file: (fsPath) => ({ scheme: "file", fsPath }) },
  EventEmitter: class { constructor() { this.event = () => disposable(); } fire() {} dispose() {} },
  CancellationTokenSource: class {
    constructor() { this.token = { isCancellationRequested: false, onCancellationRequested: disposable }; }
    cancel() { this.token.isCancellationRequested = true; } dispose() {}
  },
  window: {
    showInformationMessage: (...said) => { shown.push(["info", ...said]); return Promise.resolve(undefined); },
    showWarningMessage: (...said) => { shown.push(["warning", ...said]); return Promise.resolve(undefined); },
    showErrorMessage: (...said) => { shown.push(["error", ...said]); return Promise.resolve(undefined); },
    showInputBox: (options) => { shown.push(["input", options]); return Promise.resolve(undefined); },
    withProgress: (options, task) => { shown.push(["withProgress", options]); return Promise.resolve(task({ report: (r) => shown.push(["report", r]) }, {})); },
    createWebviewPanel: (viewType, title) => { shown.push(["webview", viewType, title]); return {}; },
  },
  workspace: {
    onDidChangeConfiguration: disposable,
    /** `section.key`'s levels are state.levels[`section.key`] (an inspect() result); get() is
     * VS Code's own resolution: the most specific level set wins. */
    getConfiguration: (section, scope) => {
      const full = (key) => (section ? `${section}.${key}` : key);
      return {
        inspect: (key) => ({ key: full(key), defaultValue: undefined, ...state.levels[full(key)] }),
        get: (key, fallback) => {
          const levels = state.levels[full(key)] ?? {};
          for (const level of ["workspaceFolderValue", "workspaceValue", "globalValue"]) {
            if (levels[level] !== undefined) return levels[level];
          }
          return fallback;
        },
        scope,
      };
    },
  },
  commands: {
    registerCommand: (id, run) => { state.commands.set(id, run); return disposable(); },
  },
};

const load = Module._load;
Module._load = function (request, ...rest) {
  return request === "vscode" ? vscode : load.call(this, request, ...rest);
};

const OUT = process.env.EXTENSION_OUT || path.join(__dirname, "..", "out");

/** The extension's compiled module `name` (e.g. "say"). */
function extension(name) {
  return require(path.join(OUT, `${name}.js`));
}

module.exports = { vscode, state, extension };
