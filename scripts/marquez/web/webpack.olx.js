// Upstream's production configuration of Marquez's web UI (web/webpack.prod.js), as
// scripts/marquez.sh builds it: one rule amended, so that the fonts its style sheet names are
// emitted as the font files they are.
//
// src/index.css names its fonts with url() (Karla, Source Code Pro). css-loader 6 makes each a
// `new URL(...)` dependency, which webpack 5 emits as an asset of its own; upstream's file-loader
// rule for fonts matched them too, so what was emitted under the hashed name the CSS points to
// was file-loader's JavaScript module (`export default __webpack_public_path__ +
// "fonts/Karla-Regular.ttf"`): Chromium rejects it ("OTS parsing error: invalid sfntVersion")
// and draws the page in a fallback font. Here file-loader keeps what scripts import, and what
// a style sheet's url() names is left to webpack's own asset modules (the file, as it is).
'use strict'

const config = require('./webpack.prod.js')

for (const rule of config.module.rules) {
  const loaders = [rule.loader, ...(rule.use || []).map((use) => use.loader || use)]
  if (loaders.includes('file-loader')) {
    rule.dependency = { not: ['url'] }
  }
}

module.exports = config
