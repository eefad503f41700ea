#include "transforms/upgrade/upgrade.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/error.h"
#include "core/log.h"
#include "model/graph_index.h"
#include "model/graph_order.h"
#include "model/infer.h"
#include "model/shape_infer/shape_infer.h"
#include "model/prune.h"
#include "model/tensor_proto.h"
#include "model/node_label.h"
#include "transforms/fuse/fuse_norms.h"
#include "transforms/upgrade/bf16_pass.h"
#include "transforms/upgrade/high.h"
#include "transforms/upgrade/lower_pass.h"
#include "transforms/upgrade/node_plan.h"
#include "transforms/upgrade/onnx_converter.h"
#include "transforms/upgrade/schema.h"
#include "transforms/upgrade/restore.h"
#include "transforms/upgrade/value_info.h"
#include "transforms/upgrade/attr_blockers.h"
#include "transforms/upgrade/ir_types.h"

namespace bnorm {

namespace {

using namespace upgrade_detail;

void check_opsets(int64_t from, int64_t to) {
  if (to < kUpgradeMinOpset || to > kUpgradeMaxOpset) {
    throw Error(ErrorKind::usage, fmt::format("--to {}: the target opset must be {} to {}", to, kUpgradeMinOpset,
                                              kUpgradeMaxOpset));
  }
  if (from > kUpgradeMaxOpset) {
    throw Error(ErrorKind::unsupported,
                fmt::format("the model's opset {} is newer than bnorm converts (opsets {} to {}); cannot convert it to "
                            "opset {}", from, kUpgradeMinOpset, kUpgradeMaxOpset, to))
        .with_hint("re-export the model at an older opset");
  }
}

}  // namespace


namespace {


// Keeps only the value_info entries the input declared (by name): the
// converter and shape inference add their own, which can go stale.
void keep_declared_value_info(onnx::ModelProto& out, const onnx::ModelProto& in) {
  std::unordered_set<std::string> declared;
  for_each_graph(in.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& v : g.value_info()) declared.insert(v.name());
  });
  for_each_graph_mut(*out.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string&) {
    auto* vi = g.mutable_value_info();
    for (int i = vi->size() - 1; i >= 0; --i) {
      if (!declared.count(vi->Get(i).name())) vi->erase(vi->begin() + i);
    }
  });
}

// ONNX's converter goes through its IR, whose values are tensors only: it
// gives back graph inputs, outputs and value_info of sequence, optional and
// map types with no type at all (the checker then refuses the model).
// Each such declaration gets the type it had in the input, by graph (in
// visit order: two subgraphs can share a path) and name.
void restore_lost_types(onnx::ModelProto& out, const onnx::ModelProto& in) {
  std::vector<std::map<std::string, const onnx::TypeProto*>> declared;  // per graph: name -> type
  for_each_graph(in.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
    auto& d = declared.emplace_back();
    for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
      for (const auto& v : *list)
        if (v.has_type()) d.emplace(v.name(), &v.type());
  });
  size_t k = 0;
  for_each_graph_mut(*out.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string&) {
    if (k >= declared.size()) return;  // not the input's structure: the checker judges
    const auto& d = declared[k++];
    for (auto* list : {g.mutable_input(), g.mutable_output(), g.mutable_value_info()})
      for (auto& v : *list) {
        if (v.has_type() && v.type().value_case() != onnx::TypeProto::VALUE_NOT_SET) continue;
        const auto t = d.find(v.name());
        if (t != d.end()) *v.mutable_type() = *t->second;
      }
  });
}

// ONNX's converter goes through its IR, which has no external data: the
// tensors it gives back have their dims but no data. external_tensors()
// keeps the external entries (small: no data in them) before it runs;
// put_back_external() restores each, by name, where type and dims are
// unchanged and the converter left no data.
std::unordered_map<std::string, onnx::TensorProto> external_tensors(onnx::ModelProto& m) {
  std::unordered_map<std::string, onnx::TensorProto> out;
  for_each_tensor(m, [&](onnx::TensorProto& t) {
    if (is_external(t)) out[t.name()] = t;
  });
  return out;
}

