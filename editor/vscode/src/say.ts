// What the extension says to a person in a notification or a dialog: the one way there
// (tests/test_vscode_extension.py fails on any other call of VS Code's show*Message).
//
// Its messages carry text from outside: a server's reason for refusing a run, a setting's
// value quoted by the CLI, a pipeline's name. VS Code turns "[label](command:ID?ARGS)" in a
// notification's message into a link that runs the command when clicked (its arguments too:
// typing into a terminal is one such command), so a hostile server or workspace could dress a
// command as "[Retry](command:...)". Every message is made plain here: a zero-width space
// between "]" and "(" keeps the text as it reads, and no link is made.

import * as vscode from "vscode";

/** `text` with no link VS Code would make of it. */
export function plain(text: string): string {
  return text.replace(/\]\(/g, "]\u200b(");
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
