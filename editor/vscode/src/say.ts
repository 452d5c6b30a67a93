// What the extension shows a person, wherever it shows it: the one way there
// (tests/test_vscode_extension.py fails on any other call of VS Code's show*Message,
// progress.report, withProgress, TreeItem, a tree view's message or description, a status bar
// item's text or tooltip, an input box, a quick pick, a webview panel's title, a diagnostic).
//
// What it shows carries text from outside: a server's reason for refusing a run or for a retry,
// a setting's value quoted by the CLI, a pipeline's name, a trace id from the trail. VS Code
// turns "[label](command:ID?ARGS)" in a notification's message, a progress notification's
// included, into a link that runs the command when clicked (its arguments too: typing into a
// terminal is one such command), so a hostile server or workspace could dress a command as
// "[Retry](command:...)". Every string is made plain here: a zero-width space between "]" and
// "(", and after "command" before ":", keeps the text as it reads, and no link is made; control
// and format characters (ESC, bidi overrides, zero-width ones) are shown escaped (\x1b, \u202e),
// so that none reorders or hides what is shown.

import * as vscode from "vscode";

/** The zero-width space this module puts in a would-be link: kept where it put it (`plain` of
 * a plain text is that text), shown escaped anywhere else. */
const UNSEEN =
  /(?!(?<=\])\u200b\()(?!(?<=command)\u200b:)[\p{Cf}\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/giu;

/** `char` as it is written in code: \x1b, \u202e, \u{e0041}. */
function escaped(char: string): string {
  const code = char.codePointAt(0) ?? 0;
  const hex = code.toString(16);
  return code < 0x100 ? `\\x${hex.padStart(2, "0")}` :
    code < 0x10000 ? `\\u${hex.padStart(4, "0")}` : `\\u{${hex}}`;
}

/** `text` with no link VS Code would make of it, and nothing in it unseen: control and format
 * characters escaped (a line break and a tab kept), "](" and "command:" broken by a zero-width
 * space. */
export function plain(text: string): string {
  return String(text).replace(UNSEEN, escaped)
    .replace(/\]\(/g, "]\u200b(")
    .replace(/(command)(?=:)/giu, "$1\u200b");
}

/** A line of a progress notification (VS Code makes links there too). */
export function progress(to: vscode.Progress<{ message?: string; increment?: number }>,
  message: string, increment?: number): void {
  to.report(increment === undefined ? { message: plain(message) } :
    { message: plain(message), increment });
}

/** A progress notification titled `title`; `task` says its lines through `progress` above. */
export function withProgress<R>(title: string, cancellable: boolean,
  task: (progress: vscode.Progress<{ message?: string; increment?: number }>,
    token: vscode.CancellationToken) => Thenable<R>): Thenable<R> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification,
    title: plain(title), cancellable }, task);
}

/** What a tree item shows beside its label. */
export interface Shown {
  description?: string;
  tooltip?: string;
  /** What a screen reader says of it. */
  accessible?: string;
}

/** A tree item labelled `label` (its icon, command and context are the caller's). */
export function treeItem(label: string, state: vscode.TreeItemCollapsibleState,
  shown: Shown = {}): vscode.TreeItem {
  const item = new vscode.TreeItem(plain(label), state);
  if (shown.description !== undefined) {
    item.description = plain(shown.description);
  }
  if (shown.tooltip !== undefined) {
    item.tooltip = plain(shown.tooltip);
  }
  if (shown.accessible !== undefined) {
    item.accessibilityInformation = { label: plain(shown.accessible) };
  }
  return item;
}

/** A tree view's message (above its items) and description (beside its title): each given
 * one is set, undefined clears it. */
export function viewSays<T>(view: vscode.TreeView<T>,
  said: { message?: string; description?: string }): void {
  if ("message" in said) {
    view.message = said.message === undefined ? undefined : plain(said.message);
  }
  if ("description" in said) {
    view.description = said.description === undefined ? undefined : plain(said.description);
  }
}

/** The status bar item's text and tooltip. The text's leading codicon ("$(eye) ") is ours; in
 * the rest a "$(" is broken too, so that no text from outside draws an icon. */
export function statusBar(item: vscode.StatusBarItem, text: string, tooltip: string): void {
  const icon = /^\$\([A-Za-z0-9~-]+\) /.exec(text)?.[0] ?? "";
  item.text = icon + plain(text.slice(icon.length)).replace(/\$\(/g, "$\u200b(");
  item.tooltip = plain(tooltip);
}

/** An input box; its title, prompt, placeholder and validation messages made plain. */
export function input(options: vscode.InputBoxOptions): Thenable<string | undefined> {
  const check = options.validateInput;
  return vscode.window.showInputBox({
    ...options,
    title: options.title === undefined ? undefined : plain(options.title),
    prompt: options.prompt === undefined ? undefined : plain(options.prompt),
    placeHolder: options.placeHolder === undefined ? undefined : plain(options.placeHolder),
    validateInput: check && (async (value) => {
      const said = await check(value);
      return typeof said === "string" ? plain(said) : said;
    }),
  });
}

/** A problem at `range` (the Problems panel, the editor's hover). */
export function diagnostic(range: vscode.Range, message: string,
  severity: vscode.DiagnosticSeverity): vscode.Diagnostic {
  return new vscode.Diagnostic(range, plain(message), severity);
}

/** A webview panel titled `title`. */
export function webviewPanel(viewType: string, title: string,
  showOptions: vscode.ViewColumn | { viewColumn: vscode.ViewColumn; preserveFocus?: boolean },
  options: vscode.WebviewPanelOptions & vscode.WebviewOptions): vscode.WebviewPanel {
  return vscode.window.createWebviewPanel(viewType, plain(title), showOptions, options);
}

export function info(message: string, ...offers: string[]): Thenable<string | undefined> {
  return vscode.window.showInformationMessage(plain(message), ...offers);
}

export function warn(message: string, ...offers: string[]): Thenable<string | undefined> {
  return vscode.window.showWarningMessage(plain(message), ...offers);
}

export function error(message: string, ...offers: string[]): Thenable<string | undefined> {
  return vscode.window.showErrorMessage(plain(message), ...offers);
}

/** A modal question; resolves to the offer chosen (undefined: none, Escape). */
export function ask(message: string, ...offers: string[]): Thenable<string | undefined> {
  return vscode.window.showWarningMessage(plain(message), { modal: true }, ...offers);
}

/** A modal question that is not a warning (an information dialog). */
export function askInfo(message: string, ...offers: string[]): Thenable<string | undefined> {
  return vscode.window.showInformationMessage(plain(message), { modal: true }, ...offers);
}
