// Prints the extra compiler flags for the machine that builds the addon (binding.gyp runs this at
// configure time). The addon is always built on the machine that runs it (npm install / npm ci
// runs node-gyp rebuild), so enabling what this CPU has is safe; the code checks the macros and
// falls back to portable C++ otherwise, and the IFMA kernels are also gated at run time.
//   (no argument)  flags of the main target: -mbmi2 -madx, and -DKILN_HAVE_IFMA=1 when the
//                  AVX-512 IFMA translation unit is built (the dispatch in kernels_ec.cpp needs it)
//   --ifma         flags of the kiln_ifma target: -mavx512f -mavx512ifma -DKILN_HAVE_IFMA=1 when
//                  this CPU has AVX-512F and IFMA, else nothing (the file then compiles empty)
// KILN_PORTABLE=1 forces the portable build (e.g. to ship one binary to unknown x86-64 machines).
'use strict';
const fs = require('fs');
const os = require('os');

function cpuFlags() {
  if (process.env.KILN_PORTABLE === '1' || os.arch() !== 'x64') return new Set();
  let info = '';
  try {
    info = fs.readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return new Set();
  }
  const line = info.split('\n').find((l) => l.startsWith('flags'));
  return line ? new Set(line.split(':')[1].trim().split(/\s+/)) : new Set();
}

function flags(mode) {
  const set = cpuFlags();
  const ifma = set.has('avx512f') && set.has('avx512ifma');
  if (mode === '--ifma') return ifma ? ['-mavx512f', '-mavx512ifma', '-DKILN_HAVE_IFMA=1'] : [];
  const out = set.has('bmi2') && set.has('adx') ? ['-mbmi2', '-madx'] : [];
  if (ifma) out.push('-DKILN_HAVE_IFMA=1');
  return out;
}

process.stdout.write(flags(process.argv[2]).join(' '));
