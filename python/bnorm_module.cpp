// _bnorm: the C++ half of `import bnorm` (docs/python.md), on bnorm's
// public API (include/bnorm/) alone. The package around it
// (python/bnorm/__init__.py) turns what users give (paths, bytes,
// ModelProtos, numpy arrays) into what this takes, and back.
//
// - Model: an api::ModelPtr, the one way a model crosses into Python
//   (bytes in, bytes out: no protobuf object is shared with the user's onnx).
// - Reports as their JSON text (the document `--json` prints), parsed by
//   the package, so that a report is the CLI's to the byte.
// - Every call into the library goes through call() (call.h): no GIL,
//   warnings to Python's `warnings`, Ctrl-C, errors as bnorm.Error;
//   arrays through tensors.h.
#include <bnorm/bnorm.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "call.h"
#include "tensors.h"

namespace bnorm::python {

namespace api = bnorm::api;

namespace {

// ---- models

// What Python holds: the model, and the file it came from (None for bytes).
struct PyModel {
  api::ModelPtr model;
  std::optional<std::string> path;
};

PyModel load_path(const std::string& path) {
  return PyModel{call([&] { return api::load(path); }), path};
}

PyModel load_bytes(const py::bytes& data, const std::string& name) {
  std::string bytes = data;  // one copy, made with the GIL held
  return PyModel{call([&] { return api::load_bytes(bytes, name); }), std::nullopt};
}

// ---- the commands

std::string inspect(const PyModel& m, std::optional<int64_t> to, bool fp16, bool shapes,
                    const py::dict& inputs, std::optional<uint64_t> seed,
                    const std::map<std::string, int64_t>& dims, const Ranges& ranges) {
  api::InspectRequest r;
  r.to = to;
  r.fp16 = fp16;
  r.shapes = shapes;
  r.inputs = to_tensors(inputs);
  r.seed = seed;
  r.dims = dims;
  r.ranges = to_ranges(ranges);
  r.file = m.path;
  return call([&] { return api::inspect(*m.model, r).json(); }, m.path);
}

py::tuple fold(const PyModel& m, bool verify, uint64_t seed, const Ranges& ranges,
               const py::dict& inputs,
               const py::list& input_sets, const std::map<std::string, int64_t>& dims,
               bool all_norms, bool keep_generated) {
  api::FoldRequest r;
  r.verify = verify;
  r.seed = seed;
  r.ranges = to_ranges(ranges);
  r.inputs = to_tensors(inputs);
  r.input_sets = to_tensor_sets(input_sets);
  r.dims = dims;
  r.all_norms = all_norms;
  r.keep_generated = keep_generated;
  r.input = m.path;
  auto [model, report] = call([&] {
    api::ModelPtr out = api::copy(*m.model);
    api::Report report = api::fold(*out, r);
    return std::make_pair(out, report);
  }, m.path);
  return py::make_tuple(PyModel{model, std::nullopt}, report.json(), report.exit_code);
}

py::tuple upgrade(const PyModel& m, int64_t to, bool inference, bool casts, bool fuse_norms, bool check, bool verify,
                  uint64_t seed, const std::map<std::string, int64_t>& dims, const Ranges& ranges,
                  const py::dict& inputs,
                  const py::list& input_sets) {
  api::UpgradeRequest r;
  r.to = to;
  r.inference = inference;
  r.casts = casts;
  r.fuse_norms = fuse_norms;
  r.check = check;
  r.verify = verify;
  r.seed = seed;
  r.dims = dims;
  r.ranges = to_ranges(ranges);
  r.inputs = to_tensors(inputs);
  r.input_sets = to_tensor_sets(input_sets);
  r.input = m.path;
  auto [model, report] = call([&] {
    api::ModelPtr out = api::copy(*m.model);
    api::Report report = api::upgrade(*out, r);
    return std::make_pair(out, report);
  }, m.path);
  return py::make_tuple(PyModel{model, std::nullopt}, report.json(), report.exit_code);
}

py::dict run(const PyModel& m, const py::dict& inputs, std::optional<uint64_t> seed,
             const std::map<std::string, int64_t>& dims, const Ranges& ranges) {
  auto given = to_tensors(inputs);
  const auto r = to_ranges(ranges);
  auto outputs = call([&] {
    if (seed) given = api::make_inputs(*m.model, *seed, dims, given, r);
    return api::run(*m.model, given);
  }, m.path);
  return to_arrays(std::move(outputs));
}

py::dict make_inputs(const PyModel& m, uint64_t seed, const std::map<std::string, int64_t>& dims,
                     const py::dict& inputs, const Ranges& ranges) {
  const auto given = to_tensors(inputs);
  const auto r = to_ranges(ranges);
  return to_arrays(call([&] { return api::make_inputs(*m.model, seed, dims, given, r); }, m.path));
}

py::tuple compare(const PyModel& a, const PyModel& b, const py::dict& inputs, uint64_t seed,
                    const std::map<std::string, int64_t>& dims, const Ranges& ranges, bool trace,
                    const std::string& tolerance, std::optional<double> rtol, std::optional<double> atol,
                    const std::string& error_stat) {
  api::CompareRequest r;
  r.inputs = to_tensors(inputs);
  r.seed = seed;
  r.dims = dims;
  r.ranges = to_ranges(ranges);
  r.trace = trace;
  r.tolerance = tolerance;
  r.rtol = rtol;
  r.atol = atol;
  r.error_stat = error_stat;
  r.a = a.path;
  r.b = b.path;
  const api::Report report = call([&] { return api::compare(*a.model, *b.model, r); }, a.path);
  return py::make_tuple(report.json(), report.exit_code);
}

}  // namespace

}  // namespace bnorm::python

