// Finding the Python tool: the .vsix carries the package's wheel (wheel/*.whl); on first use it
// is installed into a private virtual environment in the extension's global storage, made with
// the first Python 3.11+ found (the Python extension's interpreter first, then python3...).
// Nothing of the export is written here: the extension only runs `python -m openlineage_export`.

import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import * as say from "./say";

export const NEEDS =
  "OpenLineage Export needs Python 3.11 or later with venv and pip (on Debian/Ubuntu: " +
  "sudo apt-get install python3 python3-venv; elsewhere from python.org), or the Python " +
  "extension with such an interpreter selected";

export class ToolMissing extends Error {}

export interface Tool {
  /** The Python of the private environment, which runs `-m openlineage_export`. */
  python: string;
}

/** `file ARGS` in `cwd` (a folder of the extension's: never the workspace's). */
function run(file: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, env: process.env, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          reject(new Error(`${path.basename(file)} ${args.join(" ")}: ${stderr || error.message}`));
        } else {
          resolve(stdout);
        }
      });
  });
}

async function pythonExtensionInterpreter(log: (line: string) => void):
  Promise<string | undefined> {
  const python = vscode.extensions.getExtension("ms-python.python");
  if (!python) {
    return undefined;
  }
  try {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const api: any = python.isActive ? python.exports : await python.activate();
    const active = api?.environments?.getActiveEnvironmentPath?.();
    const resolved = active ? await api.environments.resolveEnvironment(active) : undefined;
    const found: string | undefined = resolved?.executable?.uri?.fsPath ?? active?.path;
    if (found && inAWorkspace(found)) {
      // A workspace's own interpreter (a committed .venv, python.defaultInterpreterPath in
      // its settings) is its code: never run for the exporter.
      log(`${found}: the Python extension's interpreter is the workspace's: not used`);
      return undefined;
    }
    return found;
  } catch {
    return undefined;
  }
}

/** Whether `file` (as named, or where its links lead) lies in a workspace folder, or in the
 * repository that holds one: the workspace's, whoever pushed last wrote it. */
export function inAWorkspace(file: string): boolean {
  const places = [path.resolve(file)];
  try {
    places.push(fs.realpathSync(file));
  } catch {
    return true;  // unknown is untrusted
  }
  const tops = (vscode.workspace.workspaceFolders ?? []).flatMap((folder) => {
    const found = [folder.uri.fsPath];
    try {
      found.push(fs.realpathSync(folder.uri.fsPath));
    } catch {
      // a folder that is gone holds nothing
    }
    return [...found, ...found.map(repositoryOf).filter((r): r is string => !!r)];
  });
  return places.some((place) => tops.some((top) =>
    place === top || place.startsWith(top.endsWith(path.sep) ? top : top + path.sep)));
}

/** The folder holding `.git` at or above `folder`, if any. */
function repositoryOf(folder: string): string | undefined {
  for (let at = folder; ; at = path.dirname(at)) {
    if (fs.existsSync(path.join(at, ".git"))) {
      return at;
    }
    if (path.dirname(at) === at) {
      return undefined;
    }
  }
}

/** The first Python 3.11+ that can make a virtual environment (run isolated, -I, in `cwd`:
 * nothing of a workspace is imported). */
async function findPython(log: (line: string) => void, cwd: string): Promise<string> {
  const candidates = [await pythonExtensionInterpreter(log), "python3", "python3.13",
    "python3.12", "python3.11", "python"].filter((c): c is string => !!c);
  for (const candidate of candidates) {
    try {
      const out = await run(candidate, ["-I", "-c",
        "import sys, venv, ensurepip; print(sys.version_info >= (3, 11))"], cwd);
      if (out.trim() === "True") {
        return candidate;
      }
      log(`${candidate}: older than Python 3.11`);
    } catch (error) {
      log(`${candidate}: ${firstLine(error)}`);
    }
  }
  throw new ToolMissing(NEEDS);
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.trim().split("\n").slice(-1)[0];
}

let installing: Promise<Tool> | undefined;

/** The tool, installed into the private environment on first use (once per wheel). */
export function ensureTool(context: vscode.ExtensionContext,
  log: (line: string) => void): Promise<Tool> {
  installing ??= install(context, log).finally(() => { installing = undefined; });
  return installing;
}

async function install(context: vscode.ExtensionContext,
  log: (line: string) => void): Promise<Tool> {
  const wheels = fs.readdirSync(path.join(context.extensionPath, "wheel"))
    .filter((name) => name.endsWith(".whl"));
  if (wheels.length !== 1) {
    throw new ToolMissing(`the extension carries ${wheels.length} wheels, not one: reinstall it`);
  }
  const wheel = path.join(context.extensionPath, "wheel", wheels[0]);
  const venv = path.join(context.globalStorageUri.fsPath, "venv");
  const python = path.join(venv, process.platform === "win32" ? "Scripts/python.exe" : "bin/python");
  // The wheel's digest, not its name: a rebuilt wheel of the same version is installed too.
  const digest = `${wheels[0]} ${createHash("sha256").update(fs.readFileSync(wheel)).digest("hex")}`;
  const marker = path.join(venv, "installed-wheel");
  if (fs.existsSync(python) && readOr(marker) === digest) {
    return { python };
  }
  return say.withProgress("OpenLineage Export: installing the exporter (first use)", false,
    async () => {
    const storage = path.dirname(venv);
    fs.mkdirSync(storage, { recursive: true });
    const base = await findPython(log, storage);
    log(`installing ${wheels[0]} into ${venv} with ${base}`);
    try {
      fs.rmSync(venv, { recursive: true, force: true });
      await run(base, ["-I", "-m", "venv", venv], storage);
      await run(python, ["-I", "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        wheel], storage);
    } catch (error) {
      log(String(error instanceof Error ? error.message : error));
      throw new ToolMissing(`${NEEDS}. Installing the exporter with ${base} failed: ` +
        `${firstLine(error)} (the Output panel, OpenLineage Export, has the whole message)`);
    }
    fs.writeFileSync(marker, digest);
    log(`installed ${wheels[0]}`);
    return { python };
  });
}

function readOr(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
