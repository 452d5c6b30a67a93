// The keys: stored in VS Code's secret storage (never in settings, which travel with the
// workspace), listed in the SECRETS view, handed to an export in its environment only, and only
// where the CLI's trust model says they may go (`secrets check`).

import * as vscode from "vscode";
import { Cli, HOST_SECRETS, NAME } from "./cli";
import { KIND_SECRETS } from "./kindSecrets";
import { KeyRing, SecretsView } from "./secretsView";
import { SettingsFile } from "./settingsFile";
import { SettingsMirror } from "./settingsMirror";
import { Tool } from "./tool";
import * as say from "./say";

const SECRET_NAME = /^[A-Za-z0-9._-]{1,128}$/;
const API_KEY_REF = "openlineage.apiKey.secretRef";
const SEND_THERE = "Send it there";

/** Asks whether the key `ref` (`what`: "the API key") may go to `origin`, which its owner has
 * not approved for it. */
export type Ask = (ref: string, origin: string, what: string) => Promise<boolean>;

export class Keys implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];

  /** `ring`: the keys' names and the servers each is approved for: the user's, never the
   * workspace's. */
  constructor(
    readonly ring: KeyRing,
    private readonly cli: Cli,
    settings: SettingsFile | undefined,
    private readonly mirror: SettingsMirror | undefined,
  ) {
    const view = new SecretsView(this.ring, {
      inUse: () => this.used,
      destinationOrigin: async (name) => {
        await mirror?.settled();
        const url = await this.urlInForce();
        const found = url && await cli.tool();
        if (!url || !found) {
          return { error: url ? "the exporter is not available" : "openlineage.url is not set" };
        }
        const verdict = await cli.checkKey(found, name, url);
        return typeof verdict === "string" ? { error: verdict } : verdict.origin;
      },
      add: () => this.store(true),
    });
    this.disposables.push(view);
    // The names the settings use, read in the background (the view is drawn at once, never
    // waiting for the tool), again as the settings change.
    const readUsed = () => void cli.inForce().then((inForce) => {
      this.used = new Map("error" in inForce ? [] : KIND_SECRETS.flatMap(({ setting }) => {
        const name = inForce[setting]?.value;
        return typeof name === "string" && name ? [[name, setting] as [string, string]] : [];
      }));
      view.refresh();
    });
    readUsed();
    if (settings) {
      this.disposables.push(settings.onDidChange(readUsed));
    }
  }

  /** The key names the settings in force use, with the setting naming each, as last read. */
  private used = new Map<string, string>();

  /** openlineage.url in force, as the CLI reads it (the workspace's settings.json, the
   * environment VS Code was started in...); undefined when it has none. */
  private async urlInForce(): Promise<string | undefined> {
    const inForce = await this.cli.inForce(true);
    const url = "error" in inForce ? undefined : inForce["openlineage.url"]?.value;
    return typeof url === "string" && url ? url : undefined;
  }

  /** The export's environment: the editor's, with the key of the destination in force when
   * VS Code's secret storage holds the one the settings name; undefined when the export may
   * not start (said). The key is handed over as a key of the editor's storage, with the
   * servers its owner approved it for (OPENLINEAGE_EXPORT_HOST_SECRETS): the CLI sends it
   * only to one of those, whatever url the workspace names, and the extension vouches for no
   * url (it never copies a workspace's value into a variable of the user's). Before a person's
   * export, the CLI is asked where it would go (`secrets check`): a server not approved for
   * it yet is `ask`ed about (and approved from then on), plain http to another machine is an
   * error approving would not change. A key in the editor's own environment is the CLI's
   * to take or refuse (a workspace's url never gets it). */
  async environment(found: Tool, dryRun: boolean, ask: Ask):
    Promise<NodeJS.ProcessEnv | undefined> {
    const env = await this.cli.environment();
    if (dryRun) {
      return env;  // a dry run sends nothing: it needs no key
    }
    const inForce = await this.cli.inForce(true);
    if ("error" in inForce) {
      return env;  // the export says what is wrong with the settings
    }
    const held = await this.ring.held();
    const transport = inForce["openlineage.transport"]?.value;
    for (const secret of KIND_SECRETS.filter((s) => s.kind === transport)) {
      const name = inForce[secret.setting]?.value;
      const value = typeof name === "string" && held[name] && !process.env[secret.env] ?
        await this.ring.get(name) : undefined;
      if (typeof name !== "string" || !value) {
        continue;
      }
      const address = inForce[secret.address]?.value;
      if (typeof address === "string" && /^https?:\/\//i.test(address)) {
        const verdict = await this.cli.checkKey(found, name, address,
          { ...env, [HOST_SECRETS]: JSON.stringify(held) });
        if (typeof verdict === "string" || (!verdict.may && verdict.reason !== "not approved")) {
          const why = typeof verdict === "string" ? verdict : verdict.message;
          this.cli.log(`export not started: ${why}`);
          void say.error(`${NAME}: ${why}`);
          return undefined;
        }
        if (!verdict.may) {
          if (!await ask(name, verdict.origin, secret.what)) {
            this.cli.log(`export not started: the key '${name}' is not approved for ` +
              verdict.origin);
            return undefined;
          }
          await this.ring.approve(name, verdict.origin);
          held[name].origins = this.ring.approved(name);
        }
      }
      held[name].value = value;
    }
    env[HOST_SECRETS] = JSON.stringify(held);
    return env;
  }

  /** A person's export asks, and waits for the answer. */
  readonly askModal: Ask = async (ref, origin, what) =>
    await say.ask(question(ref, origin, what), SEND_THERE) === SEND_THERE;

  /** Nobody asked for this export just now (auto-export): a notice, not a modal; its answer
   * approves the server and calls `then`. */
  askLater(then: () => Promise<void>): Ask {
    return async (ref, origin, what) => {
      void say.warn(question(ref, origin, what), SEND_THERE)
        .then(async (choice) => {
          if (choice === SEND_THERE) {
            await this.ring.approve(ref, origin);
            await then();
          }
        });
      return false;
    };
  }

  /** OpenLineage: Store API Key; `askName`: the SECRETS view's +, which asks for the name even
   * when the settings name one (offered first). openlineage.apiKey.secretRef then names the
   * key stored: when it named none, it is set; when it names another, the person is asked
   * whether to use this one instead (and told which one exports send). */
  async store(askName = false): Promise<void> {
    const mirror = this.mirror;
    if (!this.cli.root || !mirror) {
      void say.error(`${NAME}: open a workspace folder (the one holding ` +
        ".workspace/) first");
      return;
    }
    await mirror.settled();
    const inForce = await this.cli.inForce(true);
    const value = "error" in inForce ? undefined : inForce[API_KEY_REF]?.value;
    // The CLI's values in force are unchecked: a name only if it can be one.
    const named = typeof value === "string" && SECRET_NAME.test(value) ? value : undefined;
    let name = named;
    if (askName || !name) {
      name = await say.input({
        title: "OpenLineage: Store API Key",
        prompt: ("A name for the key, saying what it is for (e.g. marquez-prod), " +
          "never the key: " + (named ? `${API_KEY_REF} names '${named}' (another name asks ` +
            "whether to use it instead)" : `${API_KEY_REF} will then name it`)),
        value: named,
        ignoreFocusOut: true,
        validateInput: (text) => SECRET_NAME.test(text) ? undefined :
          "1 to 128 letters, digits, '.', '_' or '-'",
      });
      if (!name) {
        return;
      }
    }
    const url = await this.urlInForce();
    const found = url && await this.cli.tool();
    const checked = found && await this.cli.checkKey(found, name, url);
    const origin = checked && typeof checked !== "string" ? checked.origin : undefined;
    const key = await say.input({
      title: "OpenLineage: Store API Key",
      prompt: (`The API key for '${name}', sent only to ` +
        `${origin ?? "the server in openlineage.url"} ` +
        "(kept in VS Code's secret storage; exports pass it to the exporter in its environment " +
        "only)"),
      password: true,
      ignoreFocusOut: true,
      validateInput: (text) => !text ? "the key cannot be empty" :
        /[\s\x00-\x1f\x7f]/.test(text) ? "one line, without spaces" : undefined,
    });
    if (!key) {
      return;
    }
    await this.ring.store(name, key);
    if (origin) {
      await this.ring.approve(name, origin);  // the server it was stored for
    }
    this.cli.log(`API key stored in VS Code's secret storage as '${name}'` +
      (origin ? `, for ${origin}` : ""));
    const stored = `${NAME}: API key stored as '${name}' in VS Code's secret storage`;
    let namedNow = named;
    if (name !== named) {
      const use = `Use '${name}'`;
      if (!named || await say.askInfo(`${stored}. ${API_KEY_REF} names '${named}': exports ` +
        `send that key. Use '${name}' for this workspace's exports instead?`, use) === use) {
        namedNow = await this.name(name) ? name : named;
      }
    }
    void say.info(namedNow === name ?
      `${stored}; exports send it${origin ? ` to ${origin}` : ""}` :
      `${stored}; exports send ${namedNow ? `'${namedNow}', the key ${API_KEY_REF} names` :
        "no key"}`);
  }

  /** openlineage.apiKey.secretRef := `name`, through the mirror's queue (after what was
   * typed); false when the CLI refused it (said). */
  private async name(name: string): Promise<boolean> {
    const mirror = this.mirror;
    let refused: unknown;
    await mirror?.enqueue(async () => {
      try {
        await this.cli.writeSetting(API_KEY_REF, name);
      } catch (error) {
        refused = error;
        return;
      }
      await mirror.pullFromFile();
    });
    if (refused !== undefined) {
      void say.error(`${NAME}: ${API_KEY_REF} was not changed: ` +
        (refused instanceof Error ? refused.message : String(refused)));
    }
    return refused === undefined;
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }
}

function question(ref: string, origin: string, what: string): string {
  return `${NAME}: the workspace's settings send ${what} '${ref}' to ${origin}, which you ` +
    "have not approved for it. Send it there, now and from now on?";
}
