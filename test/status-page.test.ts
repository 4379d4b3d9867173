/**
 * The status page (GET / of the HTTP status server): its JSON timeline and assets in Node, and the page
 * itself in a real headless browser (Debian's `chromium`): it loads, polls, shows a running job's
 * partition spans as bars, the device-memory plan a backend reports, escapes server strings, and a
 * screenshot is kept in test-artifacts/.
 * The browser test skips with a message only when no chromium is installed (CI installs it: .ci/run).
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import type { DeviceMemoryPlanStatus } from '../src/backend/backend.js';
import { nativeAvailable } from '../src/backend/native.js';
import { selectBackend } from '../src/backend/select.js';
import { benchSingle, connectEngine } from '../src/client/grpc-client.js';
import { defaultConfig } from '../src/engine/config.js';
import { Engine, type Job } from '../src/engine/engine.js';
import { RECENT_FINISHED_JOBS } from '../src/engine/jobs.js';
import { ProofKind, proofRequest, type ProofWork } from '../src/engine/types.js';
import { runDaemon, type Daemon } from '../src/server/daemon.js';
import { statusTimeline, type Timeline } from '../src/server/status-page.js';
import { STATUS_PAGE_JS } from '../src/server/status-page-assets.js';
import { TIMELINE_LIVE_JOBS } from '../src/util/limits.js';
import { pino } from 'pino';
import { performance } from 'node:perf_hooks';
import { repoRoot, testDaemonDirs } from './support.js';

const run = promisify(execFile);
const XSS = '<img src=x id=pwned onerror="document.body.dataset.pwned=1">';
const GIB = 1024 ** 3;
/** The device-memory plan the daemon's (CPU) backend reports here, as a GPU backend would (issue 24). */
const PLAN: DeviceMemoryPlanStatus = {
  budgetBytes: 14 * GIB,
  limitBytes: 15 * GIB,
  residentBytes: 9 * GIB,
  circuits: [
    { circuit: 'porep-32g', summary: `matrices resident; SRS h, l streamed in 768 MiB chunks ${XSS}`, residentBytes: 2 * GIB, streamedBytesPerPartition: 11 * GIB, hostBytes: 12 * GIB, workingBytes: 3 * GIB },
  ],
  lastPartition: { streamedBytes: 5 * GIB, copyMs: 812.5, gpuMs: 1530 },
  replans: 1,
};

function findChromium(): string | undefined {
  const names = [process.env.CHROMIUM, 'chromium', 'chromium-browser', 'google-chrome'].filter((x): x is string => !!x);
  for (const n of names) {
    try {
      execFileSync('sh', ['-c', `command -v "${n}"`], { stdio: 'ignore' });
      return n;
    } catch {
      /* next */
    }
  }
  return undefined;
}

let dir: string;
let d: Daemon;
let base: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kiln-status-page-'));
  d = await runDaemon({
    listen: '127.0.0.1:0',
    httpListen: '127.0.0.1:0',
    logLevel: 'silent',
    handleSignals: false,
    demo: { constraints: 1000, partitions: 2, cacheDir: dir },
    devices: [Object.assign(selectBackend(nativeAvailable() ? 'native' : 'reference'), { memoryPlan: () => PLAN })],
    configure: (c) => {
      testDaemonDirs(c, dir);
      c.synthesis.threads = 1;
    },
  });
  base = `http://${d.httpAddress}`;
});

after(async () => {
  await d?.close();
  await rm(dir, { recursive: true, force: true });
});

