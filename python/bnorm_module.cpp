// _bnorm: the C++ half of `import bnorm` (docs/python.md), on bnorm's
// public API (include/bnorm/) alone. The package around it
// (python/bnorm/__init__.py) turns what users give (paths, bytes,
// ModelProtos, numpy arrays) into what this takes, and back.
//
// What this half owns:
// - Model: an api::ModelPtr, the one way a model crosses into Python
//   (bytes in, bytes out: no protobuf object is shared with the user's onnx).
// - Reports as their JSON text (the document `--json` prints), parsed by
//   the package, so a report is the CLI's to the byte.
// - Tensors: numpy arrays are copied once into api Tensors (a Tensor owns
//   its bytes); outputs are handed to numpy without a copy (the Tensor's
//   bytes move into the array's base object).
// - bnorm::Error becomes bnorm.Error's subclass for its kind, with the
//   CLI's message, hint, file, node, op and version (bnorm/_errors.py).
// - The library's warnings (spdlog logger "bnorm") are collected while a
//   call runs and issued through Python's `warnings` after it, on the
//   calling thread; a warning from elsewhere goes to stderr as the CLI's.
// - Every call into the library releases the GIL.
// - Ctrl-C: during a call on the main thread, while SIGINT is Python's
//   default (KeyboardInterrupt), a handler of ours sets the flag the
//   evaluator watches (<bnorm/interrupt.h>): it stops before its next node,
//   Python's handler is back, and KeyboardInterrupt is raised. Another
//   SIGINT handler of the user's is left alone (it runs when the call
//   returns, as for any C call).
#include <bnorm/bnorm.h>
#include <pybind11/numpy.h>
#include <pythread.h>
#include <signal.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;
namespace api = bnorm::api;

namespace {

// ---- warnings

thread_local std::vector<std::string>* t_warnings = nullptr;

class WarningSink : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (t_warnings && msg.level >= spdlog::level::warn) {
      t_warnings->emplace_back(msg.payload.data(), msg.payload.size());
      return;
    }
    spdlog::memory_buf_t text;
    formatter_->format(msg, text);
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }
};

void route_warnings() {
  auto sink = std::make_shared<WarningSink>();
  auto logger = spdlog::get("bnorm");
  if (logger) {
    logger->sinks().clear();
    logger->sinks().push_back(sink);
  } else {
    // The library's logger adopts this one (its pattern and level are
    // the library's).
    logger = std::make_shared<spdlog::logger>("bnorm", sink);
    logger->set_level(spdlog::level::warn);
    spdlog::register_logger(logger);
  }
}

// The Python classes of bnorm/_errors.py, alive for the process (never
// released: the interpreter may be finalizing when a static would be).
py::handle errors_module() {
  static py::handle m = py::module_::import("bnorm._errors").release();
  return m;
}

void warn(const std::vector<std::string>& messages) {
  if (messages.empty()) return;
  py::object cls = errors_module().attr("BnormWarning");
  for (const auto& m : messages) {
    // stacklevel 2: the user's line that called bnorm.fold, not the package's.
    if (PyErr_WarnEx(cls.ptr(), m.c_str(), 2) != 0) throw py::error_already_set();
  }
}

// ---- Ctrl-C

