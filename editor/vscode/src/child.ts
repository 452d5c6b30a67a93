// The tool as a child process: `python -I -m openlineage_export ARGS`, its stderr read line by
// line (JSON lines of `--progress json`, or plain messages), its stdout kept whole (`--json`).
// Cancelling sends SIGINT, as Ctrl-C does: the tool finishes the requests in flight, keeps the
// ledger, and exits 130.

import { ChildProcessByStdio, spawn } from "node:child_process";
import { Readable } from "node:stream";
import * as vscode from "vscode";
import { Tool } from "./tool";

/** One line of `--progress json` (event: progress, badEntry, retry, warning, message,
 * error, finished). */
export interface ProgressLine {
  event: string;
  [field: string]: unknown;
}

export interface Finished {
  /** The exit code (130 when interrupted), or null when killed by a signal. */
  code: number | null;
  stdout: string;
  /** stderr lines that were not JSON (plain messages, `error: ...`). */
  messages: string[];
}

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  onLine?: (line: ProgressLine) => void;
  token?: vscode.CancellationToken;
  /** "pipe": standard input is a pipe held open until the child ends (a watch run with
   * --until-stdin-closes ends when it closes: when this process goes, however it goes). */
  stdin?: "pipe";
}

export function runTool(tool: Tool, args: string[], options: RunOptions): Promise<Finished> {
  return new Promise((resolve, reject) => {
    // -I: isolated, so that nothing of the folder it runs in is imported (`-m` would put the
    // current folder first on sys.path) and no PYTHON* variable changes what runs.
    const child = spawn(tool.python, ["-I", "-m", "openlineage_export", ...args], {
      cwd: options.cwd, env: options.env, stdio: [options.stdin ?? "ignore", "pipe", "pipe"],
    }) as ChildProcessByStdio<null, Readable, Readable>;
    const stdout: Buffer[] = [];
    const messages: string[] = [];
    let pending = "";
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      pending += chunk;
      let end: number;
      while ((end = pending.indexOf("\n")) >= 0) {
        handle(pending.slice(0, end));
        pending = pending.slice(end + 1);
      }
    });
    const handle = (text: string) => {
      if (!text.trim()) {
        return;
      }
      if (text.startsWith("{")) {
        try {
          const line = JSON.parse(text) as ProgressLine;
          if (typeof line.event === "string") {
            options.onLine?.(line);
            return;
          }
        } catch {
          // not JSON after all: a plain message
        }
      }
      messages.push(text);
    };
    const cancelled = options.token?.onCancellationRequested(() => {
      if (child.exitCode === null) {
        child.kill("SIGINT");
      }
    });
    child.on("error", (error) => {
      cancelled?.dispose();
      reject(error);
    });
    child.on("close", (code) => {
      cancelled?.dispose();
      handle(pending);
      resolve({ code, stdout: Buffer.concat(stdout).toString("utf8"), messages });
    });
  });
}

/** The CLI's own error line (without its "error: " prefix). */
export function cliError(done: Finished): string {
  const lines = done.messages.length ? done.messages : [done.stdout.trim()];
  const text = lines.filter(Boolean).join(" ").replace(/^error: /, "");
  return text || `the exporter exited with code ${done.code}`;
}