PYBIND11_MODULE(_bnorm, m) {
  using namespace bnorm::python;
  namespace api = bnorm::api;
  m.doc() = "The C++ half of the bnorm package: use `import bnorm` (docs/python.md).";
  route_warnings();
  translate_errors();

  py::class_<PyModel>(m, "Model", py::dynamic_attr(), R"(A model bnorm loaded and validated.

Make one with bnorm.load(path | bytes | ModelProto); every bnorm function
also takes a path, bytes or a ModelProto directly. Large tensors stay in
their file until something reads them.)")
      .def_static("from_path", &load_path, py::arg("path"), "Read and validate a model file ('-': standard input).")
      .def_static("from_bytes", &load_bytes, py::arg("data"), py::arg("name") = "<bytes>",
                  "A model from its serialized bytes (ModelProto.SerializeToString()).")
      .def(
          "to_bytes",
          [](const PyModel& self) { return py::bytes(call([&] { return api::to_bytes(*self.model); })); },
          "The serialized model, every tensor inline (protobuf's 2 GiB limit applies).")
      .def(
          "save",
          [](PyModel& self, const std::string& path, const std::string& external_data) {
            api::WriteOptions o;
            o.external_data = external_data;
            call([&] {
              api::save(*self.model, path, o);
              return 0;
            });
          },
          py::arg("path"), py::arg("external_data") = "",
          "Write the model through bnorm's one writer, as the CLI's -o does (external_data: the side file's name "
          "for a model with external data).")
      .def(
          "copy", [](const PyModel& self) { return PyModel{api::copy(*self.model), self.path}; },
          "An independent copy.")
      .def_property_readonly("opset", [](const PyModel& self) { return api::opset(*self.model); },
                             "The ai.onnx opset the model imports (1 when it imports none).")
      .def_property_readonly("ir_version", [](const PyModel& self) { return api::ir_version(*self.model); },
                             "ModelProto.ir_version.")
      .def_property_readonly("path", [](const PyModel& self) { return self.path; },
                             "The file the model was read from; None for one made from bytes or by bnorm.")
      .def("__repr__", [](const PyModel& self) {
        return "<bnorm.Model opset " + std::to_string(api::opset(*self.model)) + ", IR " +
               std::to_string(api::ir_version(*self.model)) + (self.path ? ", from '" + *self.path + "'" : "") + ">";
      });

  m.def("version", [] { return std::string(api::version()); });
  m.def("inspect", &inspect, py::arg("model"), py::arg("to"), py::arg("fp16"), py::arg("shapes"), py::arg("inputs"),
        py::arg("seed"), py::arg("dims"), py::arg("ranges"));
  m.def("fold", &fold, py::arg("model"), py::arg("verify"), py::arg("seed"), py::arg("ranges"), py::arg("inputs"),
        py::arg("input_sets"), py::arg("dims"), py::arg("all_norms"), py::arg("keep_generated"));
  m.def("upgrade", &upgrade, py::arg("model"), py::arg("to"), py::arg("inference"), py::arg("casts"),
        py::arg("fuse_norms"), py::arg("check"), py::arg("verify"), py::arg("seed"), py::arg("dims"), py::arg("ranges"),
        py::arg("inputs"), py::arg("input_sets"));
  m.def("run", &run, py::arg("model"), py::arg("inputs"), py::arg("seed"), py::arg("dims"), py::arg("ranges"));
  m.def("make_inputs", &make_inputs, py::arg("model"), py::arg("seed"), py::arg("dims"), py::arg("inputs"),
        py::arg("ranges"));
  m.def("compare", &compare, py::arg("a"), py::arg("b"), py::arg("inputs"), py::arg("seed"), py::arg("dims"),
        py::arg("ranges"), py::arg("trace"), py::arg("tolerance"), py::arg("rtol"), py::arg("atol"),
        py::arg("error_stat"));
}
