// The lockstep trace of two models (trace.h): each model runs on its own
// thread; the evaluator's on_value hook hands every shared value to a
// meeting point where it waits for its counterpart, is compared by the
// thread that brings the second one, and is dropped.
#include "eval/trace.h"

#include <fmt/format.h>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "core/error.h"
#include "eval/evaluator.h"
#include "model/node_label.h"

namespace bnorm {

namespace {

// Thrown from the hook to end one model's run when the other one failed.
struct Stopped {};

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
}

// The meeting point of one data set's two runs.
struct Tracer::Run {
  struct Kept {
    Tensor t;
    std::string producer;
    int64_t order;
  };
  std::mutex m;
  std::condition_variable cv;
  std::unordered_map<std::string, Kept> kept[2];
  size_t bytes[2] = {0, 0};
  bool running[2] = {true, true};
  bool waiting[2] = {false, false};
  bool stop = false;
  int64_t next_order = 0;
};

void Tracer::record(const std::string& key, const Tensor& a, const Tensor& b, const std::string& producer_a,
                    const std::string& producer_b, int64_t order) {
  Tolerance tol = model_compare_tolerance(a.dtype);
  if (options_.rtol) tol.rtol = *options_.rtol;
  if (options_.atol) tol.atol = *options_.atol;
  ValueDiff d = diff_values(a, b, tol);
  std::lock_guard<std::mutex> lock(results_);
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
    v.tol = tol;
    for (const auto& o : a_.proto.graph().output()) v.output = v.output || o.name() == v.name;
    v.diff = std::move(d);
    index_[key] = values_.size();
    values_.push_back(std::move(v));
    return;
  }
  values_[it->second].diff.merge(d);
}

// Side s (0: A, 1: B) produced `name`: compare it with its counterpart if
// the other side has it, else keep a copy, and wait while this side keeps
// too much and the other can catch up (it runs and does not wait itself).
void Tracer::arrive(Run& r, int s, const std::string& name, const std::string& producer, const Tensor& t) {
  auto c = canon_[s].find(name);
  if (c == canon_[s].end()) return;
  const std::string& key = c->second;
  std::unique_lock<std::mutex> lock(r.m);
  if (r.stop) throw Stopped{};
  const int64_t order = s == 0 ? r.next_order++ : -1;
  auto other = r.kept[1 - s].find(key);
  if (other != r.kept[1 - s].end()) {
    Run::Kept k = std::move(other->second);
    r.kept[1 - s].erase(other);
    r.bytes[1 - s] -= k.t.byte_size();
    // The other model stops waiting now, so this one may wait for it next.
    if (r.bytes[1 - s] <= options_.budget_bytes) r.waiting[1 - s] = false;
    r.cv.notify_all();
    lock.unlock();
    if (s == 0) record(key, t, k.t, producer, k.producer, order);
    else record(key, k.t, t, k.producer, producer, k.order);
    return;
  }
  r.kept[s][key] = Run::Kept{t, producer, order};
  r.bytes[s] += t.byte_size();
  peak_ = std::max(peak_, r.bytes[0] + r.bytes[1]);
  while (!r.stop && r.bytes[s] > options_.budget_bytes && r.running[1 - s] && !r.waiting[1 - s]) {
    r.waiting[s] = true;
    r.cv.wait(lock);
    r.waiting[s] = false;
  }
  if (r.stop) throw Stopped{};
}

void Tracer::run(const std::map<std::string, Tensor>& inputs) {
  Run r;
  std::exception_ptr errors[2];
  auto body = [&](int s) {
    try {
      EvalOptions o;
      o.on_value = [this, &r, s](const std::string& n, const std::string& p, const Tensor& t) { arrive(r, s, n, p, t); };
      evaluate(s == 0 ? a_ : b_, inputs, o);
    } catch (const Stopped&) {
    } catch (...) {
      errors[s] = std::current_exception();
      std::lock_guard<std::mutex> lock(r.m);
      r.stop = true;
    }
    std::lock_guard<std::mutex> lock(r.m);
    r.running[s] = false;
    r.cv.notify_all();
  };
  std::thread other(body, 1);
  body(0);
  other.join();
  for (int s = 0; s < 2; ++s) {
    if (!errors[s]) continue;
    try {
      std::rethrow_exception(errors[s]);
    } catch (Error& e) {
      e.in_file((s == 0 ? a_ : b_).path.string());
      e.context(s == 0 ? "in the first model" : "in the second model, run on the inputs made for the first");
      throw;
    }
  }
  ++data_sets_;
  uncompared_ = std::max(uncompared_, static_cast<int>(r.kept[0].size() + r.kept[1].size()));
}

TraceResult Tracer::result() const {
  TraceResult out;
  out.values = values_;
  std::sort(out.values.begin(), out.values.end(), [](auto& x, auto& y) { return x.order < y.order; });
  out.data_sets = data_sets_;
  out.uncompared = uncompared_;
  out.peak_kept_bytes = peak_;
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
