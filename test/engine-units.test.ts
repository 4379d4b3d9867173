/** Engine parts without the daemon: config, queue order, memory budget, span gaps, traces, the
 *  PoRep adapter's validation (planning needs no compiled circuit). */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import { NativeBackend, nativeAvailable } from '../src/backend/native.js';
import { selectBackend } from '../src/backend/select.js';
import { estimatePartitionBytes } from '../src/engine/partitions.js';
import type { CircuitShape } from '../src/r1cs/cs.js';
import { ConfigError, defaultConfig, parseConfig, parseSize } from '../src/engine/config.js';
import { createPorepKind } from '../src/kinds/porep/planner.js';
import { BufferPool } from '../src/engine/buffers.js';
import { MemoryBudget, MemoryBudgetError } from '../src/engine/memory.js';
import { PriorityQueue } from '../src/engine/queue.js';
import { SynthesisPool, type SynthTask } from '../src/engine/synth-pool.js';
import { chromeTrace, gapWarnings, uncoveredMs } from '../src/engine/observability/index.js';
import { PlanError, proofRequest, type PlanContext } from '../src/engine/types.js';
import { Span } from '../src/util/timing.js';
import { fixture, slowProver } from './support.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Engine } from '../src/engine/engine.js';
import { createDemoKind } from '../src/kinds/demo-circuit.js';
import { AwaitStatus, ProofKind } from '../src/engine/types.js';

const GIB = 1024 ** 3;

