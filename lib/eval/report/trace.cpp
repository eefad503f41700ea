// The trace of two models (trace.h): A runs first and the evaluator's
// on_value hook writes each shared value to a temporary file; then B runs
// and each shared value it produces is compared with A's, read back, and
// both are dropped.
#include "eval/report/trace.h"

#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "eval/run/float64.h"
#include "model/node_label.h"
#include "model/output_file.h"

namespace bnorm {

namespace {

std::set<std::string> node_outputs(const onnx::GraphProto& g) {
  std::set<std::string> out;
  for (const auto& n : g.node())
    for (const auto& o : n.output())
      if (!o.empty()) out.insert(o);
  return out;
}

std::string mapped(const std::map<std::string, std::string>& renames, const std::string& name) {
  auto it = renames.find(name);
  return it == renames.end() ? name : it->second;
}

}  // namespace

Tracer::Tracer(const Model& a, const Model& b, TraceOptions options) : a_(a), b_(b), options_(options) {
  if (!options_.criterion.fixed) {
    blocker_ = float64_blocker(a);
    if (blocker_.empty()) a64_ = promote_to_float64(a);
  }
  const Model* models[2] = {&a, &b};
  std::map<std::string, std::string> keyed[2];  // shared key -> produced name
  for (int s = 0; s < 2; ++s) {
    const auto renames = read_renames(*models[s]);
    for (const auto& name : node_outputs(models[s]->proto.graph())) keyed[s][mapped(renames, name)] = name;
  }
  // Graph outputs whose key the other model lacks pair by position.
  const auto& oa = a.proto.graph().output();
  const auto& ob = b.proto.graph().output();
  for (int i = 0; i < std::min(oa.size(), ob.size()); ++i) {
    const auto ka = std::find_if(keyed[0].begin(), keyed[0].end(), [&](auto& kv) { return kv.second == oa[i].name(); });
    const auto kb = std::find_if(keyed[1].begin(), keyed[1].end(), [&](auto& kv) { return kv.second == ob[i].name(); });
    if (ka == keyed[0].end() || kb == keyed[1].end() || ka->first == kb->first) continue;
    if (keyed[1].count(ka->first) || keyed[0].count(kb->first)) continue;
    const std::string produced = kb->second;
    keyed[1].erase(kb);
    keyed[1][ka->first] = produced;
  }
  for (const auto& [key, name] : keyed[0]) {
    auto it = keyed[1].find(key);
    if (it == keyed[1].end()) continue;
    canon_[0][name] = key;
    canon_[1][it->second] = key;
    names_[0][key] = name;
    names_[1][key] = it->second;
  }
  // Codes are compared as codes under the auto criterion only (fixed: as before, element by element).
  for (const auto& n : a.proto.graph().node()) {
    if (options_.criterion.fixed) break;
    if (n.op_type() != "QuantizeLinear" && n.op_type() != "DynamicQuantizeLinear") continue;
    auto c = canon_[0].find(n.output(0));
    if (c == canon_[0].end() || n.input_size() == 0) continue;
    quantizers_[c->second] = &n;
    auto x = canon_[0].find(n.input(0));
    if (x != canon_[0].end()) ++quantizer_inputs_[x->second];
  }
}

CodeDiff Tracer::compare_codes(const std::string& key, const Tensor& a, const Tensor& b,
                               const std::map<std::string, std::pair<Tensor, Tensor>>& held,
                               const std::map<std::string, Tensor>& inputs) const {
  const onnx::NodeProto& n = *quantizers_.at(key);
  const Tensor *xa = nullptr, *xb = nullptr;
  auto x = canon_[0].find(n.input(0));
  if (x != canon_[0].end()) {
    auto h = held.find(x->second);
    if (h != held.end()) xa = &h->second.first, xb = &h->second.second;
  } else if (auto in = inputs.find(n.input(0)); in != inputs.end()) {
    xa = xb = &in->second;  // a graph input: the same in both
  }
  QuantParams q;
  q.dynamic = n.op_type() == "DynamicQuantizeLinear";
  Tensor scale, zero_point;
  if (!q.dynamic) {
    for (const auto& attr : n.attribute())
      if (attr.name() == "axis") q.axis = attr.i();
    for (const auto& t : a_.proto.graph().initializer()) {
      if (n.input_size() > 1 && t.name() == n.input(1)) scale = decode_as_saved(a_, t);
      if (n.input_size() > 2 && t.name() == n.input(2)) zero_point = decode_as_saved(a_, t);
    }
    if (scale.dtype != DType::undefined) q.scale = &scale;
    if (zero_point.dtype != DType::undefined) q.zero_point = &zero_point;
  }
  return code_diff(a, b, xa, xb, q);
}

// A's shared values, written to an unnamed temporary file (removed when
// closed, also when bnorm stops on an error) while A runs, read back one at
// a time while B runs.
class Tracer::Spill {
 public:
  struct Entry {
    long offset = 0;
    DType dtype = DType::undefined;
    std::vector<int64_t> dims;
    size_t bytes = 0;
    std::string producer;
    int64_t order = 0;
  };

