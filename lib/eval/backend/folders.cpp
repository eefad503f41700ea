#include "eval/backend/folders.h"

#include <onnx/onnx-data_pb.h>

#include <algorithm>
#include <climits>
#include <fstream>
#include <set>

#include "core/error.h"
#include "eval/run/evaluator.h"
#include "eval/run/preview_ops.h"
#include "model/model.h"
#include "model/norm_op.h"
#include "model/op_versions.h"
#include "model/tensor_file.h"
#include "model/tensor_proto.h"

namespace fs = std::filesystem;

namespace bnorm {

bool BackendTestResult::pass() const {
  if (skipped) return true;
  if (!error.empty()) return false;
  for (const auto& ds : data_sets)
    for (const auto& o : ds.outputs)
      if (!o.diff.pass) return false;
  return true;
}

bool is_backend_test_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::is_regular_file(dir / "model.onnx", ec);
}

std::vector<fs::path> find_backend_tests(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw Error(ErrorKind::input, fmt::format("'{}' is not a directory", root.string()));
  if (is_backend_test_dir(root)) return {root};
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(root)) {
    if (is_backend_test_dir(e.path())) out.push_back(e.path());
  }
  if (out.empty()) {
    Error e(ErrorKind::input, "holds no test folder (a folder with model.onnx and test_data_set_*)");
    e.in_file(root.string());
    throw e;
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// A tensor type bnorm holds; a sequence of those; an optional of either.
bool holds_type(const onnx::TypeProto& t, bool nested = false) {
  if (t.has_tensor_type()) return dtype_size(static_cast<DType>(t.tensor_type().elem_type())) != 0;
  if (nested) return false;
  if (t.has_sequence_type()) return holds_type(t.sequence_type().elem_type(), true);
  if (t.has_optional_type()) {
    const auto& e = t.optional_type().elem_type();
    return e.has_sequence_type() ? holds_type(e.sequence_type().elem_type(), true) : holds_type(e, true);
  }
  return false;
}

// ONNX's spelling of a value type: tensor(string), seq(tensor(float)), ...
std::string type_str(const onnx::TypeProto& t) {
  if (t.has_tensor_type()) {
    return fmt::format("tensor({})", dtype_name(static_cast<DType>(t.tensor_type().elem_type())));
  }
  if (t.has_sequence_type()) return "seq(" + type_str(t.sequence_type().elem_type()) + ")";
  if (t.has_optional_type()) return "optional(" + type_str(t.optional_type().elem_type()) + ")";
  if (t.has_map_type()) return "map";
  if (t.has_sparse_tensor_type()) return "sparse_tensor";
  return "unknown";
}

}  // namespace

std::string first_unsupported_op(const fs::path& model_path) {
  const Model model = load_model(model_path);
  std::string missing;
  for (const auto* list : {&model.proto.graph().input(), &model.proto.graph().output()}) {
    for (const auto& v : *list) {
      if (!missing.empty() || !v.has_type()) continue;
      if (!holds_type(v.type())) missing = fmt::format("value '{}' of type {}", v.name(), type_str(v.type()));
    }
  }
  const int64_t opset = default_opset(model.proto);
  for_each_graph(model.proto.graph(), "main", [&](const onnx::GraphProto& g, const std::string&) {
    for (const auto& n : g.node()) {
      if (!missing.empty()) return;
      if (eval::is_preview_domain(n.domain()) && eval::find_preview_op(n.op_type())) continue;
      if (!is_default_domain(n.domain())) missing = n.domain() + "." + n.op_type();
      else if (!eval_supports(n.op_type(), opset)) {
        const int v = op_version_at(n.op_type(), opset);
        missing = v ? fmt::format("{}-{}", n.op_type(), v) : n.op_type();
      }
    }
  });
  return missing;
}

namespace {

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (int i = 0;; ++i) {
    const fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    out.push_back(p);
  }
  return out;
}

// ONNX's test data stores bfloat16 tensors as their uint16 bit patterns.
void as_bfloat16_if_declared(Tensor& t, DType declared) {
  if (declared == DType::bfloat16 && t.dtype == DType::uint16) t.dtype = DType::bfloat16;
}

void as_bfloat16_if_declared(eval::Value& v, DType declared) {
  as_bfloat16_if_declared(v.tensor, declared);
  for (Tensor& t : v.items) as_bfloat16_if_declared(t, declared);
}

