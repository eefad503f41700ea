#include "core/error.h"

namespace bnorm {

Error::Error(ErrorKind kind, std::string message, std::string hint)
    : kind_(kind), message_(std::move(message)), hint_(std::move(hint)) {}

Error& Error::in_file(const std::string& file) {
  if (file_.empty()) file_ = file;
  return *this;
}

Error& Error::at_node(const std::string& name, const std::string& op, int version) {
  if (node_.empty() && op_.empty()) {
    node_ = name;
    op_ = op;
    version_ = version;
  }
  return *this;
}

Error& Error::context(const std::string& what) {
  contexts_.push_back(what);
  return *this;
}

Error& Error::with_hint(const std::string& hint) {
  if (hint_.empty()) hint_ = hint;
  return *this;
}

std::string Error::message() const {
  std::string out;
  if (!file_.empty()) out += file_ + ": ";
  if (!node_.empty() || !op_.empty()) {
    // A node's name in quotes; a label of a node without one already quotes
    // its output ("Reshape #0 -> 'Y'") and stands as it is.
    out += node_.find('\'') == std::string::npos ? fmt::format("node '{}'", node_) : "node " + node_;
    if (!op_.empty()) out += version_ > 0 ? fmt::format(" ({}-{})", op_, version_) : fmt::format(" ({})", op_);
    out += ": ";
  }
  out += message_;
  // Contexts were pushed innermost first; print outermost last.
  for (const auto& c : contexts_) out += " (" + c + ")";
  return out;
}

const char* Error::what() const noexcept {
  try {
    what_ = message();
  } catch (...) {
    return message_.c_str();
  }
  return what_.c_str();
}

}  // namespace bnorm