void put_back_external(const std::unordered_map<std::string, onnx::TensorProto>& external, onnx::ModelProto& m) {
  if (external.empty()) return;
  for_each_tensor(m, [&](onnx::TensorProto& t) {
    const auto it = external.find(t.name());
    if (it == external.end() || is_external(t)) return;
    const onnx::TensorProto& e = it->second;
    const bool same = t.data_type() == e.data_type() &&
                      std::equal(t.dims().begin(), t.dims().end(), e.dims().begin(), e.dims().end());
    const bool no_data = t.raw_data().empty() && t.float_data_size() == 0 && t.int32_data_size() == 0 &&
                         t.int64_data_size() == 0 && t.double_data_size() == 0 && t.uint64_data_size() == 0;
    if (same && no_data) t = e;
  });
}

// ONNX's converter does not know sparse initializers (it fails on their
// uses as undefined inputs, and drops them): while it runs they are graph
// inputs of their type and shape, and they are put back afterwards.
using SparseStash = std::map<std::string, google::protobuf::RepeatedPtrField<onnx::SparseTensorProto>>;

SparseStash stash_sparse_initializers(onnx::ModelProto& m) {
  SparseStash stash;
  for_each_graph_mut(*m.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string& path) {
    if (g.sparse_initializer_size() == 0) return;
    for (const auto& s : g.sparse_initializer()) {
      add_tensor_input(g, s.values().name(), s.values().data_type(), s.dims());
    }
    g.mutable_sparse_initializer()->Swap(&stash[path]);
  });
  return stash;
}

void restore_sparse_initializers(onnx::ModelProto& m, SparseStash& stash) {
  for_each_graph_mut(*m.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string& path) {
    auto it = stash.find(path);
    if (it == stash.end()) return;
    std::unordered_set<std::string> names;
    for (const auto& s : it->second) names.insert(s.values().name());
    auto* inputs = g.mutable_input();
    for (int i = inputs->size() - 1; i >= 0; --i) {
      if (names.count(inputs->Get(i).name())) inputs->erase(inputs->begin() + i);
    }
    g.mutable_sparse_initializer()->Swap(&it->second);
  });
}

// Below IR 4 every initializer must also be a graph input (ONNX's
// converter and checker rely on it); old exporters sometimes left some out.
void list_initializers_as_inputs(onnx::ModelProto& m, UpgradeReport& r) {
  for_each_graph_mut(*m.mutable_graph(), "main", [&](onnx::GraphProto& g, const std::string& path) {
    std::unordered_set<std::string> inputs;
    for (const auto& v : g.input()) inputs.insert(v.name());
    int added = 0;
    for (const auto& t : g.initializer()) {
      if (inputs.count(t.name())) continue;
      add_tensor_input(g, t.name(), t.data_type(), t.dims());
      ++added;
    }
    if (added > 0) {
      r.warnings.push_back(fmt::format("graph {}: {} initializer{} not listed as graph inputs, as IR version {} "
                                       "requires; listed", path, added, added == 1 ? " was" : "s were",
                                       m.ir_version()));
    }
  });
}

// ONNX's IR importer, which its converter runs first, dereferences the value
// of every name a node input or graph output uses: an undefined one crashes
// it. Such a model is invalid anyway; refuse it by name first.
void check_names_defined(const GraphIndex& index) {
  std::unordered_set<std::string> sparse;  // not in the index; defined wherever they are
  for (const auto& scope : index.scopes()) {
    for (const auto& t : scope->graph->sparse_initializer()) sparse.insert(t.values().name());
  }
  for (const auto& scope : index.scopes()) {
    for (const auto& node : scope->graph->node()) {
      for (const auto& in : node.input()) {
        if (!in.empty() && !sparse.count(in) && !index.find(*scope, in)) {
          throw Error(ErrorKind::input, fmt::format("input '{}' names no value (no graph input, initializer or "
                                                    "node output of graph {} or around it)", in, scope->path))
              .at_node(node_label(node), node.op_type());
        }
      }
    }
    for (const auto& out : scope->graph->output()) {
      if (!sparse.count(out.name()) && !index.find(*scope, out.name())) {
        fail(ErrorKind::input, "graph output '{}' of graph {} names no value (no node, input or initializer makes it)",
             out.name(), scope->path);
      }
    }
  }
}

