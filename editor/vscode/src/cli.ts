// The tool, as the rest of the extension calls it: installed on first use (tool.ts), run as a
// child with the editor's environment (child.ts), its answers read. One object per window,
// on the workspace folder (the one holding .workspace/).

import * as fs from "node:fs";
import * as vscode from "vscode";
import { cliError, Finished, ProgressLine, runTool } from "./child";
import { ensureTool, Tool, ToolMissing } from "./tool";
import * as say from "./say";

export const NAME = "OpenLineage Export";

/** The CLI's verdict on a key of the editor's (`secrets check`). */
export interface KeyVerdict {
  name: string;
  /** The server's origin, as the CLI spells it (the one spelling every address of it shares). */
  origin: string;
  may: boolean;
  /** "approved", "not approved" (its owner may approve it), "in clear text". */
  reason: string;
  message: string;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  onLine?: (line: ProgressLine) => void;
  token?: vscode.CancellationToken;
  stdin?: "pipe";
}

/** The keys of VS Code's secret storage, as the CLI is told of them: names and approved
 * servers, and the value of those an export may send. */
export type HeldKeys = Record<string, { origins: string[]; value?: string }>;

/** The environment variable the CLI reads the editor's keys from (host/host_secrets.py). */
export const HOST_SECRETS = "OPENLINEAGE_EXPORT_HOST_SECRETS";

/** A setting's value in force and where it comes from, as `settings list --json` says. */
export interface InForce { value: unknown; source: string }

export class Cli {
  /** `held`: the keys the editor keeps (names and approvals), told to every run of the CLI. */
  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly root: string | undefined,
    readonly log: (line: string) => void,
    private readonly held: () => Promise<HeldKeys>,
  ) {}

  /** The environment of a run of the CLI: the editor's (baseEnvironment), and the names of
   * the keys the editor keeps with their approved servers, never a key (an export adds the
   * keys it may send: keys.ts). */
  async environment(): Promise<NodeJS.ProcessEnv> {
    return { ...baseEnvironment(), [HOST_SECRETS]: JSON.stringify(await this.held()) };
  }

  /** The tool, installed on first use; undefined (said in a notification) when it cannot be. */
  async tool(): Promise<Tool | undefined> {
    try {
      return await ensureTool(this.context, this.log);
    } catch (error) {
      const message = error instanceof ToolMissing ? error.message : `${NAME}: ${error}`;
      void say.error(message);
      return undefined;
    }
  }

  /** `openlineage-export ARGS` in the workspace folder (`-w` is the caller's to give). */
  async run(found: Tool, args: string[], options: RunOptions = {}): Promise<Finished> {
    if (!this.root) {
      throw new Error("no workspace folder is open");
    }
    return runTool(found, args, { cwd: this.cwd(), env: options.env ?? await this.environment(),
      onLine: options.onLine, token: options.token, stdin: options.stdin });
  }

  /** Where the tool runs: a folder of the extension's, never the workspace (whose files are
   * untrusted: an openlineage.yml there is not the user's, whatever the tool can tell of the
   * repository's edge). The workspace is named with -w. */
  private cwd(): string {
    const folder = this.context.globalStorageUri.fsPath;
    fs.mkdirSync(folder, { recursive: true });
    return folder;
  }

  /** `ARGS --json`'s answer, or why there is none. */
  async json<T>(args: string[]): Promise<T | { error: string }> {
    const found = this.root && await this.tool();
    if (!this.root || !found) {
      return { error: this.root ? "the exporter is not available" : "open a workspace folder" };
    }
    const done = await this.run(found, args);
    try {
      return JSON.parse(done.stdout) as T;
    } catch {
      return { error: cliError(done) };
    }
  }

  /** `settings set KEY VALUE` (or `settings unset KEY`) by the CLI: its checks, its file;
   * resolves to its warnings (a url that ends with the endpoint...). */
  async writeSetting(key: string, value: string | undefined): Promise<string[]> {
    const found = await this.tool();
    if (!found || !this.root) {
      throw new Error("the exporter is not available");
    }
    const args = value === undefined ? ["settings", "unset", key] : ["settings", "set", key, value];
    const done = await this.run(found, [...args, "-w", this.root]);
    this.forget();
    if (done.code !== 0) {
      throw new Error(cliError(done));
    }
    return done.messages.filter((line) => line.startsWith("warning: "))
      .map((line) => line.slice("warning: ".length));
  }

  /** The value in force of each of the tool's settings, and where it comes from (the
   * workspace's settings.json, the environment, a default...): `settings list --json`. The
   * views take the last answer until the settings change (`forget`); `fresh`: read now (what
   * decides where a key goes). */
  inForce(fresh = false): Promise<Record<string, InForce> | { error: string }> {
    if (fresh || !this.lastInForce) {
      this.lastInForce = this.readInForce();
    }
    return this.lastInForce;
  }

  /** The settings changed: the next `inForce` reads them again. */
  forget(): void {
    this.lastInForce = undefined;
  }

  private lastInForce: Promise<Record<string, InForce> | { error: string }> | undefined;

  private async readInForce(): Promise<Record<string, InForce> | { error: string }> {
    if (!this.root) {
      return { error: "open a workspace folder" };
    }
    const rows = await this.json<{ key: string; value: unknown; source: string }[]>(
      ["settings", "list", "--json", "-w", this.root]);
    if (!Array.isArray(rows)) {
      return rows;
    }
    return Object.fromEntries(rows.map((row) => [row.key, { value: row.value,
      source: row.source }]));
  }

  /** May the key `name` go to `url`? The CLI decides, with its own trust model and the servers
   * approved for the key here (told in its environment); a string: why it could not say (not
   * a URL...). */
  async checkKey(found: Tool, name: string, url: string, env?: NodeJS.ProcessEnv):
    Promise<KeyVerdict | string> {
    const done = await this.run(found, ["secrets", "check", name, url, "--json"], { env });
    try {
      return JSON.parse(done.stdout) as KeyVerdict;
    } catch {
      return cliError(done);
    }
  }
}

/** The editor's environment with its HTTP surface: http.proxy, http.noProxy and
 * http.proxyStrictSSL apply to the export as they apply to the editor. */
export function baseEnvironment(): NodeJS.ProcessEnv {
  // The CLI words its hints for VS Code ("openlineage.url in Settings", not "--url").
  const env: NodeJS.ProcessEnv = { ...process.env, OPENLINEAGE_EXPORT_HOST: "vscode" };
  const http = vscode.workspace.getConfiguration("http");
  const proxy = http.get<string>("proxy");
  if (proxy && http.get<string>("proxySupport") !== "off") {
    for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]) {
      env[name] = proxy;
    }
  }
  const noProxy = http.get<string[]>("noProxy") ?? [];
  if (noProxy.length) {
    const before = env.NO_PROXY ?? env.no_proxy;
    env.NO_PROXY = env.no_proxy = [...(before ? [before] : []), ...noProxy].join(",");
  }
  const proxied = env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy;
  if (proxied && http.get<boolean>("proxyStrictSSL") === false) {
    env.OPENLINEAGE_TLS_VERIFY = "false";
  }
  return env;
}