  // In $TMPDIR (else /tmp), unnamed: nothing is left behind.
  Spill() {
    const int fd = scratch_file("to hold the first model's values (--trace)");
    f_ = fdopen(fd, "w+b");
    if (!f_) {
      ::close(fd);
      throw Error(ErrorKind::input, fmt::format("--trace cannot open its temporary file: {}", std::strerror(errno)));
    }
  }
  ~Spill() { std::fclose(f_); }
  Spill(const Spill&) = delete;
  Spill& operator=(const Spill&) = delete;

  void put(const std::string& key, const Tensor& t, const std::string& producer, int64_t order) {
    if (entries_.count(key)) return;  // a name produced twice (not in a valid graph): the first is kept
    Entry e{end_, t.dtype, t.dims, t.byte_size(), producer, order};
    if (e.bytes && std::fwrite(t.bytes.data(), 1, e.bytes, f_) != e.bytes) {
      throw Error(ErrorKind::input, fmt::format("--trace could not write {} bytes of the first model's values to a "
                                                "temporary file (TMPDIR full?): {} bytes written so far", e.bytes, end_));
    }
    end_ += static_cast<long>(e.bytes);
    entries_.emplace(key, std::move(e));
  }
  // A's value of `key` (erased from the spill's index), or nullopt.
  std::optional<std::pair<Tensor, Entry>> take(const std::string& key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    Entry e = std::move(it->second);
    entries_.erase(it);
    Tensor t;
    t.dtype = e.dtype;
    t.dims = e.dims;
    t.bytes.resize(e.bytes);
    std::fflush(f_);
    if (e.bytes && (std::fseek(f_, e.offset, SEEK_SET) != 0 || std::fread(t.bytes.data(), 1, e.bytes, f_) != e.bytes)) {
      throw Error(ErrorKind::input, "--trace could not read back the first model's value '" + key + "' from its temporary file");
    }
    std::fseek(f_, 0, SEEK_END);
    return std::make_pair(std::move(t), std::move(e));
  }
  size_t left() const { return entries_.size(); }
  size_t written() const { return static_cast<size_t>(end_); }

