// Runs one model in onnxruntime on inputs written by compare_models.py and
// writes its outputs for comparison, or times it.
//   node bench/ort/run_model.js MANIFEST.json
// The manifest: { model, inputs: [{name, dtype, dims, file}], out_dir,
// threads, optimization ('disabled' | 'all'), runs (0: run once and write
// the outputs; N: time N runs after one warm-up and print the median and
// fastest wall time and the fastest CPU time (user + system) of a run) }.
// Inputs and outputs are raw little-endian files; out_dir/outputs.json
// lists the outputs as {name, dtype, dims, file}.
const ort = require('onnxruntime-node');
const fs = require('fs');
const path = require('path');

const arrays = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array,
  uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
  bool: Uint8Array, float16: Uint16Array,
};

function load(input) {
  const buf = fs.readFileSync(input.file);
  const Arr = arrays[input.dtype];
  if (!Arr) throw new Error(`input ${input.name}: type ${input.dtype} is not handled`);
  const copy = new Uint8Array(buf.length);
  copy.set(buf);
  const data = new Arr(copy.buffer, 0, buf.length / Arr.BYTES_PER_ELEMENT);
  return new ort.Tensor(input.dtype, input.dtype === 'bool' ? Uint8Array.from(data) : data, input.dims);
}

async function main() {
  const m = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const session = await ort.InferenceSession.create(m.model, {
    intraOpNumThreads: m.threads || 1, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: m.optimization || 'disabled',
  });
  const feeds = {};
  for (const input of m.inputs) feeds[input.name] = load(input);
  if (m.runs) {
    await session.run(feeds);
    const times = [], cpu = [];
    for (let i = 0; i < m.runs; ++i) {
      const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
      await session.run(feeds);
      const c = process.cpuUsage(c0);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      cpu.push((c.user + c.system) / 1e3);
    }
    const sorted = times.slice().sort((a, b) => a - b);
    console.log(JSON.stringify({ median_ms: sorted[Math.floor(sorted.length / 2)], min_ms: sorted[0],
                                 min_cpu_ms: Math.min(...cpu), runs: m.runs }));
    return;
  }
  const results = await session.run(feeds);
  const list = [];
  for (const [name, t] of Object.entries(results)) {
    const file = path.join(m.out_dir, `ort_${list.length}.bin`);
    const data = t.data;
    fs.writeFileSync(file, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    list.push({ name, dtype: t.type, dims: t.dims, file });
  }
  fs.writeFileSync(path.join(m.out_dir, 'outputs.json'), JSON.stringify(list));
}
main().catch(e => { console.error(String(e.message || e).split('\n')[0]); process.exit(2); });
