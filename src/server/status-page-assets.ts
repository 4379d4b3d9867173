/**
 * The status page's HTML, stylesheet and script (served by status-page.ts), kept as plain strings:
 * no build step, no library. The script builds the DOM with textContent only (server strings are
 * never parsed as HTML).
 */
export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kiln status</title>
<link rel="stylesheet" href="/status-page.css">
</head>
<body>
<header><h1>kiln</h1><span id="summary">loading…</span></header>
<div id="insecure"></div>
<main>
<section class="wide"><h2>Running and queued jobs</h2>
<div class="legend"><span><i class="span-synth"></i>synthesis</span><span><i class="span-pipeline_wait"></i>waiting for a pipeline slot / memory</span><span><i class="span-lane_wait"></i>waiting for a lane</span><span><i class="span-prove"></i>proving</span><span><i class="span-verify"></i>verify</span><span><i class="span-srs"></i>job stages (queue, SRS, …)</span></div>
<div id="running"></div></section>
<section><h2>Queues by kind and priority</h2><div id="queues"></div></section>
<section><h2>Lanes and GPUs</h2><div id="lanes"></div></section>
<section class="wide"><h2>GPU memory plans</h2><div id="plans"></div></section>
<section class="wide"><h2>Last proofs</h2><div id="proofs"></div></section>
<section><h2>SRS cache</h2><div id="srs"></div></section>
<section><h2>Memory budget</h2><div id="memory"></div></section>
<section class="wide"><h2>Errors</h2><div id="errors"></div></section>
<section class="wide"><h2>Recently finished (timelines)</h2><div id="recent"></div></section>
</main>
<noscript>This page needs JavaScript; the same data is JSON at <a href="/status">/status</a>.</noscript>
<script src="/status-page.js"></script>
</body>
</html>
`;

export const STATUS_PAGE_CSS = `:root { --bg: #fbfbfa; --fg: #1d1d1f; --muted: #6b6b70; --line: #e2e2e6; --synth: #4c8bf5; --prove: #e8833a; --verify: #43a35a; --wait: #c9c9cf; --stage: #9b7fd1; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { padding: 12px 20px; border-bottom: 1px solid var(--line); background: #fff; }
header h1 { display: inline; font-size: 18px; margin: 0 12px 0 0; }
#summary { color: var(--muted); }
.insecure-banner { padding: 10px 20px; background: #b42318; color: #fff; font-weight: 600; }
.insecure-mark { color: #b42318; }
main { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 16px; padding: 16px 20px; }
section { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; min-width: 0; }
section.wide { grid-column: 1 / -1; }
h2 { font-size: 15px; margin: 0 0 8px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px 3px 0; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
th { color: var(--muted); font-weight: 600; white-space: nowrap; }
code { font: 12px ui-monospace, monospace; }
.empty { color: var(--muted); margin: 4px 0; }
.error, tr.state-failed td:nth-child(3) { color: #b42318; }
.job { margin: 8px 0 14px; }
.job-head { margin-bottom: 4px; }
.timeline .row { display: flex; align-items: center; height: 16px; margin: 2px 0; }
.timeline .label { flex: 0 0 90px; color: var(--muted); font-size: 12px; }
.timeline .track { position: relative; flex: 1; height: 12px; background: #f1f1f4; border-radius: 2px; }
.timeline .axis { display: flex; justify-content: space-between; margin-left: 90px; color: var(--muted); font-size: 11px; }
.bar { position: absolute; top: 0; height: 12px; border-radius: 2px; min-width: 2px; opacity: 0.9; }
.bar.open { animation: pulse 1s ease-in-out infinite alternate; }
@keyframes pulse { from { opacity: 0.55; } to { opacity: 1; } }
.span-synth { background: var(--synth); }
.span-prove { background: var(--prove); }
.span-verify { background: var(--verify); }
.span-lane_wait { background: var(--wait); }
.span-pipeline_wait, .span-mem_wait { background: repeating-linear-gradient(45deg, #d8d8de 0 4px, #ececf0 4px 8px); }
.span-queue, .span-srs, .span-other { background: var(--stage); }
.legend span { display: inline-block; margin-right: 12px; font-size: 12px; color: var(--muted); }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; vertical-align: -1px; }
.meter { position: relative; display: inline-block; width: 80px; height: 10px; background: #f1f1f4; margin-right: 6px; vertical-align: -1px; border-radius: 2px; }
.meter.wide { display: block; width: 100%; margin: 4px 0 8px; }
.meter .fill { position: absolute; left: 0; top: 0; bottom: 0; background: var(--prove); border-radius: 2px; }
`;

export const STATUS_PAGE_JS = `'use strict';
// kiln status page: polls /status and /status/timeline; builds the DOM with textContent only.
(function () {
  var POLL_MS = 1000;
  var PRIORITIES = ['CRITICAL', 'HIGH', 'NORMAL', 'LOW', 'UNSPECIFIED'];
  var LIVE = { planning: 1, queued: 1, running: 1 };

  function h(tag, attrs) {
    var el = document.createElement(tag);
    if (attrs) {
      for (var k in attrs) {
        if (!Object.prototype.hasOwnProperty.call(attrs, k) || attrs[k] === undefined || attrs[k] === null) continue;
        if (k === 'class') el.className = String(attrs[k]);
        else if (k === 'style') for (var p in attrs.style) el.style.setProperty(p, String(attrs.style[p]));
        else el.setAttribute(k, String(attrs[k]));
      }
    }
    for (var i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }
  function append(el, c) {
    if (c === undefined || c === null || c === false) return;
    if (Array.isArray(c)) { c.forEach(function (x) { append(el, x); }); return; }
    if (typeof c === 'object' && c.nodeType) { el.appendChild(c); return; }
    el.appendChild(document.createTextNode(String(c)));
  }
  function fill(id, content) {
    var el = document.getElementById(id);
    while (el.firstChild) el.removeChild(el.firstChild);
    append(el, content);
  }
  function bytes(n) {
    n = Number(n) || 0;
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    var i = 0;
    while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return (i === 0 ? String(n) : n.toFixed(1)) + ' ' + u[i];
  }
  function ms(x) {
    if (x === undefined || x === null) return '';
    x = Number(x);
    return x >= 10000 ? (x / 1000).toFixed(1) + ' s' : Math.round(x) + ' ms';
  }
  function table(head, rows, empty) {
    if (!rows.length) return h('p', { class: 'empty' }, empty);
    return h('table', null,
      h('thead', null, h('tr', null, head.map(function (c) { return h('th', null, c); }))),
      h('tbody', null, rows.map(function (r) {
        return h('tr', r.attrs || null, r.cells.map(function (c) { return h('td', null, c); }));
      })));
  }

  function queues(st) {
    var byKind = {};
    (st.queues || []).forEach(function (q) { byKind[q.kind] = { pending: q.pending, inProgress: q.inProgress, pri: {} }; });
    (st.jobs || []).forEach(function (j) {
      if (!LIVE[j.state]) return;
      var q = byKind[j.kind] || (byKind[j.kind] = { pending: 0, inProgress: 0, pri: {} });
      var key = j.state === 'running' ? 'run' : 'wait';
      var p = q.pri[j.priority] || (q.pri[j.priority] = { wait: 0, run: 0 });
      p[key]++;
    });
    var rows = Object.keys(byKind).sort().map(function (kind) {
      var q = byKind[kind];
      return {
        attrs: { 'data-kind': kind },
        cells: [kind, q.pending, q.inProgress].concat(PRIORITIES.slice(0, 4).map(function (p) {
          var x = q.pri[p];
          return x ? x.wait + ' waiting, ' + x.run + ' running' : '–';
        })),
      };
    });
    return table(['kind', 'pending', 'in progress'].concat(PRIORITIES.slice(0, 4).map(function (p) { return p.toLowerCase(); })), rows, 'no proof kinds registered');
  }

  function bar(span, t0, t1, now) {
    var end = span.endMs === null ? now : span.endMs;
    var left = Math.max(0, (span.startMs - t0) / (t1 - t0));
    var width = Math.max(0.002, (end - span.startMs) / (t1 - t0));
    var name = span.name.replace(/\\[\\d+\\]$/, '');
    var cls = 'bar span-' + (/^(synth|prove|verify|lane_wait|pipeline_wait|mem_wait|queue|srs)$/.test(name) ? name : 'other') + (span.endMs === null ? ' open' : '');
    return h('div', {
      class: cls,
      'data-span': name,
      'data-open': span.endMs === null ? 'true' : 'false',
      title: span.name + ': ' + ms(end - span.startMs) + (span.endMs === null ? ' (running)' : ''),
      style: { left: (100 * left).toFixed(3) + '%', width: (100 * Math.min(width, 1 - left)).toFixed(3) + '%' },
    });
  }

  function timeline(job, now) {
    var t0 = job.startMs;
    var t1 = Math.max((job.endMs === null ? now : job.endMs), t0 + 1);
    var rows = [];
    rows.push(h('div', { class: 'row' }, h('span', { class: 'label' }, 'job'),
      h('div', { class: 'track' }, job.stages.map(function (s) { return bar(s, t0, t1, now); }))));
    job.partitions.forEach(function (p) {
      rows.push(h('div', { class: 'row', 'data-partition': p.index },
        h('span', { class: 'label' }, 'partition ' + p.index),
        h('div', { class: 'track' }, p.spans.map(function (s) { return bar(s, t0, t1, now); }))));
    });
    return h('div', { class: 'timeline' }, rows,
      h('div', { class: 'axis' }, h('span', null, '0'), h('span', null, ms(t1 - t0))));
  }

  function jobCard(job, now) {
    var elapsed = (job.endMs === null ? now : job.endMs) - job.startMs;
    return h('div', { class: 'job state-' + job.state, 'data-job': job.id, 'data-state': job.state },
      h('div', { class: 'job-head' },
        h('strong', null, job.kind), ' ', h('code', null, job.id),
        job.requestId ? [' request ', h('code', { class: 'request-id' }, job.requestId)] : null,
        ' · ', job.priority.toLowerCase(), ' · ', job.circuitId || '', ' · ', job.state,
        ' · partitions ', h('span', { class: 'done' }, job.partitionsDone + '/' + job.partitionsTotal),
        ' · ', ms(elapsed)),
      timeline(job, now));
  }

  function lastProofs(st) {
    var done = (st.jobs || []).filter(function (j) { return !LIVE[j.state]; });
    done.sort(function (a, b) { return (b.finishedAtMs || 0) - (a.finishedAtMs || 0); });
    return table(['job', 'kind', 'state', 'partitions', 'total', 'queue', 'srs', 'synth', 'gpu'],
      done.slice(0, 20).map(function (j) {
        var t = j.timings || {};
        return {
          attrs: { 'data-job': j.id, class: 'state-' + j.state },
          cells: [h('code', null, j.id), j.kind, j.insecureParams ? [j.state + ' ', h('strong', { class: 'insecure-mark' }, 'INSECURE')] : j.state, j.partitions.done + '/' + j.partitions.total,
            ms(t.totalMs), ms(t.queueWaitMs), ms(t.srsLoadMs), ms(t.synthesisMs), ms(t.gpuComputeMs)],
        };
      }), 'no finished proofs yet');
  }

  function lanes(st, tl) {
    var busy = {};
    (tl.lanes || []).forEach(function (l) { busy[l.lane] = l; });
    return table(['lane', 'device', 'memory (free / total)', 'current job', 'busy (proving, last minute)'],
      (st.lanes || []).map(function (l) {
        var b = busy['prover ' + l.ordinal];
        var pct = b ? (100 * b.busyMs / b.windowMs).toFixed(1) + ' %' : '0.0 %';
        return {
          attrs: { 'data-lane': l.ordinal },
          cells: [l.ordinal, l.healthy === false ? l.name + ' (out of service)' : l.name, l.vramTotal ? (l.vramFree ? bytes(l.vramFree) + ' / ' + bytes(l.vramTotal) : bytes(l.vramTotal) + ' (free not reported)') : 'host memory',
            l.currentJobId ? l.currentProofKind + ' ' + l.currentJobId : 'idle',
            [h('span', { class: 'meter' }, h('span', { class: 'fill', style: { width: pct.replace(' ', '') } })), pct]],
        };
      }), 'no lanes');
  }

  // per GPU: its device-memory plan: what stays resident, what streams from pinned host memory
  function plans(st) {
    var devs = (st.devices || []).filter(function (d) { return d.memoryPlan; });
    if (!devs.length) return h('p', { class: 'empty' }, 'no device-memory plan (CPU backend, or no GPU plan yet)');
    return devs.map(function (d) {
      var p = d.memoryPlan;
      var last = p.lastPartition;
      return h('div', { class: 'plan', 'data-plan-device': d.ordinal },
        h('p', null, h('strong', null, d.gpu ? 'GPU ' + d.ordinal + ': ' + d.name : d.name),
          ' · budget ' + bytes(p.budgetBytes) + ' · limit ' + (p.limitBytes ? bytes(p.limitBytes) : 'none (the free memory)') +
          ' · resident ' + bytes(p.residentBytes) + (p.replans ? ' · ' + p.replans + ' re-plan(s) after running out of memory' : '')),
        last ? h('p', { class: 'last-partition' }, 'last partition: ' + bytes(last.streamedBytes) + ' streamed, copy ' + ms(last.copyMs) + ', GPU ' + ms(last.gpuMs)) : null,
        table(['circuit', 'plan', 'resident', 'streamed / partition', 'working / partition', 'host pinned'],
          (p.circuits || []).map(function (c) {
            return {
              attrs: { 'data-plan-circuit': c.circuit },
              cells: [c.circuit, c.summary, bytes(c.residentBytes), bytes(c.streamedBytesPerPartition), bytes(c.workingBytes), bytes(c.hostBytes)],
            };
          }), 'no circuit planned yet'));
    });
  }

  function srs(st) {
    return table(['circuit', 'tier', 'size', 'on devices', 'refs', 'load', 'idle'],
      (st.srs || []).map(function (s) {
        return { attrs: { 'data-circuit': s.circuitId }, cells: [s.circuitId, s.tier, bytes(s.sizeBytes), (s.devices || []).join(', '), s.refCount, ms(s.loadMs), ms(s.idleMs)] };
      }), 'no SRS loaded');
  }

  function memory(st) {
    var m = st.memory || {};
    var pct = m.budgetBytes ? Math.min(100, 100 * m.reservedBytes / m.budgetBytes) : 0;
    return [
      h('p', null, bytes(m.reservedBytes) + ' reserved of ' + bytes(m.budgetBytes) + ' (configured: ' + m.configured + ')' +
        (m.waiting ? ', ' + m.waiting + ' waiting' : '')),
      h('div', { class: 'meter wide' }, h('span', { class: 'fill', style: { width: pct.toFixed(2) + '%' } })),
      table(['reservation', 'bytes'], (m.reservations || []).map(function (r) { return { cells: [r.label, bytes(r.bytes)] }; }), 'no reservations'),
      st.synthesis ? h('p', null, 'synthesis workers: ' + st.synthesis.busy + ' busy of ' + st.synthesis.workers + ', ' + st.synthesis.queued + ' queued') : null,
    ];
  }

  function errors(st, pollError) {
    var rows = (st.jobs || []).filter(function (j) { return j.error; }).map(function (j) {
      return { attrs: { 'data-job': j.id }, cells: [h('code', null, j.id), j.kind, j.state, j.error] };
    });
    return [pollError ? h('p', { class: 'error' }, 'status poll failed: ' + pollError) : null,
      table(['job', 'kind', 'state', 'error'], rows, 'no errors')];
  }

  var pollError = '';
  var renders = 0;
  function render(st, tl) {
    var now = tl.nowMs;
    var b = st.backend || {};
    fill('summary', [
      'up ' + st.uptimeSeconds + ' s · backend ' + (b.backend || '?') + (b.gpus && b.gpus.length ? ' · ' + b.gpus.length + ' GPU(s)' : '') +
        ' · completed ' + st.totals.completed + ' · failed ' + st.totals.failed + ' · cancelled ' + st.totals.cancelled,
      h('span', { id: 'updated' }, ' · updated ' + new Date().toLocaleTimeString()),
      st.durability && st.durability.state === 'lost' ? h('div', { class: 'error' }, 'durability lost since ' + st.durability.since + ': ' + st.durability.error + ' (new jobs refused)') : null,
    ]);
    // INSECURE development parameters: a banner over the whole page (/status insecure.warning)
    var insecure = st.insecure && st.insecure.warning;
    fill('insecure', insecure ? h('div', { class: 'insecure-banner', role: 'alert', 'data-circuits': (st.insecure.circuits || []).join(',') }, insecure) : null);
    fill('queues', queues(st));
    var live = tl.jobs.filter(function (j) { return LIVE[j.state]; });
    // the timeline lists the running jobs, then at most 50 in all; liveJobs counts every unfinished one
    var more = (tl.liveJobs || 0) - live.length;
    fill('running', live.length ? [live.map(function (j) { return jobCard(j, now); }),
      more > 0 ? h('p', { class: 'empty', 'data-more': more }, 'and ' + more + ' more planning or queued (counted in the queues above)') : null]
      : h('p', { class: 'empty' }, tl.hidden ? 'job details need the token: open this page as /#token=<token>' : 'no jobs running or queued'));
    var recent = tl.jobs.filter(function (j) { return !LIVE[j.state]; });
    fill('recent', recent.length ? recent.map(function (j) { return jobCard(j, now); }) : h('p', { class: 'empty' }, 'none yet'));
    fill('proofs', lastProofs(st));
    fill('lanes', lanes(st, tl));
    fill('plans', plans(st));
    fill('srs', srs(st));
    fill('memory', memory(st));
    fill('errors', errors(st, pollError));
    document.body.setAttribute('data-ready', 'true');
    document.body.setAttribute('data-renders', String(++renders));
  }

  // With [daemon] auth_token set, job details need the token: open the page as /#token=<token>
  // (the fragment never leaves the browser; it is sent only as the Authorization header).
  var token = (/(?:^#|&)token=([^&]+)/.exec(location.hash) || [])[1];
  function getJson(path) {
    var headers = token ? { Authorization: 'Bearer ' + decodeURIComponent(token) } : {};
    return fetch(path, { cache: 'no-store', headers: headers }).then(function (r) {
      if (!r.ok) throw new Error(path + ': HTTP ' + r.status);
      return r.json();
    });
  }
  var last = null;
  function poll() {
    var timeline = getJson('/status/timeline').catch(function (e) {
      // 401: a token is configured and the page was opened without it (#token=…): counts only
      if (/HTTP 401/.test(String(e && e.message))) return { nowMs: Date.now(), jobs: [], lanes: [], hidden: true };
      throw e;
    });
    Promise.all([getJson('/status'), timeline]).then(function (x) {
      pollError = '';
      last = x;
      render(x[0], x[1]);
    }).catch(function (e) {
      pollError = String(e && e.message || e);
      if (last) render(last[0], last[1]); else fill('errors', errors({}, pollError));
    }).then(function () { setTimeout(poll, POLL_MS); });
  }
  poll();
})();
`;
