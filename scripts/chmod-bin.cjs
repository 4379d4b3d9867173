// Makes the `kiln` command (package.json "bin", compiled by tsc without the execute bit) executable,
// so `npx kiln …` works straight after `npm ci` in a clone (npm links and chmods the bins of
// dependencies, not the root package's own). Run after every tsc build.
'use strict';
const fs = require('fs');
const path = require('path');
const pkg = require('../package.json');
for (const rel of Object.values(pkg.bin || {})) {
  const file = path.join(__dirname, '..', rel);
  if (fs.existsSync(file)) fs.chmodSync(file, fs.statSync(file).mode | 0o111);
}