// The tensor element type a declared type ends in (a sequence's or an
// optional's element), or undefined.
DType declared_elem(const onnx::TypeProto& t) {
  if (t.has_tensor_type()) return static_cast<DType>(t.tensor_type().elem_type());
  if (t.has_sequence_type()) return declared_elem(t.sequence_type().elem_type());
  if (t.has_optional_type()) return declared_elem(t.optional_type().elem_type());
  return DType::undefined;
}

eval::Value decode_sequence(const onnx::SequenceProto& p, const fs::path& dir, DType declared) {
  if (p.elem_type() != onnx::SequenceProto::TENSOR && !(p.elem_type() == onnx::SequenceProto::UNDEFINED && p.tensor_values_size() == 0)) {
    fail(ErrorKind::unsupported, "a sequence of anything but tensors (SequenceProto elem_type {})", p.elem_type());
  }
  std::vector<Tensor> items;
  for (const auto& t : p.tensor_values()) items.push_back(decode_tensor(t, dir));
  return eval::Value::sequence(std::move(items), declared);
}

// input_N.pb / output_N.pb of a value of declared type `type`: a
// TensorProto, SequenceProto or OptionalProto.
eval::Value read_value_file(const fs::path& path, const onnx::TypeProto& type) {
  if (!type.has_sequence_type() && !type.has_optional_type()) return eval::Value::of(read_tensor_file(path));
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(ErrorKind::input, "cannot open for reading");
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() > INT_MAX) fail(ErrorKind::input, "over protobuf's 2 GiB limit");
    const fs::path dir = path.parent_path();
    const DType elem = declared_elem(type);
    if (type.has_sequence_type()) {
      onnx::SequenceProto p;
      if (!p.ParseFromString(bytes)) fail(ErrorKind::input, "cannot parse as a serialized ONNX SequenceProto");
      return decode_sequence(p, dir, elem);
    }
    onnx::OptionalProto p;
    if (!p.ParseFromString(bytes)) fail(ErrorKind::input, "cannot parse as a serialized ONNX OptionalProto");
    const bool of_sequence = type.optional_type().elem_type().has_sequence_type();
    switch (p.elem_type()) {
      case onnx::OptionalProto::UNDEFINED:
        return eval::Value::none(of_sequence ? eval::Value::Kind::sequence : eval::Value::Kind::tensor, elem);
      case onnx::OptionalProto::TENSOR: return eval::Value::some(eval::Value::of(decode_tensor(p.tensor_value(), dir)));
      case onnx::OptionalProto::SEQUENCE: return eval::Value::some(decode_sequence(p.sequence_value(), dir, elem));
      default: fail(ErrorKind::unsupported, "an optional of anything but a tensor or a sequence (OptionalProto elem_type {})", p.elem_type());
    }
  } catch (Error& e) {
    e.in_file(path.string());
    throw;
  }
}

// Both diffs in one: passes when both do; the larger errors; the first problem.
void merge(Diff& into, const Diff& d, const std::string& where) {
  into.pass = into.pass && d.pass;
  into.max_abs = std::max(into.max_abs, d.max_abs);
  into.max_rel = std::max(into.max_rel, d.max_rel);
  into.mismatches += d.mismatches;
  into.elements += d.elements;
  if (into.problem.empty() && !d.problem.empty()) into.problem = where + d.problem;
}

Diff mismatch(const std::string& problem) {
  Diff d;
  d.pass = false;
  d.problem = problem;
  return d;
}

// Values compare as their tensors do; sequences item by item (same
// length); optionals by emptiness, then by their elements.
Diff compare_values(const eval::Value& expected, const eval::Value& actual, const Tolerance& tol) {
  using Kind = eval::Value::Kind;
  if (expected.kind != actual.kind) return mismatch(fmt::format("{}, expected {}", actual.describe(), expected.describe()));
  if (expected.kind == Kind::optional) {
    if (expected.has_element != actual.has_element || (expected.has_element && expected.element != actual.element)) {
      return mismatch(fmt::format("{}, expected {}", actual.describe(), expected.describe()));
    }
    if (!expected.has_element) return Diff{};
    return compare_values(expected.unwrapped(), actual.unwrapped(), tol);
  }
  if (expected.kind == Kind::tensor) return compare(expected.tensor, actual.tensor, tol);
  if (expected.items.size() != actual.items.size()) {
    return mismatch(fmt::format("a sequence of {} tensors, expected {}", actual.items.size(), expected.items.size()));
  }
  Diff d;
  for (size_t i = 0; i < expected.items.size(); ++i) {
    merge(d, compare(expected.items[i], actual.items[i], tol), fmt::format("item {}: ", i));
  }
  return d;
}

}  // namespace

