// Loads each model named on stdin (one path a line) in onnxruntime and
// prints one JSON line per model: {"model": path, "ok": true} or
// {"model": path, "ok": false, "error": "..."}. Used by
// bench/upgrade_sweep.py --ort: a model bnorm writes must load in a
// conforming runtime (onnxruntime runs opsets 7 and up).
//   node bench/ort/load_models.js < list
const ort = require('onnxruntime-node');
const readline = require('readline');

async function main() {
  const rl = readline.createInterface({input: process.stdin});
  for await (const line of rl) {
    const model = line.trim();
    if (!model) continue;
    try {
      await ort.InferenceSession.create(model, {graphOptimizationLevel: 'disabled', intraOpNumThreads: 1});
      console.log(JSON.stringify({model, ok: true}));
    } catch (e) {
      console.log(JSON.stringify({model, ok: false, error: String(e.message || e).split('\n')[0]}));
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(2);
});
