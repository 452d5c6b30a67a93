// openlineage.dryRun in force: on when any level of Settings says true. The setting is
// folder-scoped so that a folder can ask for dry runs (a demo's, a shared sandbox's), but a
// folder's .vscode/settings.json travels with the workspace: it must never turn off the dry run
// the user turned on, or auto-export (the user's) would start sending to the folder's server
// with nobody asking. So a workspace or folder can turn it on, never off.

import * as vscode from "vscode";

/** The editor's setting that makes every export a dry run: auto-export then sends nothing. */
export const DRY_RUN = "openlineage.dryRun";

/** The levels of a setting as `WorkspaceConfiguration.inspect` gives them. */
export interface Levels {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
  globalLanguageValue?: unknown;
  workspaceLanguageValue?: unknown;
  workspaceFolderLanguageValue?: unknown;
}

/** Whether dry run is on: any level says true (the default is off); a `false` at one level
 * never undoes a `true` at another. */
export function dryRunOf(levels: Levels | undefined): boolean {
  if (!levels) {
    return false;
  }
  return [levels.globalValue, levels.workspaceValue, levels.workspaceFolderValue,
    levels.globalLanguageValue, levels.workspaceLanguageValue,
    levels.workspaceFolderLanguageValue].some((value) => value === true);
}

/** openlineage.dryRun in force for `folder` (dryRunOf its levels). */
export function dryRunInForce(folder: string | undefined): boolean {
  const config = vscode.workspace.getConfiguration("openlineage",
    folder ? vscode.Uri.file(folder) : undefined);
  return dryRunOf(config.inspect<boolean>("dryRun"));
}
