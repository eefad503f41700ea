// The public API's models in and out (include/bnorm/model.h), its reports'
// text, and its version.
#include <unistd.h>

#include <bnorm/bnorm.h>

#include <filesystem>

#include "core/error.h"
#include "model/model.h"
#include "model/output_file.h"

namespace fs = std::filesystem;

namespace bnorm::api {

ModelPtr load(const std::string& path) { return std::make_shared<Model>(load_model(path)); }

ModelPtr load_bytes(const std::string& bytes, const std::string& name, const std::string& dir) {
  Model m = parse_model(bytes, name);
  // External data resolves against the model's folder (Model::dir).
  m.path = (dir.empty() ? fs::path(".") : fs::path(dir)) / fs::path(name).filename();
  return std::make_shared<Model>(std::move(m));
}

ModelPtr copy(const Model& model) { return std::make_shared<Model>(model); }

void save(Model& model, const std::string& path, const WriteOptions& options) {
  SaveOptions save;
  save.external_data_name = options.external_data;
  save_model(model, plan_output(path), save);
}

std::string to_bytes(const Model& model) {
  // Through the writer's stream path (every tensor inline), into an unnamed
  // scratch file, read back.
  const int fd = scratch_file("to serialize a model");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  OutputTarget target;
  target.kind = OutputTarget::Kind::stream;
  target.given = "<bytes>";
  target.fd = fd;
  target.what = "memory";
  Model m = model;
  save_model(m, target);
  const off_t size = ::lseek(fd, 0, SEEK_END);
  std::string out(static_cast<size_t>(size), '\0');
  for (off_t done = 0; done < size;) {
    const ssize_t n = ::pread(fd, out.data() + done, static_cast<size_t>(size - done), done);
    if (n <= 0) throw Error(ErrorKind::input, "cannot read back the serialized model");
    done += n;
  }
  return out;
}

long long opset(const Model& model) { return default_opset(model.proto); }
long long ir_version(const Model& model) { return model.proto.ir_version(); }

std::string Report::json() const {
  return data.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

const char* version() { return BNORM_VERSION; }

}  // namespace bnorm::api