describe('config', () => {
  test('defaults are cuzk’s', () => {
    const { config, warnings } = parseConfig('', { totalRamBytes: 64 * GIB });
    assert.deepEqual(warnings, []);
    assert.equal(config.daemon.listen, 'unix:///run/curio/cuzk.sock');
    // not cuzk's /data/zk/params: the directory lotus, Curio and the CLI use ($FIL_PROOFS_PARAMETER_CACHE unset here)
    assert.equal(parseConfig('', { totalRamBytes: 64 * GIB, env: {} }).config.srs.param_cache, '/var/tmp/filecoin-proof-parameters');
    assert.equal(config.daemon.state_dir, undefined); // kiln's: <cache_dir>/state (durable jobs), config-example.test.ts
    assert.equal(config.memory.safety_margin, 5 * GIB);
    assert.equal(config.memory.total_budget, 59 * GIB); // auto = RAM − safety margin
    assert.equal(config.gpus.gpu_workers_per_device, 0); // unset: the engine picks 2 (cuzk's), 1 on a GPU under 40 GiB
    assert.deepEqual(config.gpus.devices, []);
    assert.equal(config.gpus.probe_interval_ms, 10_000);
    assert.equal(config.gpus.device_wait_ms, 600_000);
    assert.equal(config.scheduler.max_batch_size, 1);
    assert.equal(config.scheduler.max_batch_wait_ms, 10_000);
    assert.equal(config.synthesis.threads, 0);
    assert.equal(config.pipeline.enabled, true);
    assert.equal(config.pipeline.synthesis_lookahead, 1);
    assert.equal(config.logging.level, 'info');
    assert.deepEqual(parseConfig('', { totalRamBytes: 64 * GIB }).config, defaultConfig(64 * GIB));
  });

  test('a full file is read; deprecated keys are warned about', () => {
    const { config, warnings } = parseConfig(
      `[daemon]
listen = "127.0.0.1:9820"
status_listen = "127.0.0.1:9821"
[srs]
param_cache = "/p"
preload = ["porep-32g"]
[memory]
total_budget = "256GiB"
safety_margin = "10GiB"
eviction_min_idle = "30s"
[gpus]
devices = [0, 1]
gpu_workers_per_device = 1
probe_interval = "250ms"
device_wait = "2m"
[scheduler]
max_batch_size = 3
max_batch_wait_ms = 0
[synthesis]
threads = 8
[pipeline]
enabled = false
synthesis_lookahead = 2
[logging]
level = "debug"
`,
      { totalRamBytes: 64 * GIB },
    );
    assert.equal(config.daemon.listen, '127.0.0.1:9820');
    assert.equal(config.memory.total_budget, 256 * GIB);
    assert.equal(config.memory.eviction_min_idle_ms, 30_000);
    assert.deepEqual(config.gpus.devices, [0, 1]);
    assert.equal(config.gpus.probe_interval_ms, 250);
    assert.equal(config.gpus.device_wait_ms, 120_000);
    assert.equal(config.scheduler.max_batch_size, 3);
    assert.equal(config.pipeline.enabled, false);
    assert.equal(config.pipeline.synthesis_lookahead, 2);
    assert.equal(config.logging.level, 'debug');
    assert.equal(warnings[0], 'config srs.preload is deprecated in cuzk and ignored');
    assert.equal(warnings.filter((w) => !/has no effect/.test(w)).length, 1);
  });

  test('an unknown key or section is an error naming file, line and column, with the key it is probably a typo of', () => {
    const err = (text: string, file?: string): ConfigError => {
      try {
        parseConfig(text, { totalRamBytes: 64 * GIB, file });
      } catch (e) {
        assert.ok(e instanceof ConfigError, String(e));
        return e;
      }
      assert.fail(`accepted: ${text}`);
    };
    // a typo of dev_params used to be a warning line while the default (no development parameters) applied
    const typo = err('[daemon]\nlisten = ":9820"\n\n[srs]\n  dev_param = true\n', 'kiln.toml');
    assert.equal(typo.message, 'kiln.toml:5:3: config srs.dev_param: unknown key; did you mean srs.dev_params?');
    assert.equal(typo.key, 'srs.dev_param');
    assert.equal(err('[logging]\nlevl = "debug"').message, 'config:2:1: config logging.levl: unknown key; did you mean logging.level?');
    assert.match(err('[daemon]\nbackend = "cuda"').message, /config daemon\.backend: unknown key; did you mean kiln\.backend\? \(it belongs in \[kiln\]\)/);
    assert.match(err('[pipeline]\nfrobnicate = 1').message, /config pipeline\.frobnicate: unknown key; \[pipeline\] has enabled, synthesis_lookahead, synthesis_concurrency$/);
    assert.equal(err('[gpu]\ndevices = [0]', 'k.toml').message, 'k.toml:1:1: config [gpu]: unknown section; did you mean [gpus]?');
    assert.match(err('[extra]\nx = 1').message, /^config:1:1: config \[extra\]: unknown section; the sections are \[daemon\], \[srs\]/);
    // TOML syntax errors: file, line and column, and the lines around it
    const syntax = err('[daemon]\nlisten = "x"\nstatus_listen = = 3\n', 'kiln.toml');
    assert.match(syntax.message, /^kiln\.toml:3:\d+: not valid TOML: invalid value\n/);
    assert.match(syntax.message, /status_listen = = 3/);
    // a bad value says where it is too
    assert.equal(err('[gpus]\n\n   devices = [0, 1, 0]', 'k.toml').message, 'k.toml:3:4: config gpus.devices: lists GPU 0 twice (each GPU is driven once, by gpu_workers_per_device lanes)');
  });

  test('cuzk keys kiln does not use are accepted, checked and warned about by name', () => {
    const { config, warnings } = parseConfig(
      '[gpus]\ngpu_threads = 128\n[scheduler]\nsort_by_type = false\n[logging]\nformat = "json"\nlevel = "warn"\n',
      { totalRamBytes: 64 * GIB },
    );
    assert.equal(warnings.length, 2);
    for (const key of ['gpus.gpu_threads', 'scheduler.sort_by_type']) {
      assert.ok(warnings.some((w) => w.includes(key) && w.includes('accepted for cuzk compatibility and ignored')), key);
    }
    assert.equal(config.logging.level, 'warn');
    const rest = { ...config, logging: { ...config.logging, level: 'info' as const } };
    assert.deepEqual(rest, defaultConfig(64 * GIB), 'the ignored keys change nothing');
    for (const [text, re] of [
      ['[gpus]\ngpu_threads = -1', /gpus\.gpu_threads/],
      ['[scheduler]\nsort_by_type = "yes"', /scheduler\.sort_by_type/],
      ['[logging]\nformat = 3', /logging\.format/],
      ['[logging]\nformat = "xml"', /logging\.format: expected "json" or "text", got "xml"/],
    ] as const) {
      assert.throws(() => parseConfig(text, { totalRamBytes: 64 * GIB }), (e: unknown) => e instanceof ConfigError && re.test(e.message), text);
    }
  });

  test('[logging] format = "text" gives text lines for a person (it was accepted and ignored); "json" stays the default', async () => {
    assert.equal(parseConfig('', { totalRamBytes: 64 * GIB }).config.logging.format, 'json');
    for (const [v, f] of [['text', 'text'], ['pretty', 'text'], ['JSON', 'json']] as const) {
      const { config, warnings } = parseConfig(`[logging]\nformat = "${v}"`, { totalRamBytes: 64 * GIB });
      assert.equal(config.logging.format, f, v);
      assert.deepEqual(warnings, [], v);
    }
    const { formatLogLine, createLogger } = await import('../src/util/log.js');
    const line = formatLogLine(JSON.stringify({ level: 40, time: Date.UTC(2026, 11, 5, 10, 0, 0, 123), service: 'kiln', msg: 'GPU 1: probe failed', gpu: 1, err: 'an error', spans: { name: 'job' } }));
    assert.equal(line, '2026-12-05T10:00:00.123Z WARN  GPU 1: probe failed  gpu=1 err="an error"');
    // the daemon's logger with format "text" writes such lines to stdout
    const written: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((s: string) => void written.push(s)) as unknown as typeof process.stdout.write;
    try {
      createLogger({ level: 'info', format: 'text' }).info({ grpc: '127.0.0.1:9820' }, 'kiln daemon listening');
    } finally {
      process.stdout.write = write;
    }
    assert.match(written.join(''), /^\d{4}-\d\d-\d\dT[\d:.]+Z INFO  kiln daemon listening  grpc=127\.0\.0\.1:9820\n$/);
  });

  test('bad values are refused with the key named', () => {
    const bad: [string, RegExp][] = [
      ['[memory]\nsafety_margin = "lots"', /memory\.safety_margin/],
      ['[memory]\ntotal_budget = "12 parsecs"', /memory\.total_budget/],
      ['[memory]\ntotal_budget = "auto"\nsafety_margin = "128GiB"', /memory\.total_budget/],
      ['[gpus]\ngpu_workers_per_device = 0', /gpus\.gpu_workers_per_device/],
      ['[gpus]\ndevices = [0, "one"]', /gpus\.devices\[1\]/],
      ['[gpus]\ndevices = [0, 1, 0]', /gpus\.devices: lists GPU 0 twice/],
      ['[gpus]\nprobe_interval = "1ms"', /gpus\.probe_interval: 1ms out of range \(10ms\.\.3600s\)/],
      ['[gpus]\nprobe_interval = "often"', /gpus\.probe_interval: expected a duration/],
      ['[gpus]\ndevice_wait = "200h"', /gpus\.device_wait: 720000s out of range/],
      ['[scheduler]\nmax_batch_size = "3"', /scheduler\.max_batch_size/],
      ['[pipeline]\nenabled = "yes"', /pipeline\.enabled/],
      ['[pipeline]\nsynthesis_lookahead = -1', /pipeline\.synthesis_lookahead/],
      ['[logging]\nlevel = "loud"', /logging\.level/],
      ['[daemon]\nlisten = 9820', /daemon\.listen/],
      ['[daemon\nlisten = "x"', /not valid TOML/],
    ];
    for (const [text, re] of bad) assert.throws(() => parseConfig(text, { totalRamBytes: 64 * GIB }), (e: unknown) => e instanceof ConfigError && re.test(e.message), text);
    assert.equal(parseSize('5GiB', 'k'), 5 * GIB);
    assert.equal(parseSize('512 MiB', 'k'), 512 * 1024 ** 2);
    assert.equal(parseSize(1024, 'k'), 1024);
  });

  test('[gpus] memory_limit: bytes, a size or a percentage of the card; unset by default; small or out-of-range values refused by name; warned with a CPU backend', () => {
    const parse = (text: string) => parseConfig(text, { totalRamBytes: 64 * GIB, env: {} });
    const limit = (value: string) => parse(`[gpus]\nmemory_limit = ${value}`).config.gpus.memory_limit;
    assert.equal(parse('').config.gpus.memory_limit, undefined);
    assert.deepEqual(limit(String(20 * GIB)), { bytes: 20 * GIB });
    assert.deepEqual(limit('"24GiB"'), { bytes: 24 * GIB });
    assert.deepEqual(limit('"16GB"'), { bytes: 16e9 });
    assert.deepEqual(limit('"1GiB"'), { bytes: GIB });
    assert.deepEqual(limit('"75%"'), { fraction: 0.75 });
    assert.deepEqual(limit('" 12.5 %"'), { fraction: 0.125 });
    assert.deepEqual(limit('"100%"'), { fraction: 1 });
    assert.deepEqual(parse('[gpus]\nmemory_limit = "24GiB"').warnings, [], 'a GPU backend: no warning');
    for (const [value, re] of [
      [String(GIB - 1), /gpus\.memory_limit: 1073741823 bytes is below 1 GiB/],
      ['"512MiB"', /gpus\.memory_limit: 536870912 bytes is below 1 GiB/],
      ['0', /gpus\.memory_limit: 0 bytes is below 1 GiB/],
      ['-1', /gpus\.memory_limit: expected a non-negative byte count/],
      ['"0%"', /gpus\.memory_limit: 0% out of range/],
      ['"100.5%"', /gpus\.memory_limit: 100\.5% out of range/],
      ['"-5%"', /gpus\.memory_limit: expected a percentage such as "75%"/],
      ['"lots"', /gpus\.memory_limit: expected a size/],
      ['true', /gpus\.memory_limit: expected a size/],
    ] as const) {
      assert.throws(() => limit(value), (e: unknown) => e instanceof ConfigError && e.key === 'gpus.memory_limit' && re.test(e.message), value);
    }
    for (const backend of ['native', 'reference']) {
      const { config, warnings } = parse(`[kiln]\nbackend = "${backend}"\n[gpus]\nmemory_limit = "50%"`);
      assert.deepEqual(config.gpus.memory_limit, { fraction: 0.5 });
      assert.deepEqual(warnings, [`config gpus.memory_limit is parsed but has no effect: kiln.backend = "${backend}" (no GPU)`]);
    }
  });
});

