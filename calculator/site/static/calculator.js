// The calculator page: a form whose state is the URL's query string (the
// flags of `shuffledp account`), a worker that runs the accountant
// (worker.js), and the rendering of its answers. This script computes no
// epsilon and formats none: every number shown is text from the module.
'use strict';

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';

let schema = null; // from the module: mechanisms, fields, default
// The workers, each with its own accountant: the first computes the rows
// (preview, then result); the others compute the curve's points, each
// taking the next one when it is free (the largest round counts, the
// slowest, first), and the first joins them when its result is in. So the
// page takes about its total work divided among the workers, not the sum.
const nWorkers = Math.max(2, Math.min(4, navigator.hardwareConcurrency || 2));
let workers = [];
let busy = false;
let requestId = 0;
let query = '';
let curve = []; // points of the current request: {steps, epsilon, text, bound}
let curveSteps = null; // the round counts, once known
let queue = []; // round counts of the points not yet asked for
let pending = 0; // points asked for, not yet answered
let idle = []; // workers waiting for a point
let result = null; // the current request's answer, once it came
let started = 0; // performance.now() at the request

function setStatus(state, text) {
  const s = $('status');
  s.dataset.state = state;
  s.textContent = text;
}

function showError(msg) {
  const e = $('error');
  e.textContent = msg;
  e.hidden = !msg;
}

function startWorkers() {
  workers = [];
  for (let i = 0; i < nWorkers; i++) {
    const w = new Worker('worker.js');
    w.onmessage = onMessage;
    w.onerror = (ev) => {
      setStatus('error', 'The accountant stopped.');
      showError(ev.message || 'worker error');
    };
    workers.push(w);
  }
}

function mechanismOf(name) {
  return schema.mechanisms.find((m) => m.name === name);
}

function buildForm() {
  const sel = $('mechanism');
  for (const m of schema.mechanisms) {
    const o = document.createElement('option');
    o.value = m.name;
    o.textContent = m.name;
    sel.appendChild(o);
  }
  const box = $('fields');
  for (const f of schema.fields) {
    const div = document.createElement('div');
    div.className = 'field';
    div.id = 'field-' + f.name;
    const label = document.createElement('label');
    label.htmlFor = f.name;
    label.textContent = f.label;
    let input;
    if (f.name === 'adjacency') {
      input = document.createElement('select');
    } else {
      input = document.createElement('input');
      input.type = 'text';
      input.inputMode = f.name === 'delta' ? 'text' : 'decimal';
      input.spellcheck = false;
      input.value = f.default;
    }
    input.id = f.name;
    input.name = f.name;
    const help = document.createElement('small');
    help.textContent = f.help;
    div.append(label, input, help);
    box.appendChild(div);
  }
  sel.addEventListener('change', () => showFields(sel.value));
  $('form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    compute();
  });
  $('copy-link').addEventListener('click', copyLink);
}

// showFields shows the inputs of mechanism name and fills the adjacency
// menu with the values it accepts (its default first).
function showFields(name) {
  const m = mechanismOf(name);
  $('mechanism-help').textContent = m.description;
  for (const f of schema.fields) {
    $('field-' + f.name).hidden = !m.fields.includes(f.name);
  }
  const adj = $('adjacency');
  const keep = adj.value;
  adj.replaceChildren();
  const def = document.createElement('option');
  def.value = '';
  def.textContent = m.adjacencies ? 'default (' + m.adjacencies[0] + ')' : 'default';
  adj.appendChild(def);
  for (const a of m.adjacencies || []) {
    const o = document.createElement('option');
    o.value = a;
    o.textContent = a;
    adj.appendChild(o);
  }
  adj.value = (m.adjacencies || []).includes(keep) ? keep : '';
}

// formQuery is the page state: the mechanism and the values of its
// parameters, in the form's order (an empty adjacency is the default and
// left out).
function formQuery() {
  const m = mechanismOf($('mechanism').value);
  const p = new URLSearchParams();
  p.set('mechanism', m.name);
  for (const f of m.fields) {
    const v = $(f).value.trim();
    if (f === 'adjacency' && v === '') continue;
    p.set(f, v);
  }
  return p.toString();
}

// loadQuery fills the form from a query string; it reports whether the
// query named a mechanism (then the page computes at once).
function loadQuery(search) {
  const p = new URLSearchParams(search);
  let name = p.get('mechanism');
  const known = name && mechanismOf(name);
  if (!known) name = schema.default;
  $('mechanism').value = name;
  showFields(name);
  for (const f of schema.fields) {
    if (p.has(f.name)) $(f.name).value = p.get(f.name);
  }
  if (p.has('mechanism') && !known) {
    showError('Unknown mechanism "' + p.get('mechanism') + '": showing ' + name + '.');
  }
  return Boolean(known);
}

