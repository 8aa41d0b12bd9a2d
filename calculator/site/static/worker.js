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

self.onmessage = async (ev) => {
  const api = await ready;
  const { id, query } = ev.data;
  const t0 = performance.now();
  const answer = JSON.parse(await api.compute(query));
  postMessage({ type: 'result', id, answer, ms: performance.now() - t0 });
  if (answer.error) return;
  const steps = JSON.parse(await api.curveSteps(query));
  if (steps.error) {
    postMessage({ type: 'curve-done', id, error: steps.error });
    return;
  }
  const ts = steps.result || []; // none for zero rounds
  postMessage({ type: 'curve-steps', id, steps: ts });
  const best = answer.result.best;
  const last = ts[ts.length - 1];
  for (const t of ts) {
    // The last point is the result's best (the same call at the same rounds).
    const p = t === last
      ? { result: { steps: t, epsilon: best.epsilon, text: best.text, bound: best.winning_bound || best.bound } }
      : JSON.parse(await api.point(query, t));
    postMessage({ type: 'point', id, answer: p });
    if (p.error) break;
  }
  postMessage({ type: 'curve-done', id, ms: performance.now() - t0 });
};
