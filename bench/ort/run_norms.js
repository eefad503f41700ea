// Runs onnxruntime on the normalization family's models (make_models.py's
// ln_large, ln_cache, gn) with profiling on, and prints per model the
// median over the runs of the time its nodes took (the sum of their
// kernel_time events in one run: a single kernel, or the nodes of an
// expanded function) and of the whole run, with the bytes per second of
// read X + write Y, as bench/kernels_bench.cpp counts them.
//   node bench/ort/run_norms.js MODEL_DIR THREADS
const ort = require('onnxruntime-node');
const fs = require('fs');
const path = require('path');

const models = { ln_large: [32, 512, 768], ln_cache: [1, 128, 768], gn: [8, 256, 56, 56] };

const median = v => v.slice().sort((a, b) => a - b)[Math.floor(v.length / 2)];

async function main() {
  const dir = process.argv[2];
  const threads = parseInt(process.argv[3] || '1', 10);
  for (const [name, shape] of Object.entries(models)) {
    const prefix = path.join(dir, `ortn_${name}_${threads}`);
    const session = await ort.InferenceSession.create(path.join(dir, `${name}.onnx`), {
      intraOpNumThreads: threads, interOpNumThreads: 1, enableProfiling: true, profileFilePrefix: prefix,
      graphOptimizationLevel: 'disabled',
    });
    const n = shape.reduce((a, b) => a * b, 1);
    const x = new ort.Tensor('float32', Float32Array.from({ length: n }, (_, i) => Math.sin(i)), shape);
    const runs = n > 1e6 ? 20 : 500;
    for (let i = 0; i < runs; ++i) await session.run({ x });
    await session.endProfiling();
    await session.release();
    const base = path.basename(prefix);
    const file = fs.readdirSync(dir).filter(f => f.startsWith(base) && f.endsWith('.json')).map(f => path.join(dir, f))[0];
    const events = JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.unlinkSync(file);
    const runEvents = events.filter(e => e.cat === 'Session' && e.name === 'model_run');
    const nodes = events.filter(e => e.cat === 'Node' && e.name.endsWith('_kernel_time'));
    // Each node's events fall inside one model_run: sum them per run.
    const perRun = runEvents.map(r => nodes.filter(e => e.ts >= r.ts && e.ts <= r.ts + r.dur)
      .reduce((a, e) => a + e.dur, 0));
    const ops = [...new Set(nodes.map(e => (e.args && e.args.op_name) || e.name))].join('+');
    const us = median(perRun.slice(1));
    const runUs = median(runEvents.slice(1).map(e => e.dur));
    const bytes = 2 * n * 4;
    console.log(`onnxruntime ${ort.env.versions ? ort.env.versions.common : ''} ${name} ${JSON.stringify(shape)} ` +
      `threads ${threads}: nodes (${ops}) ${us} us, ${(bytes / us / 1e3).toFixed(2)} GB/s; run ${runUs} us`);
  }
}
main().catch(e => { console.error(e); process.exit(2); });
