/** Config honesty: kiln.example.toml lists every key the parser reads, its values are the defaults, and
 *  keys that do nothing are warned about. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { pino } from 'pino';
import { nativeAvailable } from '../src/backend/native.js';
import { selectBackend } from '../src/backend/select.js';
import {
  SMALL_GPU_BUDGET_BYTES,
  cliLanesPerDevice,
  configKeys,
  defaultCacheDir,
  defaultConfig,
  defaultParamCache,
  lanesForDevices,
  parseConfig,
  stateDirOf,
} from '../src/engine/config.js';
import { Engine } from '../src/engine/engine.js';
import { repoRoot } from './support.js';

const GIB = 1024 ** 3;
const example = readFileSync(`${repoRoot}/kiln.example.toml`, 'utf8');

/** `section.key` of every `key = …` line (also `# key = …`: accepted, no effect) in its [section]. */
function exampleKeys(text: string): Set<string> {
  const keys = new Set<string>();
  let section = '';
  for (const line of text.split('\n')) {
    const sec = /^\[(\w+)\]/.exec(line);
    if (sec) section = sec[1]!;
    const kv = /^#?\s*(\w+)\s*=/.exec(line);
    if (kv && section) keys.add(`${section}.${kv[1]}`);
  }
  return keys;
}

test('every key of the config schema appears in kiln.example.toml, and no other', () => {
  const schema = configKeys();
  assert.ok(schema.length >= 20, `schema has ${schema.length} keys`);
  const listed = exampleKeys(example);
  for (const k of schema) assert.ok(listed.has(k), `${k} is parsed but missing from kiln.example.toml`);
  for (const k of listed) assert.ok(schema.includes(k), `kiln.example.toml lists ${k}, which the parser does not read`);
});

test('kiln.example.toml parses without warnings to the defaults', () => {
  const env = {};
  const { config, warnings } = parseConfig(example, { totalRamBytes: 64 * GIB, env });
  assert.deepEqual(warnings, []);
  assert.deepEqual(config, defaultConfig(64 * GIB, env));
});

test('keys that have no effect are warned about; [srs] param_cache defaults to $FIL_PROOFS_PARAMETER_CACHE', () => {
  const w = (text: string): string[] => parseConfig(text, { totalRamBytes: 64 * GIB, env: {} }).warnings;
  assert.deepEqual(w('[memory]\ntotal_budget = "auto"\nsafety_margin = "2GiB"'), []);
  assert.match(w('[memory]\ntotal_budget = "20GiB"\nsafety_margin = "2GiB"').join('\n'), /memory\.safety_margin is parsed but has no effect/);
  assert.match(w('[pipeline]\nenabled = false\nsynthesis_lookahead = 2').join('\n'), /pipeline\.synthesis_lookahead is parsed but has no effect/);
  assert.match(w('[scheduler]\nmax_batch_wait_ms = 5').join('\n'), /max_batch_wait_ms is parsed but has no effect/);
  assert.deepEqual(w('[scheduler]\nmax_batch_size = 4\nmax_batch_wait_ms = 5'), []);
  assert.match(w('[kiln]\nbackend = "native"\n[gpus]\ndevices = [1]').join('\n'), /gpus\.devices is parsed but has no effect/);
  assert.match(w('[gpus]\ngpu_threads = 8').join('\n'), /gpus\.gpu_threads .*ignored/);
  assert.match(w('[kiln]\nbackend = "native"\n[gpus]\nprobe_interval = "5s"').join('\n'), /gpus\.probe_interval is parsed but has no effect/);
  assert.match(w('[gpus]\ndevices = [1]\ndevice_wait = "1m"').join('\n'), /gpus\.device_wait is parsed but has no effect: devices lists one GPU/);
  assert.deepEqual(w('[gpus]\ndevices = [0, 1]\nprobe_interval = "5s"\ndevice_wait = "1m"'), []);
  assert.equal(parseConfig('', { totalRamBytes: 64 * GIB, env: { FIL_PROOFS_PARAMETER_CACHE: '/srv/params' } }).config.srs.param_cache, '/srv/params');
  assert.equal(parseConfig('[srs]\nparam_cache = "/x"', { totalRamBytes: 64 * GIB, env: { FIL_PROOFS_PARAMETER_CACHE: '/srv/params' } }).config.srs.param_cache, '/x');
  assert.equal(parseConfig('', { totalRamBytes: 64 * GIB, env: {} }).config.srs.param_cache, '/var/tmp/filecoin-proof-parameters');
});