// ONNX's converter's Gemm 6 -> 7 adapter reads dims 0 and 1 of A and B
// whatever their rank (a null dereference on rank 0; found by fuzz_upgrade).
// Gemm multiplies matrices at every version: refuse A or B of another
// declared rank by name first.
void check_gemm_ranks(const GraphIndex& index) {
  for (const auto& scope : index.scopes()) {
    for (const auto& node : scope->graph->node()) {
      if (node.op_type() != "Gemm" || !(node.domain().empty() || node.domain() == "ai.onnx")) continue;
      const char* names[] = {"A", "B"};
      for (int i = 0; i < 2 && i < node.input_size(); ++i) {
        const onnx::TypeProto* t = index.declared_type(*scope, node.input(i));
        if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) continue;
        const int rank = t->tensor_type().shape().dim_size();
        if (rank != 2) {
          throw Error(ErrorKind::input, fmt::format("input '{}' ('{}') has rank {}; Gemm multiplies matrices (rank 2)",
                                                    names[i], node.input(i), rank))
              .at_node(node_label(node), node.op_type());
        }
      }
    }
  }
}

}  // namespace

namespace {

void sort_nodes(Model& model, UpgradeReport& r) {
  if (const int reordered = sort_topologically(*model.proto.mutable_graph())) {
    r.warnings.push_back(fmt::format("the nodes of {} graph{} were not in a topological order, as ONNX requires; "
                                     "they were reordered", reordered, reordered == 1 ? "" : "s"));
  }
}

// Opsets up to 17: ONNX 1.12's converter with bnorm's steps around it.
void convert_low(Model& model, int64_t from, int64_t to, const UpgradeOptions& options, UpgradeReport& r) {
  check_ops(model.proto, from, to);

  sort_nodes(model, r);
  onnx::ModelProto inferred = with_all_inferred_shapes(model.proto, WriteOutputs::no);
  set_default_opset(inferred, from);
  if (inferred.ir_version() < 4) list_initializers_as_inputs(inferred, r);
  inferred.set_ir_version(std::max<int64_t>(inferred.ir_version(), 3));  // IR 1/2 had no opset_import
  check_broadcast_shapes(inferred, from, to);
  const GraphIndex index(inferred);
  check_names_defined(index);
  check_gemm_ranks(index);
  check_kept_types(inferred, index, from, to);

  // Values the input reads; those the steps stop reading (spatial = 0
  // parameters replaced by flattened copies, a computed Reshape shape
  // written as the attribute below 5) are removed at the end, with the
  // nodes that only computed them (model/prune.h).
  const std::set<std::string> values_read = names_in_use(model.proto);

  onnx::ModelProto work = inferred;
  const std::vector<Hidden> hidden = hide_nodes(work, inferred, from, to);
  SparseStash sparse = stash_sparse_initializers(work);
  if (from != to) {
    const auto external = external_tensors(work);
    work = convert_with_onnx(work, from, to);
    put_back_external(external, work);
  }
  restore_sparse_initializers(work, sparse);
  restore_nodes(work, {&index, &hidden, from, to, options.inference}, r);
  forget_placeholder_domain(work);
  remove_released(work, values_read);
  const std::set<std::string> left = names_in_use(work), defined = names_defined(work);
  for (const auto& c : values_read)
    if (!left.count(c) && !defined.count(c)) r.removed.push_back(c);
  keep_declared_value_info(work, model.proto);
  restore_lost_types(work, model.proto);
  set_default_opset(work, to);
  declare_uninferred_types(work, inferred, to);
  work.set_ir_version(std::max(work.ir_version(), required_ir_version(to)));
  model.proto = std::move(work);
}

}  // namespace