test('GET / serves the page with a strict CSP; its script and stylesheet; /status/timeline has the partition spans', async () => {
  const page = await fetch(`${base}/`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type')!, /^text\/html/);
  assert.match(page.headers.get('content-security-policy')!, /script-src 'self'/);
  const html = await page.text();
  assert.match(html, /<script src="\/status-page\.js"><\/script>/);
  const js = await (await fetch(`${base}/status-page.js`)).text();
  assert.match(js, /textContent|createTextNode/);
  assert.doesNotMatch(js, /innerHTML|insertAdjacentHTML|document\.write/);
  assert.match((await fetch(`${base}/status-page.css`)).headers.get('content-type')!, /^text\/css/);
  assert.ok(((await (await fetch(`${base}/?json`)).json()) as { endpoints: string[] }).endpoints.includes('/status/timeline'));

  const r = await benchSingle({ addr: d.grpcAddress, type: 'demo', out: () => {} });
  const tl = (await (await fetch(`${base}/status/timeline`)).json()) as Timeline;
  const job = tl.jobs.find((j) => j.id === r.job_id)!;
  assert.equal(job.state, 'completed');
  assert.equal(job.partitions.length, 2);
  for (const p of job.partitions) {
    const names = p.spans.map((s) => s.name);
    assert.ok(names.includes('synth') && names.includes('prove'), names.join(','));
    const synth = p.spans.find((s) => s.name === 'synth')!;
    const prove = p.spans.find((s) => s.name === 'prove')!;
    assert.ok(synth.startMs >= job.startMs && synth.endMs! <= prove.startMs && prove.endMs! <= job.endMs!, JSON.stringify(p));
  }
  assert.ok(job.stages.some((s) => s.name === 'srs'));
  assert.ok(tl.lanes.some((l) => /^prover \d+$/.test(l.lane) && l.busyMs > 0));
  const st = (await (await fetch(`${base}/status`)).json()) as { devices: { memoryPlan: DeviceMemoryPlanStatus | null }[] };
  assert.deepEqual(st.devices.map((dev) => dev.memoryPlan), [PLAN], "/status: the device's memory plan");
});

/** A stand-in for the few DOM calls the page's script makes (createElement, createTextNode, getElementById,
 *  appendChild, removeChild, setAttribute, style.setProperty): runs STATUS_PAGE_JS in node over given /status and
 *  /status/timeline answers, one render, and returns each element by id. The browser test runs the real thing. */
interface FakeNode {
  tag: string;
  text?: string;
  className: string;
  attrs: Record<string, string>;
  children: FakeNode[];
}
async function renderPage(status: unknown, timeline: unknown): Promise<Map<string, FakeNode>> {
  const byId = new Map<string, FakeNode>();
  const el = (tag: string): FakeNode & Record<string, unknown> => {
    const n: FakeNode & Record<string, unknown> = {
      tag,
      nodeType: 1,
      className: '',
      attrs: {},
      children: [],
      style: { setProperty: () => {} },
      appendChild: (c: FakeNode) => void n.children.push(c),
      removeChild: (c: FakeNode) => void n.children.splice(n.children.indexOf(c), 1),
      setAttribute: (k: string, v: string) => void (n.attrs[k] = v),
    };
    Object.defineProperty(n, 'firstChild', { get: () => n.children[0] ?? null });
    return n;
  };
  const body = el('body');
  const document = {
    body,
    createElement: el,
    createTextNode: (t: string) => ({ tag: '#text', text: t, className: '', attrs: {}, children: [], nodeType: 3 }),
    getElementById: (id: string) => byId.get(id) ?? byId.set(id, el('div')).get(id),
  };
  let rendered!: () => void;
  const done = new Promise<void>((r) => (rendered = r));
  const answers: Record<string, unknown> = { '/status': status, '/status/timeline': timeline };
  const context = {
    document,
    location: { hash: '' },
    fetch: async (path: string) => ({ ok: true, status: 200, json: async () => answers[path] }),
    setTimeout: () => rendered(), // the next poll: the first render is done
    console,
  };
  const { runInNewContext } = await import('node:vm');
  runInNewContext(STATUS_PAGE_JS, context);
  await done;
  assert.equal(body.attrs['data-ready'], 'true', 'the page rendered');
  return byId;
}

/** The text of a node and its children. */
const textOf = (n: FakeNode | undefined): string => (n === undefined ? '' : (n.text ?? '') + n.children.map(textOf).join(''));

test('INSECURE development parameters: /status says which circuits and how many proofs; the page shows a banner and marks each such proof', async () => {
  const r = await benchSingle({ addr: d.grpcAddress, type: 'demo', out: () => {} });
  const st = (await (await fetch(`${base}/status`)).json()) as {
    insecure: { devParams: boolean; circuits: string[]; proofs: number; warning: string | null };
    jobs: { id: string; insecureParams: boolean }[];
  };
  // the demo kind has development parameters only ([srs] dev_params is false here: the circuits used say it)
  assert.equal(st.insecure.devParams, false);
  assert.ok(st.insecure.circuits.includes('demo-1000'), JSON.stringify(st.insecure));
  assert.ok(st.insecure.proofs >= 1);
  assert.match(st.insecure.warning!, /^INSECURE development parameters in use \(.*demo-1000.*\): \d+ proof\(s\) made with them; such proofs are never accepted on chain$/);
  assert.equal(st.jobs.find((j) => j.id === r.job_id)!.insecureParams, true);
  const tl = await (await fetch(`${base}/status/timeline`)).json();
  const page = await renderPage(st, tl);
  const banner = page.get('insecure')!.children[0]!;
  assert.equal(banner.className, 'insecure-banner');
  assert.equal(textOf(banner), st.insecure.warning);
  assert.match(textOf(page.get('proofs')), /completed INSECURE/);
  // without INSECURE parameters: no banner, no mark
  const official = { ...st, insecure: { ...st.insecure, circuits: [], proofs: 0, warning: null }, jobs: st.jobs.map((j) => ({ ...j, insecureParams: false })) };
  const plain = await renderPage(official, tl);
  assert.deepEqual(plain.get('insecure')!.children, []);
  assert.doesNotMatch(textOf(plain.get('proofs')), /INSECURE/);
});

test('the page in headless chromium: a running job\'s partition spans as bars, live polling, escaped strings, a screenshot', async (t) => {
  const chromium = findChromium();
  if (!chromium) {
    // CI installs chromium and sets KILN_REQUIRE_CHROMIUM=1 (.ci/run): there, its absence fails
    assert.ok(process.env.KILN_REQUIRE_CHROMIUM !== '1', 'KILN_REQUIRE_CHROMIUM=1 (.ci/run) but chromium is not installed');
    t.skip('chromium is not installed (apt-get install -y chromium); CI installs it in .ci/run');
    return;
  }
  const c = connectEngine(d.grpcAddress);
  const jobs: string[] = [];
  let feeding = false;
  let feeder: Promise<void> | undefined;
  try {
    // a job that fails at planning (its error and hostile request id must show as text)
    await c.call('SubmitProof', { proof_kind: 1000, request_id: XSS, vanilla_proof: Buffer.from('{"partitions": 99}') });
    // 16-partition jobs, kept coming while the browser runs (so that a job is running whatever the
    // machine's speed): up to three run (maxJobsInFlight) while the others wait, priorities differ
    let n = 0;
    const submit = async (): Promise<void> => {
      const i = n++;
      const vanilla = Buffer.from(JSON.stringify({ seed: 10 + i, partitions: 16, constraints: 4000 }));
      const priority = [2, 3, 1, 4][i % 4];
      jobs.push((await c.call('SubmitProof', { proof_kind: 1000, request_id: `page-${i}`, priority, vanilla_proof: vanilla })).job_id as string);
    };
    for (let i = 0; i < 4; i++) await submit();
    feeding = true;
    feeder = (async (): Promise<void> => {
      while (feeding) {
        const tl = (await (await fetch(`${base}/status/timeline`)).json()) as Timeline;
        if (tl.jobs.filter((j) => j.state === 'queued' || j.state === 'running' || j.state === 'planning').length < 4) await submit();
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const t0 = Date.now();
    for (;;) {
      const tl = (await (await fetch(`${base}/status/timeline`)).json()) as Timeline;
      if (tl.jobs.some((j) => j.state === 'running' && j.partitions.filter((p) => p.spans.some((s) => s.name === 'prove')).length >= 2)) break;
      assert.ok(Date.now() - t0 < 120_000, 'no job running with two partitions proving within 120 s');
      await new Promise((r) => setTimeout(r, 200));
    }
    // one browser run: the DOM (stdout) and the screenshot of the same moment
    const artifacts = join(repoRoot, 'test-artifacts');
    await mkdir(artifacts, { recursive: true });
    const shot = join(artifacts, 'status-page.png');
    await rm(shot, { force: true });
    const flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--hide-scrollbars', '--virtual-time-budget=2500', '--window-size=1400,1100'];
    const t1 = Date.now();
    const { stdout: dom } = await run(chromium, [...flags, `--screenshot=${shot}`, '--dump-dom', `${base}/`], { maxBuffer: 1 << 26, timeout: 90_000 });
    t.diagnostic(`chromium: ${Date.now() - t1} ms; ${n} jobs submitted`);
    feeding = false;
    await feeder;
    assert.match(dom, /<body[^>]*data-ready="true"/, 'the page rendered');
    assert.ok(Number(/data-renders="(\d+)"/.exec(dom)?.[1]) >= 2, 'the page polled and re-rendered');
    const running = dom.slice(dom.indexOf('id="running"'), dom.indexOf('id="queues"'));
    assert.match(running, /<div class="job state-running" data-job="[^"]+" data-state="running">/);
    const rows = running.match(/<div class="row" data-partition="\d+">.*?<\/div><\/div>/g) ?? [];
    assert.ok(rows.length >= 2, `partition rows: ${rows.length}`);
    assert.ok(rows.filter((r) => /data-span="synth"/.test(r) && /data-span="prove"/.test(r)).length >= 2, 'two partitions with synthesis and proving bars');
    assert.match(running, /data-open="true"/, 'an open (running) span');
    assert.match(running, /style="left: [\d.]+%; width: [\d.]+%;"/);
    // queued jobs by kind and priority
    assert.match(dom, /<tr data-kind="demo"><td>demo<\/td>/);
    // the demo kind's INSECURE development parameters: a banner over the page
    assert.match(dom, /<div class="insecure-banner" role="alert" data-circuits="[^"]*demo-4000[^"]*">INSECURE development parameters in use/);
    // escaping: the hostile request id is text, never an element or a handler
    assert.doesNotMatch(dom, /id="pwned"/);
    assert.doesNotMatch(dom, /data-pwned/);
    assert.match(dom, /vanilla_proof\.partitions: expected an integer in 1\.\.16/);
    assert.match(dom, /<tr data-circuit="demo-4000">/);
    // the device-memory plan: budget, limit, resident bytes, the last partition, a row per circuit
    const plan = dom.slice(dom.indexOf('id="plans"'), dom.indexOf('id="srs"'));
    assert.match(plan, /<div class="plan" data-plan-device="0"><p><strong>[^<]+<\/strong> · budget 14\.0 GiB · limit 15\.0 GiB · resident 9\.0 GiB · 1 re-plan/);
    assert.match(plan, /<p class="last-partition">last partition: 5\.0 GiB streamed, copy 813 ms, GPU 1530 ms<\/p>/);
    assert.match(
      plan,
      /<tr data-plan-circuit="porep-32g"><td>porep-32g<\/td><td>matrices resident; SRS h, l streamed in 768 MiB chunks &lt;img [^<]*&gt;<\/td><td>2\.0 GiB<\/td><td>11\.0 GiB<\/td><td>3\.0 GiB<\/td><td>12\.0 GiB<\/td><\/tr>/,
    );

    assert.ok(existsSync(shot), shot);
    const png = await readFile(shot);
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
    assert.ok((await stat(shot)).size > 20_000, 'a screenshot with content');
    t.diagnostic(`screenshot: ${shot}`);
  } finally {
    feeding = false;
    await feeder?.catch(() => {});
    for (const id of jobs) await c.call('CancelProof', { job_id: id }).catch(() => {});
    c.close();
  }
});

test('/status/timeline costs the same with 20,000 kept jobs as with 20: the jobs it looks at, its time; at most 50 unfinished jobs, all counted', async () => {
  const engine = new Engine({ config: defaultConfig(64 * GIB), backend: selectBackend(nativeAvailable() ? 'native' : 'reference'), logger: pino({ level: 'silent' }), defaultMetrics: false });
  // a kind whose jobs stay in planning until released (unfinished jobs the timeline must list)
  let release!: () => void;
  const held = new Promise<never>((_, reject) => (release = () => reject(new Error('released'))));
  held.catch(() => {});
  engine.registerPlanner({ kind: ProofKind.KILN_DEMO, name: 'held', defaultPriority: 2, plan: (): Promise<ProofWork> => held });
  const ids: string[] = [];
  /** n jobs that fail at once (PROOF_KIND_UNSPECIFIED): finished jobs kept for AwaitProof like any other. */
  const addFinished = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) ids.push((await engine.submit(proofRequest({ proofKind: ProofKind.UNSPECIFIED }))).job.id);
  };
  /** One timeline call with every kept job reporting when its state or span is read, then the median
   *  time of 21 calls. */
  const measure = (): { tl: Timeline; looked: Set<string>; ms: number } => {
    const looked = new Set<string>();
    const restore: (() => void)[] = [];
    for (const id of engine.jobIds()) {
      const job = engine.getJob(id)!;
      for (const key of ['state', 'span'] as const) {
        const value = job[key];
        Object.defineProperty(job, key, { configurable: true, get: () => (looked.add(id), value) });
        restore.push(() => Object.defineProperty(job, key, { configurable: true, writable: true, value }));
      }
    }
    const tl = statusTimeline(engine);
    for (const r of restore) r();
    const times: number[] = [];
    for (let i = 0; i < 21; i++) {
      const t0 = performance.now();
      statusTimeline(engine);
      times.push(performance.now() - t0);
    }
    return { tl, looked, ms: times.sort((a, b) => a - b)[10] };
  };
  try {
    await addFinished(20);
    const small = measure();
    await addFinished(20_000 - 20);
    const large = measure();
    assert.equal(engine.jobIds().length, 20_000);
    const newest = ids.slice(-RECENT_FINISHED_JOBS).reverse();
    assert.deepEqual(large.tl.jobs.map((j) => j.id), newest, 'the last finished jobs, latest first');
    assert.ok(large.tl.jobs.every((j) => j.state === 'failed'));
    assert.deepEqual([...large.looked].sort(), [...newest].sort(), 'with 20,000 kept jobs the timeline looks at the five it shows');
    assert.equal(small.looked.size, RECENT_FINISHED_JOBS);
    console.log(`# /status/timeline: median ${small.ms.toFixed(3)} ms with 20 kept jobs, ${large.ms.toFixed(3)} ms with 20,000; jobs looked at: ${small.looked.size} and ${large.looked.size}`);
    assert.ok(large.ms <= 5 * small.ms + 2, `${large.ms.toFixed(3)} ms with 20,000 kept jobs, ${small.ms.toFixed(3)} ms with 20`);

    // 60 unfinished jobs: 50 shown (the first ones), all 60 counted; the finished ones still follow
    const planning: Promise<{ job: Job }>[] = [];
    for (let i = 0; i < 60; i++) planning.push(engine.submit(proofRequest({ proofKind: ProofKind.KILN_DEMO, requestId: `held-${i}` })));
    await new Promise((r) => setImmediate(r));
    const busy = measure();
    assert.equal(busy.tl.liveJobs, 60);
    const live = busy.tl.jobs.filter((j) => j.state === 'planning');
    assert.equal(live.length, TIMELINE_LIVE_JOBS);
    assert.deepEqual(live.map((j) => j.requestId), Array.from({ length: TIMELINE_LIVE_JOBS }, (_, i) => `held-${i}`));
    assert.equal(busy.tl.jobs.length, TIMELINE_LIVE_JOBS + RECENT_FINISHED_JOBS);
    assert.ok(busy.looked.size <= 60 + RECENT_FINISHED_JOBS, `${busy.looked.size} jobs looked at`);
    release();
    await Promise.all(planning);
    const after = statusTimeline(engine);
    assert.equal(after.liveJobs, 0);
    assert.deepEqual(after.jobs.map((j) => j.state), Array(RECENT_FINISHED_JOBS).fill('failed'), 'the planning jobs failed and are now the last finished');
  } finally {
    release();
    await engine.close(0);
  }
});
