'use strict';
// sparkprof flame graph: draws DATA (written by user/output/flame_page.c,
// format in docs/flame.md) on a canvas. No network, no libraries.
(function () {
  const ROW = 16, MAX_ROWS = 2000;
  const TYPES = ['native', 'C++ (JVM)', 'kernel', 'JIT', 'inlined', 'interpreted', 'Python', 'Java'];
  const STATES = { '[on CPU]': [45, 90, 60], '[preempted]': [330, 60, 72], '[sleeping]': [210, 60, 78],
    '[uninterruptible]': [0, 75, 45], '[other state]': [0, 0, 75] };
  const HUES = [[30, 85, 62], [52, 70, 55], [0, 65, 62], [120, 45, 55], [175, 55, 52], [265, 45, 70], [205, 60, 62], [100, 35, 62]];
  const diff = DATA.mode === 'diff', timed = DATA.unit_ns > 0;
  const T0 = DATA.total[0] || 1, T1 = DATA.total[1] || 1;
  const $ = id => document.getElementById(id);
  const canvas = $('canvas'), ctx = canvas.getContext('2d'), tip = $('tip');

  // Nodes arrive in preorder: depth, name, type, total, self (+ total, self
  // of the new profile in a diff).
  function weight(v, s) {
    if (!diff) return v[0];
    return DATA.normalize ? (v[0] / T0 + v[1] / T1) / 2 : (v[0] + v[1]) / 2;
  }
  function build() {
    const stride = diff ? 7 : 5, a = DATA.nodes, path = [];
    let root = null;
    for (let i = 0; i < a.length; i += stride) {
      const n = { depth: a[i], name: a[i + 1] < 0 ? 'all' : DATA.names[a[i + 1]], type: a[i + 2],
        v: diff ? [a[i + 3], a[i + 5]] : [a[i + 3]], s: diff ? [a[i + 4], a[i + 6]] : [a[i + 4]], kids: [] };
      n.w = weight(n.v);
      if (n.depth === 0) root = n;
      else { n.parent = path[n.depth - 1]; n.parent.kids.push(n); }
      path[n.depth] = n;
    }
    return root;
  }
  // Visits a tree in preorder without recursion (stacks may be thousands of
  // frames deep); fn returning false skips a node's children.
  function each(root, fn) {
    const todo = [root];
    while (todo.length) {
      const n = todo.pop();
      if (fn(n) === false) continue;
      for (let i = n.kids.length - 1; i >= 0; i--) todo.push(n.kids[i]);
    }
  }
  // n's callers, outermost first, below root.
  function callers(n, root) {
    const out = [];
    for (let a = n.parent; a && a !== root; a = a.parent) out.push(a);
    return out.reverse();
  }
  // Other views of the same samples: every node's self count, its stack
  // rearranged by order(n, callers) and merged again from a new root.
  function rebuild(root, order) {
    const top = { depth: 0, name: 'all', type: 0, v: root.v.map(() => 0), s: root.v.map(() => 0), kids: [], map: new Map() };
    each(root, n => {
      if (n !== root && n.s.some(x => x > 0)) {
        const frames = order(n, callers(n, root));
        let at = top;
        frames.forEach((f, j) => {
          const key = f.name + '\u0000' + f.type;
          let k = at.map.get(key);
          if (!k) {
            k = { depth: at.depth + 1, name: f.name, type: f.type, v: n.v.map(() => 0), s: n.v.map(() => 0), kids: [], map: new Map(), parent: at };
            at.map.set(key, k);
            at.kids.push(k);
          }
          n.s.forEach((x, c) => { k.v[c] += x; if (j === frames.length - 1) k.s[c] += x; });
          at = k;
        });
        n.s.forEach((x, c) => { top.v[c] += x; });
      }
    });
    each(top, n => {
      n.w = weight(n.v);
      n.kids.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : a.type - b.type);
    });
    return top;
  }
  // Reversed: leaf first, "who calls this hot function".
  const reversedOrder = (n, callers) => [n, ...callers.slice().reverse()];
  // By thread state (wall profiles whose stacks end in a state frame):
  // the state first, then the stack.
  const isState = n => DATA.states && !n.kids.length && STATES[n.name] !== undefined;
  const stateOrder = (n, callers) => isState(n) ? [n, ...callers] : [...callers, n];
  function layout(root) {
    let depth = 0;
    root.x = 0;
    each(root, n => {
      let x = n.x;
      depth = Math.max(depth, n.depth);
      for (const k of n.kids) { k.x = x; x += k.w; }
    });
    return depth;
  }

  const forward = build();
  let view = forward, views = {}, maxDepth = layout(forward);
  let zoom = forward, icicle = false, search = null, drawn = [];

  function fmtCount(x) {
    if (!timed) return Math.round(x).toLocaleString('en-US') + (diff ? '' : ' samples');
    const ns = x * DATA.unit_ns;
    if (ns >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (ns >= 1e6) return (ns / 1e6).toFixed(2) + ' ms';
    return (ns / 1e3).toFixed(1) + ' \u00b5s';
  }
  const pct = (x, t) => (100 * x / (t || 1)).toFixed(2) + '%';
  function hash(s) {
    let h = 0;
    for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
    return h;
  }
  function delta(n) {
    return DATA.normalize ? n.v[1] / T1 - n.v[0] / T0 : n.v[1] - n.v[0];
  }
  let maxDelta = 0;
  function measure(root) {
    maxDelta = 0;
    each(root, n => { if (n !== root) maxDelta = Math.max(maxDelta, Math.abs(delta(n))); });
  }
  function colour(n) {
    if (search && n !== view && search.test(n.name)) return '#e040fb';
    if (diff) {
      const d = delta(n);
      if (!d || !maxDelta) return '#eeeeee';
      const k = Math.round(200 * (0.15 + 0.85 * Math.abs(d) / maxDelta));
      return d > 0 ? `rgb(255,${255 - k},${255 - k})` : `rgb(${255 - k},${255 - k},255)`;
    }
    if (isState(n) || (view.byState && n.depth === 1)) { const [h, s, l] = STATES[n.name]; return `hsl(${h},${s}%,${l}%)`; }
    const [h, s, l] = HUES[n.type] || HUES[0];
    return `hsl(${h},${s}%,${l + (hash(n.name) & 7) - 4}%)`;
  }
  function matchedShare() {
    if (!search) return 0;
    let sum = 0;
    each(view, n => {
      if (n !== view && search.test(n.name)) { sum += n.w; return false; }
    });
    return 100 * sum / (view.w || 1);
  }

  function render() {
    const width = canvas.clientWidth || window.innerWidth, dpr = window.devicePixelRatio || 1;
    const rows = Math.min(maxDepth + 1, MAX_ROWS);
    canvas.style.height = rows * ROW + 'px';
    canvas.width = width * dpr;
    canvas.height = rows * ROW * dpr;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = '11px sans-serif';
    ctx.textBaseline = 'middle';
    const x0 = zoom.x, scale = width / (zoom.w || 1);
    drawn = [];
    const y = d => (icicle ? d : rows - 1 - d) * ROW;
    function box(n, px, pw, faded) {
      ctx.fillStyle = colour(n);
      ctx.fillRect(px, y(n.depth), Math.max(pw - 0.5, 0.5), ROW - 1);
      if (faded) { ctx.fillStyle = 'rgba(255,255,255,.5)'; ctx.fillRect(px, y(n.depth), pw, ROW - 1); }
      if (pw > 24) {
        ctx.fillStyle = '#000';
        const chars = Math.floor((pw - 6) / 6.2);
        ctx.fillText(n.name.length > chars ? n.name.slice(0, Math.max(chars - 2, 0)) + '..' : n.name, px + 3, y(n.depth) + ROW / 2);
      }
      drawn.push({ n, px, pw, py: y(n.depth) });
    }
    for (let a = zoom.parent; a; a = a.parent) if (a.depth < rows) box(a, 0, width, true);
    each(zoom, n => {
      const px = (n.x - x0) * scale, pw = n.w * scale;
      if (n.depth >= rows || pw < 0.5) return false;
      box(n, px, pw, false);
    });
    const m = search ? matchedShare() : 0;
    $('matched').textContent = search ? 'Matched: ' + m.toFixed(2) + '%' : '';
    $('status').textContent = status();
  }
  function status() {
    let s = diff ? `base ${fmtCount(DATA.total[0])}, new ${fmtCount(DATA.total[1])}` +
      (DATA.normalize ? ' (normalised: red grew, blue shrank in share of the total)' : ' (red grew, blue shrank)')
      : `${fmtCount(DATA.total[0])} in all`;
    if (DATA.shown_nodes < DATA.all_nodes)
      s += `; ${DATA.shown_nodes.toLocaleString('en-US')} of ${DATA.all_nodes.toLocaleString('en-US')} frames shown (narrower than ${DATA.min_width_pct}% left out)`;
    if (maxDepth + 1 > MAX_ROWS) s += `; only the first ${MAX_ROWS} levels are drawn`;
    if (view.kind === 'reversed') s += '; reversed: callers of each function with self time';
    if (view.kind === 'states') s += '; by thread state: on CPU, preempted, sleeping, uninterruptible';
    return s;
  }
  function at(ev) {
    const r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
    for (const d of drawn) if (x >= d.px && x < d.px + d.pw && y >= d.py && y < d.py + ROW) return d.n;
    return null;
  }
  const typeName = n => isState(n) || (view.byState && n.depth === 1) ? 'thread state' : TYPES[n.type] || 'native';
  function tipText(n) {
    const t = typeName(n);
    if (diff) {
      const d = delta(n);
      return `${n.name} [${t}]\nbase: ${fmtCount(n.v[0])} (${pct(n.v[0], T0)}), self ${fmtCount(n.s[0])}\n` +
        `new: ${fmtCount(n.v[1])} (${pct(n.v[1], T1)}), self ${fmtCount(n.s[1])}\n` +
        (DATA.normalize ? `delta: ${d >= 0 ? '+' : ''}${(100 * d).toFixed(2)} points of the total`
          : `delta: ${d >= 0 ? '+' : ''}${fmtCount(d)}`);
    }
    return `${n.name} [${t}]\n${fmtCount(n.v[0])} (${pct(n.v[0], view.v[0])})\nself: ${fmtCount(n.s[0])} (${pct(n.s[0], view.v[0])})`;
  }

  canvas.addEventListener('mousemove', ev => {
    const n = at(ev);
    if (!n) { tip.style.display = 'none'; return; }
    tip.textContent = tipText(n);
    tip.style.whiteSpace = 'pre-line';
    tip.style.display = 'block';
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - tip.offsetWidth - 4) + 'px';
    tip.style.top = (ev.clientY + 16) + 'px';
  });
  canvas.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
  canvas.addEventListener('click', ev => { const n = at(ev); if (n) { zoom = n; render(); } });
  $('reset').onclick = () => { zoom = view; render(); };
  $('invert').onclick = () => { icicle = !icicle; $('invert').classList.toggle('on', icicle); render(); };
  // Switches between the call tree and a rebuilt view (the same button again: back).
  function show(which) {
    if (which && !views[which]) {
      views[which] = rebuild(forward, which === 'reversed' ? reversedOrder : stateOrder);
      views[which].kind = which;
      views[which].byState = which === 'states';
    }
    view = which && view.kind !== which ? views[which] : forward;
    maxDepth = layout(view);
    measure(view);
    zoom = view;
    $('reverse').classList.toggle('on', view.kind === 'reversed');
    $('bystate').classList.toggle('on', view.kind === 'states');
    render();
  }
  $('reverse').onclick = () => show('reversed');
  $('bystate').onclick = () => show('states');
  $('bystate').hidden = !DATA.states;
  function setSearch(text) {
    try { search = text ? new RegExp(text) : null; $('search').style.background = ''; }
    catch (e) { search = null; $('search').style.background = '#fcc'; }
    render();
  }
  $('search').addEventListener('input', e => setSearch(e.target.value));
  window.addEventListener('keydown', e => {
    if (e.key === 'Escape') { zoom = view; render(); }
    if (e.key === 'f' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); $('search').focus(); }
  });
  window.addEventListener('resize', render);

  const legend = $('legend');
  if (diff) legend.innerHTML = '<span><i style="background:rgb(255,55,55)"></i>grew</span><span><i style="background:rgb(55,55,255)"></i>shrank</span><span><i style="background:#eee"></i>unchanged</span>';
  else {
    const seen = new Set();
    each(forward, n => { if (n !== forward && !isState(n)) seen.add(n.type); });
    TYPES.forEach((t, i) => {
      if (!seen.has(i)) return;
      const el = document.createElement('span'), sw = document.createElement('i');
      const [h, s, l] = HUES[i];
      sw.style.background = `hsl(${h},${s}%,${l}%)`;
      el.append(sw, t);
      legend.append(el);
    });
    if (DATA.states) for (const [name, [h, s, l]] of Object.entries(STATES)) {
      const el = document.createElement('span'), sw = document.createElement('i');
      sw.style.background = `hsl(${h},${s}%,${l}%)`;
      el.append(sw, name);
      legend.append(el);
    }
  }
  measure(view);
  render();

  // For tests and scripts: the page's state, without pixels.
  window.sparkprofFlame = {
    search(text) { $('search').value = text; setSearch(text); return matchedShare(); },
    matchedText: () => $('matched').textContent,
    zoom(name) {
      let best = null;
      each(view, n => { if (n.name === name && (!best || n.w > best.w)) best = n; });
      if (best) { zoom = best; render(); }
      return !!best;
    },
    reset() { zoom = view; render(); },
    toggleReversed() { $('reverse').click(); return view.kind === 'reversed'; },
    toggleStates() { $('bystate').click(); return view.kind === 'states'; },
    drawn: () => drawn.map(d => ({ name: d.n.name, x: d.px, y: d.py, width: d.pw, depth: d.n.depth, colour: colour(d.n), type: typeName(d.n) })),
    tip: name => { const d = drawn.find(d => d.n.name === name); return d ? tipText(d.n) : null; },
  };
})();
