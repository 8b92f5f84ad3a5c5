'use strict';
// sparkprof run index: summary.json and the folder's pages (embedded by
// user/record/run_index.c) as tables, links and a stage timeline.
(function () {
  const root = document.getElementById('run');
  let S;
  try { S = JSON.parse(DATA.summary); }
  catch (e) { document.getElementById('error').textContent = 'summary.json is not valid JSON: ' + e.message; S = {}; }
  const files = new Set(DATA.files), linked = new Set();
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const k of kids) e.append(k instanceof Node ? k : String(k));
    return e;
  };
  const num = x => x === undefined || x === null ? '' : Number(x).toLocaleString('en-US', { maximumFractionDigits: 2 });
  const pct = x => (100 * (x || 0)).toFixed(1) + '%';
  const section = title => { const s = el('section', {}, el('h2', {}, title)); root.append(s); return s; };
  // Links to the flame graphs of one output: CPU, wall, off-CPU.
  function links(name) {
    const span = el('span');
    for (const [suffix, label] of [['.html', 'CPU'], ['.wall.html', 'wall'], ['.offcpu.html', 'off-CPU']]) {
      const f = name + suffix;
      if (!files.has(f)) continue;
      linked.add(f);
      span.append(el('a', { href: encodeURI(f) }, label), ' ');
    }
    return span;
  }
  function table(head, rows) {
    const t = el('table');
    t.append(el('tr', {}, ...head.map((h, i) => el('th', i ? {} : { class: 'l' }, h))));
    for (const r of rows) t.append(el('tr', {}, ...r.map((c, i) => el('td', i ? {} : { class: 'l' }, c))));
    return t;
  }

  const lost = S.lost || {}, lostTotal = Object.values(lost).reduce((a, b) => a + (b || 0), 0);
  const run = section('Run');
  const dl = el('dl');
  const facts = [
    ['host', S.host], ['started', S.start_time], ['duration', num(S.duration_s) + ' s'],
    ['sampling', `${S.event || ''} at ${num(S.frequency_hz)} Hz`], ['target', Array.isArray(S.target) ? 'pids ' + S.target.join(', ') : S.target],
    ['samples', num(S.samples)], ['idle samples', num(S.idle_samples)],
    ['lost', lostTotal ? Object.entries(lost).filter(e => e[1]).map(e => `${e[0]} ${num(e[1])}`).join(', ') : 'none'],
    ['partial stacks', Object.entries(S.partial_stacks || {}).map(e => `${e[0]} ${num(e[1])}`).join(', ')],
    ['sparkprof', S.sparkprof_version],
  ];
  if (S.off_cpu) facts.push(['off-CPU', Object.entries(S.off_cpu).map(e => `${e[0]} ${num(e[1])}`).join(', ')]);
  for (const [k, v] of facts) if (v !== undefined) dl.append(el('dt', {}, k), el('dd', lost && k === 'lost' && lostTotal ? { class: 'warn' } : {}, v));
  run.append(dl);
  run.append(el('p', {}, 'Flame graphs of the node: ', links('all')));

  const procs = S.processes || [];
  if (procs.length) {
    const total = procs.reduce((a, p) => a + (p.samples || 0), 0) || 1;
    section('Processes').append(table(['process', 'pid', 'CPU samples', 'share', 'off-CPU ms', 'JVM', 'helper', 'Spark executor'],
      procs.slice().sort((a, b) => b.samples - a.samples).map(p => [p.comm, p.pid, num(p.samples),
        el('span', {}, el('span', { class: 'bar', style: `width:${Math.round(60 * p.samples / total)}px` }), ' ', pct(p.samples / total)),
        num(p.off_cpu_ms), p.jvm ? 'yes' : 'no', p.jvm ? (p.helper ? 'yes' : 'no') : '',
        p.spark_executor !== undefined ? `${p.spark_app} / ${p.spark_executor}` : ''])));
  }

  for (const e of S.executors || []) {
    const prefix = `${e.app_id || 'unknown-app'}/exec-${e.executor_id}/`;
    const s = section(`Executor ${e.executor_id} of ${e.app_id || 'an unknown application'} (pid ${e.pid})`);
    s.append(el('p', {}, `${num(e.samples)} CPU samples; stage attribution: ${e.attribution}. All stages: `, links(prefix + 'all')));
    const stages = (e.stages || []).slice().sort((a, b) => (a.stage ?? -1) - (b.stage ?? -1));
    s.append(table(['stage', 'flame graphs', 'CPU samples', 'share', 'off-CPU ms', 'tasks seen', 'attribution (samples)', 'first s', 'last s'],
      stages.map(st => [st.stage === null ? 'no stage' : st.stage + (st.attempt ? '.' + st.attempt : ''), links(prefix + st.output),
        num(st.samples), pct(st.share), num(st.off_cpu_ms), num(st.tasks_seen),
        Object.entries(st.samples_by_attribution || {}).filter(m => m[1]).map(m => `${m[0]} ${num(m[1])}`).join(', '),
        num(st.first_s), num(st.last_s)])));
    s.append(el('h3', {}, 'Timeline: when each stage ran (first to last sample)'));
    s.append(timeline(stages.filter(st => st.first_s !== undefined), S.duration_s || 0, prefix));
  }

  // Every other flame graph (DATA.files names only pages), so that none is out of reach.
  const rest = [...files].filter(f => !linked.has(f)).sort();
  if (rest.length) section('Other flame graphs').append(el('ul', {}, ...rest.map(f => el('li', {}, el('a', { href: encodeURI(f) }, f)))));
  if (DATA.profiles) section('Files').append(el('p', {}, `${num(DATA.profiles)} profiles (.folded, .jfr${DATA.pprof ? ', .pb.gz' : ''}) in this folder.`));

  function timeline(stages, duration, prefix) {
    const NS = 'http://www.w3.org/2000/svg', W = 900, L = 90, R = 30, ROW = 18;
    const end = Math.max(duration, ...stages.map(s => s.last_s)) || 1;
    const svg = document.createElementNS(NS, 'svg');
    const h = ROW * stages.length + 24;
    svg.setAttribute('width', W); svg.setAttribute('height', h);
    const add = (tag, attrs, text) => {
      const e = document.createElementNS(NS, tag);
      for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
      if (text !== undefined) e.textContent = text;
      svg.append(e);
      return e;
    };
    const x = t => L + (W - L - R) * t / end;
    stages.forEach((st, i) => {
      const name = st.stage === null ? 'no stage' : 'stage ' + st.stage + (st.attempt ? '.' + st.attempt : '');
      add('text', { x: 4, y: i * ROW + 13 }, name);
      const a = document.createElementNS(NS, 'a');
      if (files.has(prefix + st.output + '.html')) a.setAttribute('href', encodeURI(prefix + st.output + '.html'));
      const r = document.createElementNS(NS, 'rect');
      const w = Math.max(x(st.last_s) - x(st.first_s), 2);
      for (const [k, v] of Object.entries({ x: x(st.first_s), y: i * ROW + 3, width: w, height: ROW - 6,
        fill: `hsl(${(i * 67) % 360},55%,55%)`, class: 'stage-bar', 'data-stage': name })) r.setAttribute(k, v);
      const t = document.createElementNS(NS, 'title');
      t.textContent = `${name}: ${num(st.first_s)} s to ${num(st.last_s)} s, ${num(st.samples)} samples`;
      r.append(t); a.append(r); svg.append(a);
    });
    const axisY = stages.length * ROW + 4;
    add('line', { x1: L, x2: W - R, y1: axisY, y2: axisY, stroke: '#999' });
    for (let k = 0; k <= 5; k++) add('text', { x: x(end * k / 5), y: axisY + 14, 'text-anchor': 'middle' }, num(end * k / 5) + ' s');
    return svg;
  }
})();