function compute() {
  const q = formQuery();
  history.replaceState(null, '', '?' + q);
  if (busy) {
    // A module answers one call at a time: drop the running ones.
    for (const w of workers) w.terminate();
    startWorkers();
  }
  busy = true;
  requestId++;
  query = q;
  curve = [];
  curveSteps = null;
  queue = [];
  pending = 0;
  idle = [];
  result = null;
  started = performance.now();
  showError('');
  setStatus('computing', 'Computing\u2026');
  workers[0].postMessage({ id: requestId, kind: 'compute', query, w: 0 });
  workers[1].postMessage({ id: requestId, kind: 'steps', query, w: 1 });
  for (let i = 2; i < nWorkers; i++) idle.push(i); // the second is idle once it answers
}

// dispatch gives every idle worker the next point, if any is left.
function dispatch() {
  while (idle.length && queue.length) {
    const w = idle.shift();
    pending++;
    workers[w].postMessage({ id: requestId, kind: 'point', query, steps: queue.shift(), w });
  }
}

// addLastPoint adds the curve's last point, best at the run's rounds, from
// the result once both it and the round counts are known.
function addLastPoint() {
  if (!result || !curveSteps || !curveSteps.length) return;
  const last = curveSteps[curveSteps.length - 1];
  if (curve.some((p) => p.steps === last)) return;
  const best = result.best;
  curve.push({ steps: last, epsilon: best.epsilon, text: best.text, bound: best.winning_bound || best.bound });
  drawCurve();
}

// finish ends the request once the result and every point are in.
function finish() {
  if (!result || !curveSteps || queue.length || pending) {
    if (result && curveSteps) {
      setStatus('curve', 'Drawing the curve over rounds: ' + curve.length + ' of ' + curveSteps.length + '\u2026');
    }
    return;
  }
  busy = false;
  setStatus('done', 'Done in ' + ((performance.now() - started) / 1000).toFixed(1) + ' s.');
}

function onMessage(ev) {
  const m = ev.data;
  if (m.type === 'ready') {
    if (schema) return; // a worker restarted by compute: the form stands
    schema = m.answer.result;
    buildForm();
    if (loadQuery(location.search)) {
      compute();
    } else {
      setStatus('ready', 'Ready: choose the parameters and press Compute.');
    }
    return;
  }
  if (m.type === 'fatal') {
    setStatus('error', 'The accountant could not start.');
    showError(m.error);
    return;
  }
  if (m.id !== requestId) return; // an answer to a request replaced since
  switch (m.type) {
    case 'preview':
      if (result || m.answer.error) break; // the result says it all
      renderPreview(m.answer.result);
      setStatus('computing', 'Showing the RDP bounds (' + (m.ms / 1000).toFixed(1) + ' s); computing best, PLD and the rest\u2026');
      break;
    case 'result':
      if (m.answer.error) {
        busy = false;
        requestId++; // the curve of these parameters is not wanted
        $('results').hidden = true;
        setStatus('error', 'No answer for these parameters.');
        showError(m.answer.error);
        return;
      }
      result = m.answer.result;
      renderResult(result);
      if (curve.length) drawCurve();
      addLastPoint();
      idle.push(m.w); // the first worker joins the curve
      dispatch();
      finish();
      break;
    case 'curve-steps':
      if (m.answer.error) {
        curveSteps = [];
        showError('curve: ' + m.answer.error);
      } else {
        curveSteps = m.answer.result || []; // none for zero rounds
      }
      // Every point but the last (the result's best), the largest first.
      queue = curveSteps.slice(0, -1).reverse();
      idle.push(m.w);
      addLastPoint();
      dispatch();
      finish();
      break;
    case 'point':
      pending--;
      if (m.answer.error) {
        showError('curve: ' + m.answer.error);
        queue = []; // the other points would fail alike
      } else {
        curve.push(m.answer.result);
        drawCurve();
      }
      idle.push(m.w);
      dispatch();
      finish();
      break;
  }
}

// renderPreview shows the fast rows (the RDP bounds) while the others are
// computed: best and the rest follow with the result, which replaces it.
function renderPreview(rows) {
  $('results').hidden = false;
  $('best-epsilon').textContent = 'computing\u2026';
  delete $('best-epsilon').dataset.value;
  $('best-bound').textContent = '';
  $('interval').hidden = true;
  renderRows(rows, '');
}

// renderRows fills the table of bounds (winner: the bound that attains
// best, highlighted).
function renderRows(rows, winner) {
  const tbody = $('bounds').tBodies[0];
  tbody.replaceChildren();
  for (const row of rows) {
    const tr = document.createElement('tr');
    tr.dataset.bound = row.bound;
    // A conjecture row (the JSON's "conjecture": the ICLR'23 Gaussian bounds,
    // best-conjecture) is no proven guarantee: its bound cell says so.
    tr.className = 'kind-' + row.kind + (row.conjecture ? ' conjecture' : '') + (row.bound === winner ? ' winner' : '');
    const cells = [row.bound + (row.conjecture ? ' (conjecture)' : ''), row.text, row.kind, row.order ? String(row.order) : '\u2013', row.note || ''];
    cells.forEach((text, i) => {
      const td = document.createElement('td');
      td.textContent = text;
      if (i === 1) {
        td.className = 'eps';
        td.dataset.value = String(row.epsilon);
      }
      if (i === 4) td.className = 'note';
      tr.appendChild(td);
    });
    tbody.appendChild(tr);
  }
}