UpgradeReport upgrade_model(Model& model, const UpgradeOptions& options) {
  const int64_t from = default_opset(model.proto), to = options.target;
  check_opsets(from, to);
  UpgradeReport r;
  r.from_opset = from;
  r.to_opset = to;
  r.from_ir = model.proto.ir_version();
  if (const auto blockers = type_blockers(model.proto, to); !blockers.empty()) {
    throw Error(ErrorKind::unsupported, fmt::format("the model cannot be converted to opset {}:\n  {}", to,
                                                    fmt::join(blockers, "\n  ")));
  }
  if (const auto blockers = attr_value_blockers(model.proto); !blockers.empty()) {
    throw Error(ErrorKind::input, fmt::format("the model cannot be converted: {}\n  {}",
                                              blockers.size() == 1 ? "a node holds a value its version does not define:"
                                                                   : "nodes hold values their versions do not define:",
                                              fmt::join(blockers, "\n  ")))
        .with_hint("the value belongs to another version of the op: write the node at that opset, or a value its "
                   "version defines");
  }
  // Each pass with its time at -v.
  auto timed = [](const char* what, auto&& pass) {
    const Stopwatch took;
    pass();
    log().debug("upgrade: {} ({:.1f} ms)", what, took.ms());
  };
  timed("ops the target lacks lowered", [&] {  // first
    try {
      lower_for_target(model, from, to, r);
    } catch (const LoweringFailed& failed) {
      // Every node that blocks the target, the others too, in one error.
      const std::vector<std::string> blockers = plan_nodes(model, to).blockers;
      if (blockers.size() <= 1 && failed.errors.size() == 1) throw failed.errors.front();
      throw Error(ErrorKind::unsupported, fmt::format("{} nodes cannot be converted to opset {}:\n  {}", blockers.size(),
                                                      to, fmt::join(blockers, "\n  ")));
    }
  });
  timed("bfloat16 nodes put between Casts", [&] { upgrade_detail::cast_bf16_sites(model.proto, from, to, options.casts, r); });
  const int64_t onnx_max = kOnnxConverterMaxOpset;
  timed("nodes converted", [&] {
    if (from <= onnx_max && to <= onnx_max) {
      convert_low(model, from, to, options, r);
    } else if (from > onnx_max && to >= onnx_max) {
      sort_nodes(model, r);
      convert_high(model.proto, from, to, r);
    } else if (from > onnx_max) {
      sort_nodes(model, r);
      convert_high(model.proto, from, onnx_max, r);
      convert_low(model, onnx_max, to, options, r);
    } else {
      convert_low(model, from, onnx_max, options, r);
      convert_high(model.proto, onnx_max, to, r);
    }
  });
  if (options.fuse_norms) {
    timed("decompositions fused", [&] { fuse_norms(model.proto, model.dir(), r); });  // at the target
  }
  // IR: what the target needs and the model's element types need; at
  // targets <= 17 never lower than the input's up to 8 (what opset 17 needs
  // and ONNX 1.12's checker reads: an IR 8 model at 15 going to 9 stays 8,
  // an IR 10 model at 16 with an ai.onnx.ml op is written as 8); above 17
  // never lower than the input's going up, and up to what the target needs
  // going down (an IR 11 model at 23 going to 19 is IR 9).
  const int64_t ir_in = r.from_ir;
  int64_t ir = std::max(required_ir_version(to), model_types_ir(model.proto));
  if (to <= onnx_max) ir = std::max(ir, std::min(ir_in, required_ir_version(onnx_max)));  // ONNX 1.12 reads IR <= 8
  else ir = std::max(ir, to >= from ? ir_in : std::min(ir_in, required_ir_version(to)));
  model.proto.set_ir_version(ir);
  r.to_ir = ir;
  return r;
}



}  // namespace bnorm
