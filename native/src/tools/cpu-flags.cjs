// Prints the extra compiler flags for the machine that builds the addon (binding.gyp runs this at
// configure time). The addon is always built on the machine that runs it (npm install / npm ci
// runs node-gyp rebuild), so enabling BMI2 + ADX when this CPU has them is safe; the code checks
// __BMI2__ / __ADX__ and falls back to portable C++ otherwise.
// KILN_PORTABLE=1 forces the portable build (e.g. to ship one binary to unknown x86-64 machines).
'use strict';
const fs = require('fs');
const os = require('os');

function flags() {
  if (process.env.KILN_PORTABLE === '1' || os.arch() !== 'x64') return [];
  let info = '';
  try {
    info = fs.readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return [];
  }
  const line = info.split('\n').find((l) => l.startsWith('flags'));
  if (!line) return [];
  const set = new Set(line.split(':')[1].trim().split(/\s+/));
  return set.has('bmi2') && set.has('adx') ? ['-mbmi2', '-madx'] : [];
}

process.stdout.write(flags().join(' '));
