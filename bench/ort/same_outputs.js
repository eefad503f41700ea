// Runs two models in onnxruntime on the same seeded float32 inputs (the first model's input shapes) and says,
// output by output, whether they agree bit for bit.
//   NODE_PATH=NODE_MODULES node bench/ort/same_outputs.js A.onnx B.onnx
const ort = require('onnxruntime-node');
const onnx_shapes = require('child_process').execFileSync('/usr/bin/python3', ['-c',
  'import onnx, sys, json; g = onnx.load(sys.argv[1]).graph; inits = {i.name for i in g.initializer}; ' +
  'print(json.dumps({v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in g.input if v.name not in inits}))',
  process.argv[2]]).toString();
(async () => {
  let seed = 1;
  const rnd = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 - 0.5; };
  const feeds = {};
  for (const [n, d] of Object.entries(JSON.parse(onnx_shapes))) {
    const a = new Float32Array(d.reduce((x, y) => x * y, 1));
    for (let i = 0; i < a.length; ++i) a[i] = rnd() * 4;
    feeds[n] = new ort.Tensor('float32', a, d);
  }
  const run = async (p) => (await ort.InferenceSession.create(p)).run(feeds);
  const a = await run(process.argv[2]), b = await run(process.argv[3]);
  let all = true;
  for (const k of Object.keys(a)) {
    const x = a[k].data, y = b[k] ? b[k].data : [];
    let same = x.length === y.length;
    for (let i = 0; same && i < x.length; ++i) same = x[i] === y[i];
    all = all && same;
    console.log(`${process.argv[3]} ${k}: ${same ? 'bit for bit as' : 'DIFFERS from'} ${process.argv[2]}`);
  }
  process.exit(all ? 0 : 1);
})().catch((e) => { console.log(e.message); process.exit(1); });
