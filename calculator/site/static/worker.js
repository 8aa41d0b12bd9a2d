// The accountant's worker: it runs the WebAssembly module (built from
// cmd/shuffledp-wasm) off the page's thread and answers the page's
// messages. Every number it sends comes from the module.
'use strict';
importScripts('wasm_exec.js');

const ready = (async () => {
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
})();

ready.then(
  (api) => postMessage({ type: 'ready', answer: JSON.parse(api.schema()) }),
  (err) => postMessage({ type: 'fatal', error: String(err) }),
);

self.onmessage = async (ev) => {
  const api = await ready;
  const { id, query } = ev.data;
  const t0 = performance.now();
  const answer = JSON.parse(api.compute(query));
  postMessage({ type: 'result', id, answer, ms: performance.now() - t0 });
  if (answer.error) return;
  const steps = JSON.parse(api.curveSteps(query));
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
      : JSON.parse(api.point(query, t));
    postMessage({ type: 'point', id, answer: p });
    if (p.error) break;
  }
  postMessage({ type: 'curve-done', id, ms: performance.now() - t0 });
};
