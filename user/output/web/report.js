'use strict';
// sparkprof application report: draws DATA (report.json, written by
// user/output/app_report.c; docs/report.md) as one section per stage.
(function () {
  const root = document.getElementById('report');
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const k of kids) e.append(k);
    return e;
  };
  const ms = v => v == null ? '–' : v >= 60000 ? (v / 60000).toFixed(1) + ' min'
    : v >= 1000 ? (v / 1000).toFixed(2) + ' s' : v + ' ms';
  const link = (href, text) => href ? el('a', { href }, text) : '';

  function spread(s) {
    const t = el('table', {}, el('tr', {}, ...['tasks', 'min', 'median', 'p95', 'max', 'max / median']
      .map(h => el('th', {}, h))));
    const d = s.task_duration_ms || {};
    t.append(el('tr', {}, el('td', {}, String(s.tasks.length)), el('td', {}, ms(d.min)),
      el('td', {}, ms(d.median)), el('td', {}, ms(d.p95)), el('td', {}, ms(d.max)),
      el('td', {}, d.median ? (d.max / d.median).toFixed(1) + '×' : '–')));
    return t;
  }

  function taskTable(s, stragglers) {
    const rows = s.tasks.slice().sort((a, b) => (b.duration_ms || 0) - (a.duration_ms || 0));
    const longest = rows.length ? rows[0].duration_ms || 1 : 1;
    const t = el('table', {}, el('tr', {}, ...['TID', 'executor', 'duration', '', 'CPU samples',
      'CPU time', 'GC', 'shuffle read', 'flame graph', 'vs. the stage\'s other tasks']
      .map((h, i) => el('th', { class: i === 1 ? 'l' : '' }, h))));
    for (const task of rows.slice(0, 50)) {
      const bar = el('span', { class: 'bar', style: `width:${Math.round(120 * (task.duration_ms || 0) / longest)}px` });
      const tid = stragglers.has(task.tid) ? el('span', {}, String(task.tid), ' ', el('span', { class: 'tag' }, 'straggler')) : String(task.tid);
      t.append(el('tr', { class: stragglers.has(task.tid) ? 'straggler' : '' },
        el('td', {}, tid), el('td', { class: 'l' }, task.executor || '?'), el('td', {}, ms(task.duration_ms)),
        el('td', { class: 'l' }, bar), el('td', {}, String(task.samples)),
        el('td', {}, task.cpu_ms == null ? '–' : ms(task.cpu_ms)), el('td', {}, task.gc_ms == null ? '–' : ms(task.gc_ms)),
        el('td', {}, task.shuffle_read_bytes == null ? '–' : (task.shuffle_read_bytes / 1048576).toFixed(1) + ' MiB'),
        el('td', {}, link(task.flame, 'flame')), el('td', {}, link(task.diff, 'diff'))));
    }
    if (rows.length > 50) t.append(el('tr', {}, el('td', { class: 'l', colspan: 10 }, `… ${rows.length - 50} shorter tasks in report.json`)));
    return t;
  }

  function stage(app, s) {
    const sec = el('section', { id: `stage-${s.stage}-${s.attempt}` });
    sec.append(el('h2', {}, `Stage ${s.stage}.${s.attempt}`, s.name ? ` — ${s.name}` : ''));
    if (s.description) sec.append(el('div', { class: 'desc' }, s.description));
    const facts = [`${s.samples} CPU samples`, `wall ${ms(s.wall_ms)}`,
      `${s.executors.length} executor${s.executors.length === 1 ? '' : 's'}: ${s.executors.join(', ')}`];
    if (s.flame) facts.push(link(s.flame, 'flame graph'));
    const p = el('div', {});
    facts.forEach((f, i) => { if (i) p.append(' · '); p.append(f); });
    sec.append(p, spread(s));
    const stragglers = new Set(s.stragglers);
    if (s.stragglers.length) sec.append(el('div', {}, `Stragglers: ${s.stragglers.length} task${s.stragglers.length === 1 ? '' : 's'} far beyond the median (${app.straggler_rule}).`));
    const d = el('details', s.stragglers.length ? { open: '' } : {}, el('summary', {}, 'Tasks, longest first'));
    d.append(taskTable(s, stragglers));
    sec.append(d);
    return sec;
  }

  // One line per stage: where the application's CPU went, and where the skew is.
  function overview(app) {
    const total = app.stages.reduce((n, s) => n + s.samples, 0) || 1;
    const t = el('table', {}, el('tr', {}, ...['stage', 'name', 'CPU samples', '', 'wall', 'tasks',
      'max / median', 'stragglers'].map((h, i) => el('th', { class: i === 1 || i === 3 ? 'l' : '' }, h))));
    for (const s of app.stages) {
      const d = s.task_duration_ms;
      t.append(el('tr', { class: s.stragglers.length ? 'straggler' : '' },
        el('td', {}, el('a', { href: `#stage-${s.stage}-${s.attempt}` }, `${s.stage}.${s.attempt}`)),
        el('td', { class: 'l' }, s.name || '–'), el('td', {}, String(s.samples)),
        el('td', { class: 'l' }, el('span', { class: 'bar', style: `width:${Math.round(200 * s.samples / total)}px` })),
        el('td', {}, ms(s.wall_ms)), el('td', {}, String(s.tasks.length)),
        el('td', {}, d && d.median ? (d.max / d.median).toFixed(1) + '×' : '–'),
        el('td', {}, String(s.stragglers.length))));
    }
    return t;
  }

  try {
    for (const app of DATA.applications) {
      root.append(el('h1', {}, app.name ? `${app.name} (${app.app_id})` : app.app_id));
      root.append(el('div', { class: app.spark_source ? 'src' : 'src warn' }, app.spark_source
        ? `Stage names, descriptions and task times from ${app.spark_source}; CPU samples from ${DATA.recordings.length} recording(s).`
        : `No event log or Spark UI given: stage names are unknown, and task times come from the recordings (a task's first to its last moment seen), from ${DATA.recordings.length} recording(s).`));
      if (app.unstaged_samples) root.append(el('div', { class: 'src' }, `${app.unstaged_samples} CPU samples of the executors belong to no stage.`));
      root.append(overview(app));
      app.stages.forEach(s => root.append(stage(app, s)));
    }
    document.title = DATA.applications.length === 1 ? `Report: ${DATA.applications[0].app_id}` : 'Report';
  } catch (e) {
    document.getElementById('error').textContent = 'This page could not be drawn: ' + e;
    throw e;
  }
})();