describe('scheduling parts', () => {
  test('priority queue: CRITICAL > HIGH > NORMAL > LOW, FIFO within', () => {
    const q = new PriorityQueue<{ priority: number; seq: number; name: string }>();
    const items = [
      { priority: 2, seq: 0, name: 'n0' },
      { priority: 1, seq: 1, name: 'l1' },
      { priority: 2, seq: 2, name: 'n2' },
      { priority: 4, seq: 3, name: 'c3' },
      { priority: 3, seq: 4, name: 'h4' },
      { priority: 4, seq: 5, name: 'c5' },
    ];
    for (const it of items) q.push(it);
    assert.equal(q.position(items[2]), 4);
    const order: string[] = [];
    for (let it = q.shift(); it; it = q.shift()) order.push(it.name);
    assert.deepEqual(order, ['c3', 'c5', 'h4', 'n0', 'n2', 'l1']);
  });

  test('memory budget: waits until bytes fit, asks pressure handlers, refuses what never fits', async () => {
    const b = new MemoryBudget(100);
    const a = b.tryReserve(60, 'a')!;
    assert.equal(b.tryReserve(50, 'b'), undefined);
    let got = false;
    const p = b.reserve(50, 'b').then((r) => ((got = true), r));
    const small = await b.reserve(30, 'small'); // a later, smaller reservation that fits is not blocked
    assert.equal(got, false);
    b.release(a);
    const r = await p;
    assert.equal(got, true);
    assert.equal(b.reserved, 80);
    await assert.rejects(b.reserve(101, 'huge'), MemoryBudgetError);
    let freed = 0;
    b.onPressure((n) => ((freed += n), 0));
    assert.equal(b.tryReserve(30, 'c'), undefined);
    assert.equal(freed, 10);
    b.release(r);
    b.release(small);
    assert.equal(b.reserved, 0);
  });

  test('a partition in flight reserves its witness plus what the backend reports for its domain', () => {
    const shape = { numConstraints: 1000, numInputs: 3, numAux: 2000 } as unknown as CircuitShape;
    const n = 1024; // 1003 QAP rows
    for (const name of ['reference', 'native'] as const) {
      if (name === 'native' && !nativeAvailable()) continue;
      const be = selectBackend(name);
      const ws = be.partitionWorkingSetBytes(n);
      assert.equal(estimatePartitionBytes(shape, be), 2003 * 32 + ws, name);
      assert.equal(be.partitionWorkingSetBytes(2 * n), 2 * ws, `${name}: linear in the domain`);
    }
    assert.equal(selectBackend('reference').partitionWorkingSetBytes(n), 7 * 32 * n);
    if (nativeAvailable()) {
      const ifma = new NativeBackend().addon.capabilities().ifma;
      assert.equal(new NativeBackend().partitionWorkingSetBytes(n), (96 + (ifma ? 120 : 32)) * n);
    }
  });

  test('synthesis pool runs a module function in a worker thread and transfers the result', async () => {
    const pool = new SynthesisPool(1);
    try {
      const url = new URL('../src/kinds/demo-circuit-tasks.js', import.meta.url).href;
      const r = await pool.run<{ assignment: Uint8Array; inputs: bigint[] }>({ module: url, fn: 'demoWitness', arg: { constraints: 100, publicInputs: 2, seed: 1, numInputs: 3 } });
      assert.ok(r.assignment instanceof Uint8Array && r.assignment.length > 0 && r.assignment.length % 32 === 0);
      assert.equal(r.inputs.length, 2);
      assert.equal(typeof r.inputs[0], 'bigint');
      await assert.rejects(pool.run({ module: url, fn: 'nope', arg: null }), /no exported function nope/);
    } finally {
      await pool.close();
    }
  });
});

