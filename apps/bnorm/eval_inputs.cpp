// --inputs DIR for `bnorm eval --compare`: input sets in ONNX's test folder
// layout (test_data_set_*/input_N.pb, N in graph-input order without the
// initializers) or as files named after the inputs.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "eval_cli.h"
#include "core/error.h"
#include "model/output_file.h"
#include "model/tensor_file.h"

namespace fs = std::filesystem;

namespace bnorm::cli {

namespace {

// The graph inputs data must be given for, in order, with their declared element types.
std::vector<std::pair<std::string, DType>> data_inputs(const Model& m) {
  std::set<std::string> initializers;
  for (const auto& t : m.proto.graph().initializer()) initializers.insert(t.name());
  std::vector<std::pair<std::string, DType>> out;
  for (const auto& in : m.proto.graph().input()) {
    if (initializers.count(in.name())) continue;
    const DType t = in.type().has_tensor_type() ? static_cast<DType>(in.type().tensor_type().elem_type())
                                                : DType::undefined;
    out.emplace_back(in.name(), t);
  }
  return out;
}

Tensor read_input(const fs::path& file, const std::string& name, DType declared) {
  Tensor t = read_tensor_file(file);
  // ONNX's test data holds bfloat16 as its uint16 bit patterns.
  if (declared == DType::bfloat16 && t.dtype == DType::uint16) t.dtype = DType::bfloat16;
  t.name = name;
  return t;
}

InputSet read_set(const fs::path& dir, const std::vector<std::pair<std::string, DType>>& wanted) {
  InputSet s;
  s.name = dir.filename().string();
  for (size_t i = 0; i < wanted.size(); ++i) {
    const auto& [name, type] = wanted[i];
    for (const fs::path& f : {dir / fmt::format("input_{}.pb", i), dir / (name + ".pb"), dir / (name + ".npy")}) {
      std::error_code ec;
      if (!fs::is_regular_file(f, ec)) continue;
      s.inputs[name] = read_input(f, name, type);
      break;
    }
  }
  return s;
}

}  // namespace

std::vector<InputSet> read_input_sets(const fs::path& dir, const Model& model) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(ErrorKind::usage, fmt::format("--inputs '{}' is not a folder", dir.string()));
  const auto wanted = data_inputs(model);
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  }
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) sets.push_back(dir);
  std::vector<InputSet> out;
  for (const auto& s : sets) {
    InputSet set = read_set(s, wanted);
    std::vector<std::string> missing;
    for (const auto& [name, type] : wanted)
      if (!set.inputs.count(name)) missing.push_back("'" + name + "'");
    if (!missing.empty()) {
      throw Error(ErrorKind::usage,
                  fmt::format("--inputs '{}' has no data for {}", s.string(), fmt::join(missing, ", ")),
                  "name the files input_N.pb (N in graph-input order) or NAME.pb / NAME.npy");
    }
    out.push_back(std::move(set));
  }
  return out;
}

void write_report_file(const OutputTarget& target, const std::string& text) { write_output(target, text); }

}  // namespace bnorm::cli