namespace {

// ONNX's data for the inverse DFT hold 1.9e-7 at the Nyquist bin's
// imaginary part, which is exactly 0 (numpy's float64 irfft agrees with
// bnorm, 1.4e-15): those folders are compared with atol at least 1e-6
// (docs/semantics.md, "Conformance data noise").
Tolerance folder_tolerance(const std::string& name, Tolerance tol) {
  if (name.rfind("test_dft_inverse", 0) == 0) tol.atol = std::max(tol.atol, 1e-6);
  return tol;
}

}  // namespace

BackendTestResult run_backend_test(const fs::path& dir, const Tolerance& given) {
  BackendTestResult r;
  r.dir = dir;
  r.name = dir.filename().string();
  const Tolerance tol = folder_tolerance(r.name, given);
  const fs::path model_path = dir / "model.onnx";
  std::string missing;
  try {
    missing = first_unsupported_op(model_path);
  } catch (const Error& e) {
    // A model bnorm refuses by design while loading (an element type of
    // IR 12 or 13): skipped with the reason, not an error of the folder.
    if (e.kind() != ErrorKind::unsupported) throw;
    r.skipped = true;
    r.skip_reason = e.bare_message();
    return r;
  }
  if (!missing.empty()) {
    r.skipped = true;
    r.skip_reason = (missing.rfind("value ", 0) == 0 ? missing : "op " + missing) + " is not supported by bnorm eval";
    return r;
  }
  const Model model = load_model(model_path);
  std::set<std::string> initializers;
  for (const auto& t : model.proto.graph().initializer()) initializers.insert(t.name());
  std::vector<std::string> input_names, output_names;
  std::vector<const onnx::TypeProto*> input_types, output_types;
  for (const auto& in : model.proto.graph().input()) {
    if (initializers.count(in.name())) continue;
    input_names.push_back(in.name());
    input_types.push_back(&in.type());
  }
  for (const auto& out : model.proto.graph().output()) {
    output_names.push_back(out.name());
    output_types.push_back(&out.type());
  }

  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  }
  std::sort(sets.begin(), sets.end());
  for (const auto& set : sets) {
    DataSetResult ds;
    ds.name = set.filename().string();
    std::map<std::string, eval::Value> inputs;
    const auto in_files = numbered(set, "input_");
    for (size_t i = 0; i < in_files.size() && i < input_names.size(); ++i) {
      eval::Value v = read_value_file(in_files[i], *input_types[i]);
      as_bfloat16_if_declared(v, declared_elem(*input_types[i]));
      inputs[input_names[i]] = std::move(v);
    }
    const auto out_files = numbered(set, "output_");
    std::map<std::string, eval::Value> actual;
    try {
      EvalOptions options;
      options.check_input_shapes = false;
      actual = evaluate_values(model, inputs, options);
    } catch (Error& e) {
      if (e.kind() == ErrorKind::unsupported) {
        // A case of a supported op that bnorm does not implement (Cast to
        // string, training-mode Dropout, ...): skipped, with the reason.
        r.skipped = true;
        r.skip_reason = e.message();
        r.data_sets.clear();
        return r;
      }
      e.in_file(model_path.string());
      throw;
    }
    for (size_t i = 0; i < out_files.size() && i < output_names.size(); ++i) {
      eval::Value expected = read_value_file(out_files[i], *output_types[i]);
      OutputResult o;
      o.name = output_names[i];
      auto it = actual.find(o.name);
      if (it == actual.end()) {
        o.diff.pass = false;
        o.diff.problem = "not produced";
      } else {
        const eval::Value& a = it->second;
        as_bfloat16_if_declared(expected, a.items.empty() ? a.tensor.dtype : a.items[0].dtype);
        o.diff = compare_values(expected, a, tol);
      }
      ds.outputs.push_back(std::move(o));
    }
    r.data_sets.push_back(std::move(ds));
  }
  return r;
}

}  // namespace bnorm