describe('synthesis pool by rank', () => {
  test('waiting tasks run by rank (FIFO within, unranked last); an urgent task takes the reserved worker while the others are busy; an aborted waiting task is dropped; idle counts the free general workers', async () => {
    const pool = new SynthesisPool(1, { reserved: 1 });
    const url = new URL('./pool-tasks.js', import.meta.url).href;
    const order: string[] = [];
    const run = (tag: string, ms: number, opts?: Parameters<SynthesisPool['run']>[1]) =>
      pool.run<{ tag: string; startMs: number; endMs: number }>({ module: url, fn: 'sleepTask', arg: { tag, ms } }, opts).then((r) => (order.push(r.tag), r));
    try {
      const job = pool.forJob([-2, 7]); // a job's view: its rank, then the task's own
      assert.deepEqual([pool.idle, job.idle], [1, 1]);
      const blocker = run('blocker', 1500); // the one general worker
      assert.deepEqual([pool.idle, job.idle], [0, 0]); // (the reserved worker is not counted)
      const ac = new AbortController();
      const waiting = [run('normal seq 5', 10, { rank: [-2, 5] }), run('unranked', 10), job.run<{ tag: string }>({ module: url, fn: 'sleepTask', arg: { tag: 'job 7 partition 1', ms: 10 } }, { rank: [1] }).then((r) => order.push(r.tag)), run('normal seq 1', 10, { rank: [-2, 1] }), run('high seq 9', 10, { rank: [-3, 9] })];
      const dropped = run('dropped', 10, { rank: [-4, 0], signal: ac.signal });
      ac.abort(new Error('cancelled while waiting'));
      await assert.rejects(dropped, /cancelled while waiting/);
      const urgent = await run('urgent', 10, { rank: [-4, 0], urgent: true });
      assert.ok(urgent.endMs < (await blocker).endMs, 'the urgent task ran beside the busy worker');
      await Promise.all(waiting);
      assert.deepEqual(order, ['urgent', 'blocker', 'high seq 9', 'normal seq 1', 'normal seq 5', 'job 7 partition 1', 'unranked']);
      assert.equal(pool.reserved, 1);
      assert.deepEqual([pool.idle, job.idle], [1, 1]);
    } finally {
      await pool.close();
    }
  });
});

describe('spans and traces', () => {
  const tree = (): Span => {
    const root = new Span('job', undefined, 0);
    root.endMs = 100;
    const a = new Span('partition[0]', root, 0);
    a.endMs = 60;
    const b = new Span('partition[1]', root, 40);
    b.endMs = 90; // overlaps a; 90..100 is uncovered
    const s = new Span('synth', b, 40);
    s.endMs = 50;
    const p = new Span('prove', b, 60);
    p.endMs = 90; // 50..60 uncovered inside b
    return root;
  };

  test('uncovered time is overlap-aware; gaps over 2 % are reported', () => {
    const root = tree();
    assert.equal(uncoveredMs(root), 10);
    const w = gapWarnings(root);
    assert.deepEqual(
      w.map((g) => [g.path, g.gapMs]),
      [
        ['job', 10],
        ['job/partition[1]', 10],
      ],
    );
  });

  test('Chrome trace: complete events in µs, lanes as threads with names', () => {
    const root = tree();
    const lanes = new Map<string, string>([
      ['synth', 'synthesis'],
      ['prove', 'prover 0'],
    ]);
    const t = chromeTrace([{ label: 'job x', root, laneOf: (s) => lanes.get(s.name) ?? (s.name.startsWith('partition') ? s.name : undefined) }]);
    const x = t.traceEvents.filter((e) => e.ph === 'X');
    assert.equal(x.length, 5);
    const prove = x.find((e) => e.name === 'prove')!;
    const synth = x.find((e) => e.name === 'synth')!;
    assert.equal(prove.dur, 30_000);
    assert.equal(prove.ts! - synth.ts!, 20_000);
    assert.notEqual(prove.tid, synth.tid);
    const names = t.traceEvents.filter((e) => e.name === 'thread_name').map((e) => e.args!.name);
    assert.deepEqual(names, ['job', 'partition[0]', 'partition[1]', 'synthesis', 'prover 0']);
    JSON.parse(JSON.stringify(t));
  });
});

