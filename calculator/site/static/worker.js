// The accountant's worker: it runs the WebAssembly module (built from
// cmd/shuffledp-wasm) off the page's thread and answers the page's
// messages. Every number it sends comes from the module — or, when the
// page is served natively (`shuffledp calculator --native`, or an
// installed binary without Go), from the serving process, which answers
// POST api/METHOD with the same Go function (calculator.Call).
'use strict';

// nativeAPI asks the serving process; null when it does not answer (a
// static host, or a server with the WebAssembly module).
async function nativeAPI() {
  let resp;
  try {
    resp = await fetch('api/schema', { method: 'POST', body: '' });
  } catch (e) {
    return null;
  }
  if (!resp.ok || !(resp.headers.get('Content-Type') || '').startsWith('application/json')) return null;
  await resp.text();
  const call = async (method, query, steps) => {
    const url = 'api/' + method + (steps === undefined ? '' : '?steps=' + steps);
    const r = await fetch(url, { method: 'POST', body: query || '' });
    if (!r.ok) return JSON.stringify({ error: method + ': HTTP ' + r.status });
    return r.text();
  };
  return {
    schema: () => call('schema'),
    compute: (q) => call('compute', q),
    curveSteps: (q) => call('curveSteps', q),
    point: (q, t) => call('point', q, t),
    preview: (q) => call('preview', q),
  };
}

async function wasmAPI() {
  importScripts('wasm_exec.js');
  const go = new Go();
  let instance;
  if (WebAssembly.instantiateStreaming) {
    try {
      instance = (await WebAssembly.instantiateStreaming(fetch('shuffledp.wasm'), go.importObject)).instance;
    } catch (e) {
      // A host that serves .wasm with another content type: fall back.
    }
  }
  if (!instance) {
    const resp = await fetch('shuffledp.wasm');
    if (!resp.ok) throw new Error('shuffledp.wasm: HTTP ' + resp.status);
    instance = (await WebAssembly.instantiate(await resp.arrayBuffer(), go.importObject)).instance;
  }
  go.run(instance); // runs main until it blocks: globalThis.shuffledp is set
  if (!self.shuffledp) throw new Error('the WebAssembly module did not start');
  return self.shuffledp;
}

const ready = (async () => (await nativeAPI()) || wasmAPI())();

ready.then(
  async (api) => postMessage({ type: 'ready', answer: JSON.parse(await api.schema()) }),
  (err) => postMessage({ type: 'fatal', error: String(err) }),
);

// Three kinds of work, each answered as it finishes (the page keeps every
// worker busy: one computes the rows, the others the curve's points, and
// each takes the next point when it is free):
// - {kind: 'compute'}: the preview (the RDP rows, milliseconds), then every
//   bound (the result);
// - {kind: 'steps'}: the round counts of the curve;
// - {kind: 'point', steps}: best's epsilon after that many rounds.
// Every answer echoes the worker's index w.
self.onmessage = async (ev) => {
  const api = await ready;
  const { id, kind, query, w } = ev.data;
  const t0 = performance.now();
  if (kind === 'compute') {
    const preview = JSON.parse(await api.preview(query));
    postMessage({ type: 'preview', id, w, answer: preview, ms: performance.now() - t0 });
    const answer = JSON.parse(await api.compute(query));
    postMessage({ type: 'result', id, w, answer, ms: performance.now() - t0 });
  } else if (kind === 'steps') {
    postMessage({ type: 'curve-steps', id, w, answer: JSON.parse(await api.curveSteps(query)) });
  } else if (kind === 'point') {
    postMessage({ type: 'point', id, w, answer: JSON.parse(await api.point(query, ev.data.steps)) });
  }
};