function renderResult(r) {
  $('results').hidden = false;
  const best = r.best;
  $('best-epsilon').textContent = best.text;
  $('best-epsilon').dataset.value = String(best.epsilon);
  // delta as entered (a quotient such as 1/60000 stays one).
  $('best-delta').textContent = new URLSearchParams(r.query).get('delta') || String(best.delta);
  $('best-bound').textContent = best.winning_bound || best.bound;
  const iv = r.interval;
  $('interval').hidden = !iv;
  if (iv) {
    $('interval-lower').textContent = iv.lower_text;
    $('interval-lower').dataset.value = String(iv.lower);
    $('interval-upper').textContent = iv.upper_text;
    $('interval-upper').dataset.value = String(iv.upper);
    $('interval-ratio').textContent = iv.ratio_text;
    $('interval-witness').textContent = iv.witness;
  }
  const warn = $('warnings');
  warn.replaceChildren();
  for (const w of r.warnings || []) {
    const li = document.createElement('li');
    li.textContent = w;
    warn.appendChild(li);
  }
  renderRows(r.rows, best.winning_bound);
  $('command').textContent = r.command;
  $('json').textContent = JSON.stringify(r.account, null, 2);
  $('curve').replaceChildren();
  if (best.note) $('curve').textContent = best.note; // "no rounds: nothing spent"
}

// niceTicks returns about n round values covering [0, max].
function niceTicks(max, n) {
  if (!(max > 0)) return [0];
  const raw = max / n;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((s) => s * mag).find((s) => s >= raw);
  const ticks = [];
  for (let v = 0; v <= max * 1.0001; v += step) ticks.push(v);
  return ticks;
}

function el(name, attrs, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

// drawCurve draws best's epsilon against the rounds (log scale) as an
// inline SVG, with the points computed so far.
function drawCurve() {
  const W = 640, H = 300, L = 56, R = 16, T = 12, B = 40;
  const pts = curve.slice().sort((a, b) => a.steps - b.steps);
  const maxT = curveSteps.length ? curveSteps[curveSteps.length - 1] : pts[pts.length - 1].steps;
  const maxE = Math.max(...pts.map((p) => p.epsilon)) * 1.05 || 1;
  const lx = (t) => (maxT > 1 ? Math.log(t) / Math.log(maxT) : 0.5);
  const x = (t) => L + lx(t) * (W - L - R);
  const y = (e) => H - B - (e / maxE) * (H - T - B);
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'epsilon over rounds' });
  for (const v of niceTicks(maxE, 5)) {
    svg.append(el('line', { class: 'grid', x1: L, x2: W - R, y1: y(v), y2: y(v) }));
    svg.append(el('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end' }, String(+v.toPrecision(4))));
  }
  for (let p = 1; p <= maxT; p *= 10) {
    svg.append(el('line', { class: 'grid', x1: x(p), x2: x(p), y1: T, y2: H - B }));
    svg.append(el('text', { x: x(p), y: H - B + 16, 'text-anchor': 'middle' }, p >= 1e4 ? '1e' + Math.round(Math.log10(p)) : String(p)));
  }
  svg.append(el('line', { class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B }));
  svg.append(el('line', { class: 'axis', x1: L, x2: L, y1: T, y2: H - B }));
  svg.append(el('text', { x: (L + W - R) / 2, y: H - 6, 'text-anchor': 'middle' }, 'rounds T (log scale)'));
  svg.append(el('text', { x: 14, y: (T + H - B) / 2, 'text-anchor': 'middle', transform: `rotate(-90 14 ${(T + H - B) / 2})` }, 'best \u03b5'));
  svg.append(el('polyline', { class: 'line', points: pts.map((p) => `${x(p.steps)},${y(p.epsilon)}`).join(' ') }));
  for (const p of pts) {
    const c = el('circle', { class: 'pt', cx: x(p.steps), cy: y(p.epsilon), r: 3.5, 'data-steps': p.steps, 'data-text': p.text });
    c.append(el('title', {}, `T = ${p.steps}: \u03b5 \u2264 ${p.text} (${p.bound})`));
    svg.append(c);
  }
  $('curve').replaceChildren(svg);
}

async function copyLink() {
  const url = location.origin + location.pathname + '?' + formQuery();
  try {
    await navigator.clipboard.writeText(url);
    setStatus($('status').dataset.state, 'Link copied.');
  } catch (e) {
    prompt('Copy this link:', url);
  }
}

startWorkers();
