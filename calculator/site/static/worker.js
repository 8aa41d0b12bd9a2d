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

// Two kinds of work, each posted back as it finishes (the page runs one
// worker that computes and others that draw the curve, in parallel):
// - {kind: 'compute'}: the preview (the RDP rows, milliseconds), then every
//   bound (the result);
// - {kind: 'curve', part, parts}: the round counts of the curve (part 0
//   posts them), then the points whose index is part modulo parts, except
//   the last, which is the result's best (the same call at the same rounds).
self.onmessage = async (ev) => {
  const api = await ready;
  const { id, kind, query } = ev.data;
  const t0 = performance.now();
  if (kind === 'compute') {
    const preview = JSON.parse(await api.preview(query));
    postMessage({ type: 'preview', id, answer: preview, ms: performance.now() - t0 });
    const answer = JSON.parse(await api.compute(query));
    postMessage({ type: 'result', id, answer, ms: performance.now() - t0 });
    return;
  }
  const { part, parts } = ev.data;
  const steps = JSON.parse(await api.curveSteps(query));
  if (steps.error) {
    postMessage({ type: 'curve-done', id, part, error: steps.error });
    return;
  }
  const ts = steps.result || []; // none for zero rounds
  if (part === 0) postMessage({ type: 'curve-steps', id, steps: ts });
  for (let i = part; i < ts.length - 1; i += parts) {
    const p = JSON.parse(await api.point(query, ts[i]));
    postMessage({ type: 'point', id, answer: p });
    if (p.error) break;
  }
  postMessage({ type: 'curve-done', id, part, ms: performance.now() - t0 });
};