describe('PoRep adapter', () => {
  const config = defaultConfig(64 * GIB);
  config.srs.dev_params = true; // parameters can be had: planning reads and checks the C1 (nothing is compiled)
  const backend = selectBackend('reference');
  const porep = createPorepKind({ config, backend });
  const ctx = { synthPool: new SynthesisPool(1), buffers: new BufferPool(backend, new MemoryBudget(8 * GIB), 2) };
  const plan = (kind: typeof porep, p: Parameters<typeof proofRequest>[0]) => kind.planner.plan(proofRequest(p), ctx);

  test('takes the raw C1 JSON and gpuproxy\'s C2 input as well as the Commit2In wrapper (kiln prove --c1)', async () => {
    const raw = await readFile(fixture('2KiB.c1.json'));
    const work = await plan(porep, { proofKind: 1, vanillaProof: raw });
    assert.equal(work.circuitId, 'porep-2k');
    assert.equal(work.partitions, 1);
    work.dispose?.();
    // gpuproxy (venus-cluster / damocles): the fixture was sealed by f01001 as sector 0
    const gp = (sectorId: number): Buffer =>
      Buffer.from(JSON.stringify({ c1out: JSON.parse(raw.toString('utf8')), prover_id: [233, 7, ...new Array(30).fill(0)], sector_id: sectorId, miner_id: 1001 }));
    const gw = await plan(porep, { proofKind: 1, vanillaProof: gp(0), sectorNumber: 0 });
    assert.equal(gw.circuitId, 'porep-2k');
    assert.match(gw.describe ?? '', /sector 0 miner f01001/);
    gw.dispose?.();
    await assert.rejects(plan(porep, { proofKind: 1, vanillaProof: gp(3) }), /inconsistent: replica_id: does not match/);
    // an object that is none of the three is refused naming them
    await assert.rejects(plan(porep, { proofKind: 1, vanillaProof: Buffer.from('{"a":1}') }), /Commit2In wrapper .*raw C1 .*gpuproxy's C2 input/);
  });

  test('validates the Commit2In wrapper and the request fields, naming them', async () => {
    const fx = await readFile(fixture('2KiB.commit2in.json'));
    const w = JSON.parse(fx.toString('utf8'));
    const cases: [Uint8Array, Record<string, number>, RegExp][] = [
      [new Uint8Array([1, 2, 3]), {}, /vanilla_proof \(Commit2In\).*not valid JSON/],
      [fx.subarray(0, 500), {}, /not valid JSON/],
      [Buffer.from(JSON.stringify({ ...w, SectorSize: 4096 })), {}, /SectorSize/],
      [Buffer.from(JSON.stringify({ ...w, Phase1Out: undefined })), {}, /Phase1Out: missing field/],
      [fx, { sectorSize: 34359738368 }, /sector_size 34359738368 does not match the Commit2In SectorSize 2048/],
      [fx, { registeredProof: 3 }, /registered_proof 3 \(StackedDrg32GiBV1\) does not match the C1's StackedDrg2KiBV1_1/],
      [fx, { sectorNumber: 9 }, /sector_number 9 does not match/],
    ];
    for (const [bytes, fields, re] of cases) {
      await assert.rejects(plan(porep, { proofKind: 1, vanillaProof: bytes, ...fields }), (e: unknown) => e instanceof PlanError && re.test(e.message), String(re));
    }
  });

  test('the C1 checks run partition by partition ahead of its synthesis: the plan does not wait for them; an inconsistent C1 fails its partition before synthesis, naming the first mismatch', async () => {
    const text = (await readFile(fixture('2KiB.c1.json'))).toString('utf8');
    const cases: [string, (c: any, p: any) => void, RegExp][] = [
      ['comm_r replaced', (c) => (c.comm_r[3] ^= 1), /partition 0 challenge 0 .*comm_r ≠ Poseidon2\(comm_c, comm_r_last\)/],
      ['c_x.column.index', (_c, p) => (p.replica_column_proofs.c_x.column.index += 1), /c_x\.column\.index/],
      ['comm_r_last leaf', (_c, p) => (p.comm_r_last_proof.data.Single.leaf[0] ^= 1), /comm_r_last path does not lead to its root/],
      ['comm_d root', (_c, p) => (p.comm_d_proofs.data.Single.root[0] ^= 1), /comm_d proof root ≠ comm_d/],
      ['labelling parent', (_c, p) => (p.labeling_proofs[0].parents[0][0] ^= 1), /labeling_proofs\[0\]\.parents\[0\]: not the label of parent column/],
      ['drg parent index', (_c, p) => (p.replica_column_proofs.drg_parents[0].column.index ^= 1), /drg_parents\[0\]: index \d+, graph says \d+/],
    ];
    // the partition checks wait at a gate: the plan resolves without them, the synthesis waits for them
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const checksRun: number[] = [];
    const gated = {
      size: 1,
      idle: 1,
      async run<T>(task: { fn: string; module: string; arg: unknown }, opts?: Parameters<SynthesisPool['run']>[1]): Promise<T> {
        if (task.fn === 'porepCheckPartition') {
          await gate;
          checksRun.push(performance.now());
        }
        return ctx.synthPool.run<T>(task, opts);
      },
    };
    for (const [i, [what, mutate, re]] of cases.entries()) {
      const c = JSON.parse(text);
      mutate(c, c.vanilla_proofs.StackedDrg2KiBV1[0][0]);
      const t0 = performance.now();
      const planned = porep.planner.plan(proofRequest({ proofKind: 1, vanillaProof: Buffer.from(JSON.stringify(c)) }), { ...ctx, synthPool: gated });
      const work = await Promise.race([planned, new Promise<never>((_, no) => setTimeout(() => no(new Error('the plan waited for the partition checks')), 10_000).unref())]);
      const span = new Span('synth');
      const synth = work.synthesize(0, span);
      if (i === 0) {
        await new Promise((r) => setTimeout(r, 50));
        assert.equal(checksRun.length, 0, 'planned before any partition check ran');
        assert.equal(span.children[0]?.name, 'checks');
        assert.equal(span.children[0]?.endMs, undefined, 'the synthesis waits for its partition check');
        open();
      }
      await assert.rejects(synth, (e: unknown) => {
        assert.ok(e instanceof PlanError, what);
        assert.match(e.message, /^the C1's vanilla proofs are inconsistent: /, what);
        assert.match(e.message, re, `${what}: ${e.message}`);
        return true;
      });
      assert.equal(span.children.length, 1, 'no witness made');
      work.dispose?.();
      assert.ok(performance.now() - t0 < 10_000, what);
    }
  });

  test("with the wrapper's Miner, a C1 of another miner (replica_id) is refused before synthesis", async () => {
    const w = JSON.parse((await readFile(fixture('2KiB.commit2in.json'))).toString('utf8'));
    assert.equal(w.Miner, 'f01001');
    await assert.rejects(plan(porep, { proofKind: 1, vanillaProof: Buffer.from(JSON.stringify({ ...w, Miner: 'f01002' })) }), /inconsistent: replica_id: does not match SHA256/);
    await assert.rejects(plan(porep, { proofKind: 1, vanillaProof: Buffer.from(JSON.stringify({ ...w, SectorNum: w.SectorNum + 1 })) }), /replica_id: does not match/);
    await assert.rejects(plan(porep, { proofKind: 1, vanillaProof: Buffer.from(JSON.stringify({ ...w, Miner: 'not-an-address' })) }), /Miner "not-an-address"/);
  });

  test('parameters are looked for first: a circuit without them is refused before its C1 is read or checked', async () => {
    const bare = createPorepKind({ config: defaultConfig(64 * GIB), backend }); // no dev_params, no parameter files
    const ran: string[] = [];
    const spy = { ...ctx, synthPool: { run: (t: SynthTask) => (ran.push(t.fn), ctx.synthPool.run(t)) } } as unknown as PlanContext;
    // the request names 32 GiB (sector_size or registered_proof): refused at once, its 30 MiB body never read
    const body = Buffer.alloc(30 << 20, 0x5b);
    for (const fields of [{ sectorSize: 32 * GIB }, { registeredProof: 8 }]) {
      const t0 = performance.now();
      await assert.rejects(bare.planner.plan(proofRequest({ proofKind: 1, vanillaProof: body, ...fields }), spy), /^Error: no parameters for porep-32g: looked for /);
      assert.ok(performance.now() - t0 < 1000, `${performance.now() - t0} ms`);
    }
    assert.deepEqual(ran, []);
    // a request naming no size: its C1 is read (one task), then refused before any partition is checked
    await assert.rejects(bare.planner.plan(proofRequest({ proofKind: 1, vanillaProof: await readFile(fixture('2KiB.commit2in.json')) }), spy), /no parameters for porep-2k/);
    assert.deepEqual(ran, ['porepPlanTask']);
    await assert.rejects(bare.circuits.available!('porep-2k'), /no parameters for porep-2k/);
  });

  test('plans porep-2k with one partition (no circuit compiled)', async () => {
    const fx = await readFile(fixture('2KiB.commit2in.json'));
    const work = await plan(porep, { proofKind: 1, vanillaProof: fx, sectorSize: 2048, registeredProof: 5 });
    assert.equal(work.circuitId, 'porep-2k');
    assert.equal(work.partitions, 1);
    assert.match(work.describe!, /StackedDrg2KiBV1_1 sector 0 miner f01001/);
    assert.ok(porep.circuits.knows('porep-32g'));
    assert.ok(!porep.circuits.knows('porep-1g'));
    await ctx.synthPool.close();
  });
});

describe('BufferPool (witness buffers reused across partitions)', () => {
  /** A backend stand-in counting allocations and frees. */
  const fakeBackend = () => {
    const live = new Set<Uint8Array>();
    const be = {
      allocs: 0,
      frees: 0,
      alloc(n: number) {
        be.allocs++;
        const b = new Uint8Array(n);
        live.add(b);
        return b;
      },
      release(b: Uint8Array) {
        if (!live.delete(b)) throw new Error('double free');
        be.frees++;
      },
    };
    return be;
  };
  const tick = () => new Promise((r) => setImmediate(r));

  test('reuses a buffer of the same size; idle buffers hold a reservation of their own', async () => {
    const be = fakeBackend();
    const budget = new MemoryBudget(1000);
    const pool = new BufferPool(be as never, budget, 2);
    const a = await pool.take(100);
    assert.equal(be.allocs, 1);
    pool.give(a);
    assert.equal(budget.reserved, 100, 'the idle buffer is counted');
    assert.equal(await pool.take(100), a, 'same size: reused');
    assert.equal(budget.reserved, 0, 'in use: the caller reservation covers it');
    const b = await pool.take(50);
    assert.notEqual(b, a);
    assert.deepEqual([be.allocs, pool.reused, pool.outstanding], [2, 1, 2]);
    pool.give(a);
    pool.give(b);
    const c = await pool.take(100);
    pool.give(c);
    assert.equal(pool.idleBytes, 150);
    pool.close();
    await tick();
    assert.equal(budget.reserved, 0);
    assert.equal(be.frees, 2);
  });

  test('keeps at most maxIdle buffers, frees the rest off the call path, and gives way under memory pressure', async () => {
    const be = fakeBackend();
    const budget = new MemoryBudget(1000);
    const pool = new BufferPool(be as never, budget, 2);
    const bufs = [await pool.take(300), await pool.take(300), await pool.take(300)];
    for (const b of bufs) pool.give(b);
    assert.equal(be.frees, 0, 'frees are deferred');
    await tick();
    assert.equal(be.frees, 1, 'the third buffer is freed');
    assert.equal(budget.reserved, 600);
    // 700 bytes wanted: the pool frees one idle buffer (300) to make room
    const r = budget.tryReserve(700, 'srs');
    assert.ok(r, 'pressure trims the idle pool');
    assert.equal(pool.idleBytes, 300);
    await tick();
    assert.equal(be.frees, 2);
    // a buffer given back when the budget has no room is freed, not kept
    const d = await pool.take(300);
    budget.release(r!);
    const r2 = budget.tryReserve(1000, 'all')!;
    pool.give(d);
    assert.equal(pool.idleBytes, 0);
    budget.release(r2);
    pool.close();
    await tick();
    assert.equal(be.allocs, be.frees);
  });
  test('maxIdle counts per size: small buffers warmed first do not push out the large ones (bench:mixed: WinningPoSt, then PoRep)', async () => {
    const be = fakeBackend();
    const budget = new MemoryBudget(10_000);
    const pool = new BufferPool(be as never, budget, 2);
    assert.equal(await pool.warm(10), 2, "WinningPoSt's PreloadSRS");
    assert.equal(await pool.warm(3000), 2, "PoRep's PreloadSRS: its own two");
    // partitions of both kinds, back to back: every buffer reused, none freed or made again
    for (let round = 0; round < 5; round++) {
      const big = [await pool.take(3000), await pool.take(3000)];
      const small = await pool.take(10);
      for (const b of [...big, small]) pool.give(b);
    }
    await tick();
    assert.deepEqual([be.allocs, be.frees, pool.reused], [4, 0, 15]);
    assert.equal(budget.reserved, 2 * 3000 + 2 * 10, 'the idle buffers hold their reservations');
    // the budget still bounds them all: a reservation that needs the room trims the idle pool
    const r = budget.tryReserve(9000, 'srs');
    assert.ok(r);
    assert.ok(pool.idleBytes <= 1000);
    budget.release(r!);
    pool.close();
    await tick();
    assert.equal(be.allocs, be.frees);
  });

  test('takes from allocAsync when the backend has it (the event loop is not held while it allocates)', async () => {
    const be = fakeBackend();
    let pending = 0;
    const asyncBe = {
      ...be,
      alloc: be.alloc,
      release: be.release,
      allocAsync: async (n: number): Promise<Uint8Array> => {
        pending++;
        await tick();
        pending--;
        return be.alloc(n);
      },
    };
    const pool = new BufferPool(asyncBe as never, new MemoryBudget(1000), 2);
    const p = pool.take(100);
    assert.equal(pending, 1, 'the allocation is under way, take() returned');
    const a = await p;
    assert.equal(a.length, 100);
    assert.deepEqual([pending, be.allocs, pool.outstanding], [0, 1, 1]);
    pool.give(a);
    pool.close();
    await tick();
  });

  test('warm() makes idle buffers of a size ahead of their first take, within maxIdle and the budget', async () => {
    const be = fakeBackend();
    const budget = new MemoryBudget(1000);
    const pool = new BufferPool(be as never, budget, 3);
    assert.equal(await pool.warm(300, 2), 2);
    assert.deepEqual([be.allocs, pool.idleBytes, budget.reserved], [2, 600, 600]);
    assert.equal(await pool.warm(300, 2), 0, 'already warm');
    const a = await pool.take(300);
    assert.equal(be.allocs, 2, 'taken from the warm ones, no allocation');
    assert.equal(budget.reserved, 300, 'the taken one is covered by its caller');
    // room for 3 idle in all, but the budget: 300 in use by the caller's own reservation is not counted
    // here; 1000 − 300 idle leaves room for two more of 300
    assert.equal(await pool.warm(300), 2, 'up to maxIdle idle buffers');
    assert.deepEqual([pool.idleBytes, budget.reserved], [900, 900]);
    assert.equal(await pool.warm(300), 0, 'no room: maxIdle idle buffers of that size already');
    assert.equal(await pool.warm(50, 1), 1, 'another size has a maxIdle of its own (the budget still has 100)');
    assert.equal(await pool.warm(60, 1), 0, 'but the budget has not');
    pool.give(a); // maxIdle of its size idle: freed
    await tick();
    assert.equal(be.frees, 1);
    const tb = new MemoryBudget(500);
    let relieved = 0;
    tb.onPressure(() => (relieved++, 0));
    const tight = new BufferPool(be as never, tb, 3);
    assert.equal(await tight.warm(300, 3), 1, 'the budget grants one');
    assert.equal(relieved, 0, 'warming takes free memory only: nothing trimmed or evicted for it');
    pool.close();
    tight.close();
    await tick();
    assert.equal(be.allocs, be.frees);
  });
});

describe('cancellation reaches the prover', () => {
  test('a cancelled running job stops at the next prover phase, frees its lane, and reports CANCELLED', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kiln-cancel-'));
    const real = selectBackend(nativeAvailable() ? 'native' : 'reference');
    // the prover's backend calls each take ≥ PHASE_MS more: a partition proof has 9 such steps
    const PHASE_MS = 250;
    const calls: string[] = [];
    const slow = slowProver(real, PHASE_MS, calls);
    const config = defaultConfig(64 * GIB);
    config.gpus.gpu_workers_per_device = 1;
    config.synthesis.threads = 1;
    config.pipeline.enabled = false;
    const demo = createDemoKind({ constraints: 1000, partitions: 2, cacheDir: dir, backend: real });
    const engine = new Engine({ config, backend: slow, logger: pino({ level: 'silent' }), planners: [demo.planner], providers: [demo.circuits], defaultMetrics: false });
    try {
      const req = (seed: number, partitions: number) =>
        proofRequest({ proofKind: ProofKind.KILN_DEMO, vanillaProof: Buffer.from(JSON.stringify({ seed, partitions })) });
      const { job } = await engine.submit(req(1, 3));
      const { job: next } = await engine.submit(req(50, 1));
      // wait until the first partition's proof is in its MSMs
      while (!calls.includes('msmG1')) await new Promise((r) => setTimeout(r, 5));
      const before = calls.length;
      const t0 = performance.now();
      assert.equal(engine.cancel(job.id)?.wasRunning, true);
      const r = await engine.await(job.id);
      const cancelMs = performance.now() - t0;
      assert.equal(r?.status, AwaitStatus.CANCELLED);
      // at most the step in flight ran after the cancel (a whole proof is 9 steps of ≥ 250 ms)
      assert.ok(calls.length - before <= 1, `${calls.length - before} prover steps after the cancel`);
      assert.ok(cancelMs < 2 * PHASE_MS + 200, `CANCELLED after ${cancelMs.toFixed(0)} ms`);
      console.log(`# cancel → CANCELLED in ${cancelMs.toFixed(0)} ms (one prover step is ≥ ${PHASE_MS} ms; the partition proof ≥ ${9 * PHASE_MS} ms)`);
      // the lane is free: the next job proves and completes
      const rn = await engine.await(next.id);
      assert.equal(rn?.status, AwaitStatus.COMPLETED, rn?.errorMessage);
      assert.deepEqual(engine.budget.reservations().filter((x) => x.label.includes(job.id)), [], 'the cancelled job holds no memory');
    } finally {
      await engine.close(0);
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('request_id reuse after a restart (journal)', () => {
  test('a job recovered from a record without a digest (older kiln) is compared by kind only; a new job keeps its digest in the journal', async () => {
    const { createHash } = await import('node:crypto');
    const { writeFile, mkdir } = await import('node:fs/promises');
    const { Journal } = await import('../src/engine/journal.js');
    const { RequestIdConflictError } = await import('../src/engine/engine.js');
    const dir = await mkdtemp(join(tmpdir(), 'kiln-reuse-'));
    const now = Date.now();
    const job = { id: 'old-1', requestId: 'old-req', kind: ProofKind.KILN_DEMO, kindName: 'demo', priority: 2, seq: 0, submittedAt: now };
    const body = JSON.stringify({ t: 'finish', job: { ...job, state: 'completed', finishedAt: now, proof: Buffer.from('proof').toString('base64') } });
    await mkdir(join(dir, 'state'), { recursive: true });
    await writeFile(join(dir, 'state', 'journal.log'), `${createHash('sha256').update(body).digest('hex').slice(0, 16)} ${body}\n`);
    const start = async () => {
      const opened = await Journal.open(join(dir, 'state'), { retentionMs: 3_600_000 });
      const backend = selectBackend(nativeAvailable() ? 'native' : 'reference');
      const demo = createDemoKind({ constraints: 1000, partitions: 1, cacheDir: dir, backend });
      const engine = new Engine({ config: defaultConfig(64 * GIB), backend, logger: pino({ level: 'silent' }), planners: [demo.planner], providers: [demo.circuits], defaultMetrics: false, journal: opened.journal });
      await engine.recover(opened);
      return engine;
    };
    const demoReq = (requestId: string, body: string, proofKind: number = ProofKind.KILN_DEMO) => proofRequest({ proofKind, requestId, vanillaProof: Buffer.from(body) });
    let engine = await start();
    try {
      // no digest recorded: any demo payload maps to it, another kind is refused
      assert.equal((await engine.submit(demoReq('old-req', '{"seed":5}'))).job.id, 'old-1');
      await assert.rejects(engine.submit(demoReq('old-req', '{}', ProofKind.WINNING_POST)), (e: unknown) => e instanceof RequestIdConflictError && /job old-1 \(demo, completed\)/.test(e.message));
      // a job accepted now keeps its digest in its journal records
      const r = await engine.await((await engine.submit(demoReq('new-req', '{"seed":6}'))).job.id);
      assert.equal(r?.status, AwaitStatus.COMPLETED, r?.errorMessage);
      await engine.journal!.flush();
    } finally {
      await engine.close(0);
    }
    engine = await start();
    try {
      await assert.rejects(engine.submit(demoReq('new-req', '{"seed":7}')), (e: unknown) => e instanceof RequestIdConflictError && /another payload/.test(e.message));
    } finally {
      await engine.close(0);
      await rm(dir, { recursive: true, force: true });
    }
  });
});
