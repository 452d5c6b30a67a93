// openlineage.dryRun in force (dryRun.ts): a workspace's or folder's settings can turn it on,
// never off, for the palette's export and for auto-export alike.

"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const { state, extension } = require("./vscode");

const { dryRunOf, dryRunInForce } = extension("dryRun");
const { AutoExport } = extension("autoExport");
const { Commands } = extension("commands");

const FOLDER = "/work/ws";
const CASES = [
  // [the levels, dry run in force]
  [{}, false],
  [{ globalValue: true }, true],
  [{ globalValue: false }, false],
  [{ globalValue: true, workspaceFolderValue: false }, true],  // attack F4: the folder's false
  [{ globalValue: true, workspaceValue: false }, true],
  [{ globalValue: true, workspaceValue: false, workspaceFolderValue: false }, true],
  [{ globalValue: false, workspaceFolderValue: true }, true],  // a folder may turn it on
  [{ workspaceValue: true }, true],
  [{ globalValue: false, workspaceValue: false }, false],
  [{ globalValue: true, workspaceFolderLanguageValue: false }, true],
  [{ workspaceLanguageValue: true }, true],
  [{ globalValue: "true" }, false],  // only a boolean true is on (VS Code checks the type)
];

test("any level's true is in force; no level's false undoes it", () => {
  for (const [levels, on] of CASES) {
    assert.equal(dryRunOf(levels), on, JSON.stringify(levels));
  }
  assert.equal(dryRunOf(undefined), false);
});

test("read from the folder's settings as VS Code gives them", () => {
  state.levels = { "openlineage.dryRun": { globalValue: true, workspaceFolderValue: false } };
  // The premise: VS Code's own resolution gives the folder's false.
  assert.equal(require("./vscode").vscode.workspace.getConfiguration("openlineage").get("dryRun"), false);
  assert.equal(dryRunInForce(FOLDER), true);
  assert.equal(dryRunInForce(undefined), true);
});

function autoExport() {
  const host = { folder: FOLDER, status: { idle() {}, set() {} }, log() {} };
  const secrets = { onDidChange: () => ({ dispose() {} }) };
  return new AutoExport(host, secrets, () => ({ dispose() {} }));
}

test("auto-export waits while the user's dry run is on, whatever the folder says", () => {
  for (const [levels, on] of CASES) {
    state.levels = { "openlineage.autoExport": { globalValue: true }, "openlineage.dryRun": levels };
    assert.equal(autoExport().enabled(), !on, JSON.stringify(levels));
  }
  // autoExport itself: the User value only (a folder cannot turn it on).
  state.levels = { "openlineage.autoExport": { workspaceFolderValue: true } };
  assert.equal(autoExport().enabled(), false);
});

test("the palette's export is a dry run while the user's dry run is on, whatever the folder says", async () => {
  const asked = [];
  const exportRuns = Commands.prototype.exportRuns;
  Commands.prototype.exportRuns = async (dryRun, bySetting) => { asked.push([dryRun, bySetting]); };
  try {
    new Commands({ cli: { root: FOLDER }, keys: {} });
    const run = state.commands.get("openlineage.export");
    for (const [levels, on] of CASES) {
      state.levels = { "openlineage.dryRun": levels };
      asked.length = 0;
      await run();
      assert.deepEqual(asked, [[on, true]], JSON.stringify(levels));
    }
    // A keybinding's argument is the user's: it decides.
    state.levels = { "openlineage.dryRun": { globalValue: true } };
    asked.length = 0;
    await run({ dryRun: false });
    await run({ dryRun: true });
    assert.deepEqual(asked, [[false, false], [true, false]]);
  } finally {
    Commands.prototype.exportRuns = exportRuns;
  }
});
