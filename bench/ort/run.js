// Runs onnxruntime's BatchNormalization kernel on the benchmark shapes with
// profiling on, and prints the kernel's bytes per second (read X + write Y)
// as its profiler measures it (median of the runs).
//   node bench/ort/run.js MODEL_DIR THREADS
const ort = require('onnxruntime-node');
const fs = require('fs');
const path = require('path');

const shapes = { large: [32, 64, 112, 112], cache: [1, 64, 56, 56] };

async function main() {
  const dir = process.argv[2];
  const threads = parseInt(process.argv[3] || '1', 10);
  for (const [name, shape] of Object.entries(shapes)) {
    const prefix = path.join(dir, `ort_${name}_${threads}`);
    const session = await ort.InferenceSession.create(path.join(dir, `bn_${name}.onnx`), {
      intraOpNumThreads: threads, interOpNumThreads: 1, enableProfiling: true, profileFilePrefix: prefix,
      graphOptimizationLevel: 'disabled',
    });
    const n = shape.reduce((a, b) => a * b, 1);
    const x = new ort.Tensor('float32', Float32Array.from({ length: n }, (_, i) => Math.sin(i)), shape);
    const runs = name === 'large' ? 10 : 200;
    for (let i = 0; i < runs; ++i) await session.run({ x });
    await session.endProfiling();
    await session.release();
    const base = path.basename(prefix);
    const file = fs.readdirSync(dir).filter(f => f.startsWith(base) && f.endsWith('.json')).map(f => path.join(dir, f))[0];
    const events = JSON.parse(fs.readFileSync(file, 'utf8'));
    const times = events.filter(e => e.cat === 'Node' && e.name.startsWith('bn') && e.name.endsWith('kernel_time'))
      .map(e => e.dur).sort((a, b) => a - b);
    const us = times[Math.floor(times.length / 2)];
    const bytes = 2 * n * 4;
    console.log(`onnxruntime ${ort.env.versions ? ort.env.versions.common : ''} BN f32 ${name} ${JSON.stringify(shape)} ` +
      `threads ${threads}: kernel ${us} us, ${(bytes / us / 1e3).toFixed(2)} GB/s`);
    fs.unlinkSync(file);
  }
}
main().catch(e => { console.error(e); process.exit(2); });