std::atomic<bool> g_sigint{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

extern "C" void on_sigint(int) { g_sigint.store(true, std::memory_order_relaxed); }

// Takes SIGINT while it lives, when Python would raise KeyboardInterrupt
// for it and this is the main thread (where Python takes signals).
class SigintWatch {
 public:
  SigintWatch() {
    static const unsigned long main_thread =
        py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
    if (PyThread_get_thread_ident() != main_thread) return;
    py::module_ signal = py::module_::import("signal");
    if (!signal.attr("getsignal")(SIGINT).is(signal.attr("default_int_handler"))) return;
    struct sigaction ours {};
    ours.sa_handler = on_sigint;
    sigemptyset(&ours.sa_mask);
    g_sigint.store(false);
    installed_ = ::sigaction(SIGINT, &ours, &previous_) == 0;
  }
  ~SigintWatch() { restore(); }
  SigintWatch(const SigintWatch&) = delete;
  SigintWatch& operator=(const SigintWatch&) = delete;

  bool installed() const { return installed_; }
  // Python's handler back; true when a SIGINT came meanwhile.
  bool restore() {
    if (!installed_) return false;
    ::sigaction(SIGINT, &previous_, nullptr);
    installed_ = false;
    return g_sigint.exchange(false);
  }

 private:
  bool installed_ = false;
  struct sigaction previous_ {};
};

// Runs `f` without the GIL, its warnings collected, then issues them. An
// error names `file` (the model's, as the CLI's errors do) unless it names
// one already.
template <class F>
auto call(F&& f, const std::optional<std::string>& file = std::nullopt) -> decltype(f()) {
  SigintWatch sigint;
  std::vector<std::string> warnings;
  struct Collect {
    std::vector<std::string>* previous;
    explicit Collect(std::vector<std::string>* w) : previous(t_warnings) { t_warnings = w; }
    ~Collect() { t_warnings = previous; }
  };
  std::optional<Collect> collect(std::in_place, &warnings);
  std::exception_ptr failed;
  std::optional<decltype(f())> result;
  {
    py::gil_scoped_release nogil;
    std::optional<api::InterruptScope> watch;
    if (sigint.installed()) watch.emplace(g_sigint);
    try {
      result.emplace(f());
    } catch (bnorm::Error& e) {
      if (file) e.in_file(*file);
      failed = std::current_exception();
    } catch (...) {
      failed = std::current_exception();
    }
  }
  collect.reset();
  if (sigint.restore()) {
    // As if the signal came now: Python's handler raises KeyboardInterrupt.
    PyErr_SetInterrupt();
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
  warn(warnings);
  if (failed) std::rethrow_exception(failed);
  return std::move(*result);
}

// ---- errors

const char* error_class(bnorm::ErrorKind kind) {
  switch (kind) {
    case bnorm::ErrorKind::usage: return "UsageError";
    case bnorm::ErrorKind::input: return "InputError";
    case bnorm::ErrorKind::unsupported: return "UnsupportedError";
    case bnorm::ErrorKind::check_failed: return "CheckFailed";
  }
  return "Error";
}

py::object or_none(const std::string& s) { return s.empty() ? py::object(py::none()) : py::object(py::str(s)); }

void raise(const bnorm::Error& e) {
  py::object cls = errors_module().attr(error_class(e.kind()));
  py::object err = cls(e.message(), py::arg("hint") = or_none(e.hint()), py::arg("file") = or_none(e.file()),
                       py::arg("node") = or_none(e.node()), py::arg("op") = or_none(e.op()),
                       py::arg("version") = e.version() ? py::object(py::int_(e.version())) : py::object(py::none()),
                       py::arg("exit_code") = e.exit_code());
  PyErr_SetObject(cls.ptr(), err.ptr());
}

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

// ---- tensors

// An input as the package passes it: (array, ONNX element type), the
// array C-contiguous in native byte order.
struct Input {
  py::array array;
  int dtype = 0;
};

bnorm::Tensor to_tensor(const std::string& name, const Input& in) {
  const auto t = static_cast<bnorm::DType>(in.dtype);
  const size_t size = bnorm::dtype_size(t);
  if (size == 0) throw bnorm::Error(bnorm::ErrorKind::usage, "input '" + name + "': bnorm holds no " + bnorm::dtype_name(t));
  if (static_cast<size_t>(in.array.itemsize()) != size) {
    throw bnorm::Error(bnorm::ErrorKind::usage,
                       "input '" + name + "': " + std::to_string(in.array.itemsize()) + "-byte elements for " +
                           bnorm::dtype_name(t) + ", which takes " + std::to_string(size));
  }
  if (!(in.array.flags() & py::array::c_style)) {
    throw bnorm::Error(bnorm::ErrorKind::usage, "input '" + name + "': the array is not C-contiguous");
  }
  bnorm::Tensor out;
  out.name = name;
  out.dtype = t;
  out.dims.assign(in.array.shape(), in.array.shape() + in.array.ndim());
  const auto* p = static_cast<const uint8_t*>(in.array.data());
  out.bytes.assign(p, p + in.array.nbytes());
  return out;
}

// {name: (array, dtype)}
std::map<std::string, bnorm::Tensor> to_tensors(const py::dict& inputs) {
  std::map<std::string, bnorm::Tensor> out;
  for (const auto& [key, value] : inputs) {
    const auto name = key.cast<std::string>();
    const auto pair = value.cast<py::tuple>();
    out.emplace(name, to_tensor(name, Input{pair[0].cast<py::array>(), pair[1].cast<int>()}));
  }
  return out;
}

std::vector<std::map<std::string, bnorm::Tensor>> to_tensor_sets(const py::list& sets) {
  std::vector<std::map<std::string, bnorm::Tensor>> out;
  for (const auto& set : sets) out.push_back(to_tensors(set.cast<py::dict>()));
  return out;
}

// numpy's container for each element type: the raw types (bfloat16, float8,
// the 4-bit ones) as the integers holding their bits; the package views
// them with their ONNX type in the dtype's metadata.
const char* numpy_format(bnorm::DType t) {
  using bnorm::DType;
  switch (t) {
    case DType::float32: return "f4";
    case DType::float64: return "f8";
    case DType::float16: return "f2";
    case DType::boolean: return "?";
    case DType::int8: case DType::int4: return "i1";
    case DType::int16: return "i2";
    case DType::int32: return "i4";
    case DType::int64: return "i8";
    case DType::uint8: case DType::uint4: case DType::float4e2m1: case DType::float8e4m3fn:
    case DType::float8e4m3fnuz: case DType::float8e5m2: case DType::float8e5m2fnuz: return "u1";
    case DType::uint16: case DType::bfloat16: return "u2";
    case DType::uint32: return "u4";
    case DType::uint64: return "u8";
    default: return nullptr;
  }
}

// The tensor's bytes become the array's, without a copy.
py::tuple to_array(bnorm::Tensor&& t) {
  const char* format = numpy_format(t.dtype);
  if (!format) {
    throw bnorm::Error(bnorm::ErrorKind::unsupported,
                       "output '" + t.name + "' is " + bnorm::dtype_name(t.dtype) + ", which numpy cannot hold");
  }
  auto* bytes = new std::vector<uint8_t>(std::move(t.bytes));
  py::capsule owner(bytes, [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
  const py::dtype dtype(format);
  std::vector<py::ssize_t> shape(t.dims.begin(), t.dims.end()), strides(t.dims.size());
  py::ssize_t stride = dtype.itemsize();
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  py::array array(dtype, shape, strides, bytes->empty() ? nullptr : bytes->data(), owner);
  return py::make_tuple(array, static_cast<int>(t.dtype));
}

py::dict to_arrays(std::map<std::string, bnorm::Tensor>&& tensors) {
  py::dict out;
  for (auto& [name, t] : tensors) {
    if (t.name.empty()) t.name = name;
    out[py::str(name)] = to_array(std::move(t));
  }
  return out;
}

using Ranges = std::map<std::string, std::pair<double, double>>;

std::map<std::string, bnorm::InputRange> to_ranges(const Ranges& ranges) {
  std::map<std::string, bnorm::InputRange> out;
  for (const auto& [name, r] : ranges) out[name] = bnorm::InputRange{r.first, r.second};
  return out;
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

PYBIND11_MODULE(_bnorm, m) {
  m.doc() = "The C++ half of the bnorm package: use `import bnorm` (docs/python.md).";
  route_warnings();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const bnorm::Error& e) {
      raise(e);
    }
  });

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