test('one cache, one rule: [kiln] cache_dir is $KILN_CACHE_DIR, else ~/.cache/kiln, as the CLI\'s --cache-dir; the parameter directory is the CLI\'s --params-dir', () => {
  const cfg = (text: string, env: NodeJS.ProcessEnv) => parseConfig(text, { totalRamBytes: 64 * GIB, env }).config;
  assert.equal(cfg('', { KILN_CACHE_DIR: '/srv/kiln' }).kiln.cache_dir, '/srv/kiln');
  assert.equal(cfg('', { HOME: '/home/sp' }).kiln.cache_dir, '/home/sp/.cache/kiln');
  assert.equal(cfg('[kiln]\ncache_dir = "/x"', { KILN_CACHE_DIR: '/srv/kiln' }).kiln.cache_dir, '/x');
  assert.throws(() => cfg('[kiln]\ncache_dir = ""', {}), /kiln\.cache_dir: must not be empty/);
  // the CLI's defaults are the same functions of the same environment
  for (const env of [{ KILN_CACHE_DIR: '/srv/kiln', FIL_PROOFS_PARAMETER_CACHE: '/srv/params' }, { HOME: '/home/sp' }]) {
    assert.equal(defaultCacheDir(env), cfg('', env).kiln.cache_dir);
    assert.equal(defaultParamCache(env), cfg('', env).srs.param_cache);
  }
});

test('durable jobs by default: [daemon] state_dir unset is <cache_dir>/state, "" is memory only, a path is itself', () => {
  const dir = (text: string) => stateDirOf(parseConfig(text, { totalRamBytes: 64 * GIB, env: { KILN_CACHE_DIR: '/srv/kiln' } }).config);
  assert.equal(dir(''), '/srv/kiln/state');
  assert.equal(dir('[kiln]\ncache_dir = "/c"'), '/c/state');
  assert.equal(dir('[daemon]\nstate_dir = ""'), '');
  assert.equal(dir('[daemon]\nstate_dir = "/var/lib/kiln"'), '/var/lib/kiln');
});

test('gpu_workers_per_device sets the lanes of a CPU backend too (one device): not warned as without effect; the example says so', async () => {
  for (const backend of ['native', 'reference']) {
    const { config, warnings } = parseConfig(`[kiln]\nbackend = "${backend}"\n[gpus]\ngpu_workers_per_device = 3`, { totalRamBytes: 64 * GIB, env: {} });
    assert.deepEqual(warnings, [], backend);
    const engine = new Engine({ config, backend: selectBackend(nativeAvailable() ? 'native' : 'reference'), logger: pino({ level: 'silent' }), defaultMetrics: false });
    try {
      assert.equal(engine.laneCount, 3);
      assert.deepEqual(engine.lanesStatus().map((l) => l.device), [0, 0, 0]);
    } finally {
      await engine.close(0);
    }
  }
  // the example's line (commented: unset, the daemon picks per machine): the default, and that it applies to the
  // CPU backend as one device
  const line = example.split('\n').find((l) => /^# gpu_workers_per_device\s*=/.test(l))!;
  const set = parseConfig(line.replace(/^# /, '[gpus]\n'), { totalRamBytes: 64 * GIB, env: {} }).config.gpus;
  assert.equal(set.gpu_workers_per_device, 2); // what the engine picks for the CPU backend and big GPUs
  assert.equal(defaultConfig(64 * GIB, {}).gpus.gpu_workers_per_device, 0); // unset: picked when the engine starts
  assert.match(line, /^# gpu_workers_per_device = 2 +# prover lanes per device; the CPU backends are one device with this many lanes.*1 on a GPU with less than 40 GiB/);
  // the keys that have no effect on the CPU are still warned about
  assert.match(parseConfig('[kiln]\nbackend = "native"\n[gpus]\nmemory_limit = "8GiB"', { totalRamBytes: 64 * GIB, env: {} }).warnings.join('\n'), /gpus\.memory_limit is parsed but has no effect/);
});

test('gpu_workers_per_device unset: one lane on a GPU with less than 40 GiB to plan with, two otherwise and on the CPU; cliLanesPerDevice', () => {
  const gpu = (budgetGiB: number | undefined, freeGiB?: number) => ({
    memoryPlan: budgetGiB === undefined ? undefined : () => ({ budgetBytes: budgetGiB * GIB }),
    deviceMemory: freeGiB === undefined ? undefined : () => ({ freeBytes: freeGiB * GIB }),
    capabilities: () => ({ gpus: [{}] }),
  });
  assert.equal(SMALL_GPU_BUDGET_BYTES, 40 * GIB);
  assert.equal(lanesForDevices([gpu(22.6)]), 1); // a 24 GiB card's budget
  assert.equal(lanesForDevices([gpu(14.8)]), 1);
  assert.equal(lanesForDevices([gpu(135)]), 2); // the H200
  assert.equal(lanesForDevices([gpu(135), gpu(22.6)]), 1); // the smallest GPU decides
  assert.equal(lanesForDevices([gpu(undefined, 20)]), 1); // no plan: its free memory
  assert.equal(lanesForDevices([gpu(39.99)]), 1);
  assert.equal(lanesForDevices([gpu(40)]), 2);
  assert.equal(lanesForDevices([{}]), 2); // the CPU backend reports no device memory
  assert.equal(cliLanesPerDevice({ capabilities: () => ({ gpus: [] }) }), 1);
  assert.equal(cliLanesPerDevice(gpu(22.6)), 1);
  assert.equal(cliLanesPerDevice(gpu(135)), 2);
});