 private:
  std::FILE* f_ = nullptr;
  long end_ = 0;
  std::unordered_map<std::string, Entry> entries_;
};

bool Tracer::record(const std::string& key, const Tensor& a, const Tensor* a64, const Tensor& b,
                    const std::string& producer_a, const std::string& producer_b, int64_t order,
                    const CodeDiff* codes) {
  auto it = index_.find(key);
  if (it == index_.end()) {
    TracedValue v;
    v.name = names_[0][key];
    v.name_b = names_[1][key];
    v.producer_a = producer_a;
    v.producer_b = producer_b;
    v.order = order;
    v.dtype = a.dtype;
    v.dims = a.dims;
    for (const auto& o : a_.proto.graph().output()) v.output = v.output || o.name() == v.name;
    v.criterion = options_.criterion.fixed ? Criterion::fixed : a64 ? Criterion::rounding : Criterion::scaled;
    v.judge(a, a64, b, options_.criterion);
    if (codes) v.codes = *codes;
    if (codes && codes->rounding() && !v.diff.diff.pass) v.diff.diff.pass = v.explained = true;
    index_[key] = values_.size();
    values_.push_back(std::move(v));
    return values_.back().diff.diff.pass;
  }
  TracedValue& v = values_[it->second];
  const bool before = v.diff.diff.pass;
  // This set's own judgement (the merged verdict only says whether every set was inside).
  TracedValue set;
  set.criterion = v.criterion;
  set.judge(a, a64, b, options_.criterion);
  if (codes) set.codes = *codes;
  const bool inside = set.diff.diff.pass || (codes && codes->rounding());
  v.merge(set);
  if (codes && codes->rounding() && before && !v.diff.diff.pass) v.diff.diff.pass = v.explained = true;
  return inside;
}

void Tracer::run(const std::map<std::string, Tensor>& inputs) {
  Spill spill;
  int64_t order = 0;
  auto in_model = [&](int s, auto&& body) {
    try {
      body();
    } catch (Error& e) {
      e.in_file((s == 0 ? a_ : b_).path.string());
      e.context(s == 0 ? options_.a_role : options_.b_role);
      if (s == 0 && !options_.a_hint.empty() && e.hint().empty()) e.with_hint(options_.a_hint);
      throw;
    }
  };
  in_model(0, [&] {
    EvalOptions o;
    o.on_value = [&](const std::string& n, const std::string& producer, const Tensor& t) {
      auto c = canon_[0].find(n);
      if (c != canon_[0].end()) spill.put(c->second, t, producer, order++);
    };
    evaluate(a_, inputs, o);
  });
  // A in float64: each shared value A produced gets its float64 twin.
  std::optional<Spill> spill64;
  if (a64_) {
    try {
      spill64.emplace();
      EvalOptions o;
      o.on_value = [&](const std::string& n, const std::string&, const Tensor& t) {
        auto c = canon_[0].find(n);
        if (c != canon_[0].end()) spill64->put(c->second, t, "", 0);
      };
      evaluate_float64(*a64_, inputs, o);
    } catch (const Error& e) {
      if (data_sets_ > 0) throw;  // the earlier sets were judged against it
      blocker_ = "its float64 evaluation failed: " + e.message();
      a64_.reset();
      spill64.reset();
    }
  }
  int b_only = 0;
  // Quantizer inputs (A's and B's) held until their quantizers are judged;
  // A's codes where B's flipped by rounding; values outside in this set.
  std::map<std::string, std::pair<Tensor, Tensor>> held;
  std::map<std::string, int> held_uses = quantizer_inputs_;
  std::map<std::string, Tensor> a_codes;  // by B's name
  std::set<std::string> failed;        // outside in this set, inside in the sets before
  std::map<std::string, bool> inside;  // this set's verdicts
  in_model(1, [&] {
    EvalOptions o;
    o.replace = options_.replace_b;
    o.on_value = [&](const std::string& n, const std::string& producer, const Tensor& t) {
      auto c = canon_[1].find(n);
      if (c == canon_[1].end()) return;
      const std::string& key = c->second;
      auto a = spill.take(key);
      if (!a) {
        ++b_only;
        return;
      }
      std::optional<std::pair<Tensor, Spill::Entry>> a64;
      if (spill64) a64 = spill64->take(key);
      peak_ = std::max(peak_, a->first.byte_size() + (a64 ? a64->first.byte_size() : 0));
      if (spill64 && !a64) return;  // not produced by A in float64 (not in a valid run)
      std::optional<CodeDiff> codes;
      if (quantizers_.count(key)) {
        codes = compare_codes(key, a->first, t, held, inputs);
        const onnx::NodeProto& q = *quantizers_.at(key);
        auto x = canon_[0].find(q.input(0));
        if (x != canon_[0].end()) codes->inputs_inside = inside.count(x->second) && inside[x->second];
        if (codes->rounding()) a_codes[n] = a->first;
        if (x != canon_[0].end() && --held_uses[x->second] <= 0) held.erase(x->second);
      }
      if (quantizer_inputs_.count(key)) held[key] = {a->first, t};
      auto known = index_.find(key);
      const bool inside_before = known == index_.end() || values_[known->second].diff.diff.pass;
      inside[key] = record(key, a->first, a64 ? &a64->first : nullptr, t, a->second.producer, producer,
                           a->second.order, codes ? &*codes : nullptr);
      if (!inside[key] && inside_before) failed.insert(key);
    };
    evaluate(b_, inputs, o);
  });
  ++data_sets_;
  spilled_ = std::max(spilled_, spill.written() + (spill64 ? spill64->written() : 0));
  uncompared_ = std::max(uncompared_, static_cast<int>(spill.left()) + b_only);
  // Every code flip rounding, and values outside: B again with A's codes.
  // A value inside then differs only because of those flips.
  if (options_.replace_b || a_codes.empty() || failed.empty()) return;
  TraceOptions again = options_;
  again.replace_b = &a_codes;
  Tracer replay(a_, b_, again);
  replay.run(inputs);
  ++replayed_;
  for (const auto& key : failed) {
    auto r = replay.index_.find(key);
    if (r == replay.index_.end() || !replay.values_[r->second].diff.diff.pass) continue;
    TracedValue& v = values_[index_.at(key)];
    v.diff.diff.pass = v.explained = true;
  }
}

TraceResult Tracer::result() const {
  TraceResult out;
  out.values = values_;
  std::sort(out.values.begin(), out.values.end(), [](auto& x, auto& y) { return x.order < y.order; });
  out.data_sets = data_sets_;
  out.uncompared = uncompared_;
  out.peak_kept_bytes = peak_;
  out.spilled_bytes = spilled_;
  out.auto_criterion = !options_.criterion.fixed;
  out.replayed = replayed_;
  out.float64_blocker = blocker_;
  for (size_t i = 0; i < out.values.size(); ++i) {
    if (!out.values[i].diff.diff.pass) {
      out.first = static_cast<int>(i);
      break;
    }
  }
  if (out.first < 0) return out;
  // Back from the divergent value's producer through each node's first
  // input that another node produces, to a node fed by graph inputs only.
  const auto& g = a_.proto.graph();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& o : g.node(i).output()) producer[o] = i;
  std::set<int> seen;
  auto it = producer.find(out.values[out.first].name);
  while (it != producer.end() && seen.insert(it->second).second) {
    const int i = it->second;
    out.path.insert(out.path.begin(), node_label(g, i));
    it = producer.end();
    for (const auto& in : g.node(i).input()) {
      auto p = producer.find(in);
      if (!in.empty() && p != producer.end()) {
        it = p;
        break;
      }
    }
  }
  return out;
}

}  // namespace bnorm
